"""A private choice of one discrete setting (benchmark code, not part of the package, tested beside it: the benchmark
:mod:`private_choice_of_k` runs it; a user-facing choice of K would go through :func:`topicdp.pipeline.prepare`) (the number of topics K, the passes, the mechanism) among candidates.

Reading the exact coherence of candidate releases to pick K is a release nobody accounts for. Here every step that
reads the private corpus is a DP release charged to one :class:`topicdp.rdp.PrivacyLedger`, and the choice is
post-processing of DP outputs. Two selections, both with a proven bound:

``"each"`` (:func:`private_search`)
    Every candidate is fitted privately once and scored by the private evaluation of its top words
    (:func:`topicdp.metrics.private.private_coherence`: a Gaussian release); the choice is the candidate with the
    largest private score, a function of the DP outputs only (post-processing, Dwork & Roth 2014, Prop. 2.1). The
    total is the composition of every fit and every evaluation (the ledger's accounting; all-Gaussian entries compose
    exactly as GDP, Dong, Roth & Su 2022, Cor. 3.3). It is report-noisy-max with Gaussian noise on the whole
    statistic, accounted by composition rather than by a selection theorem: simple, and every candidate is seen.
``"repeat"`` (:func:`repeat_and_select`)
    Papernot & Steinke 2022 ("Hyperparameter tuning with Renyi differential privacy", ICLR, Thm. 2): run a
    random number T of times (T geometric with a stated mean, the truncated negative binomial with shape 1) a
    private run -- a uniformly drawn candidate, fitted and scored privately -- and publish only the best run. Its RDP
    is dp-accounting's ``RepeatAndSelectDpEvent`` of the run's Gaussian event, recorded in the ledger before the
    first run; the total does not grow with the number of candidates, but a candidate may never be run. Only the
    best run is published (its candidate, score and release): the theorem covers that output alone, so the other
    runs' scores, their number and their candidates are kept nowhere (the number of runs is part of the
    mechanism's hidden randomness; a best-of-T with T known is T runs composed).

Known limit (``docs/results/private_evaluation.md``): at a small evaluation budget the private scores lean towards
small K. The evaluation of a K-topic release counts about 100 K coordinates (10 K words, 45 K within and 45 K
across pairs), so at the same epsilon its noise sd grows as sqrt(K); a larger K's lists are also made of rarer
words, whose pair counts are smaller. Both put more of a larger candidate's pairs near the noise, where the
empirical-Bayes estimate of a pair's NPMI is shrunk towards its group's prior and the mean NPMI's error is
negative (blogs: -0.03 at sigma 477): the larger the candidate, the more its score is pulled down, by more than the
gap between the candidates' exact scores when the budget is small. Subtracting the bootstrap's bias estimate did
not fix it. So the search says when its choice is not resolved: ``SearchResult.unresolved`` lists the candidates
whose score is not separated from the chosen one's (the 90% interval of the difference of the two private scores,
half-width ``sqrt(h_chosen^2 + h_other^2)`` from the two independent evaluations' half-widths, contains 0), and a
``UserWarning`` names them and the evaluation epsilon; the choice is then to be read as unreliable at that budget
(post-processing of the released scores and intervals: no further privacy cost). A candidate whose evaluation
refused its intervals (:func:`topicdp.metrics.private.interval_refusal`: its score undetermined) is never
separated from the chosen one.

The score is named: ``"npmi"`` (the private mean NPMI of the candidate's top-10 lists on the corpus) or
``"contrast"`` (the private mean NPMI contrast); both read the candidate's own corpus at the search's unit. The
search refuses, before any fit reads the corpus, a total that would exceed the ledger's budget: the fits' planned
entries (as they will be recorded) and the evaluations' entries are checked together.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from topicdp._validation import check_delta, check_epsilon, check_option, check_random_state, check_real

SCORES = ("npmi", "contrast")


@dataclass(frozen=True)
class SearchResult:
    """What a private search publishes, and what its total covers.

    Attributes
    ----------
    chosen : hashable
        The chosen candidate (e.g. K).
    release : PrivateRelease
        The chosen candidate's release.
    scores : dict
        Candidate -> its private score (``"each"``: every candidate; ``"repeat"``: the chosen one only, the best
        run's score).
    intervals : dict
        Candidate -> the score's interval (``"each"`` only).
    score : str
        The score's name.
    mode : str
        ``"each"`` or ``"repeat"``.
    total_epsilon : float
        The ledger's total epsilon at ``total_delta`` after the search (every entry of the ledger, including any
        recorded before the search; ``covers`` lists this search's own entries).
    total_delta : float
    covers : list of str
        The ledger entries the search recorded (fits and evaluations, or the one repeated-selection event).
    runs : list
        The candidates in the order they were run (``"each"``; empty for ``"repeat"``, whose runs are not
        published).
    unresolved : list
        Candidates whose private score is not separated from the chosen one's (``"each"`` only; module docstring):
        empty when the choice is resolved at the search's evaluation budget.
    """

    chosen: Hashable
    release: Any
    scores: dict
    intervals: dict
    score: str
    mode: str
    total_epsilon: float
    total_delta: float
    covers: list
    runs: list = field(default_factory=list)
    unresolved: list = field(default_factory=list)

    def summary(self) -> str:
        rows = [f"  {c}: {self.scores[c]:+.4f}" + (f" [{self.intervals[c][0]:+.4f}, {self.intervals[c][1]:+.4f}]"
                                                 if c in self.intervals else "") for c in self.scores]
        if self.unresolved:
            rows.append(f"  NOT RESOLVED: the scores do not separate {self.chosen} from {self.unresolved}")
        return "\n".join([f"private search ({self.mode}) on the private mean {self.score}: chose {self.chosen}; total "
                          f"epsilon {self.total_epsilon:.4g} at delta {self.total_delta:g} "
                          f"({len(self.covers)} ledger entries of this search)", *rows])


def unresolved_candidates(chosen: Hashable, scores: Mapping, intervals: Mapping) -> list:
    """The candidates whose score is not separated from the chosen one's: the gap between the two private scores
    is at most ``sqrt(h_chosen^2 + h_other^2)``, the half-width of their difference's interval (the two evaluations'
    noises are independent, so the variances add; each half-width is z times its root mean squared error)."""
    def half(c) -> float:
        lo, hi = intervals[c]
        return (float(hi) - float(lo)) / 2.0

    # a refused interval (NaN: the evaluation said its scores are undetermined) separates nothing
    return [c for c in scores if c != chosen
            and not scores[chosen] - scores[c] > math.hypot(half(chosen), half(c))]


def _score_of(evaluation, score: str) -> tuple[float, tuple]:
    if score == "npmi":
        return evaluation.mean_npmi, evaluation.mean_npmi_interval
    return evaluation.mean_contrast, evaluation.mean_contrast_interval


def _planned_evaluation(n_topics: int, epsilon: float, delta: float, unit: str, neighbours: str,
                        clip: float | None, n_across: int | None, name: str):
    """The largest Gaussian entry an evaluation of a K-topic release (lists of 10) can record: the sensitivity for
    ``D <= 1 + 10 K + 45 K + n_across K`` (no word shared, no across pair drawn twice), planned before the release
    exists (:mod:`topicdp.metrics.private`: the sensitivity grows with D)."""
    from topicdp.rdp import calibrate_gaussian
    from topicdp.rdp.ledger import GaussianEntry

    per_topic = 45 if n_across is None else int(n_across)
    d_max = 1 + 10 * n_topics + 45 * n_topics + (per_topic * n_topics if n_topics > 1 else 0)
    c = math.sqrt(d_max) if clip is None else min(float(clip), math.sqrt(d_max)) if unit == "document" else clip
    base = c if neighbours == "add-remove" else math.sqrt(2.0) * c
    D = min(base, math.sqrt(d_max)) if unit == "document" else base
    return GaussianEntry(name, calibrate_gaussian(epsilon, delta, D, method="analytic"), D, unit=unit,
                         neighbours=neighbours)


def private_search(fits: Mapping[Hashable, Callable], corpus, *, epsilon: float, delta: float,
                   planned: Mapping[Hashable, Sequence] | None = None, score: str = "npmi",
                   unit: str = "document", neighbours: str = "add-remove", ledger=None, total_delta: float | None = None,
                   clip: float | None = None, n_across: int | None = None, max_topics: int = 40,
                   random_state=None, **evaluate_options) -> SearchResult:
    """Fit every candidate privately, score each by its private evaluation, choose the best (module docstring).

    Parameters
    ----------
    fits : mapping candidate -> callable(ledger) -> PrivateRelease
        Each fits its candidate privately and records its entries in the ledger it is given (e.g.
        :func:`dp_vem_fits`). A callable that returns an existing release and records nothing stands for a
        release made before the search (its spend is then already in the ledger, or elsewhere: say so).
    corpus : topicdp.Corpus
        The private corpus the candidates are scored on.
    epsilon, delta : float
        Budget of *each* candidate's evaluation.
    planned : mapping candidate -> list of ledger entries, optional
        What each fit will record (:func:`dp_vem_fits` gives it); checked with the evaluations against the budget
        before anything is fitted. Without it only the evaluations are checked up front (the ledger still refuses a
        fit that would exceed the budget when that fit records it).
    score : {"npmi", "contrast"}
    unit, neighbours : str
        Of the evaluations (and of the fits: a ledger composes one relation).
    ledger : PrivacyLedger, optional
        A fresh unbounded one when None.
    total_delta : float, optional
        The delta at which the total is stated; default the ledger's budget delta, else the sum of the entries'
        deltas (each fit's and each evaluation's).
    max_topics : int, default 40
        K of a candidate that is not itself a number of topics, for the planned evaluation (its sensitivity grows
        with K).
    random_state : None, int or Generator
        Seeds the evaluations' noise (testing only).

    Returns
    -------
    SearchResult
    """
    from topicdp.rdp import PrivacyLedger

    score = check_option(score, "score", SCORES)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if not fits:
        raise ValueError("fits must hold at least one candidate")
    ledger = PrivacyLedger() if ledger is None else ledger
    rng = check_random_state(random_state)
    plans = []
    for c in fits:
        n_topics = int(c) if isinstance(c, (int, np.integer)) else max_topics
        plans.extend(list((planned or {}).get(c, [])))
        plans.append(_planned_evaluation(n_topics, epsilon, delta, unit, neighbours, clip, n_across,
                                         f"evaluation of {c} (planned, worst case)"))
    ledger.check(plans)
    before = len(ledger)
    scores, intervals, releases = {}, {}, {}
    for c, fit in fits.items():
        release = fit(ledger)
        evaluation = release.evaluate(corpus, epsilon=epsilon, delta=delta, ledger=ledger, unit=unit,
                                      neighbours=neighbours, clip=clip, n_across=n_across, random_state=rng,
                                      **evaluate_options)
        scores[c], intervals[c] = _score_of(evaluation, score)
        releases[c] = release
    chosen = max(scores, key=lambda c: scores[c])
    unresolved = unresolved_candidates(chosen, scores, intervals)
    if unresolved:
        warnings.warn(f"private_search: at evaluation epsilon {epsilon:g} the private {score} scores do not separate "
                      f"the chosen candidate {chosen!r} from {unresolved} (the interval of their difference holds 0): "
                      "the choice is unreliable at this budget; a larger evaluation epsilon separates them",
                      UserWarning, stacklevel=2)
    covers = [e.name for e in ledger.records[before:]]
    if total_delta is None:
        total_delta = ledger.budget[1] if ledger.budget is not None else _sum_deltas(ledger.records[before:], delta)
    total = ledger.epsilon(total_delta, "best", scope="all")
    return SearchResult(chosen=chosen, release=releases[chosen], scores=scores, intervals=intervals, score=score,
                        mode="each", total_epsilon=total, total_delta=total_delta, covers=covers, runs=list(fits),
                        unresolved=unresolved)


def _sum_deltas(entries, evaluation_delta: float) -> float:
    """A total delta for the statement: the evaluations' delta once per entry (each entry was calibrated to its own
    (epsilon, delta) pair; the sum is what basic composition would state, and the ledger's totals at this delta are
    never larger)."""
    return min(0.5, evaluation_delta * max(1, len(entries)))


def dp_vem_fits(corpus, candidates: Sequence[int], *, epsilon: float, delta: float, unit: str = "document",
                neighbours: str = "add-remove", random_state=0, **params) -> tuple[dict, dict]:
    """``(fits, planned)`` for :func:`private_search`: dp-vem (:class:`topicdp.variational.DPVariationalEM`) at
    each K of ``candidates``, each (epsilon, delta)-DP, and the one Gaussian entry each fit records.

    ``random_state`` seeds the model's start (the noise of a seeded dp-vem is seeded too: testing and benchmarks)."""
    from topicdp.rdp.ledger import GaussianEntry
    from topicdp.variational import DPVariationalEM

    fits, planned = {}, {}
    for K in candidates:
        model = DPVariationalEM(int(K), epsilon=epsilon, delta=delta, unit=unit, neighbours=neighbours,
                                 random_state=random_state, **params)
        D = 1.0 if neighbours == "add-remove" else math.sqrt(2.0)
        planned[K] = [GaussianEntry("dp-vem", model.noise_scale(), D, model.n_iterations, unit=unit,
                                    neighbours=neighbours)]
        fits[K] = (lambda m: lambda ledger: m.fit(corpus, ledger=ledger).release_)(model)
    return fits, planned


def repeat_and_select(fits: Mapping[Hashable, Callable], corpus, *, epsilon: float, delta: float,
                      run_mu: float, mean_runs: float = 8.0, score: str = "npmi", unit: str = "document",
                      neighbours: str = "add-remove", ledger=None, total_delta: float = 1e-6, clip: float | None = None,
                      n_across: int | None = None, random_state=None, **evaluate_options) -> SearchResult:
    """Papernot & Steinke's repeated selection (module docstring), accounted by dp-accounting.

    Parameters
    ----------
    fits : mapping candidate -> callable(ledger) -> PrivateRelease
        Each run calls one (drawn uniformly) with a scratch ledger; what it records must be Gaussian entries of
        total GDP parameter at most ``run_mu`` minus the evaluation's, else the search stops with an error and
        publishes nothing of that run.
    epsilon, delta : float
        Budget of each run's evaluation.
    run_mu : float > 0
        The declared GDP parameter of one run (fit and evaluation together; e.g. ``sqrt(mu_fit^2 + mu_eval^2)``);
        the run's event is ``GaussianDpEvent(1 / run_mu)``.
    mean_runs : float >= 1, default 8
        Mean of the geometric number of runs (dp-accounting's shape 1).
    total_delta : float, default 1e-6
        The delta of the stated total.

    Returns
    -------
    SearchResult
        The best run only: ``chosen``, its ``release`` and ``scores = {chosen: its score}``; ``runs`` is empty (which
        candidates ran, how often, and how they scored are not published: module docstring).
    """
    from dp_accounting import dp_event

    from topicdp.rdp import PrivacyLedger

    score = check_option(score, "score", SCORES)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    run_mu = check_real(run_mu, "run_mu", low=0.0)
    mean_runs = check_real(mean_runs, "mean_runs", low=1.0, low_open=False)
    ledger = PrivacyLedger() if ledger is None else ledger
    rng = check_random_state(random_state)
    event = dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1.0 / run_mu), mean_runs, 1.0)
    before = len(ledger)
    ledger.add_event("repeated selection (Papernot & Steinke 2022)", event, neighbours=neighbours, unit=unit)
    n_runs = int(rng.geometric(1.0 / mean_runs))
    keys = list(fits)
    best: tuple | None = None
    for _ in range(n_runs):
        c = keys[int(rng.integers(len(keys)))]
        scratch = PrivacyLedger()
        release = fits[c](scratch)
        evaluation = release.evaluate(corpus, epsilon=epsilon, delta=delta, ledger=scratch, unit=unit,
                                      neighbours=neighbours, clip=clip, n_across=n_across, random_state=rng,
                                      **evaluate_options)
        mu = _gaussian_mu(scratch)
        if mu > run_mu * (1 + 1e-9):
            raise ValueError(f"a run of candidate {c} recorded GDP mu = {mu:.6g} > run_mu = {run_mu:.6g}: the declared "
                             "event does not cover it; nothing of this run is published")
        value = _score_of(evaluation, score)[0]
        if best is None or value > best[0]:
            best = (value, c, release)
    assert best is not None  # a geometric draw is at least 1
    return SearchResult(chosen=best[1], release=best[2], scores={best[1]: best[0]}, intervals={}, score=score,
                        mode="repeat", total_epsilon=ledger.epsilon(total_delta, "best", scope="all"),
                        total_delta=total_delta, covers=[e.name for e in ledger.records[before:]], runs=[])


def _gaussian_mu(ledger) -> float:
    from topicdp.rdp.ledger import GaussianEntry

    if not all(isinstance(e, GaussianEntry) for e in ledger.records):
        raise ValueError("repeat_and_select needs runs whose every release is Gaussian (a GDP parameter to compare "
                         "with run_mu)")
    return math.sqrt(sum(e.mu ** 2 for e in ledger.records))
