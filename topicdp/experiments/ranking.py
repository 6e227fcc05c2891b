"""What ``topicdp compare``'s table concludes from its rows, all public (guarantees, refusals, private scores with
their intervals, each evaluation's error forecast before it spent, the yardstick on the public reference).

Targets: a row's private contrast and NPMI and their intervals, over the yardstick's (a non-private LDA on the
public reference, :mod:`topicdp.metrics.yardstick`), against the unit's :data:`topicdp.forecast.TARGETS`: *met*
when both values reach them and the contrast's interval lies above 0, *missed* when an interval's upper end falls
short, *cannot tell* otherwise (also for a refused interval, :func:`topicdp.metrics.private.interval_refusal`).
Ranking: the released rows by private contrast, two neighbours told apart only when their intervals are disjoint
and their difference exceeds the larger forecast error; the order is cut into groups only where every row above a
cut is told from every row below it, and a single group is said as "cannot rank". Choice: among rows that meet
the targets a stronger guarantee wins over any score (DP at the user level, then the document level, then random
DP), the highest group within that tier named. Where none meets them, the strongest tier among the released rows
the evaluation cannot judge (not made, refused or too wide, never *missed*) that the plan forecast readable is
named on that public forecast, with the evaluation's reason beside it. Refused and forced releases are never chosen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..metrics.yardstick import TARGETS, is_common

#: the guarantee tiers, strongest first (the choice's order)
TIERS = ("DP at the user level", "DP at the document level", "random DP (NOT DP)")


@dataclass(frozen=True)
class Scored:
    """One released, scored row as the choice reads it."""

    road: str
    epsilon: float
    unit: str
    tier: int  # index in TIERS; len(TIERS) for a row with no guarantee (a testing sample)
    contrast: float
    interval: tuple
    forecast: float | None  # the evaluation's forecast error before spending, or None
    targets: str  # "met", "missed", "cannot tell", or "no yardstick"
    ratios: str  # the ratios read, for the line

    @property
    def name(self) -> str:
        return f"{self.road} at the {self.unit} level (epsilon {self.epsilon:g})"


def tier(row: dict) -> int:
    """The row's guarantee tier (:data:`TIERS`): random DP by its road or its report's kind; no guarantee last."""
    guarantee = str(row.get("guarantee", ""))
    if guarantee.startswith("NO guarantee"):
        return len(TIERS)
    if row["road"].startswith("random-dp") or str(row.get("kind", "")).startswith("random"):
        return 2
    return 0 if row.get("unit", "user") == "user" else 1


def read_targets(row: dict, yardstick: dict | None) -> tuple[str, str]:
    """(verdict, the ratios as read) of a scored row against its unit's targets on the yardstick (module docstring)."""
    if yardstick is None:
        return "no yardstick", ""
    e, target = row["evaluation"], TARGETS[row.get("unit", "user")]
    if e.get("interval_refused"):
        return "cannot tell", f"intervals refused: {e['interval_refused']}"
    judged = [("contrast", e["mean_contrast_interval"], yardstick.get("contrast"), target.contrast),
              ("NPMI", e["mean_npmi_interval"], yardstick.get("npmi"), target.npmi)]
    points, highs, said = [], [], []
    values = {"contrast": e["mean_contrast"], "NPMI": e["mean_npmi"]}
    for name, (low, high), base, goal in judged:
        if base is None or not base > 0 or low is None or high is None or values[name] is None:
            continue
        points.append(values[name] / base >= goal)
        highs.append(high / base >= goal)
        said.append(f"{name} {values[name] / base:.2f}x [{low / base:.2f}x, {high / base:.2f}x] against {goal:g}x")
    if not said:
        return "no yardstick", ""
    low = e["mean_contrast_interval"][0]
    if not all(highs):
        return "missed", "; ".join(said)
    return ("met" if all(points) and low is not None and low > 0 else "cannot tell"), "; ".join(said)


def scored_rows(rows: list[dict], yardsticks: dict) -> list[Scored]:
    """The released (not refused, not forced) rows with a private score, read against their unit's yardstick."""
    out = []
    for r in rows:
        e = r.get("evaluation")
        if not e or r.get("status") != "released" or r.get("forced") or e.get("mean_contrast") is None:
            continue
        if not math.isfinite(e["mean_contrast"]):
            continue
        verdict, ratios = read_targets(r, yardsticks.get(r.get("unit", "user")))
        fc = r.get("evaluation_forecast") or {}
        low, high = e["mean_contrast_interval"]
        interval = (-math.inf, math.inf) if e.get("interval_refused") or low is None or high is None else (low, high)
        out.append(Scored(r["road"], r["epsilon"], r.get("unit", "user"), tier(r), float(e["mean_contrast"]),
                          interval, fc.get("quantile"), verdict, ratios))
    return out


def separable(a: Scored, b: Scored) -> tuple[bool, str]:
    """Whether the evaluation tells ``a`` (the higher contrast) from ``b``, and if not, why (module docstring)."""
    diff = a.contrast - b.contrast
    if not (math.isfinite(a.interval[0]) and math.isfinite(b.interval[1])):
        return False, "the evaluation refused an interval of one of them (it cannot bound the value at its level)"
    if a.interval[0] <= b.interval[1]:
        return False, (f"their difference {diff:.3f} is within their intervals ([{a.interval[0]:.3f}, "
                       f"{a.interval[1]:.3f}] and [{b.interval[0]:.3f}, {b.interval[1]:.3f}] overlap)")
    errors = [f for f in (a.forecast, b.forecast) if f is not None]
    if errors and diff <= max(errors):
        return False, (f"their difference {diff:.3f} is below the error forecast for the evaluation before it "
                       f"spent ({max(errors):.3f})")
    return True, ""


def groups(scored: list[Scored]) -> tuple[list[list[Scored]], list[str]]:
    """The rows in order of private contrast cut into groups the evaluation can tell apart -- a cut only where every
    row above it is told from every row below it -- and the reasons of the neighbours it could not tell apart."""
    order = sorted(scored, key=lambda s: -s.contrast)
    out: list[list[Scored]] = []
    why: list[str] = []
    for i, s in enumerate(order):
        if i and not separable(order[i - 1], s)[0]:
            why.append(f"{order[i - 1].name} and {s.name}: {separable(order[i - 1], s)[1]}")
        if all(separable(a, b)[0] for a in order[:i] for b in order[i:]):  # the first row: nothing above it
            out.append([s])
        else:
            out[-1].append(s)
    return out, why


def ranking_lines(scored: list[Scored]) -> list[str]:
    """The ranking the table prints, or its statement that the evaluation cannot rank the roads (with the pairs it
    does tell apart, if any)."""
    if len(scored) < 2:
        return [f"Ranking: {'one released row' if scored else 'no released row'} was scored; nothing to rank."]
    cut, why = groups(scored)
    if len(cut) == 1:
        order = sorted(scored, key=lambda s: -s.contrast)
        told = [f"{a.name} > {b.name}" for i, a in enumerate(order) for b in order[i + 1:] if separable(a, b)[0]]
        return ["Ranking: the evaluation cannot rank these roads (no ranking is printed): " + "; ".join(why)
                + ". More held-out users or a larger evaluation epsilon (--evaluation-epsilon) narrow the intervals."
                + (f" It tells apart only these pairs: {'; '.join(told)}." if told else "")]
    order_line = " > ".join(" = ".join(s.name for s in g) for g in cut)
    out = [f"Ranking by private contrast (told apart only where the intervals are disjoint and the difference "
           f"exceeds the forecast error): {order_line}"]
    if why:
        out.append("The evaluation cannot rank the rows joined by '=': " + "; ".join(why) + ".")
    return out


def recommendation(rows: list[dict], yardsticks: dict, yardstick_common: dict | None = None) -> str:
    """The table's last line: the road to use and why, or "none" and what would help (module docstring).
    ``yardstick_common``: per unit, the yardstick LDA's common-word counts per topic, beside which the chosen row's
    flagged topics are stated (a flag the non-private LDA shares says the text's chatter, not the noise)."""
    scored = scored_rows(rows, yardsticks)
    good = [s for s in scored if s.targets == "met" and s.tier < len(TIERS)]
    if not good:
        fallback = _forecast_choice(rows, scored)
        return fallback if fallback else "Recommendation: none: " + _none_reason(rows, scored)
    best = min(s.tier for s in good)
    top = groups([s for s in good if s.tier == best])[0][0]
    also = sorted({TIERS[s.tier] for s in good if s.tier > best})
    said = (f"{top[0].name}: it meets the {top[0].unit} level's targets on the yardstick ({top[0].ratios}) with "
            f"{TIERS[best]}" if len(top) == 1 else
            f"any of {', '.join(s.name for s in top)}: each meets its targets with {TIERS[best]}, and the evaluation "
            f"cannot rank them")
    extra = _flags(rows, top[0], (yardstick_common or {}).get(top[0].unit)) if len(top) == 1 else ""
    extra += f"; also meeting them with a weaker guarantee: {', '.join(also)}" if also else ""
    refused = [f"{r['road']} at the {r.get('unit', 'user')} level" for r in rows if r.get("status") == "refused"]
    extra += f"; refused by their plan: {', '.join(refused)}" if refused else ""
    return f"Recommendation: {said}{extra} (the strongest guarantee that meets the targets is preferred)."


def _forecast_choice(rows: list[dict], scored: list[Scored]) -> str:
    """The choice on the plan's forecast where no row meets the targets (module docstring); "" where none can be."""
    verdict = {(s.road, s.epsilon, s.unit): s for s in scored}
    readable = []
    for r in rows:
        key = (r["road"], r["epsilon"], r.get("unit", "user"))
        judged = verdict.get(key)
        if (r.get("status") != "released" or r.get("forced") or r.get("forecast") != "readable"
                or tier(r) >= len(TIERS) or (judged is not None and judged.targets != "cannot tell")):
            continue
        why = (r.get("evaluation") or {}).get("interval_refused") or r.get("evaluation_refused")
        readable.append((tier(r), key, why or "its intervals are too wide to say whether it meets the targets"))
    if not readable:
        return ""
    best = min(t for t, _, _ in readable)
    chosen = [(key, why) for t, key, why in readable if t == best]
    names = [f"{road} at the {unit} level (epsilon {eps:g})" for (road, eps, unit), _ in chosen]
    why = chosen[0][1]
    unbounded = "no public fact bounds" in why  # clipping's shift: no budget or size lets the evaluation bound it
    help_ = "" if unbounded else (f": more held-out {chosen[0][0][2]}s or a larger --evaluation-epsilon would "
                                  "let it")
    return (f"Recommendation: {' or '.join(names)}: the plan forecast {'it' if len(names) == 1 else 'each'} "
            f"readable on the public reference, with {TIERS[best]}; the private evaluation can neither confirm nor "
            f"rank it ({why}){help_}.")


def _flags(rows: list[dict], chosen: Scored, theirs) -> str:
    """The chosen row's topics flagged as common words (:func:`topicdp.metrics.yardstick.is_common`)."""
    row = next(r for r in rows if (r["road"], r["epsilon"], r.get("unit", "user")) ==
               (chosen.road, chosen.epsilon, chosen.unit))
    counts = row.get("common_words")
    if not counts:
        return ""
    said = f"; {sum(map(is_common, counts))} of its {len(counts)} topics flagged as common words"
    return said + (f" (the yardstick LDA's: {sum(map(is_common, theirs))} of {len(theirs)})" if theirs else "")


def _none_reason(rows: list[dict], scored: list[Scored]) -> str:
    """Why no road is recommended, and what would help."""
    refused = [r for r in rows if r.get("status") == "refused"]
    unclear = [s.name for s in scored if s.targets == "cannot tell"]
    missed = [s.name for s in scored if s.targets == "missed"]
    if any(s.targets == "no yardstick" for s in scored):
        return ("the scores have no yardstick to be read against (a public reference, --reference, gives one), so "
                "no release can be said to meet the targets.")
    parts = []
    if unclear:
        parts.append(f"the evaluation cannot tell whether {', '.join(unclear)} meet the targets: a value short of its "
                     "target with an interval reaching it, or a contrast interval holding 0 (more held-out users or a "
                     "larger --evaluation-epsilon would narrow them)")
    if missed:
        parts.append(f"{', '.join(missed)}: short of the targets (a larger epsilon, fewer topics or more users would "
                     "help)")
    if refused:
        parts.append(f"{len(refused)} release(s) were refused by their plan, before or after a spend, as their "
                     "rows say (a larger epsilon, fewer topics or more users would help)")
    if not parts:
        parts.append("no road released and was scored")
    return "; ".join(parts) + "."
