"""The comparison's two files: ``table.md`` (publishable: every value in it is public, DP or random DP as its row
says) and ``diagnostics.md`` (the owner's exact scores, NOT for publication)."""

from __future__ import annotations

import math

from ..metrics.yardstick import (NO_REFERENCE, TOP_N, Yardstick, common_rule, contrast_line, is_common, scaled,
                                 targets_line)
from .ranking import ranking_lines, recommendation, scored_rows

#: the header of the owner's file, and the line that marks it
NOT_FOR_PUBLICATION = "NOT FOR PUBLICATION: exact scores of the private held-out texts (the data owner's diagnostics)"


def evaluation_total(rows: list[dict]) -> tuple[int, float | None, float]:
    """(number of evaluations, their composed epsilon, its delta): they all read the same held-out users, so their
    Gaussian releases compose (:func:`composed` at the sum of their deltas)."""
    evaluations = [r["evaluation"] for r in rows if r.get("evaluation")]
    if not evaluations:
        return 0, None, 0.0
    entries = [e for r in rows if r.get("evaluation") for e in _evaluation_entries(r)]
    delta = min(sum(e["delta"] for e in evaluations), 0.5)
    return len(evaluations), composed(entries, delta), delta


def _evaluation_entries(row: dict) -> list[dict]:
    """The ledger entries of a row's evaluation (a row written before they were kept: from its report)."""
    if row.get("evaluation_entries") is not None:
        return row["evaluation_entries"]
    e = row["evaluation"]
    return [{"kind": "gaussian", "name": "private evaluation (NPMI, contrast)", "sigma": e["sigma"],
             "sensitivity": e["sensitivity"], "count": 1, "unit": e["unit"], "neighbours": e["neighbours"]}]


def _ledger(entries: list[dict]):
    """A ledger holding ``entries`` (JSON, :func:`topicdp.rdp.ledger_file.entry_to_json`)."""
    from ..rdp import PrivacyLedger
    from ..rdp.ledger_file import entry_from_json

    ledger = PrivacyLedger()
    ledger.record([entry_from_json(e) for e in entries])
    return ledger


def composed(entries: list[dict], delta: float, scope: str = "dp") -> float:
    """The ledger's tightest proven epsilon of ``entries`` at ``delta`` (exact GDP composition if all are Gaussian)."""
    return _ledger(entries).epsilon(delta, "best", scope=scope)


def release_totals(rows: list[dict], delta: float) -> dict:
    """What the rows' releases spent on the training units, composed at the sum of their deltas: the DP releases'
    total (every entry each drew, a refused release's spend included) and the random-DP releases' own (NOT DP: their
    entries' total over all scopes, failing with probability gamma)."""
    out: dict = {}
    for key, random_dp in (("dp", False), ("random_dp", True)):
        chosen = [r for r in rows if r.get("entries") and r["road"].startswith("random-dp") == random_dp]
        if chosen:
            d = min(0.5, delta * len(chosen))
            ledger = _ledger([e for r in chosen for e in r["entries"]])
            eps = ledger.epsilon(d, "best", scope="all" if random_dp else "dp")
            out[key] = (len(chosen), eps, d, ledger.gamma) if random_dp else (len(chosen), eps, d)
    return out


def format_table(rows: list[dict], info: dict) -> str:
    """The publishable table: its spend; per unit and road its guarantee (or refusal), private NPMI and contrast on the
    held-out users with intervals, and top words; the ranking, the road to use (:mod:`topicdp.experiments.ranking`)."""
    units = list(info.get("units") or [info["unit"]])
    by_unit = {u: [r for r in rows if r.get("unit", units[0]) == u] for u in units}
    level = next((r["evaluation"]["level"] for r in rows if r.get("evaluation")), 0.9)
    lines = [f"# Compare: {info['corpus']}, {' and '.join(units)} level{'s' if len(units) > 1 else ''}, "
             f"K = {info['n_topics']}, {info['n_words']} words, delta {info['delta']:g} per release", "",
             *_totals(rows, by_unit, info), ""]
    lines += [_scores_line(by_unit[u], u, level, info) for u in units]
    lines += ["", *_reading(rows, info, units), ""]
    yardsticks = {u: (_scale(info, u) or {}).get("yardstick") for u in units}
    for u in units:
        if len(units) > 1:
            lines += [f"## {u.capitalize()} level", ""]
        lines += ["| road | epsilon | guarantee (as the release's report states it) | outcome | NPMI [interval] | "
                  "contrast [interval] | NPMI / yardstick | contrast / yardstick | topics of common words |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in _in_order(by_unit[u]):
            lines.append("| " + " | ".join([r["road"], f"{r['epsilon']:g}", _guarantee(r), _outcome(r),
                                            *_scores(r), *_scaled(r, yardsticks[u]), _common_cell(r)]) + " |")
        lines += ["", *_refused_intervals(by_unit[u]), *_top_words(by_unit[u]), ""]
    lines += _notes(rows, info, units)
    common = {u: (_scale(info, u) or {}).get("yardstick_common") for u in units}
    lines += ["", *ranking_lines(scored_rows(rows, yardsticks)), "", recommendation(rows, yardsticks, common)]
    return "\n".join(lines)


def _scale(info: dict, unit: str):
    return (info.get("scales") or {}).get(unit, info.get("scale"))


def _scores_line(rows: list[dict], unit: str, level: float, info: dict) -> str:
    """How a unit's rows were scored (at its evaluation budget), and what its evaluations spent together."""
    eps_e, delta_e = (info.get("evaluations") or {}).get(unit) or info["evaluation"]
    n, total, total_delta = evaluation_total(rows)
    if n == 0:
        return (f"Scores at the {unit} level: no evaluation was made (each row says why); nothing was spent on "
                f"held-out {unit}s.")
    relation = "add/remove neighbours" if info.get("neighbours", "add-remove") == "add-remove" else \
        "replace-one neighbours"
    return (f"Scores: each release's top-10 words scored on held-out {unit}s (none of them read by any release) "
            f"under DP: mean NPMI and NPMI contrast with {100 * level:g}% intervals, each evaluation "
            f"({eps_e:g}, {delta_e:g})-DP at the {unit} level ({relation}). The {n} evaluations at the {unit} level "
            f"read the same held-out {unit}s: together "
            + (f"({total:.3g}, {total_delta:.2g})-DP for them (their Gaussian releases composed)." if total is not None
               else "none was made.")
            + " Exact scores are in the owner's diagnostics file, not here.")


def _top_words(rows: list[dict]) -> list[str]:
    """Each released row's top words (the first five of every topic); a forced release is marked."""
    out = []
    for r in _in_order(rows):
        if r.get("top_words"):
            topics = "; ".join(f"({k}) {' '.join(t)}" for k, t in enumerate(r["top_words"]))
            mark = " [refused: forced release]" if r.get("forced") else ""
            out.append(f"- top words of {r['road']}, epsilon {r['epsilon']:g}{mark}: {_cell(topics)}")
    return ["Top words (each topic's first five):", "", *out] if out else ["Top words: no release was made."]


def _notes(rows: list[dict], info: dict, units: list) -> list[str]:
    """What the table's rows mean: random DP, the unit counts, refusals, seeding."""
    random_dp = any(r["road"].startswith("random-dp") for r in rows)
    unit = units[0] if len(units) == 1 else "unit"
    out = ["Random DP (the random-dp rows) is NOT differential privacy: its sensitivity is sampled from the "
           "public reference P and holds with probability 1 - gamma over pairs drawn from P; units unlike P's "
           "draws are not covered" + (" (the exchangeable sample: its statement is marginal over the sample, not "
                                      "for every sample drawn)" if info.get("sizing") == "exchangeable" else "")
           + "." if random_dp else
           "The random-DP road (TopicDP over gensim LDA, NOT DP) was not run (--no-random-dp).",
           (f"The number of training {unit}s is not stated: every release counts them under DP "
            "(add/remove neighbours), as topicdp privatize does; the spectral configurations, calibrated for "
            "replace-one neighbours with the count public, are refused without it (--n-units)."
            if info.get("n_units") is None else
            f"The owner states the number of training {unit}s public ({info['n_units']}, --n-units): every "
            "release has replace-one neighbours with that count, as topicdp privatize --n-units."),
           "A refused row is refused by the plan (its reason shown); where it has scores, the release was forced "
           "(release_anyway) to show what the refusal withheld."]
    if info.get("seeded"):
        out.append("Seeded (--seed): every noise draw is seeded, for testing only; each report says so.")
    return out


def _reading(rows: list[dict], info: dict, units: list) -> list[str]:
    """How to read the scores (:mod:`topicdp.metrics.yardstick`): contrast, targets, yardstick, common words."""
    n_across = next((r["evaluation"].get("n_across") for r in rows if r.get("evaluation")), None)
    out = ["How to read the scores:", "", f"- {contrast_line(n_across)}", *[f"- {targets_line(u)}" for u in units]]
    seen: list = []
    for u in units:
        scale = _scale(info, u) or {}
        y = scale.get("yardstick")
        if y in seen:
            continue
        seen.append(y)
        if y is not None:
            out.append(f"- {Yardstick(**{**y, 'top_words': tuple(map(tuple, y['top_words']))}).line()}; the yardstick "
                       "columns divide each private score and its interval by it (a scale: the two are scored on "
                       "different text of the same kind)")
        else:
            out.append("- " + (scale.get("note") or "yardstick: none without a public reference (--reference): the "
                                                     "scores have no non-private scale here"))
    scale = _scale(info, units[0]) or {}
    if scale.get("n_common"):
        theirs = scale.get("yardstick_common")
        out.append(f"- {common_rule(scale['n_common'])}; the last column names the flagged topics"
                   + ("" if not theirs else f" (the yardstick LDA's topics: {', '.join(map(str, theirs))} of 10)"))
    else:
        out.append(f"- {NO_REFERENCE}")
    return out


def _scaled(row: dict, yardstick: dict | None) -> tuple[str, str]:
    """The private mean NPMI and contrast over the yardstick's (with their intervals), or blank."""
    e = row.get("evaluation")
    if not e or yardstick is None or e.get("interval_refused"):
        return "", ""
    return (scaled(e["mean_npmi"], e["mean_npmi_interval"], yardstick["npmi"]),
            scaled(e["mean_contrast"], e["mean_contrast_interval"], yardstick["contrast"]))


def _refused_intervals(rows: list[dict]) -> list[str]:
    """One line per reason an evaluation gave no interval, naming its rows."""
    reasons: dict = {}
    for r in rows:
        why = (r.get("evaluation") or {}).get("interval_refused")
        if why:
            reasons.setdefault(why, []).append(f"{r['road']} (epsilon {r['epsilon']:g})")
    return [f"Scores not given for {', '.join(names)}: the evaluation spent its budget and refused the interval: "
            f"{why}." for why, names in reasons.items()] + ([""] if reasons else [])


def _common_cell(row: dict) -> str:
    """The row's topics flagged as common words, with their counts; ``none`` (and the largest count) otherwise."""
    counts = row.get("common_words")
    if not counts:
        return ""
    flagged = [f"topic {k} ({c} of {TOP_N})" for k, c in enumerate(counts) if is_common(c)]
    return ", ".join(flagged) if flagged else f"none (at most {max(counts)} of {TOP_N})"


def _totals(rows: list[dict], by_unit: dict, info: dict) -> list[str]:
    """The table's spend, first: the composed totals of everything it holds per unit, and whom each covers."""
    out = ["Spent by this table (every release and evaluation in it, composed by the ledger: the tightest proven "
           "total of their entries, exact GDP composition where all are Gaussian):", ""]
    for unit, unit_rows in by_unit.items():
        out += _unit_totals(unit_rows, unit, info)
    if len(by_unit) > 1:
        out.append("- the units' totals are not one guarantee: a user is covered at the user level by the user-level "
                   "rows' totals only; the document-level rows read the same users and protect each document, not a "
                   "user (k documents of one user together: k times their epsilon by group privacy, with a larger "
                   "delta)")
    ledger = info.get("ledger")
    if ledger is not None:
        mine = [e for r in rows if not r["road"].startswith("random-dp") for e in r.get("entries") or ()]
        mine += [e for r in rows if r.get("evaluation") for e in _evaluation_entries(r)]
        together = composed(mine, ledger["delta"]) if mine else 0.0
        out.append(f"- ledger {ledger['file']} (the dataset's persisted ledger; every release and evaluation above is "
                   f"charged to it): this table's DP releases and evaluations composed together (sequentially, an "
                   f"upper bound for both sets) ({together:.4g}, {ledger['delta']:.3g})-DP; with the ledger's other "
                   f"runs, its total is now ({ledger['epsilon']:.4g}, {ledger['delta']:.3g})-DP over {ledger['n_runs']}"
                   f" DP runs, of a budget epsilon {ledger['budget']:g}")
    return out


def _unit_totals(rows: list[dict], unit: str, info: dict) -> list[str]:
    """One unit's totals: its releases' on the training units, its evaluations' on the held-out ones."""
    spent = release_totals(rows, info["delta"])
    n_evaluations, evaluation_eps, evaluation_delta = evaluation_total(rows)
    out = []
    if "dp" in spent:
        k, eps, d = spent["dp"]
        out.append(f"- training {unit}s (the only ones any release read): the {k} DP releases at the {unit} level "
                   f"together ({eps:.4g}, {d:.2g})-DP (each release's unit count, topics and any spend before a "
                   "refusal)")
    else:
        out.append(f"- training {unit}s: no DP release at the {unit} level spent anything")
    if "random_dp" in spent:
        k, eps, d, gamma = spent["random_dp"]
        out.append(f"- training {unit}s, random-DP rows (NOT DP): the {k} releases together ({eps:.4g}, {d:.2g}, "
                   f"{gamma:.3g})-random DP with respect to P (not counted in the DP total above)")
    if evaluation_eps is not None:
        out.append(f"- held-out {unit}s (a disjoint set: a {unit} is held out by a public hash of its user id; no "
                   f"release read them): the {n_evaluations} evaluations at the {unit} level together "
                   f"({evaluation_eps:.4g}, {evaluation_delta:.2g})-DP")
    else:
        out.append(f"- held-out {unit}s: no evaluation was made")
    if info.get("neighbours", "add-remove") == "add-remove" and "dp" in spent and evaluation_eps is not None:
        out.append(f"- every {unit} is in one of the two sets, so each is covered by its set's total (parallel "
                   "composition under add/remove neighbours: adding a user adds it to one set only)")
    return out


def _in_order(rows: list[dict]) -> list[dict]:
    """The rows by road (the registry's order, then others by name) and epsilon."""
    from ..pipeline import MECHANISMS

    names = list(MECHANISMS)
    return sorted(rows, key=lambda r: (names.index(r["road"]) if r["road"] in names else len(names), r["road"],
                                       r["epsilon"]))


def _guarantee(row: dict) -> str:
    if row.get("guarantee"):
        return _cell(row["guarantee"])
    if row["status"] == "not applicable" and "document" in str(row.get("reason", "")):
        return "document level only"
    return ""


def _outcome(row: dict) -> str:
    status, reason = row["status"], row.get("reason")
    unscored = f"; not scored: the evaluation was {row['evaluation_refused']}" if row.get("evaluation_refused") else ""
    if status == "released":
        return _cell("released" + unscored)
    if status == "refused":
        return _cell(f"refused: {reason}" + ("; forced release scored" if row.get("evaluation") else "") + unscored)
    return _cell(f"{status}: {reason}")


def _scores(row: dict) -> tuple[str, str]:
    e = row.get("evaluation")
    if not e:
        return "", ""
    if e.get("interval_refused"):  # a point estimate without a bound on its error is no score to read or rank
        return "not given (interval refused)", "not given (interval refused)"
    return _value(e["mean_npmi"], e["mean_npmi_interval"]), _value(e["mean_contrast"], e["mean_contrast_interval"])


def _value(value, interval) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    low, high = interval
    return f"{value:.3f} [{_num(low)}, {_num(high)}]"


def _num(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _cell(text: str) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def format_diagnostics(exact: list[dict], info: dict, counts: dict, ceiling: dict | None) -> str:
    """The owner's file: exact scores of every release's lists on the held-out texts, and the private corpus' sizes."""
    lines = [f"# {NOT_FOR_PUBLICATION}", "",
             f"{info['corpus']}, {info['unit']} level, K = {info['n_topics']}. These values read the private "
             "held-out texts without noise: publishing them, or anything decided on them, is a release nobody "
             "accounted for.", ""]
    lines += [f"- {name}: {value:,}" for name, value in counts.items()]
    if info.get("seconds") is not None:
        lines.append(f"- wall time of this run: {info['seconds'] / 60:.1f} min")
    if ceiling is not None:
        lines += ["", f"Non-private LDA of the same training users (dp-vem's algorithm without noise, same start): "
                  f"exact NPMI {ceiling['npmi']:.4f}, contrast {ceiling['contrast']:.4f}; the ratios below are to it, "
                  f"against the {info['unit']} level's targets (topicdp.forecast.TARGETS)."]
    lines += ["", "| road | epsilon | exact NPMI | exact contrast | NPMI ratio | contrast ratio | met targets |",
              "|---|---|---|---|---|---|---|"]
    for e in _in_order(exact):
        ratio = [f"{e[k]:.2f}" if k in e and math.isfinite(e[k]) else "-" for k in ("npmi_ratio", "contrast_ratio")]
        met = "-" if "met_targets" not in e else ("yes" if e["met_targets"] else "no")
        lines.append(f"| {e['road']} | {e['epsilon']:g} | {e['npmi']:.4f} | {e['contrast']:.4f} | {ratio[0]} | "
                     f"{ratio[1]} | {met} |")
    return "\n".join(lines)
