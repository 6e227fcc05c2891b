"""The sampler's cost: exchangeable sizing (and its Monte Carlo check), corpora by index slicing (equal to
the slow construction, bit-identical sensitivities), the cost forecast, the max_minutes budget, progress."""

import logging
import re
import math
import time
from fractions import Fraction

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import binom

from topicdp import CallableModel, GensimLDA, TopicDP
from topicdp.corpus import Corpus
from facts import assert_facts
from topicdp.samplers import (PRIVATE_ORACLE, PrivateResample, PublicReference, SensitivitySampling, sample_sensitivity,
                              sample_size)
from topicdp.samplers.pairs import OnDisk, PairBuilder, shared
from topicdp.samplers.progress import CostForecast, check_budget
from topicdp.samplers.sizing import exchangeable_failure_bound, exchangeable_order_statistic

# the sampler's runs are compared on one corpus: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


# -- exchangeable sizing -----------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 1 / 3, 0.49])
def test_exchangeable_size_is_the_fewest_pairs_by_brute_force(gamma):
    _, h, k = sample_size(gamma, "exchangeable")
    # the smallest h whose maximum gives 1/(h + 1) <= gamma, found by counting up (no closed form), in exact
    # arithmetic: the float 1/3 is slightly below one third, so it needs h = 3, not 2
    h_bf = next(n for n in range(1, 10_000) if Fraction(1, n + 1) <= Fraction(gamma))
    assert (h, k) == (h_bf, h_bf)
    assert exchangeable_failure_bound(h, k) <= gamma


@pytest.mark.parametrize("n_pairs, gamma", [(9, 0.2), (30, 0.1), (100, 0.05), (4, 0.2), (3, 0.2)])
def test_exchangeable_order_statistic_by_brute_force(n_pairs, gamma):
    k = exchangeable_order_statistic(gamma, n_pairs)
    valid = [j for j in range(1, n_pairs + 1) if (n_pairs - j + 1) / (n_pairs + 1) <= gamma]
    assert k == (min(valid) if valid else n_pairs)  # capped at n when even the maximum does not give gamma


def test_both_sizings_at_the_usual_gammas():
    # Lambert-W: ceil(log(1/rho)/(2 (gamma - rho)^2)) at the optimal rho; exchangeable: ceil(1/gamma) - 1
    sizes = [(sample_size(g)[1], sample_size(g, "exchangeable")[1]) for g in (0.01, 0.05, 0.1, 0.2)]
    assert sizes == [(41971, 99), (1305, 19), (285, 9), (61, 4)]
    with pytest.raises(ValueError, match="sizing"):
        sample_size(0.1, "dkw")


# A function whose sensitivity distribution is known in closed form: reference user u writes word 0
# exactly u + 1 times, f = (count of word 0) / M, so for a pair drawn from P (users uniform on the
# reference) Delta = |a - b| / M with a, b i.i.d. uniform on {1..M}: P(Delta <= j/M) = F(j) below.
M = 1000


def _reference():
    counts = np.arange(1, M + 1)
    return Corpus.from_matrix(sp.csr_matrix((counts, (np.arange(M), np.zeros(M, dtype=int))), shape=(M, 2)),
                              ["w0", "w1"])


def _f(corpus):
    return np.array([[corpus.X[:, 0].sum() / M, 0.0]])


def _F(j):
    """P(|a - b| <= j) for a, b i.i.d. uniform on {1..M} (j = -1 gives 0)."""
    j = np.asarray(j, dtype=float)
    return np.where(j < 0, 0.0, (M + 2 * j * M - j * (j + 1)) / M**2)


def _exact_failure_moments(h, k):
    """Exact E[q] and Var[q] of q = 1 - F(Delta_(k)) (the failure probability given the sample).

    Delta_(k) <= j  iff  at least k of h i.i.d. draws are <= j: P = P(Binomial(h, F(j)) >= k).
    E[q] = P(Delta_0 > Delta_(k)) is the marginal failure probability the exchangeable bound controls.
    """
    j = np.arange(M)
    G = binom.sf(k - 1, h, _F(j))  # P(Delta_(k) <= j/M)
    pmf_k = np.diff(np.concatenate([[0.0], G]))
    q = 1.0 - _F(j)
    mean = float(pmf_k @ q)
    return mean, float(pmf_k @ q**2) - mean**2


@pytest.mark.parametrize("n_pairs", [None, 9])  # h = 4, k = 4 (the sizing) and 9 pairs with k = 8
def test_exchangeable_statement_by_monte_carlo(n_pairs):
    """P(Delta_0 > Delta_s) <= (h - k + 1)/(h + 1) = 0.2, marginal over the sample and the fresh pair.

    Exact side: for this distribution p* = E[q] is computed in closed form and must satisfy the bound; it
    nearly attains it (ties have probability O(1/M)), so the bound is tight and fewer pairs would fail.
    Monte Carlo side (the sampler itself): R runs with fixed seeds give q_1..q_R, i.i.d. in [0, 1] with
    mean p* and the exact variance s2 computed above. Bernstein's inequality bounds
    P(|mean(q) - p*| >= t) <= 2 exp(-R t^2 / (2 s2 + 2t/3)); the t solving 2 exp(...) = 1e-6 is the
    tolerance. A second, end-to-end check draws one fresh pair per run through P and f itself: the number
    of runs whose fresh Delta exceeds Delta_s is Binomial(R, p*), and must lie in its central 1 - 2e-6
    range.
    """
    gamma, R = 0.2, 600
    ref = _reference()
    private = ref.subset_users(np.arange(30))
    model = CallableModel(_f, n_topics=1, name="count-of-w0")
    dist = PublicReference(ref, "user")
    runs = [sample_sensitivity(model, private, SensitivitySampling(dist, gamma, "exchangeable", n_pairs=n_pairs,
                                                                   random_state=s)) for s in range(R)]
    h, k = runs[0].h, runs[0].k
    assert (h, k) == ((4, 4) if n_pairs is None else (9, 8)) and runs[0].sufficient
    bound = exchangeable_failure_bound(h, k)
    assert bound <= gamma

    p_star, s2 = _exact_failure_moments(h, k)
    assert p_star <= bound and p_star >= bound - 0.01

    q = 1.0 - _F(np.rint(np.array([r.sensitivity for r in runs]) * M))
    log_term = math.log(2 / 1e-6)
    t = (2 * log_term / 3 + math.sqrt((2 * log_term / 3) ** 2 + 8 * R * s2 * log_term)) / (2 * R)
    assert abs(q.mean() - p_star) <= t

    fresh_rng = np.random.default_rng(12345)
    failures = 0
    for r in runs:
        d, dp = dist.draw_indices(private.n_users, fresh_rng)
        fresh = float(np.linalg.norm(_f(dist.build(d)) - _f(dist.build(dp))))
        failures += fresh > r.sensitivity + 1e-12  # Delta_s and fresh are computed alike; 1e-12 absorbs rounding
    assert binom.ppf(1e-6, R, p_star) <= failures <= binom.isf(1e-6, R, p_star)


def test_fewer_pairs_than_exchangeable_sizing_need_the_testing_flag():
    ref = _reference()
    model = CallableModel(_f, n_topics=1, name="count-of-w0")
    with pytest.raises(ValueError, match="exchangeable"):
        sample_sensitivity(model, ref.subset_users(np.arange(10)),
                           SensitivitySampling(PRIVATE_ORACLE, 0.1, "exchangeable", n_pairs=5))
    s = sample_sensitivity(model, ref.subset_users(np.arange(10)),
                           SensitivitySampling(PRIVATE_ORACLE, 0.1, "exchangeable", n_pairs=5, insecure_testing=True,
                                               random_state=0))
    assert not s.sufficient and s.k == 5 and s.rho is None
    assert "0.1667" in s.statement  # (5 - 5 + 1)/6, stated as it is: more than gamma


# -- corpora by index slicing ------------------------------------------------------------------------


def _assert_same_corpus(a, b):
    for name in ("data", "indices", "indptr"):
        x, y = getattr(a.X, name), getattr(b.X, name)
        assert np.array_equal(x, y) and x.dtype == y.dtype, name
    assert a.X.shape == b.X.shape
    assert np.array_equal(a.doc_users, b.doc_users) and a.doc_users.dtype == b.doc_users.dtype
    assert a.user_ids == b.user_ids and a.vocabulary == b.vocabulary and a.log == b.log
    assert a.fingerprint() == b.fingerprint()


@pytest.fixture(scope="module")
def grouped(lee_corpus):
    """The Lee corpus with several documents per user (so user-level records have many rows)."""
    return Corpus(X=lee_corpus.X, vocabulary=lee_corpus.vocabulary, doc_users=np.arange(lee_corpus.n_docs) % 37)


@pytest.mark.parametrize("unit", ["user", "document"])
def test_pair_corpora_equal_the_subset_constructors(grouped, unit):
    dist = PrivateResample(grouped, unit)
    builder = dist.pair_builder()
    assert dist.pair_builder() is builder  # built once per distribution
    n = grouped.n_users if unit == "user" else grouped.n_docs
    rng = np.random.default_rng(3)
    for size in (n, 5, 2):  # draws with replacement: repeated records included
        d, dp = dist.draw_indices(size, rng)
        corpora = builder.pair(d, dp)  # D is valid until D' is requested: compare it first
        _assert_same_corpus(next(corpora), dist.build(d))
        _assert_same_corpus(next(corpora), dist.build(dp))
        _assert_same_corpus(builder.build(dp), dist.build(dp))
    d = np.array([4, 4, 4, 7])  # the same user three times, then the pair differs in the last record
    _assert_same_corpus(list(builder.pair(d, np.array([4, 4, 4, 4])))[1], dist.build(np.array([4, 4, 4, 4])))


def test_on_disk_handle_loads_once_and_equals(grouped, tmp_path):
    builder = PairBuilder(grouped, "user")
    path = str(tmp_path / "b.pkl")
    joblib.dump(builder, path)
    handle = OnDisk(path)
    loaded = handle.get()
    assert OnDisk(path).get() is loaded  # one load per process
    d = np.arange(grouped.n_users)[::-1].copy()
    _assert_same_corpus(loaded.build(d), builder.build(d))
    assert isinstance(loaded.reference.X.data, np.memmap)
    with shared(builder, n_jobs=1) as source:
        assert source is builder  # the sequential path uses memory
    with joblib.parallel_config(backend="threading"), shared(builder, n_jobs=2) as source:
        assert source is builder  # threads share memory
    with shared(builder, n_jobs=2) as source:
        assert isinstance(source, OnDisk)  # loky processes get the file


def _old_deltas(model, dist, corpus, seed, h):
    """Today's construction (Corpus.subset_users per corpus), for bit-identity."""
    children = np.random.SeedSequence(seed).spawn(h)
    out = []
    for child in children:
        d, dp = dist.draw_indices(corpus.n_users, np.random.default_rng(child))
        out.append(float(np.linalg.norm(model.fit_topic_word(dist.build(d)) - model.fit_topic_word(dist.build(dp)))))
    return out


def test_sensitivities_bit_identical_to_the_slow_construction_across_backends(grouped):
    model = GensimLDA(3, random_state=0, passes=1, iterations=20)
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=3, insecure_testing=True, random_state=11)
    expected = _old_deltas(model, PrivateResample(grouped, "user"), grouped, 11, 3)
    assert sample_sensitivity(model, grouped, sampling).deltas == expected
    assert sample_sensitivity(model, grouped, sampling, n_jobs=2).deltas == expected  # loky, file-backed
    with joblib.parallel_config(backend="threading"):
        assert sample_sensitivity(model, grouped, sampling, n_jobs=2).deltas == expected


# -- cost forecast, budget, progress -------------------------------------------------------------------


def test_forecast_counts_rounds_of_two_fits():
    f = CostForecast(n_pairs=9, fit_seconds=2.0, n_workers=2)
    assert f.n_fits == 18 and f.seconds == 2 * 5 * 2.0  # 9 pairs on 2 workers: 5 rounds of 2 fits
    assert CostForecast(285, 27.0, 2).minutes == pytest.approx(2 * 143 * 27.0 / 60)
    assert "ETA" in f.describe() and "18 fits" in f.describe()


def test_budget_names_the_options_that_would_fit():
    f = CostForecast(285, 1.0, 1)
    check_budget(f, 10.0, gamma=0.1, sizing="lambert-w", exchangeable_pairs=9, n_records=1000, unit="user",
                 max_workers=1)  # 9.5 min: within
    with pytest.raises(ValueError) as err:
        check_budget(f, 1.0, gamma=0.1, sizing="lambert-w", exchangeable_pairs=9, n_records=1000, unit="user",
                     max_workers=2)
    msg = str(err.value)
    assert "sizing='exchangeable'" in msg and "18 s, within the budget" in msg
    assert "at most 0.105 s" in msg  # 60 s / (2 x 285 rounds)
    assert "fewer users: at most about 105 of 1000" in msg and "n_jobs up to 2" in msg


def _sleepy(seconds, calls):
    def f(corpus):
        calls.append(1)
        time.sleep(seconds)
        return (np.asarray(corpus.X.sum(axis=0), dtype=float) + 1.0) / (corpus.n_tokens + corpus.n_words)
    return f


def test_topicdp_refuses_a_run_over_budget_before_sampling(lee_corpus):
    small = lee_corpus.subset_documents(np.arange(40))
    calls = []
    model = CallableModel(_sleepy(0.05, calls), n_topics=1, name="sleepy")
    with pytest.raises(ValueError, match="max_minutes=0.01.*exchangeable"):  # 570 fits x 0.05 s
        TopicDP(model, epsilon=1.0, delta=1e-4, sampling=SensitivitySampling(PRIVATE_ORACLE, max_minutes=0.01, random_state=0)
                ).fit(small)
    assert len(calls) == 2  # f(D) and the determinism check only: no pair was fitted
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.2, "exchangeable", random_state=0, max_minutes=0.1)
    r = TopicDP(model, epsilon=1.0, delta=1e-4, sampling=sampling, random_state=0).fit(small).release_  # 8 fits x 0.05 s fit
    assert len(calls) == 2 + 2 + 8
    assert r.report.guarantee == "random-DP" and r.report.details["sensitivity_sample"]["h"] == 4
    assert r.report.published["noisy"].startswith("random-DP:")  # the field says it too, never plain "DP"
    assert_facts(r.report.sensitivity_method, "marginal", "sensitivity sample", "neighbouring pair", "from P",
                 ordered=True)
    assert any(n.startswith("Exchangeable sizing") for n in r.report.notes)
    n_calls = len(calls)
    with pytest.raises(ValueError, match="sizing"):  # checked when the sampling is made, before any fit
        TopicDP(model, epsilon=1.0, delta=1e-4, sampling=SensitivitySampling(PRIVATE_ORACLE, sizing="fast")).fit(small)
    with pytest.raises(ValueError, match="max_minutes"):
        TopicDP(model, epsilon=1.0, delta=1e-4, sampling=SensitivitySampling(PRIVATE_ORACLE, max_minutes=0)).fit(small)
    assert len(calls) == n_calls


def test_forecast_and_progress_go_to_the_topicdp_logger(lee_corpus, caplog):
    small = lee_corpus.subset_documents(np.arange(40))
    calls = []
    model = CallableModel(_sleepy(0.0, calls), n_topics=1, name="quick")
    with caplog.at_level(logging.INFO, logger="topicdp"):
        sample_sensitivity(model, small, SensitivitySampling(PRIVATE_ORACLE, 0.2, "exchangeable", random_state=0,
                                                             max_minutes=5))
    assert len(calls) == 2 + 8  # two timed fits for the forecast (no fit_seconds given; the warm one counts), then 2h
    records = [r for r in caplog.records if r.name == "topicdp"]
    messages = [r.getMessage() for r in records]
    assert any("h=4 pairs (exchangeable sizing" in m and "8 fits x" in m and "ETA" in m for m in messages)
    assert any(m.startswith("sensitivity pairs 4/4") and "ETA" in m for m in messages)
    assert all(r.name == "topicdp" for r in caplog.records)


def test_the_cost_forecast_times_a_warm_fit(lee_corpus, caplog):
    """A process's first fit also pays one-time costs (imports, compilation): the forecast times the second fit, so
    a first fit of 2 s followed by fits of 0.01 s forecasts 8 x 0.01 s, not 8 x 2 s."""
    small = lee_corpus.subset_documents(np.arange(40))
    calls: list = []
    first = _sleepy(2.0, calls)
    warm = _sleepy(0.01, calls)
    model = CallableModel(lambda c: (first if not calls else warm)(c), n_topics=1, name="cold-start")
    with caplog.at_level(logging.INFO, logger="topicdp"):
        sample_sensitivity(model, small, SensitivitySampling(PRIVATE_ORACLE, 0.2, "exchangeable", random_state=0,
                                                             max_minutes=5))
    forecast = next(r.getMessage() for r in caplog.records if "8 fits x" in r.getMessage())
    seconds = float(re.search(r"8 fits x (\S+) s", forecast).group(1))
    assert seconds < 1.0, forecast  # the warm fit's time (0.01 s plus overhead), far from the cold 2 s


@pytest.mark.parametrize("flags, sizing, minutes", [([], "lambert-w", None),
                                                    (["--sizing", "exchangeable", "--max-minutes", "2.5"],
                                                     "exchangeable", 2.5)])
def test_cli_flags_reach_topicdp(flags, sizing, minutes, monkeypatch):
    """The sampler's flags travel in the request's TopicDP template to the TopicDP the pipeline builds."""
    from topicdp.agnostic import TopicDP
    from topicdp.cli import main

    seen = []

    def stop(self, *args, **kwargs):
        seen.append(self)
        raise ValueError("stopped before fitting")

    monkeypatch.setattr(TopicDP, "sample_sensitivity", stop)
    assert main(["privatize", "embedded", "--guarantee", "random-dp", "--private-oracle", *flags]) == 2
    assert len(seen) == 1 and (seen[0].sampling.sizing, seen[0].sampling.max_minutes) == (sizing, minutes)


@pytest.mark.cluster
def test_the_shared_matrix_reaches_a_cluster_once_not_per_pair(lee_corpus, monkeypatch):
    """On Dask, the PairBuilder is scattered once: the number of times it is pickled does not grow with h."""
    pytest.importorskip("dask.distributed")
    from topicdp.samplers.cluster import sample_sensitivity_on_cluster
    from topicdp.streaming import dask_client

    pickles = []
    monkeypatch.setattr(PairBuilder, "__getstate__", lambda self: pickles.append(1) or self.__dict__.copy(),
                        raising=False)
    corpus = lee_corpus.subset_users(np.arange(40))
    model = CallableModel(lambda c: np.asarray(c.X[:2].toarray() + 1.0, dtype=float), 2, name="first-rows")
    counts = []
    with dask_client(n_workers=2, threads_per_worker=1, processes=True) as client:
        for n_pairs in (4, 12):
            pickles.clear()
            sampling = SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=n_pairs, insecure_testing=True, random_state=0)
            result = sample_sensitivity_on_cluster(model, corpus, sampling, client=client)
            assert len(result.deltas) == n_pairs
            counts.append(len(pickles))
    assert 1 <= counts[0] == counts[1] <= 4


def test_progress_is_a_bar_on_a_terminal_and_log_lines_otherwise(monkeypatch, caplog):
    from topicdp import _progress
    from topicdp.samplers import progress

    with caplog.at_level(logging.INFO, logger="topicdp"):
        monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: True)
        bar = progress.PairProgress(3, bar=True)
        for _ in range(3):
            bar.update()
        bar.close()
        assert bar._bar is not None and not caplog.records  # the bar replaces the log lines
        monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: False)
        lines = progress.PairProgress(50, bar=True)
        for _ in range(50):
            lines.update()
    messages = [r.getMessage() for r in caplog.records]
    # the first and the last pair are always logged; in between, one line per LOG_EVERY_SECONDS (30 s)
    assert messages[0].startswith("sensitivity pairs 1/50") and messages[-1].startswith("sensitivity pairs 50/50")
    assert len(messages) == 2 and all("ETA" in m for m in messages)
