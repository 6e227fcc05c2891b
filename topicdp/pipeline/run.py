"""Execute a release request: read, count, decide, select the vocabulary, release, compose.

The order is the guarantee's: every decision is made from public facts and DP outputs before the step it
gates spends anything, and every refusal says truthfully what was already spent. Exact statistics of the
private corpus go to the release's ``diagnostics`` (the owner's file), never to a printed line.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..corpus import user_selected
from ..rdp import PrivacyLedger, calibrate_gaussian
from ..private_release import PrivateRelease
from ..spectral import PreconditionError
from .charge import RunLedger, charged, open_charge
from .compose import compose_release, vocabulary_statement
from .mechanisms import MECHANISMS
from .plan import (Decision, ReleasePlan, ReleaseRefused, UnitCount, decide, plan_request, planned_words,
                   spent_statement, vocabulary_share)
from .proposal import REFERENCE_ORIGIN, propose, proposal_text
from .request import CorpusSource, ReleaseRequest, VocabularyPolicy, check_scheduler
from .sources import EMBEDDED_PUBLIC_HALF, InMemorySource, Records, bounded, build_corpus, open_source, read_records

if TYPE_CHECKING:
    from ..corpus import Corpus

__all__ = ["PipelineResult", "ReleaseRefused", "Records", "build_corpus", "noise_refusal", "read_records",
           "reference_corpus", "release", "release_prepared", "user_selected"]

logger = logging.getLogger("topicdp")


@dataclass
class PipelineResult:
    """What :func:`release` returns: the release and how it was decided."""

    release: PrivateRelease
    plan: ReleasePlan
    decision: Decision | None = None
    lines: list = field(default_factory=list)


def release(request: ReleaseRequest, *, echo: Callable[[str], None] | None = None) -> PipelineResult:
    """Run ``request`` end to end and return the :class:`topicdp.PrivateRelease` with its plan.

    Parameters
    ----------
    request : ReleaseRequest
    echo : callable, optional
        Receives each line of the plan, the forecasts and the progress (default: INFO lines on the
        ``topicdp`` logger). Every line is a function of public facts and DP outputs.

    Raises
    ------
    ReleaseRefused
        Where a forecast says the topics would be noise (unless ``release_anyway``), or the stated number of
        units is not the corpus'; its message says what was spent.
    """
    lines, say = _lines(echo)
    reference = read_reference(request) if request.reference is not None else None
    request = with_reference_words(request, reference)
    plan = plan_request(request, reference)

    def run(ledger: PrivacyLedger, charged_to_file: bool) -> PipelineResult:
        if request.guarantee == "random-dp":
            return PipelineResult(_random_dp(plan, say, ledger if charged_to_file else None), plan, None, lines)
        with _cluster(request) as client, contextlib.closing(open_source(request, client,
                                                                         request.work_dir)) as source:
            return _release_dp(plan, reference, source, client, say, lines, ledger)

    return _charged_run(plan, say, run)


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


def _charged_run(plan: ReleasePlan, say: Callable[[str], None],
                 run: Callable[[PrivacyLedger, bool], PipelineResult]) -> PipelineResult:
    """Say the plan, plan the run in its persisted ledger (or refuse) before any reading, then ``run(ledger,
    charged_to_file)`` with the run's ledger, and complete the run in the file however it ends."""
    for line in plan.lines():
        say(line)
    charge = open_charge(plan, say)
    ledger = PrivacyLedger() if charge is None else charge.run_ledger()
    with charged(charge, ledger) as done:
        result = run(ledger, charge is not None)
        done(result.release)
    return result


@contextlib.contextmanager
def _cluster(request: ReleaseRequest):
    """The Dask client of ``request.scheduler`` (a local cluster of N workers, or an address), or None."""
    if request.scheduler is None:
        yield None
        return
    from ..streaming import dask_client

    workers = check_scheduler(request.scheduler)
    with dask_client(None if workers else request.scheduler, n_workers=workers or 1) as client:
        yield client


# -- a release on a source the caller holds --------------------------------------------------------------

def release_prepared(plan: ReleasePlan, source, *, spent: PrivacyLedger | None = None, simulate: bool = True,
                     echo: Callable[[str], None] | None = None) -> PipelineResult:
    """Release ``plan`` (guarantee ``"dp"``) on ``source``, a reader the caller holds, by :func:`release`'s own
    steps: its charge to the request's persisted ledger (planned before ``source`` is read, completed after), the
    census against a stated count, the DP count, the decision, the mechanism and the report.

    It exists so that a caller releasing one corpus many times (``topicdp compare``: every road at every epsilon
    on the same training users) reads and tokenises the corpus once and still releases each time exactly as
    ``topicdp privatize`` would, with no copy of the steps.

    Parameters
    ----------
    plan : topicdp.pipeline.plan.ReleasePlan
        From :func:`plan_request` (its reference, if any, is the public P the decision is simulated on).
    source
        A reader of the private corpus with :class:`~topicdp.pipeline.sources.InMemorySource`'s methods (e.g.
        :meth:`InMemorySource.of_records`).
    spent : PrivacyLedger, optional
        Receives, however the run ends (released, refused, failed), every entry it drew: a caller composing several
        releases states their total from it.
    simulate : bool, default True
        With a reference, decide dp-vem on its simulation on it, as :func:`release` does; False: on its closed form
        (a quicker, coarser decision that the caller states).
    echo : callable, optional
        As :func:`release`'s.

    Raises
    ------
    ReleaseRefused
        As :func:`release`; a persisted ledger's refusal (:class:`topicdp.rdp.BudgetExceededError`) before any
        reading.
    """
    from .charge import RunLedger

    if plan.request.guarantee != "dp":
        raise ValueError("release_prepared releases a plan of guarantee 'dp'; the random-DP road is TopicDP's own")
    lines, say = _lines(echo)
    reference = None if plan.reference is None else (list(plan.reference[0]), list(plan.reference[1]))
    ledgers: list[PrivacyLedger] = []

    def run(ledger: PrivacyLedger, _: bool) -> PipelineResult:
        ledgers.append(ledger)
        return _release_dp(plan, reference, source, None, say, lines, ledger, simulate=simulate)

    try:
        return _charged_run(plan, say, run)
    finally:
        if spent is not None and ledgers:
            ledger = ledgers[0]
            spent.record(ledger.drawn() if isinstance(ledger, RunLedger) else ledger.records)


def _release_dp(plan: ReleasePlan, reference, source, client, say, lines: list,
                ledger: PrivacyLedger | None = None, *, simulate: bool = True) -> PipelineResult:
    """The (epsilon, delta)-DP road: count, decide, vocabulary, prepare, release, compose.

    Whatever stops it after a spend (a refusal, a precondition, a shard gone, any error) leaves as a
    :class:`ReleaseRefused` that names what the ledger recorded, so no failure hides a spend. ``simulate``:
    False decides dp-vem on its closed-form forecast even with a reference (:func:`release_prepared`).
    """
    ledger = PrivacyLedger() if ledger is None else ledger
    try:
        return _release_steps(plan, reference, source, client, say, lines, ledger, simulate=simulate)
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


def _release_steps(plan: ReleasePlan, reference, source, client, say, lines: list,
                   ledger: PrivacyLedger, *, simulate: bool = True) -> PipelineResult:
    request = plan.request
    n = source.census()
    if request.n_units is not None and n != request.n_units:
        # replace-one neighbours all have the stated count, so this refusal is the same for all of them
        raise ReleaseRefused(f"the corpus does not have the {request.n_units} {request.unit}s stated public "
                             "(n_units); state the right number, or leave it out (add/remove neighbours)")
    corpus, unusable = None, None
    if request.vocabulary.kind != "dp":
        # the words are known before any spend: prepare first, so that a shard gone since the census stops here,
        # before the count is drawn. A corpus with no document holding a word of them is prepared as an N=0 corpus
        # and goes on like any other (whether a corpus, a period of a series, is empty is private); a preparation
        # that fails otherwise is refused, under a DP count only after the count is drawn, so that the ledger,
        # whose totals later releases publish, records the count whatever the private data made of the preparation
        try:
            corpus = _prepare(source, request.vocabulary.words, request, say)
        except ValueError as exc:
            if request.n_units is not None:
                raise
            unusable = exc
    source.check_unchanged()
    count, count_sigma = unit_count(plan, n, ledger)
    if unusable is not None:
        raise unusable
    n_words, vocabulary_forecast = planned_words(plan, count)
    for line in vocabulary_forecast.lines() if vocabulary_forecast is not None else ():
        say(line)
    # with a public reference, dp-vem is simulated on it before any refusal (public: it spends nothing), and the
    # decision rests on that simulation, not on the closed form. Before a DP selection the words are not known yet:
    # the reference's own most frequent words at the size the plan forecasts stand in for them.
    simulation, simulated_on = None, ""
    if simulate and reference is not None and "dp-vem" in plan.candidates and n_words >= request.n_topics:
        simulation, simulated_on = _first_simulation(plan, reference, corpus, n_words, count)
    decision = decide(plan, count, n_words=n_words, simulation=simulation, words=simulated_on)
    for line in decision.lines():
        say(line)
    decision = _with_proposal(decision, plan, reference, say, simulate)
    _refuse_noise(decision, request, "the forecast")
    selection = None
    if request.vocabulary.kind == "dp":
        source.check_unchanged()
        selection = _select_vocabulary(plan, source, ledger)
        words = selection.words
        say(f"the DP vocabulary kept {len(words)} words (a DP output; at most {request.vocabulary.max_features})")
        if len(words) < request.n_topics:
            raise ReleaseRefused(f"the DP vocabulary kept {len(words)} words, fewer than the {request.n_topics} "
                                 "topics asked for: give a public word list or a larger vocabulary budget")
        if simulation is not None:  # re-simulated on the selected words (a DP output): public, nothing spent
            simulation = _start_and_simulate(plan, reference, words, count)
            simulated_on = f"the {len(words)} selected words"
        decision = decide(plan, count, n_words=len(words), simulation=simulation, words=simulated_on)
        say(f"re-planned on the {len(words)} selected words: {decision.mechanism}, " + _figures(decision.forecast))
        if decision.simulated:
            say(f"simulated on the public reference ({simulated_on}):")
        for line in decision.forecast.lines()[1:] if decision.forecast is not None else ():
            say("  " + line)  # the figures on the selected words, and what they mean for the topics
        decision = _with_proposal(decision, plan, reference, say, simulate)
        _refuse_noise(decision, request, "the forecast on the selected vocabulary")
        corpus = _prepare(source, words, request, say)
    assert corpus is not None
    if isinstance(ledger, RunLedger):  # a persisted ledger: the chosen mechanism's topics planned in it, or refused
        ledger.plan_topics(decision.mechanism, decision.reason)
    start = None
    if decision.mechanism == "dp-vem" and reference is not None:
        from ..variational import public_init

        start = public_init(reference_corpus(reference, corpus.vocabulary, request.source), request.n_topics,
                            unit=str(request.unit))
        say(f"starting from topics fitted on the public reference {request.reference}")
    before = len(ledger)
    try:
        released = MECHANISMS[decision.mechanism].release(
            plan, corpus, n_units=count.value, ledger=ledger, start=start, client=client,
            vocabulary=vocabulary_statement(request.vocabulary.kind, selection, request.source.built_in,
                                            request.vocabulary.origin))
    except PreconditionError as exc:  # a spectral precondition checked on released quantities
        raise ReleaseRefused(str(exc)) from None
    final = compose_release(released, plan=plan, decision=decision, ledger=ledger, count_sigma=count_sigma,
                            topic_entries=ledger.records[before:])
    final.diagnostics.setdefault("corpus", {}).update(source.diagnostics())
    return PipelineResult(final, plan, decision, lines)


def _first_simulation(plan: ReleasePlan, reference, corpus, n_words: int, count: UnitCount):
    """dp-vem simulated on P before the decision, and which words it ran on: the release's (a public list, the
    corpus prepared on it), or, before a DP selection, P's most frequent words at the size the plan forecasts."""
    if corpus is not None:
        words, simulated_on = list(corpus.vocabulary), "the release's words"
    else:
        words = reference_vocabulary(reference, plan.request.source, max_features=max(int(n_words), 2))
        simulated_on = (f"the reference's {len(words)} most frequent words, standing in for the DP vocabulary's "
                        "forecast size before it is selected")
    return _start_and_simulate(plan, reference, words, count), simulated_on


def _prepare(source, words, request: ReleaseRequest, say) -> "Corpus":
    corpus = source.prepare(words, _bounding_seed(request))
    say(f"corpus read and prepared ({len(corpus.vocabulary)} words); its exact counts are private and go to the "
        "diagnostics only")
    return corpus


def _bounding_seed(request: ReleaseRequest):
    """The contribution bounds' seed, drawn once per release (OS entropy unless the request is seeded) and
    shared by every shard, so that a sharded release bounds each user as an in-memory one does."""
    return np.random.SeedSequence() if request.seed is None else np.random.SeedSequence([request.seed, 3])


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


def _with_proposal(decision: Decision, plan: ReleasePlan, reference, say, simulate: bool = True) -> Decision:
    """``decision`` with the configuration the plan proposes where it refuses (:mod:`topicdp.pipeline.proposal`:
    public forecasts only), said as a line; unchanged where it does not refuse. ``simulate``: as the decision's
    (False: the closed forms, :func:`release_prepared`); a sharded corpus's configurations are forecast by the
    closed forms (its one candidate, dp-vem, is simulated only on the request's own words)."""
    if not decision.noise:
        return decision
    simulate = simulate and not plan.request.source.sharded
    proposal = propose(decision, plan, reference, lambda request, count: forecast_request(
        request, reference, count, simulate=simulate))
    text = proposal_text(proposal)
    say(text)
    say(f"  ({len(proposal.tried)} configuration(s) forecast on public facts in {proposal.seconds:.1f} s)")
    return replace(decision, proposal=text)


def forecast_request(request: ReleaseRequest, reference, count: UnitCount, *, simulate: bool = True) -> Decision:
    """The decision the release of ``request`` would make at ``count`` units, from public facts only: its plan, the
    vocabulary size it forecasts, dp-vem's simulation on P (on P's words at that size, or the request's public list)
    where there is a reference, and :func:`decide`. It reads nothing private and spends nothing."""
    request = with_reference_words(request, reference)
    plan = plan_request(request, reference)
    n_words, _ = planned_words(plan, count)
    simulation, on = None, ""
    if simulate and reference is not None and "dp-vem" in plan.candidates and n_words >= request.n_topics:
        if request.vocabulary.kind == "public":
            words, on = list(request.vocabulary.words or ()), "the release's words"
        else:
            words = reference_vocabulary(reference, request.source, max_features=max(int(n_words), 2))
            on = f"the reference's {len(words)} most frequent words"
        simulation = _start_and_simulate(plan, reference, words, count)
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
    """The public reference corpus' (texts, users), read once per release."""
    from ..corpus import embedded_texts, read_source_records

    assert request.reference is not None
    if request.reference == "embedded":
        texts = embedded_texts()[:EMBEDDED_PUBLIC_HALF]
        return texts, list(range(len(texts)))
    pairs = list(read_source_records(request.reference, request.source.text_field, request.source.user_field))
    if not pairs:
        raise ValueError(f"{request.reference}: no documents")
    return [t for t, _ in pairs], [u for _, u in pairs]


def reference_corpus(reference: tuple[Sequence, Sequence], vocabulary: Sequence[str],
                     source: CorpusSource) -> "Corpus":
    """The public reference on the release's vocabulary and contribution bounds."""
    return bounded_reference(reference_text(reference, vocabulary, source), source)


def reference_text(reference: tuple[Sequence, Sequence], vocabulary: Sequence[str],
                   source: CorpusSource) -> "Corpus":
    """The public reference on the release's vocabulary, whole (no contribution bound): the text a simulation's
    topics are scored on."""
    from ..corpus import Corpus

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
    budget = plan.budget.count
    assert budget is not None  # split_budget gives a count budget when no count is stated
    sigma = calibrate_gaussian(budget.epsilon, budget.delta, 1.0, method="analytic")
    ledger.add_gaussian("unit count", sigma, 1.0, unit=str(request.unit), neighbours=str(request.neighbours))
    noisy = gaussian_count(n, sigma, np.random.default_rng(_seed(request, 2)))
    return UnitCount(max(1, int(round(noisy))), "DP count", sigma), sigma  # rounding, flooring: post-processing


def gaussian_count(n: int, sigma: float, rng: np.random.Generator) -> float:
    """The Gaussian mechanism on a count (L2 sensitivity 1 under add/remove): ``n + N(0, sigma^2)``."""
    return n + rng.normal(0.0, sigma)


def _seed(request: ReleaseRequest, stream: int):
    """A noise stream of its own for each step; OS entropy unless the request is seeded."""
    return None if request.seed is None else np.random.SeedSequence([request.seed, stream])


def _select_vocabulary(plan: ReleasePlan, source, ledger: PrivacyLedger):
    request, budget = plan.request, plan.budget.vocabulary
    assert budget is not None
    return source.select_vocabulary(epsilon=budget.epsilon, delta=budget.delta, neighbours=str(request.neighbours),
                                    max_features=request.vocabulary.max_features, random_state=_seed(request, 1),
                                    ledger=ledger)


def reference_vocabulary(reference: tuple[Sequence, Sequence], source: CorpusSource, *, max_features: int,
                         min_df: int = 1, max_df: float = 1.0) -> list[str]:
    """The public reference's words as a texts' vocabulary is built (document-frequency limits, the
    ``max_features`` most frequent, the source's stop words): public, a function of the reference alone. It
    stands in for a DP selection's words before they are known, and is the release's vocabulary when asked for
    (:meth:`VocabularyPolicy.from_reference`)."""
    from ..corpus import Corpus

    texts, users = reference
    corpus = bounded(source, Corpus.from_texts(texts, users, min_df=min(min_df, len(texts)), max_df=max_df,
                                               max_features=max_features, stop_words=source.tokenizer_stop_words))
    return list(corpus.vocabulary)


def _start_and_simulate(plan: ReleasePlan, reference, words: Sequence[str], count: UnitCount):
    """dp-vem simulated on the public reference, on ``words`` (:func:`simulate_dp_vem`)."""
    return simulate_dp_vem(plan, reference_text(reference, words, plan.request.source), count)


def simulate_dp_vem(plan: ReleasePlan, reference: "Corpus", count: UnitCount, *, n_draws: int | None = None):
    """dp-vem from a public start, simulated on the public reference (its whole text on the release's words,
    :func:`reference_text`) at the private signal-to-noise ratio (:func:`topicdp.variational.forecast_on_reference`,
    ``n_draws`` simulated releases, by default the decision's :data:`~topicdp.variational.SIMULATION_DRAWS`): public
    data, the count and the words only, nothing spent.

    The simulated releases are fitted on the reference under the private corpus' contribution bounds
    (:func:`bounded_reference`: its units like the private ones) and scored on its whole text: the bounds limit what
    one private unit contributes to the statistics, and public text has nothing to protect, while a pair of words
    that never occur together scores -1, so less text reads a noisy list lower (on blogs at 500 private bloggers,
    user level, 20 posts each, the simulated releases' NPMI read 0.46x the LDA's on a reference capped at 20 posts
    per blogger and 0.61x on the same reference whole, where the forced releases read 0.54-0.57x on held-out
    bloggers: ``docs/results/decision_validation.md``).

    The simulation fits the start itself, on its own half of the reference; the start given to the model here only
    says that the release will start from public topics (the release's own start is fitted on the whole reference
    after the decision)."""
    from ..variational import SIMULATION_DRAWS, forecast_on_reference

    request, V = plan.request, reference.n_words
    # the release's estimator, told that it will start from public topics (any start: the simulation fits its own);
    # the simulation's fits keep their own ledgers (forecast_on_reference), and nothing of the budget is spent
    model = MECHANISMS["dp-vem"].estimator(plan, count.value, np.full((request.n_topics, V), 1.0 / V))
    n_draws = SIMULATION_DRAWS if n_draws is None else n_draws
    return forecast_on_reference(model, bounded_reference(reference, request.source), count.value, n_draws=n_draws,
                                 top_n=min(10, V - 1), vocabulary_share=vocabulary_share(plan, V, count),
                                 score_on=reference)


def _random_dp(plan: ReleasePlan, say, ledger: PrivacyLedger | None = None):
    """TopicDP over the request's model with a sampled sensitivity: random DP, not DP (its report says so)."""
    request = plan.request
    source = InMemorySource(request)
    corpus = source.prepare(request.vocabulary.words)
    distribution = None
    if plan.reference is not None:
        distribution = reference_corpus(plan.reference, corpus.vocabulary, request.source)
        say(f"public reference P: {request.reference}")
    privatizer = random_dp_privatizer(request, distribution, say=say)
    if distribution is not None:  # a public P: the pilot reads nothing private
        privatizer = random_dp_pilot(privatizer, corpus, request, say)
    sample = privatizer.sample_sensitivity(corpus)
    sigma = privatizer.noise_scale(sample.sensitivity)
    fc = random_dp_forecast(request, sigma, corpus.n_words)
    say(f"sampled sensitivity {sample.sensitivity:.4g} over {sample.h} pairs: sigma {sigma:.4g}")
    for line in fc.lines():
        say("  " + line)
    if fc.verdict == "noise" and not request.release_anyway:
        raise ReleaseRefused("the forecast from the sampled sensitivity says this release would be noise; pass "
                             "release_anyway=True to release it all the same (random DP spends "
                             "nothing of a DP budget; the sampling's fits are done)")
    vocabulary = vocabulary_statement(request.vocabulary.kind, None, request.source.built_in,
                                      request.vocabulary.origin)  # where the words came from (a file, P's words)
    released = privatizer.fit(corpus, keep_nonprivate=request.keep_nonprivate, vocabulary_source=vocabulary,
                              sensitivity_sample=sample, ledger=ledger).release_
    released.diagnostics.setdefault("corpus", {}).update(source.diagnostics())
    return released


#: the pairs of the random-DP road's pilot sample (:func:`random_dp_pilot`)
PILOT_PAIRS = 2


def random_dp_pilot(privatizer, corpus, request: ReleaseRequest, say: Callable[[str], None]):
    """Forecast the random-DP release from the first :data:`PILOT_PAIRS` pairs of its sensitivity sample and refuse
    before the rest are fitted where even they say noise; returns ``privatizer`` with its pair seed fixed (drawn
    here when the sampling has none), so that the full sample's first pairs are the pilot's.

    Why the pilot can refuse for the full sample: the full sample's sensitivity is its k-th smallest distance of h,
    and at most h - k of the h exceed it. The pilot's pairs are the sample's first pairs (one child seed per pair,
    :func:`topicdp.samplers.sampler.draw_pairs`; the fits are deterministic, which TopicDP checks), so of the m
    pilot distances at least m - (h - k) are at most the full sensitivity: the pilot's (m - (h - k))-th smallest is a
    lower bound of it whenever m > h - k (k = h at gamma 0.1 in both sizings: the pilot's largest). Sigma grows with
    the sensitivity and the forecast's overlap falls with sigma, so noise at the pilot's bound is noise at the full
    sample. Where m <= h - k there is no such bound and no pilot is run. Sampling on a public P reads nothing
    private."""
    from ..samplers.progress import CostForecast

    sampling = privatizer.sampling
    _, h, k, _ = sampling.size()
    m = PILOT_PAIRS
    if sampling.random_state is None:
        entropy = np.random.SeedSequence().entropy
        assert isinstance(entropy, int)  # numpy draws an int when it is given no entropy
        sampling = replace(sampling, random_state=entropy % 2**63)
        privatizer = privatizer.set_params(sampling=sampling)
    if m <= h - k or m >= h:
        return privatizer
    # the same estimator, its sampling the pilot's for this one sample (so that it says its model's changes once)
    privatizer.set_params(sampling=replace(sampling, n_pairs=m, insecure_testing=True, cache_dir=None,
                                           max_minutes=None))
    try:
        sample = privatizer.sample_sensitivity(corpus)
    finally:
        privatizer.set_params(sampling=sampling)
    bound = float(np.sort(sample.deltas)[m - 1 - (h - k)])
    sigma = privatizer.noise_scale(bound)
    fc = random_dp_forecast(request, sigma, corpus.n_words)
    rest = CostForecast(h, float(np.median(sample.fit_seconds)) / 2, max(1, min(effective_jobs(request.n_jobs), h)))
    say(f"pilot: the first {m} of the sample's {h} pairs in {sample.wall_seconds:.1f} s: sensitivity at least "
        f"{bound:.4g}, sigma at least {sigma:.4g}: forecast {fc.verdict}")
    if fc.verdict == "noise" and not request.release_anyway:
        raise ReleaseRefused(
            f"the pilot sample's forecast (the first {m} of the sensitivity sample's {h} pairs: a lower bound of its "
            f"sensitivity, sigma >= {sigma:.4g}) says this release would be noise, and the full sample can only say "
            f"noise too; pass release_anyway=True to release it all the same (random DP spends nothing of a DP "
            f"budget; the pilot sampled on the public P, {sample.wall_seconds:.1f} s, and the full sample's "
            f"{rest.n_fits} fits, about {rest.seconds:.0f} s, were not run)")
    return privatizer


def effective_jobs(n_jobs: int) -> int:
    """The workers ``n_jobs`` means (-1: every core), as the sampler counts them."""
    from joblib import effective_n_jobs

    return effective_n_jobs(n_jobs)


def random_dp_privatizer(request: ReleaseRequest, distribution: "Corpus | None" = None, *, start=None,
                         say: Callable[[str], None] | None = None):
    """The request's TopicDP template (:attr:`ReleaseRequest.topicdp`) set for this release: its budget, unit,
    ``n_jobs`` and seed. With a public reference (``distribution``: P on the release's words) P is the sampling
    distribution, and a toolkit model that takes public starting topics (its ``start_param``) starts from topics
    fitted on P (``start``, fitted here unless given), which keeps f near one local optimum; TopicDP puts a wrapped
    library model in that form itself."""
    from sklearn.base import clone

    from .request import model_label

    template = request.topicdp
    privatizer = clone(template)  # its model a copy of the template's (TopicDP.__sklearn_clone__), changed below
    sampling, model = template.sampling, privatizer.model
    if distribution is not None:
        sampling = replace(sampling, distribution=distribution)
        start_param = getattr(model, "start_param", None)
        if start_param is not None and getattr(model, start_param, None) is None and not template.keep_model:
            if start is None:
                from ..variational import public_init

                start = public_init(distribution, request.n_topics, unit=str(request.unit))
            model.set_params(**{start_param: start})
            if say is not None:
                say(f"{model_label(model)} starts from topics fitted on the public reference")
    return privatizer.set_params(model=model, epsilon=request.epsilon, delta=request.delta, unit=str(request.unit),
                                 sampling=sampling, n_jobs=request.n_jobs, random_state=request.seed)


def random_dp_forecast(request: ReleaseRequest, sigma: float, n_words: int):
    """The random-DP release's readability forecast from its sampled sigma (public with a public P) and a public
    signal (:func:`topicdp.forecast.dirichlet_signal`), never from the private fit."""
    from ..forecast import dirichlet_signal, forecast_readability

    return forecast_readability(sigma, dirichlet_signal(request.n_topics, n_words, 0.15),
                                top_n=min(10, n_words - 1), unit=str(request.unit))
