"""The private choice of one setting among candidates (``private_select.py``, beside this file): the search's
choice and total, its refusals before any fit, and repeat-and-select's account and what it publishes.

A generated LDA corpus (fixed seeds), as in ``tests/test_private_evaluation.py``; candidate releases are stubs
(the true topics and lists of random words), so no fit runs unless a test says so. Collected by the default test
command (``testpaths`` in pyproject.toml).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.utility.private_select import (_planned_evaluation, dp_vem_fits, private_search, repeat_and_select,
                                               unresolved_candidates)
from tests.corpora import generated_lda, release_of_lists
from topicdp.metrics import private as pv
from topicdp.rdp import BudgetExceededError, PrivacyLedger


@pytest.fixture(scope="module")
def generated():
    """A generated LDA corpus (K = 5, 400 words, 6,000 documents) and its true topics' top-10 lists."""
    return generated_lda()


def _stub_fits(generated, n_random=3):
    """Candidate releases without a fit: the true topics (K = 5) and lists of random words (K = 5), named 5..40."""
    corpus, lists = generated
    rng = np.random.default_rng(0)
    words = list(corpus.vocabulary)
    random_lists = [[[str(w) for w in rng.choice(words, 10, replace=False)] for _ in range(5)] for _ in range(n_random)]
    releases = {5: release_of_lists(lists)} | {K: release_of_lists(r) for K, r in zip((10, 20, 40), random_lists)}
    return {K: (lambda r: lambda ledger: r)(rel) for K, rel in releases.items()}


def test_private_search_chooses_the_coherent_candidate_and_states_its_total(generated):
    corpus, _ = generated
    ledger = PrivacyLedger()
    with pytest.warns(UserWarning, match="from \\[10, 20, 40\\]"):
        result = private_search(_stub_fits(generated), corpus, epsilon=0.5, delta=1e-6, ledger=ledger,
                                random_state=0, n_boot=10)
    assert result.chosen == 5 and set(result.scores) == {5, 10, 20, 40}
    assert len(result.covers) == 4 and len(ledger) == 4
    assert result.total_epsilon == pytest.approx(ledger.epsilon(result.total_delta, "best", scope="all"))
    # four Gaussians at (0.5, 1e-6) each compose (exactly, as GDP) to less than their sum at 4e-6
    assert 0.5 < result.total_epsilon < 2.0 and result.total_delta == pytest.approx(4e-6)
    assert "chose 5" in result.summary()
    # the random lists' pairs are never resolved by the noise, so their intervals are refused (undetermined): the
    # search does not call the choice separated from them
    assert np.isfinite(result.intervals[5]).all() and result.unresolved == [10, 20, 40]


def test_unresolved_candidates_use_the_interval_of_the_difference():
    """Two independent scores with half-widths 0.02 each: their difference's half-width is 0.02 sqrt(2) = 0.028, so
    a gap of 0.03 is resolved and a gap of 0.02 is not."""
    scores = {5: 0.27, 10: 0.30, 20: 0.28}
    intervals = {K: (v - 0.02, v + 0.02) for K, v in scores.items()}
    assert unresolved_candidates(10, scores, intervals) == [20]
    assert unresolved_candidates(10, {5: 0.27, 10: 0.30}, intervals) == []


def test_private_search_warns_when_the_budget_does_not_resolve_the_choice(generated):
    """At evaluation epsilon 0.01 (sigma about 50 times that at 0.5) the scores' intervals are wider than the gap
    between the coherent candidate and random lists: the search warns and lists the unresolved candidates."""
    corpus, _ = generated
    with pytest.warns(UserWarning, match="unreliable at this budget"):
        result = private_search(_stub_fits(generated), corpus, epsilon=0.01, delta=1e-6, random_state=0, n_boot=10)
    assert result.unresolved and result.chosen not in result.unresolved
    assert "NOT RESOLVED" in result.summary()


def test_private_search_refuses_before_any_fit(generated):
    """The planned fits and the planned (worst-case) evaluations are checked before the first fit reads anything."""
    corpus, _ = generated
    _, planned = dp_vem_fits(corpus, [5, 10], epsilon=1.0, delta=1e-7)

    def never(ledger):
        raise AssertionError("a fit ran although the search exceeds the budget")

    ledger = PrivacyLedger(budget=(1.2, 1e-6))  # the two fits alone compose to 1.30 at delta 1e-6
    with pytest.raises(BudgetExceededError):
        private_search({5: never, 10: never}, corpus, epsilon=0.5, delta=1e-7, planned=planned, ledger=ledger)
    assert len(ledger) == 0


def test_dp_vem_plan_is_what_the_fit_records(generated):
    corpus, _ = generated
    small = corpus.subset_documents(np.arange(600))
    fits, planned = dp_vem_fits(small, [3], epsilon=2.0, delta=1e-6, n_iterations=2)
    ledger = PrivacyLedger()
    fits[3](ledger)
    assert list(ledger.records) == planned[3]


def test_planned_evaluation_bounds_the_recorded_one(generated):
    """The entry planned before a release exists (K lists, no word shared) has at least the sensitivity of any
    evaluation of a K-topic release."""
    corpus, lists = generated
    planned = _planned_evaluation(5, 1.0, 1e-6, "document", "add-remove", None, None, "plan")
    ledger = PrivacyLedger()
    pv.private_coherence(lists, corpus, epsilon=1.0, delta=1e-6, ledger=ledger, random_state=0, n_boot=10)
    assert ledger.records[0].sensitivity <= planned.sensitivity and ledger.records[0].mu <= planned.mu


def test_repeat_and_select_is_accounted_by_dp_accounting(generated):
    """Papernot & Steinke's event recorded before the runs; the ledger's total is at most dp-accounting's own RDP
    accountant's (the ledger converts the same RDP curve, on a denser order grid, by the improved conversion)."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    corpus, _ = generated
    fits = _stub_fits(generated)
    sigma, D, _ = pv.calibrate(pv.coherence_design(generated[1]), 0.5, 1e-6, "document", "add-remove")
    run_mu = 1.05 * D / sigma  # the stub fits spend nothing; the evaluation of the widest design is D / sigma
    ledger = PrivacyLedger()
    result = repeat_and_select(fits, corpus, epsilon=0.5, delta=1e-6, run_mu=run_mu, mean_runs=4, ledger=ledger,
                               random_state=3, n_boot=10)
    assert result.mode == "repeat" and len(ledger) == 1 and list(result.scores) == [result.chosen]
    acc = RdpAccountant()
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1.0 / run_mu), 4.0, 1.0))
    theirs = acc.get_epsilon(1e-6)
    assert result.total_epsilon <= theirs * (1 + 1e-9)
    assert result.total_epsilon >= 0.9 * theirs
    with pytest.raises(ValueError, match="run_mu"):
        repeat_and_select(fits, corpus, epsilon=0.5, delta=1e-6, run_mu=0.5 * D / sigma, mean_runs=2,
                          random_state=0, n_boot=10)


def test_repeat_and_select_publishes_the_chosen_run_only(generated):
    """Papernot & Steinke's bound covers the best run alone: the result (and its printed summary) carries the chosen
    candidate's score and release, not the other runs' scores, their candidates or their number."""
    corpus, _ = generated
    fits = _stub_fits(generated)
    sigma, D, _ = pv.calibrate(pv.coherence_design(generated[1]), 0.5, 1e-6, "document", "add-remove")
    result = repeat_and_select(fits, corpus, epsilon=0.5, delta=1e-6, run_mu=1.05 * D / sigma, mean_runs=12,
                               random_state=1, n_boot=10)
    assert list(result.scores) == [result.chosen] and result.runs == [] and result.intervals == {}
    assert result.release is fits[result.chosen](None)
    scored = [line for line in result.summary().splitlines()[1:] if line.strip()]
    assert scored == [f"  {result.chosen}: {result.scores[result.chosen]:+.4f}"]
