"""The comparison's two files: ``table.md`` (publishable: every value in it is public, DP or random DP as its row
says) and ``diagnostics.md`` (the owner's exact scores, NOT for publication)."""

from __future__ import annotations

import math

#: the header of the owner's file, and the line that marks it
NOT_FOR_PUBLICATION = "NOT FOR PUBLICATION: exact scores of the private held-out texts (the data owner's diagnostics)"


def evaluation_total(rows: list[dict]) -> tuple[int, float | None, float]:
    """(number of evaluations, their composed epsilon, its delta): every evaluation read the same held-out users, so
    their Gaussian releases compose (one ledger: the tightest of its proven totals at the sum of their deltas)."""
    from ..rdp import PrivacyLedger

    evaluations = [r["evaluation"] for r in rows if r.get("evaluation")]
    if not evaluations:
        return 0, None, 0.0
    ledger = PrivacyLedger()
    for e in evaluations:
        ledger.add_gaussian("private evaluation", e["sigma"], e["sensitivity"], unit=e["unit"],
                            neighbours=e["neighbours"])
    delta = min(sum(e["delta"] for e in evaluations), 0.5)
    return len(evaluations), min(ledger.totals(delta).values()), delta


def format_table(rows: list[dict], info: dict) -> str:
    """The publishable table: per road and epsilon, the guarantee its report states (or the refusal and its
    reason) and the private NPMI and contrast of its top words on the held-out users, with their intervals."""
    eps_e, delta_e = info["evaluation"]
    n, total, total_delta = evaluation_total(rows)
    level = next((r["evaluation"]["level"] for r in rows if r.get("evaluation")), 0.9)
    lines = [f"# Compare: {info['corpus']}, {info['unit']} level, K = {info['n_topics']}, "
             f"{info['n_words']} words, delta {info['delta']:g} per release",
             "",
             f"Scores: each release's top-10 words scored on held-out {info['unit']}s (none of them read by any release) "
             f"under DP: mean NPMI and NPMI contrast with {100 * level:g}% intervals, each evaluation "
             f"({eps_e:g}, {delta_e:g})-DP at the {info['unit']} level (add/remove neighbours). The {n} evaluations "
             f"read the same held-out {info['unit']}s: together "
             + (f"({total:.3g}, {total_delta:.2g})-DP for them (their Gaussian releases composed)." if total is not None
                else "none was made.")
             + " Exact scores are in the owner's diagnostics file, not here.",
             "",
             "| road | epsilon | guarantee (as the release's report states it) | outcome | NPMI [interval] | "
             "contrast [interval] |",
             "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (_road_order(r["road"]), r["epsilon"])):
        lines.append("| " + " | ".join([r["road"], f"{r['epsilon']:g}", _guarantee(r), _outcome(r),
                                        *_scores(r)]) + " |")
    random_dp = any(r["road"].startswith("random-dp") for r in rows)
    lines += ["", "Random DP (the random-dp rows) is NOT differential privacy: its sensitivity is sampled from the "
              "public reference P and holds with probability 1 - gamma over pairs drawn from P; units unlike P's "
              "draws are not covered." if random_dp else
              "The random-DP road (TopicDP over gensim LDA, NOT DP) was not run (--quick or --no-random-dp).",
              "The spectral configurations need replace-one neighbours: their rows state the number of units public "
              "(the owner's statement); the other rows count the units under DP (add/remove neighbours), as "
              "topicdp privatize does.",
              "A refused row is refused by the plan (its reason shown); where it has scores, the release was forced "
              "(release_anyway) to show what the refusal withheld."]
    if info.get("seconds") is not None:
        lines.append(f"Wall time of this run: {info['seconds'] / 60:.1f} min.")
    return "\n".join(lines)


def _road_order(road: str) -> tuple:
    from ..pipeline import MECHANISMS

    names = list(MECHANISMS)
    return (names.index(road), road) if road in names else (len(names), road)


def _guarantee(row: dict) -> str:
    if row.get("guarantee"):
        return _cell(row["guarantee"])
    if row["status"] == "not applicable" and "document" in str(row.get("reason", "")):
        return "document level only"
    return ""


def _outcome(row: dict) -> str:
    status, reason = row["status"], row.get("reason")
    if status == "released":
        return "released"
    if status == "refused":
        return _cell(f"refused: {reason}" + ("; forced release scored" if row.get("evaluation") else ""))
    return _cell(f"{status}: {reason}")


def _scores(row: dict) -> tuple[str, str]:
    e = row.get("evaluation")
    if not e:
        return "", ""
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
    if ceiling is not None:
        lines += ["", f"Non-private LDA of the same training users (dp-vem's algorithm without noise, same start): "
                  f"exact NPMI {ceiling['npmi']:.4f}, contrast {ceiling['contrast']:.4f}; the ratios below are to it, "
                  f"against the {info['unit']} level's targets (topicdp.forecast.TARGETS)."]
    lines += ["", "| road | epsilon | exact NPMI | exact contrast | NPMI ratio | contrast ratio | met targets |",
              "|---|---|---|---|---|---|---|"]
    for e in sorted(exact, key=lambda e: (_road_order(e["road"]), e["epsilon"])):
        ratio = [f"{e[k]:.2f}" if k in e and math.isfinite(e[k]) else "-" for k in ("npmi_ratio", "contrast_ratio")]
        met = "-" if "met_targets" not in e else ("yes" if e["met_targets"] else "no")
        lines.append(f"| {e['road']} | {e['epsilon']:g} | {e['npmi']:.4f} | {e['contrast']:.4f} | {ratio[0]} | "
                     f"{ratio[1]} | {met} |")
    return "\n".join(lines)
