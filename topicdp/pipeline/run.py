"""Execute a release: prepare once (public facts, the private reader), release many (count, decide, vocabulary,
the road's release, compose).

:func:`prepare` reads the public reference once and plans the request; :func:`release_prepared` releases a plan on
a :class:`Prepared` corpus by the guarantee's order: every decision from public facts and DP outputs before the step
it gates spends anything, and every refusal says truthfully what was spent. :func:`release` is the two. Exact
statistics of the private corpus go to the release's ``diagnostics`` (the owner's file), never to a printed line.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from .._names import BOUND_PARAMETERS
from ..corpus import Corpus, read_source_records, user_selected
from ..rdp import PrivacyLedger
from ..private_release import PrivateRelease
from ..spectral import PreconditionError
from ..streaming import dask_client
from .charge import RunLedger, charged, open_charge
from .compose import compose_release, vocabulary_statement
from .plan import (Decision, ReleasePlan, UnitCount, decide, plan_request, planned_words, select_words,
                   vocabulary_share)
from .proposal import REFERENCE_ORIGIN, propose, proposal_text
from .request import (CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, check_scheduler,
                      spent_statement)
from .roads import MECHANISMS, RANDOM_DP, public_start
from .sources import (EMBEDDED_PUBLIC_HALF, Records, bounded, build_corpus, open_source, prepare_corpus,
                      read_corpus, read_records)

__all__ = ["PipelineResult", "Prepared", "ReleaseRefused", "Records", "build_corpus", "noise_refusal", "prepare",
           "read_records", "reference_corpus", "reference_records", "reference_vocabulary", "release",
           "release_prepared", "user_selected"]

logger = logging.getLogger("topicdp")


@dataclass
class PipelineResult:
    """What :func:`release` returns: the release and how it was decided."""

    release: PrivateRelease
    plan: ReleasePlan
    decision: Decision | None = None
    lines: list = field(default_factory=list)
    forecast: Any = None  # the random-DP road's forecast from its sampled sigma (a DP release's is the decision's)


@dataclass
class Prepared:
    """One corpus prepared for any number of releases (:func:`prepare`): the request, its plan, the public reference
    read once, and the private corpus' reader (``source``, or the request's own), opened at its first use, after a
    release's charge. What depends on public data only is built once per vocabulary and kept. Close it (or use it as
    a context manager) to release the reader and the Dask ``client``."""

    request: ReleaseRequest
    plan: ReleasePlan
    reference: tuple[list, list] | None = None
    source: Any = None
    client: Any = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def reader(self):
        """The private corpus' reader (opened here at the first call)."""
        if self.source is None:
            if self.client is None and self.request.scheduler is not None:  # N local workers, or an address
                workers = check_scheduler(self.request.scheduler)
                self.client = self._stack.enter_context(dask_client(None if workers else self.request.scheduler,
                                                                    n_workers=workers or 1))
            self.source = self._stack.enter_context(contextlib.closing(
                open_source(self.request, self.client, self.request.work_dir)))
        return self.source

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> "Prepared":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _kept(self, key: tuple, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def _source(self, source: CorpusSource | None) -> tuple[CorpusSource, tuple]:
        """``source`` (default the request's) and what of it the reference's corpora read: its stop words and
        contribution bounds (a proposal's configuration may change them)."""
        source = self.request.source if source is None else source
        return source, (str(source.tokenizer_stop_words),) + tuple(getattr(source, n) for n in BOUND_PARAMETERS)

    def reference_text(self, words: Sequence[str], source: CorpusSource | None = None) -> "Corpus":
        """The public reference on ``words``, whole (:func:`reference_text`), tokenised as ``source`` says."""
        reference = self.reference
        assert reference is not None
        source, key = self._source(source)
        return self._kept(("text", tuple(words), key), lambda: reference_text(reference, words, source))

    def reference_corpus(self, words: Sequence[str], source: CorpusSource | None = None) -> "Corpus":
        """The public reference on ``words`` under ``source``'s contribution bounds (:func:`bounded_reference`)."""
        source, key = self._source(source)
        return self._kept(("bounded", tuple(words), key),
                          lambda: bounded_reference(self.reference_text(words, source), source))

    def start(self, plan: ReleasePlan, words: Sequence[str]) -> np.ndarray:
        """Topics fitted on the public reference on ``words`` at ``plan``'s K, unit and bounds
        (:func:`topicdp.forecast.public_init`): dp-vem's start and a random-DP model's."""
        from ..forecast import public_init

        r = plan.request
        unit, (_, key) = str(r.unit), self._source(r.source)
        return self._kept(("start", tuple(words), r.n_topics, unit, key),
                          lambda: public_init(self.reference_corpus(words, r.source), r.n_topics, unit=unit))

    def reference_words(self, n_words: int, source: CorpusSource | None = None) -> list[str]:
        """The reference's ``n_words`` most frequent words (:func:`reference_vocabulary`): a DP selection's stand-in
        before its words are known."""
        reference = self.reference
        assert reference is not None
        source, key = self._source(source)
        return self._kept(("words", n_words, key),
                          lambda: reference_vocabulary(reference, source, max_features=n_words))


def prepare(request: ReleaseRequest, *, source=None, client=None,
            reference: tuple[list, list] | None = None) -> Prepared:
    """Read the request's public reference once (or take the caller's ``reference``: (texts, users)), give the
    request P's words where it asks for them, and plan it (ValueError: the plan's refusals, before anything private
    is read); the private corpus is read by the first release, after its charge. ``source``: a reader of the private
    corpus the caller holds (:meth:`InMemorySource.of_records`: tokenised once, released many times); ``client``: a
    dask.distributed Client for a sharded corpus (default: from ``request.scheduler``)."""
    if reference is None and request.reference is not None:
        reference = read_reference(request)
    request = with_reference_words(request, reference)
    return Prepared(request, plan_request(request, reference), reference, source, client)


def release(request: ReleaseRequest, *, echo: Callable[[str], None] | None = None) -> PipelineResult:
    """Run ``request`` end to end: :func:`prepare` then :func:`release_prepared` of its plan.

    ``echo`` receives each line of the plan, the forecasts and the progress (default: INFO lines on the ``topicdp``
    logger), every one a function of public facts and DP outputs. Raises :class:`ReleaseRefused` where a forecast
    says the topics would be noise (unless ``release_anyway``) or the stated number of units is not the corpus',
    saying what was spent.
    """
    with prepare(request) as prepared:
        return release_prepared(prepared.plan, prepared, echo=echo)


def release_prepared(plan: ReleasePlan, prepared: Prepared, *, ledger: PrivacyLedger | None = None,
                     simulate: bool = True, echo: Callable[[str], None] | None = None) -> PipelineResult:
    """Release ``plan`` on the ``prepared`` corpus by its road: charged to the request's persisted ledger (planned
    before the corpus is read, completed after), the census against a stated count, the DP count, the decision,
    the road's release and the report, composed once.

    ``plan``: ``prepared.plan``, or another plan of the same corpus and reference (``topicdp compare``'s roads).
    ``ledger`` receives, however the run ends, every entry it drew. ``simulate``: with a reference, decide dp-vem on
    its simulation on it (False: its closed form, quicker and coarser). Raises as :func:`release`, and a persisted
    ledger's :class:`topicdp.rdp.BudgetExceededError` before any reading.
    """
    lines, say = _lines(echo)
    drawn: list[PrivacyLedger] = []

    def run(run_ledger: PrivacyLedger, charged_to_file: bool) -> PipelineResult:
        drawn.append(run_ledger)
        if plan.request.guarantee == "random-dp":
            # TopicDP records in the run's ledger where a file or the caller composes it (else its report is its own)
            shared = run_ledger if charged_to_file or ledger is not None else None
            released, fc = RANDOM_DP.release(plan, prepared, say, shared)
            return PipelineResult(released, plan, None, lines, fc)
        return _release_dp(plan, prepared, say, lines, run_ledger, simulate=simulate)

    for line in plan.lines():
        say(line)
    charge = open_charge(plan, say)  # the run planned in its persisted ledger (or refused) before any reading
    try:
        run_ledger = PrivacyLedger() if charge is None else charge.run_ledger()
        with charged(charge, run_ledger) as done:  # completed in the file however the run ends
            result = run(run_ledger, charge is not None)
            done(result.release)
        return result
    finally:
        if ledger is not None and drawn:
            used = drawn[0]
            ledger.record(used.drawn() if isinstance(used, RunLedger) else used.records)


def with_reference_words(request: ReleaseRequest, reference) -> ReleaseRequest:
    """``request`` with P's own words as its public list where it asks for them (public, free, read with P itself);
    the list keeps the limits it was built with (``max_features``, ``min_df``, ``max_df``), which a proposal's
    command restates (:func:`topicdp.pipeline.proposal.command_line`)."""
    if request.vocabulary.kind != "reference":
        return request
    assert reference is not None  # the request refuses this policy without a reference
    policy = request.vocabulary
    words = reference_vocabulary(reference, request.source, min_df=policy.min_df, max_df=policy.max_df,
                                 max_features=policy.max_features)
    public = replace(VocabularyPolicy.public(words, REFERENCE_ORIGIN), min_df=policy.min_df, max_df=policy.max_df,
                     max_features=policy.max_features)
    return replace(request, vocabulary=public)


def _lines(echo: Callable[[str], None] | None) -> tuple[list[str], Callable[[str], None]]:
    """The run's printed lines and the function that says one (to ``echo``, default INFO on the logger)."""
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        (echo or logger.info)(line)

    return lines, say


def _release_dp(plan: ReleasePlan, prepared: Prepared, say, lines: list, ledger: PrivacyLedger, *,
                simulate: bool = True) -> PipelineResult:
    """The (epsilon, delta)-DP road: count, decide, vocabulary, prepare, release, compose. Whatever stops it after
    a spend leaves as a :class:`ReleaseRefused` naming what the ledger recorded, so no failure hides a spend."""
    try:
        return _release_steps(plan, prepared, say, lines, ledger, simulate=simulate)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM unwinding as it (the command's one line says this)
        if len(ledger):
            setattr(exc, "spent", spent_statement(*_spent(plan, ledger)))
        raise
    except Exception as exc:
        if not isinstance(exc, (ValueError, OSError)) and not len(ledger):
            raise  # e.g. a field of the wrong type (TypeError), before any spend: the error as the reader wrote it
        reason = (exc.reason if isinstance(exc, ReleaseRefused) else str(exc) if isinstance(exc, ValueError)
                  else f"{type(exc).__name__}: {exc}")  # the type names what went wrong in an OSError's message
        spent, topics_spent = _spent(plan, ledger)
        raise ReleaseRefused(reason, spent, topics_spent) from (None if isinstance(exc, ReleaseRefused) else exc)


def _spent(plan: ReleasePlan, ledger: PrivacyLedger) -> tuple[tuple[str, ...], bool]:
    """What the ledger recorded, as the steps of the plan with their budgets (public: the plan's split), and
    whether the topics' step had recorded any release."""
    names = [entry.name for entry in ledger.records]
    steps = []
    if "unit count" in names:
        steps.append(f"the unit count ({plan.budget.count})")
    if any(name.startswith("vocabulary") for name in names):
        steps.append(f"the vocabulary ({plan.budget.vocabulary})")
    topics = any(name != "unit count" and not name.startswith("vocabulary") for name in names)
    return tuple(steps), topics


def _release_steps(plan: ReleasePlan, prepared: Prepared, say, lines: list, ledger: PrivacyLedger, *,
                   simulate: bool = True) -> PipelineResult:
    request, source = plan.request, prepared.reader()
    n, corpus, unusable = read_corpus(source, request, say)
    count, count_sigma = unit_count(plan, n, ledger)
    if unusable is not None:
        raise unusable
    decision, selection, corpus = _decided(plan, prepared, corpus, count, say, ledger, simulate)
    if isinstance(ledger, RunLedger):  # a persisted ledger: the chosen mechanism's topics planned in it, or refused
        ledger.plan_topics(decision.mechanism, decision.reason)
    start = None
    if decision.mechanism == "dp-vem" and public_start(plan):
        start = prepared.start(plan, corpus.vocabulary)
        say(f"starting from topics fitted on the public reference {request.reference}")
    before = len(ledger)
    try:
        released = MECHANISMS[decision.mechanism].release(
            plan, corpus, n_units=count.value, ledger=ledger, start=start, client=prepared.client,
            vocabulary=vocabulary_statement(request.vocabulary.kind, selection, request.source.built_in,
                                            request.vocabulary.origin))
    except PreconditionError as exc:  # a spectral precondition checked on released quantities
        raise ReleaseRefused(str(exc)) from None
    final = compose_release(released, plan=plan, decision=decision, ledger=ledger, count_sigma=count_sigma,
                            topic_entries=ledger.records[before:])
    final.diagnostics.setdefault("corpus", {}).update(source.diagnostics())
    return PipelineResult(final, plan, decision, lines)


def _decided(plan: ReleasePlan, prepared: Prepared, corpus, count: UnitCount, say, ledger: PrivacyLedger,
             simulate: bool):
    """The decision at ``count`` (refused where it says noise), then a DP vocabulary's selection and the decision
    re-made on its words; returns (decision, selection or None, the prepared corpus)."""
    request = plan.request
    n_words, vocabulary_forecast = planned_words(plan, count)
    for line in vocabulary_forecast.lines() if vocabulary_forecast is not None else ():
        say(line)
    # with a public reference, dp-vem is simulated on it before any refusal (public: it spends nothing), and the
    # decision rests on that simulation, not on the closed form. Before a DP selection the words are not known yet:
    # the reference's own most frequent words at the size the plan forecasts stand in for them.
    simulation, simulated_on = _first_simulation(plan, prepared, None if corpus is None else corpus.vocabulary,
                                                 n_words, count, simulate)
    decision = decide(plan, count, n_words=n_words, simulation=simulation, words=simulated_on)
    for line in decision.lines():
        say(line)
    decision = _with_proposal(decision, plan, prepared, say, simulate)
    _refuse_noise(decision, request, "the forecast")
    if request.vocabulary.kind != "dp":
        return decision, None, corpus
    source = prepared.reader()
    selection = select_words(source, plan, ledger, _seed(request, 1), count.value)
    words = selection.words
    say(f"the DP vocabulary kept {len(words)} words (a DP output; at most {request.vocabulary.max_features})")
    if len(words) < request.n_topics:
        raise ReleaseRefused(f"the DP vocabulary kept {len(words)} words, fewer than the {request.n_topics} "
                             "topics asked for: give a public word list or a larger vocabulary budget")
    if simulation is not None:  # re-simulated on the selected words (a DP output): public, nothing spent
        simulation = _start_and_simulate(plan, prepared, words, count)
        simulated_on = f"the {len(words)} selected words"
    decision = decide(plan, count, n_words=len(words), simulation=simulation, words=simulated_on)
    say(f"re-planned on the {len(words)} selected words: {decision.mechanism}, " + _figures(decision.forecast))
    if decision.simulated:
        say(f"simulated on the public reference ({simulated_on}):")
    for line in decision.forecast.lines()[1:] if decision.forecast is not None else ():
        say("  " + line)  # the figures on the selected words, and what they mean for the topics
    decision = _with_proposal(decision, plan, prepared, say, simulate)
    _refuse_noise(decision, request, "the forecast on the selected vocabulary")
    return decision, selection, prepare_corpus(source, words, request, say)


def _first_simulation(plan: ReleasePlan, prepared: Prepared, words, n_words: int, count: UnitCount, simulate: bool):
    """dp-vem simulated on P before the decision, and which words it ran on: the release's ``words`` where they are
    known (a public list), or, before a DP selection, P's most frequent words at the size the plan forecasts; (None,
    "") where it is not simulated (``simulate`` False, no reference, no dp-vem, or fewer words than topics)."""
    if not (simulate and prepared.reference is not None and "dp-vem" in plan.candidates
            and n_words >= plan.request.n_topics):
        return None, ""
    if words is not None:
        words, simulated_on = list(words), "the release's words"
    else:
        words = prepared.reference_words(max(int(n_words), 2), plan.request.source)
        simulated_on = (f"the reference's {len(words)} most frequent words, standing in for the DP vocabulary's "
                        "forecast size before it is selected")
    return _start_and_simulate(plan, prepared, words, count), simulated_on


#: what a refusal says each verdict means
_VERDICT_WORDS = {"noise": "noise", "common words": "lists of common words, not themes",
                  "marginal": "below the overlap target of its unit (marginal)"}


def _figures(forecast) -> str:
    """A decision's figures in one line: the forecast overlap (and contrast where forecast), and the verdict."""
    if forecast is None:
        return "no forecast"
    if getattr(forecast, "overlap_with_lda", None) is None:  # a spectral configuration: its utility check
        return f"forecast {forecast.verdict}"
    contrast = "" if forecast.contrast is None else f", contrast {forecast.contrast:.2f}x a non-private LDA's"
    return f"forecast top-10 overlap with LDA {forecast.overlap_with_lda:.2f}{contrast}: {forecast.verdict}"


def _refuse_noise(decision: Decision, request: ReleaseRequest, what: str) -> None:
    """Refuse where the decision's forecast misses the unit's targets, unless the owner insists."""
    parts = _noise_parts(decision, what)
    if parts is not None and not request.release_anyway:
        head, edge = parts
        raise ReleaseRefused(f"{head} (see the advice above){edge}; pass release_anyway=True to release it all the "
                             "same" + ("" if decision.proposal is None else ". " + decision.proposal.rstrip(".")))


def _with_proposal(decision: Decision, plan: ReleasePlan, prepared: Prepared, say, simulate: bool = True) -> Decision:
    """``decision`` with the configuration the plan proposes where it refuses (:mod:`topicdp.pipeline.proposal`:
    public forecasts only), said as a line; unchanged where it does not refuse. ``simulate``: as the decision's
    (False: the closed forms, :func:`release_prepared`); a sharded corpus's configurations are forecast by the
    closed forms (its one candidate, dp-vem, is simulated only on the request's own words)."""
    if not decision.noise:
        return decision
    simulate = simulate and not plan.request.source.sharded
    proposal = propose(decision, plan, prepared.reference, lambda request, count: forecast_request(
        request, prepared, count, simulate=simulate))
    text = proposal_text(proposal)
    say(text)
    say(f"  ({len(proposal.tried)} configuration(s) forecast on public facts in {proposal.seconds:.1f} s)")
    return replace(decision, proposal=text)


def forecast_request(request: ReleaseRequest, prepared: Prepared, count: UnitCount, *,
                     simulate: bool = True) -> Decision:
    """The decision the release of ``request`` would make at ``count`` units, from public facts only: its plan, the
    vocabulary size it forecasts, dp-vem's simulation on P (on P's words at that size, or the request's public list)
    where there is a reference, and :func:`decide`. It reads nothing private and spends nothing."""
    reference = prepared.reference
    request = with_reference_words(request, reference)
    plan = plan_request(request, reference)
    n_words, _ = planned_words(plan, count)
    words = request.vocabulary.words if request.vocabulary.kind == "public" else None
    simulation, on = _first_simulation(plan, prepared, words, n_words, count, simulate)
    return decide(plan, count, n_words=n_words, simulation=simulation, words=on)


def noise_refusal(decision: Decision | None, what: str = "the forecast") -> str | None:
    """What the plan's refusal says of ``decision`` (None where it would not refuse): the words of the refusal a
    forced release (``release_anyway``) skipped, for a caller that shows both (``topicdp compare``). A function of
    the decision, so of public facts and DP outputs only."""
    parts = None if decision is None else _noise_parts(decision, what)
    return None if parts is None else parts[0] + parts[1]


def _noise_parts(decision: Decision, what: str) -> tuple[str, str] | None:
    """The refusal's sentence and its note on a simulation on the edge, or None where the forecast meets the
    targets."""
    if not decision.noise:
        return None
    if decision.simulated:
        what = "the simulation on the public reference" + what.removeprefix("the forecast")
    verdict = getattr(decision.forecast, "verdict", "noise")
    edge = ""
    if getattr(decision.forecast, "draws_on_the_edge", False):
        draws = decision.forecast.draw_verdicts
        edge = (f"; on the edge: {draws.count('readable')} of {len(draws)} simulated releases were readable, "
                "so about as many releases would meet the targets as miss them")
    return f"{what} says this release would be {_VERDICT_WORDS.get(verdict, verdict)}", edge


# -- reading -------------------------------------------------------------------------------------------


def read_reference(request: ReleaseRequest) -> tuple[list, list]:
    """The request's public reference (:func:`reference_records`), read once per release."""
    assert request.reference is not None
    return reference_records(request.reference, request.source)


def reference_records(reference: str, source: CorpusSource) -> tuple[list, list]:
    """The public reference's (texts, users), read with ``source``'s fields; ``"embedded"``: the first documents of
    the built-in Lee corpus, whose rest is then the private corpus (:func:`topicdp.pipeline.read_records`)."""
    from ..corpus import embedded_texts  # looked up when it is read

    if reference == "embedded":
        texts = embedded_texts()[:EMBEDDED_PUBLIC_HALF]
        return texts, list(range(len(texts)))
    pairs = list(read_source_records(reference, source.text_field, source.user_field))
    if not pairs:
        raise ValueError(f"{reference}: no documents")
    return [t for t, _ in pairs], [u for _, u in pairs]


def reference_corpus(reference: tuple[Sequence, Sequence], vocabulary: Sequence[str],
                     source: CorpusSource) -> "Corpus":
    """The public reference on the release's vocabulary and contribution bounds."""
    return bounded_reference(reference_text(reference, vocabulary, source), source)


def reference_text(reference: tuple[Sequence, Sequence], vocabulary: Sequence[str],
                   source: CorpusSource) -> "Corpus":
    """The public reference on the release's vocabulary, whole (no contribution bound): the text a simulation's
    topics are scored on."""
    return Corpus.from_texts(reference[0], reference[1], vocabulary=list(vocabulary),
                             stop_words=source.tokenizer_stop_words)


def bounded_reference(text: "Corpus", source: CorpusSource) -> "Corpus":
    """The public reference under the private corpus' contribution bounds, so that its units look like the private
    ones; the documents kept are a fixed choice (public text, so a seeded release repeats)."""
    return bounded(source, text, random_state=0)


# -- the private steps --------------------------------------------------------------------------------

def unit_count(plan: ReleasePlan, n: int, ledger: PrivacyLedger) -> tuple[UnitCount, float | None]:
    """The stated count (checked against the census ``n``: replace-one neighbours all have it), or a Gaussian
    count of the units (its budget from the plan's split, recorded in ``ledger``), with the count's sigma."""
    request = plan.request
    if request.n_units is not None:
        return UnitCount(n, "stated"), None
    entries = plan.count_entries  # split_budget gives a count budget when no count is stated
    sigma = entries[0].sigma
    ledger.record(entries)
    noisy = gaussian_count(n, sigma, np.random.default_rng(_seed(request, 2)))
    return UnitCount(max(1, int(round(noisy))), "DP count", sigma), sigma  # rounding, flooring: post-processing


def gaussian_count(n: int, sigma: float, rng: np.random.Generator) -> float:
    """The Gaussian mechanism on a count (L2 sensitivity 1 under add/remove): ``n + N(0, sigma^2)``."""
    return n + rng.normal(0.0, sigma)


def _seed(request: ReleaseRequest, stream: int):
    """A noise stream of its own for each step; OS entropy unless the request is seeded."""
    return None if request.seed is None else np.random.SeedSequence([request.seed, stream])


def reference_vocabulary(reference: tuple[Sequence, Sequence], source: CorpusSource, *, max_features: int,
                         min_df: int = 1, max_df: float = 1.0) -> list[str]:
    """The public reference's words as a texts' vocabulary is built (document-frequency limits, the
    ``max_features`` most frequent, the source's stop words): public, a function of the reference alone. It
    stands in for a DP selection's words before they are known, and is the release's vocabulary when asked for
    (:meth:`VocabularyPolicy.from_reference`)."""
    texts, users = reference
    corpus = bounded(source, Corpus.from_texts(texts, users, min_df=min(min_df, len(texts)), max_df=max_df,
                                               max_features=max_features, stop_words=source.tokenizer_stop_words))
    return list(corpus.vocabulary)


def _start_and_simulate(plan: ReleasePlan, prepared: Prepared, words: Sequence[str], count: UnitCount):
    """dp-vem simulated on the public reference, on ``words`` (its row's :attr:`topicdp.pipeline.roads.Road.simulate`).
    """
    source = plan.request.source  # a proposal's configuration may change its bounds
    text = prepared.reference_text(words, source)
    simulate = MECHANISMS["dp-vem"].simulate
    assert simulate is not None
    return simulate(plan, text, count, fitted_on=prepared.reference_corpus(words, source),
                    vocabulary_share=vocabulary_share(plan, text.n_words, count))
