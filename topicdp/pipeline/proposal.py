"""Before a refusal: the configurations that cost no privacy to try, forecast on public facts, and the one to propose.

A refused forecast is a function of public facts (the request, the public reference P, the words) and of the DP
count already drawn, and so is the same forecast for another configuration: another mechanism, another vocabulary
size (with P), P's words instead of a DP selection, the document level instead of the user level. :func:`propose`
forecasts at most :data:`MAX_CONFIGURATIONS` of them, in the order of how little they change, and stops at the first
readable; nothing private is read. :func:`proposal_text` is the one sentence every refusal carries, with the command
that runs the proposal (:func:`command_line`); a proposal at the document level says it protects a document only.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from .._names import RELEASE_DEFAULTS as D
from ..corpus import WEB_ARTEFACTS
from .plan import Decision, ReleasePlan, UnitCount
from .request import ReleaseRequest, VocabularyPolicy

#: the vocabulary sizes tried (P's most frequent words, or a DP selection's ``max_features``)
PROPOSAL_SIZES = (2000, 1000, 500, 5000)
#: the most configurations forecast before a refusal (each the decision's own forecast; the document level among them)
MAX_CONFIGURATIONS = 5
#: the origin a request's vocabulary has when the release built it from P's words (:func:`topicdp.pipeline.release`)
REFERENCE_ORIGIN = "built from the public reference P"


@dataclass(frozen=True)
class Configuration:
    """One configuration tried: its request, the keywords of :func:`topicdp.release` that differ, and what it
    changes of the guarantee (None: the same guarantee)."""

    label: str
    request: ReleaseRequest
    changes: dict
    guarantee_note: str | None = None


@dataclass(frozen=True)
class Proposal:
    """What :func:`propose` found: the configuration forecast readable (None: none was), its forecast, and what
    was tried (labels with their verdicts) in how many seconds."""

    configuration: Configuration | None
    forecast: Any
    tried: tuple
    seconds: float


def from_reference(request: ReleaseRequest) -> bool:
    """Whether the request's words are P's most frequent words (built by the release, public)."""
    return request.vocabulary.kind == "public" and request.vocabulary.origin == REFERENCE_ORIGIN


def configurations(decision: Decision, plan: ReleasePlan) -> list[Configuration]:
    """The configurations to try, in the order of how little they change (module docstring), at most
    :data:`MAX_CONFIGURATIONS`."""
    request, out = plan.request, []
    for name, fc in decision.forecasts.items():
        if name != decision.mechanism and fc is not None and not getattr(fc, "refuses", fc.verdict != "readable"):
            out.append(Configuration(f"mechanism {name}", replace(request, mechanism=name), {"mechanism": name}))
    policy, has_reference = request.vocabulary, request.reference not in (None, "embedded")
    if policy.kind == "dp" and has_reference:
        words = VocabularyPolicy.from_reference(policy.min_df, policy.max_df, policy.max_features)
        out.append(Configuration(f"P's {policy.max_features} most frequent words instead of a DP selection",
                                 replace(request, vocabulary=words), {"vocabulary_epsilon": None}))
    # a DP selection's size is tried only with P: without it the plan forecasts the selection's size by an upper
    # bound (max_features), on which a smaller selection looks readable until the selection keeps far fewer words
    if from_reference(request) or (policy.kind == "dp" and plan.reference is not None):
        current = policy.max_features
        # the nearest smaller sizes first (a smaller vocabulary concentrates each topic's mass), then larger ones
        sizes = sorted((s for s in PROPOSAL_SIZES if s != current), key=lambda s: (s > current, abs(s - current)))
        for size in sizes[:3]:
            if from_reference(request):
                vocabulary = VocabularyPolicy.from_reference(policy.min_df, policy.max_df, size)
                label = f"P's {size} most frequent words"
            else:
                vocabulary, label = replace(policy, max_features=size), f"a DP selection of at most {size} words"
            out.append(Configuration(label, replace(request, vocabulary=vocabulary), {"max_features": size}))
    if str(request.unit) != "user":
        return out[:MAX_CONFIGURATIONS]
    # last, the document level: no stated count and no per-user caps (they break document-level privacy)
    caps: dict[str, Any] = {name: None for name in ("max_docs_per_user", "max_tokens_per_user")
                            if getattr(request.source, name) is not None}
    changes = {"unit": "document", **({} if request.n_units is None else {"n_units": None}), **caps}
    dropped = "" if not caps else (f"; without the per-user caps ({', '.join(caps)}), which document-level "
                                   "privacy cannot have")
    alt = replace(request, unit="document", n_units=None, source=replace(request.source, **caps))
    return out[:MAX_CONFIGURATIONS - 1] + [Configuration(
        "the document level", alt, changes,
        "it protects one document, not a user: a user with many documents is not covered" + dropped)]


def propose(decision: Decision, plan: ReleasePlan, reference, forecast: Callable) -> Proposal:
    """Forecast :func:`configurations` in turn by ``forecast(request, count)``, the pipeline's own decision
    (:func:`topicdp.pipeline.run.forecast_request`), and stop at the first readable. At the document level the count
    is the DP count of users times P's documents per user (a public estimate; without P, a lower bound)."""
    start, tried = time.perf_counter(), []
    for config in configurations(decision, plan):
        count = decision.count
        if str(config.request.unit) != str(plan.request.unit):
            # P's documents per user (1 without P: each user has at least one)
            per_user = 1.0 if reference is None else len(reference[1]) / max(len(set(reference[1])), 1)
            count = UnitCount(max(1, round(count.value * per_user)), "estimate")
        try:
            outcome = forecast(config.request, count)
        except ValueError as exc:  # e.g. fewer words forecast than topics: not a proposal
            tried.append((config.label, f"not possible ({str(exc).split(':')[0]})"))
            continue
        verdict = getattr(outcome.forecast, "verdict", "no forecast")
        tried.append((config.label, verdict))
        if outcome.forecast is not None and not outcome.noise:
            return Proposal(config, outcome.forecast, tuple(tried), time.perf_counter() - start)
    return Proposal(None, None, tuple(tried), time.perf_counter() - start)


def proposal_text(proposal: Proposal) -> str:
    """The one sentence every refusal carries (module docstring): a function of the public forecasts alone (not of
    their time, which the pipeline says on a line of its own), so that it is the same for every run that sees them."""
    tried = "; ".join(f"{label}: {verdict}" for label, verdict in proposal.tried)
    if proposal.configuration is None:
        return (f"No configuration that costs no privacy to try is forecast readable ({tried or 'none to try'}): the "
                "release needs more units or a larger epsilon.")
    config, fc = proposal.configuration, proposal.forecast
    draws = getattr(fc, "draw_verdicts", None)
    how = (f"readable in {draws.count('readable')} of {len(draws)} simulated releases on P" if draws is not None
           else f"forecast {fc.verdict}")
    note = ("" if config.guarantee_note is None else
            f" This changes the guarantee: {config.guarantee_note}.")
    keywords = ", ".join(f"{k}={v!r}" for k, v in config.changes.items())
    return (f"Proposed, at no privacy cost to try (public forecasts only; tried {tried}): "
            f"{config.label}, {how}.{note} Run (a new release, charged as any): {command_line(config.request)} (from "
            f"Python: topicdp.release(..., {keywords})).")


def command_line(request: ReleaseRequest) -> str:
    """The ``topicdp privatize`` command of ``request`` (K, epsilon and the flags that differ from the defaults);
    words the request holds are named ``WORDS_FILE`` or ``STOP_WORDS_FILE``, output files are the owner's to add."""
    s, v = request.source, request.vocabulary
    flags: list[str] = ["topicdp", "privatize", str(s.path)]
    flags += ["--topics", str(request.n_topics), "--epsilon", f"{request.epsilon:g}"]  # stated even at the defaults
    _opt(flags, "--delta", request.delta, D.delta)
    _opt(flags, "--unit", str(request.unit), D.unit)
    _opt(flags, "--n-units", request.n_units, None)
    _opt(flags, "--reference", request.reference, None)
    _opt(flags, "--mechanism", request.mechanism, None)
    for name in ("text_field", "user_field"):
        _opt(flags, "--" + name.replace("_", "-"), getattr(s, name), getattr(D, name))
    for name in ("query", "user_fraction", "max_docs_per_user", "max_tokens_per_doc", "max_tokens_per_user"):
        _opt(flags, "--" + name.replace("_", "-"), getattr(s, name), None)
    if s.stop_words:
        flags += ["--stop-words", "web" if tuple(s.stop_words) == tuple(WEB_ARTEFACTS) else "STOP_WORDS_FILE"]
    if v.kind == "public" and not from_reference(request):
        flags += ["--vocabulary", "WORDS_FILE"]
    if v.kind != "public" or from_reference(request):
        _opt(flags, "--max-features", v.max_features, D.max_features)
    if v.kind in ("texts", "reference") or from_reference(request):
        _opt(flags, "--min-df", v.min_df, D.min_df)
        _opt(flags, "--max-df", v.max_df, D.max_df)
    if v.kind == "dp" and (v.epsilon is not None or v.delta is not None or request.reference not in (None, "embedded")):
        _opt(flags, "--vocabulary-epsilon", v.epsilon, None)
        _opt(flags, "--vocabulary-delta", v.delta, None)
    _opt(flags, "--seed", request.seed, None)
    _opt(flags, "--n-jobs", request.n_jobs, D.n_jobs)
    if request.ledger is not None:
        flags += ["--ledger", str(getattr(request.ledger, "path", request.ledger))]
    return " ".join(shlex.quote(f) for f in flags)


def _opt(flags: list, flag: str, value, default) -> None:
    if value is not None and value != default:
        flags += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
