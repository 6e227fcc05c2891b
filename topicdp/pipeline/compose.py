"""One report for the whole release: the unit count, the vocabulary and the topics, composed.

Every step records its noise in one :class:`topicdp.rdp.PrivacyLedger` of the release's unit and neighbour relation.
:func:`compose_release` extends the mechanism's report to state the whole: ``epsilon`` and ``delta`` are the
request's total, the sum of the steps' budgets (basic composition, Dwork & Roth 2014, Thm. 3.16: each step is
calibrated to its own share); ``composition_total`` adds the ledger's totals over every entry, so the tightest proven
total is stated; ``details['plan']`` holds the plan's count, split, choice and figures (:func:`decision_details`),
public where the plan read stated parameters and public data only, post-processing where it read a DP output. The
one count it publishes is the DP count of the units or the count the owner stated public.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace

from ..private_release import PrivateRelease, VocabularyStatement, vocabulary_status
from ..rdp import PrivacyLedger
from ..rdp.ledger import LaplaceEntry
from ..report import Check, ReportParts, extend_report, ledger_totals, total


def vocabulary_statement(policy_kind: str, selection=None, built_in: bool = False,
                         origin: str = "stated by the data owner") -> VocabularyStatement:
    """What the release says of its vocabulary, for the request's vocabulary policy; the estimator the pipeline fits
    states it (its ``vocabulary_source``)."""
    if policy_kind == "dp":
        return VocabularyStatement(
            "DP: selected under DP at the release's unit and neighbours (budget composed into composition_total)",
            f"The vocabulary was selected under DP (epsilon={selection.epsilon:g}, delta={selection.delta:g}, "
            f"{selection.neighbours} neighbours, sensitivity {selection.sensitivity:.4g}; Gopi et al. 2020, weighted "
            "Gaussian set union); composition_total includes it.")
    if policy_kind == "public" or built_in:
        return VocabularyStatement(f"public: a public word list {origin}" if policy_kind == "public" else
                                   "public: built from a corpus that is public as a whole", "The vocabulary is public.")
    return vocabulary_status("private-texts")


def compose_release(release: PrivateRelease, *, plan, decision, ledger, topic_entries,
                    count_sigma: float | None = None) -> PrivateRelease:
    """``release`` with the report of the whole pipeline (module docstring); the topics are unchanged. The sum of
    the steps' budgets is proven when each met its own: the count and the vocabulary are calibrated to theirs, and
    the topic step is checked here against its own ledger entries ``topic_entries`` (:func:`topic_step_epsilon`)."""
    request, budget = plan.request, plan.budget
    topics = release.report
    topic_eps = topic_step_epsilon(topic_entries, budget.topics.delta)
    within = Check("the topic step within its budget", topic_eps <= budget.topics.epsilon * (1 + 1e-9),
                   f"epsilon {topic_eps:.6g} at delta {budget.topics.delta:.3g} from its own ledger entries; budget "
                   f"{budget.topics.epsilon:.6g}")
    steps = {n: {"epsilon": b.epsilon, "delta": b.delta} for n, b in budget.parts().items()}
    totals = [total("basic composition of the steps", request.epsilon, request.delta, valid=within.passed,
                    steps=steps, topic_step_epsilon=topic_eps)]
    totals += ledger_totals(ledger, request.delta)
    published = {
        "report.mechanism": ("public: named by the data owner" if request.mechanism is not None else
                             _decision_status(request, decision, "chosen by the plan's rule")),
        "report.epsilon": "public: the stated total budget",
        "report.delta": "public: the stated total budget",
        "report.composition": _composition_status(topics.published, decision, "the ledger's entries, functions"),
        "report.composition_total": _composition_status(topics.published, decision, "functions"),
        "report.details.plan": "public: the plan's choices, from the stated parameters",
        "report.details.plan.n_units": ("public (stated): the number of units the owner stated" if
                                        decision.count.source == "stated" else
                                        "DP: a Gaussian count of the units (its budget is composed in)"),
        "report.details.plan.budget": "public: the stated split of the total budget",
        "report.details.plan.mechanism_choice": _decision_status(request, decision, "the plan's rule"),
        "report.details.plan.decision": _decision_status(request, decision, "the plan's forecast"),
    }
    plan_details = {"plan": {
        "n_units": decision.count.value, "n_units_source": decision.count.source, "count_sigma": count_sigma,
        "mechanism_choice": decision.reason, "decision": decision_details(decision, request.release_anyway,
                                                                            published_paths(request)),
        "budget": steps}}
    # the mechanism's report extended: the units' note before it, the composition's statuses and check after it
    report = extend_report(
        topics, ReportParts(published, checks=[within], details=plan_details),
        notes_first=[_units_note(request, decision)], mechanism=decision.mechanism, unit=str(request.unit),
        neighbours=str(request.neighbours), epsilon=request.epsilon, delta=request.delta,
        composition=ledger.entries(), composition_total=totals)
    return replace(release, report=report)


def topic_step_epsilon(entries, delta: float) -> float:
    """The smallest proven epsilon of the topic step's own ledger entries at ``delta``: the ledger's valid
    totals, and for pure-DP (Laplace) entries their basic composition (Dwork & Roth 2014, Thm. 3.16)."""
    own = PrivacyLedger()
    own.record(entries)
    best = min(own.totals(delta, "all").values(), default=float("inf"))
    if entries and all(isinstance(e, LaplaceEntry) for e in entries):
        best = min(best, sum(e.pure_epsilon for e in entries))
    return best


def _units_note(request, decision) -> str:
    if decision.count.source == "stated":
        return (f"Neighbouring corpora replace one {request.unit}'s data; the number of {request.unit}s "
                f"({decision.count.value}) is public, as the data owner stated.")
    return (f"Neighbouring corpora add or remove one {request.unit}; the number of {request.unit}s is private. "
            "The plan used a Gaussian count of them (a DP output, composed in); no exact count of the private "
            "data is published.")


def _decision_status(request, decision, what: str) -> str:
    """Public where the plan read stated parameters and public data only, else post-processing of DP outputs."""
    read = [name for name, dp in (("the DP unit count", decision.count.source != "stated"),
                                  ("the DP vocabulary", request.vocabulary.kind == "dp")) if dp]
    if read:
        return f"post-processing: {what}, from stated parameters, public data and {' and '.join(read)}"
    return f"public: {what}, from stated parameters and public data only"


def published_paths(request) -> dict:
    """The owner's file names a published field must not carry (the corpus, the reference, the ledger), each with
    the placeholder that stands for it: where the owner keeps their files is not part of a release."""
    ledger = request.ledger
    named = ((getattr(request.source, "path", None), "CORPUS"), (request.reference, "REFERENCE"),
             (None if ledger is None else getattr(ledger, "path", ledger), "LEDGER"))
    return {os.fspath(p): name for p, name in named  # a DataFrame or a built-in corpus has no path
            if isinstance(p, (str, os.PathLike)) and os.fspath(p) not in ("", "embedded", "themed")}


def decision_details(decision, release_anyway: bool, paths: dict | None = None) -> dict:
    """The figures the decision rested on: the chosen mechanism's forecast, its verdict and simulated draws, whether
    the owner released a refused forecast anyway, and the proposal (:func:`topicdp.pipeline.proposal.proposal_text`)."""
    fc = decision.forecast
    if fc is None:
        return {"verdict": None, "released_anyway": False}
    out = {"verdict": fc.verdict, "released_anyway": bool(release_anyway and decision.noise),
           "forecast": getattr(fc, "method", None)}
    if decision.proposal is not None:
        text = decision.proposal
        for path, name in sorted((paths or {}).items(), key=lambda item: -len(item[0])):
            text = text.replace(shlex.quote(path), name).replace(path, name)
        out["proposal"] = text
    for name in ("overlap_with_lda", "npmi", "contrast", "diversity"):
        value = getattr(fc, name, None)
        if value is not None:
            out[name] = float(value)
    draws = getattr(fc, "draw_verdicts", None)
    if draws is not None:
        readable = draws.count("readable")
        out.update(simulated_draws=len(draws), simulated_readable=readable, on_the_edge=fc.draws_on_the_edge)
    return out


def _composition_status(published: dict, decision, what: str) -> str:
    """Public where every step was calibrated on stated parameters, else post-processing (a released M2, a count)."""
    if decision.count.source == "stated" and not published.get("report.composition", "").startswith("post-processing"):
        return f"public: {what} of the stated budget split and parameters"
    return f"post-processing: {what} of the stated budget split and of DP outputs (the count, released quantities)"
