"""DP variational EM (topicdp.variational): per-unit bound by brute force, calibration against the exact
Gaussian profile and dp-accounting, neighbour locality, and recovery of planted topics."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import topicdp.forecast as forecast_module
from topicdp import Corpus
from topicdp.inference import dirichlet_expectation
from topicdp.datasets import synthetic_lda
from topicdp.rdp.gaussian import gaussian_delta
from topicdp.variational import DPVariationalEM, VariationalLDA, merge_identical_documents, unit_statistic, unit_weights
from topicdp.forecast import forecast_on_reference, public_init, scaled_noise_model

# runs at several noise levels of one corpus are what these tests compare: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


def _random_corpus(rng, n_docs=12, n_words=6, n_users=4, max_count=4):
    X = sp.csr_matrix(rng.integers(0, max_count + 1, size=(n_docs, n_words)) * (rng.random((n_docs, n_words)) < 0.5))
    X[np.asarray(X.sum(1)).ravel() == 0, 0] = 1  # no empty documents
    users = np.concatenate([np.arange(n_users), rng.integers(0, n_users, size=n_docs - n_users)])
    return sp.csr_matrix(X, dtype=np.float64), users


def _per_unit(X, units, beta, alpha=0.5):
    w = unit_weights(X, units)
    return [unit_statistic(X[units == u], w[units == u], beta, alpha) for u in range(units.max() + 1)]


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")  # the test edits entries of a CSR matrix
def test_every_unit_statistic_has_frobenius_norm_at_most_one(seed):
    rng = np.random.default_rng(seed)
    X, users = _random_corpus(rng)
    beta = np.exp(dirichlet_expectation(rng.gamma(rng.choice([0.05, 1.0, 20.0]), 1.0, size=(3, X.shape[1])) + 1e-3))
    stats = _per_unit(X, users, beta)
    norms = [np.linalg.norm(S) for S in stats]
    assert max(norms) <= 1.0 + 1e-12
    # replace-one: two non-negative matrices of norm <= 1 differ by at most sqrt(2)
    assert max(np.linalg.norm(a - b) for a in stats for b in stats) <= math.sqrt(2) + 1e-12
    # the sum over units is what one release sees: its change under removing unit u is S_u
    total = sum(stats)
    for u, S in enumerate(stats):
        keep = users != u
        rest = unit_statistic(X[keep], unit_weights(X, users)[keep], beta, 0.5)
        np.testing.assert_allclose(total - rest, S, atol=1e-10)


def test_the_bound_one_is_attained():
    """A single-word unit whose topic responsibilities concentrate on one topic reaches norm 1: the bound is tight."""
    X = sp.csr_matrix(np.array([[5.0, 0, 0], [0, 1.0, 1.0]]))
    beta = np.array([[1.0, 1e-9, 1e-9], [1e-9, 0.5, 0.5]])
    stats = _per_unit(X, np.array([0, 1]), beta, alpha=0.01)
    assert np.linalg.norm(stats[0]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_merging_identical_documents_leaves_the_statistic_unchanged(seed):
    """The sampler's corpora repeat public users: their documents share one E-step, weighted by their copies."""
    rng = np.random.default_rng(seed)
    X, users = _random_corpus(rng, n_docs=10, n_users=4)
    copies = rng.integers(0, 10, size=30)  # 30 documents drawn from 10: many repeats, with different weights
    X_rep, users_rep = X[copies], rng.integers(0, 8, size=30)
    w = unit_weights(X_rep, users_rep)
    X_merged, w_merged = merge_identical_documents(X_rep, w)
    assert X_merged.shape[0] == np.unique(X_rep.toarray(), axis=0).shape[0] < 30
    np.testing.assert_allclose(w_merged.sum(), w.sum(), rtol=1e-12)
    beta = np.exp(dirichlet_expectation(rng.gamma(1.0, 1.0, size=(3, X.shape[1]))))
    np.testing.assert_allclose(unit_statistic(X_merged, w_merged, beta, 0.5), unit_statistic(X_rep, w, beta, 0.5),
                               rtol=1e-12, atol=1e-15)
    X_eye = sp.csr_matrix(np.eye(6))  # nothing repeated: nothing merged
    X_same, w_same = merge_identical_documents(X_eye, w[:6])
    assert X_same.shape == X_eye.shape and np.array_equal(w_same, w[:6])


def test_weights_depend_only_on_the_units_own_documents():
    rng = np.random.default_rng(3)
    X, users = _random_corpus(rng, n_docs=20, n_users=5)
    w = unit_weights(X, users)
    X2 = X.tolil()
    X2[np.flatnonzero(users == 2)[0], :] = 7  # change user 2 only
    w2 = unit_weights(sp.csr_matrix(X2), users)
    others = users != 2
    np.testing.assert_array_equal(w[others], w2[others])
    assert not np.allclose(w[~others], w2[~others])


@pytest.mark.parametrize("epsilon,delta,T,neighbours", [(1.0, 1e-6, 5, "add-remove"), (3.0, 1e-6, 3, "replace-one"),
                                                        (10.0, 1e-5, 10, "add-remove"), (0.5, 1e-7, 1, "replace-one"),
                                                        (3.0, 1e-6, 7, "add-remove")])  # the default, warm-up included
def test_sigma_meets_the_exact_gaussian_profile(epsilon, delta, T, neighbours):
    model = DPVariationalEM(epsilon=epsilon, delta=delta, n_iterations=T, neighbours=neighbours)
    sigma = model.noise_scale()
    sensitivity = 1.0 if neighbours == "add-remove" else math.sqrt(2)
    # T releases of sensitivity D with noise sigma compose to one Gaussian with sensitivity D sqrt(T)
    assert gaussian_delta(sigma, epsilon, sensitivity, count=T) <= delta
    assert gaussian_delta(sigma * 0.99, epsilon, sensitivity, count=T) > delta  # and not loose by 1%


def test_sigma_against_dp_accounting_pld():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    model = DPVariationalEM(epsilon=3.0, delta=1e-6, n_iterations=5, neighbours="add-remove")
    sigma = model.noise_scale()
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier=sigma), 5)
    assert accountant.get_epsilon(1e-6) == pytest.approx(3.0, rel=2e-3)


def test_small_noise_tracks_the_noiseless_run_and_large_noise_does_not():
    """EM from a random start has merged-topic local optima (as gensim's and scikit-learn's online LDA do),
    so recovery is judged per start: with the same start, epsilon=50 must stay close to the noiseless run.

    Bound: at epsilon=50, T=10, sigma = 0.50 per entry (noise_scale()); a topic holds about 3000 x 5 / 5 =
    3000 units of weighted mass, so the per-entry noise in probability units is about 1.7e-4 and its L1 over
    200 words about 200 x 1.7e-4 x sqrt(2/pi) = 0.027 per topic; 0.06 allows twice that plus the soft
    threshold's shrinkage. At epsilon=0.01 sigma = 970 dwarfs every count: the topics are noise (error > 1.5
    of a possible 2).
    """
    data = synthetic_lda(3000, 200, 5, alpha0=0.1, beta=0.05, mean_length=80, random_state=0)
    corpus = Corpus(X=data.X, vocabulary=[f"w{i}" for i in range(200)], doc_users=np.arange(3000) // 3)
    from topicdp.metrics.recovery import recovery_error

    errors = {eps: [] for eps in (None, 50.0, 0.01)}
    for seed in range(3):
        for eps in errors:
            params = dict(unit="document", n_iterations=10, random_state=seed)
            model = VariationalLDA(5, **params) if eps is None else DPVariationalEM(5, epsilon=eps, **params)
            errors[eps].append(recovery_error(model.fit(corpus).topic_word_, data.topic_word))
    assert min(errors[None]) < 0.1  # some start finds the planted topics
    np.testing.assert_allclose(errors[50.0], errors[None], atol=0.06)
    assert min(errors[0.01]) > 1.5


def test_user_unit_needs_a_corpus_and_parameters_are_validated():
    with pytest.raises(ValueError, match="unit='user' needs a topicdp.Corpus"):
        DPVariationalEM(unit="user").fit(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(ValueError, match="n_iterations"):
        DPVariationalEM(n_iterations=0).fit(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(ValueError, match="neighbours"):
        DPVariationalEM(neighbours="swap").noise_scale()


def test_release_is_published_with_only_dp_and_public_fields(tmp_path):
    from topicdp.private_release import PrivateRelease

    data = synthetic_lda(300, 40, 3, random_state=1)
    corpus = Corpus(X=data.X, vocabulary=[f"w{i}" for i in range(40)], doc_users=np.arange(300) // 3)
    model = DPVariationalEM(3, epsilon=2.0, delta=1e-6, n_iterations=3, random_state=0).fit(corpus, vocabulary_source="public")
    release = model.release_
    assert release.report.guarantee == "approx-DP" and release.report.seeded
    assert release.report.certified_epsilon() <= 2.0 + 1e-9
    path = tmp_path / "release.json"
    release.save(path)
    again = PrivateRelease.load(path)
    np.testing.assert_allclose(again.topic_word, release.topic_word)
    assert "n_docs" not in path.read_text()  # the exact document count stays in the diagnostics
    # a DP vocabulary is composed by the pipeline (tests/test_pipeline.py), not by the estimator
    with pytest.raises(ValueError, match="topicdp.pipeline.release"):
        model.fit(corpus, vocabulary_source={"epsilon": 0.5, "delta": 1e-7})


def test_mass_per_unit_is_the_l1_over_l2_norm_of_each_units_counts():
    from topicdp.forecast import mass_per_unit

    # user 0: one document with 4 distinct words once each (mass 4 / 2 = 2); user 1: two documents that add up
    # to counts (3, 4) on two words (mass 7 / 5 = 1.4)
    X = sp.csr_matrix(np.array([[1, 1, 1, 1], [3, 0, 0, 0], [0, 4, 0, 0]]))
    corpus = Corpus(X=X, vocabulary=list("abcd"), doc_users=np.array([0, 1, 1]))
    assert mass_per_unit(corpus, "user") == pytest.approx((2.0 + 1.4) / 2)
    assert mass_per_unit(corpus, "document") == pytest.approx((2.0 + 1.0 + 1.0) / 3)


def _user_corpus(n_docs, n_words, n_topics, n_users, seed):
    X = synthetic_lda(n_docs, n_words, n_topics, beta=0.05, random_state=seed).X
    users = np.arange(n_docs) % n_users
    return Corpus(X=sp.csr_matrix(X, dtype=np.float64), vocabulary=tuple(f"w{j}" for j in range(n_words)),
                  doc_users=users, user_ids=tuple(f"u{u}" for u in range(n_users)))


@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
@pytest.mark.parametrize("ratio", [0.01, 0.3, 1.0])
def test_the_simulated_model_keeps_the_signal_to_noise_ratio(neighbours, ratio):
    """On n_sim units the simulation's sigma is sigma n_sim / n: the noise per summed unit statistic is the same."""
    model = DPVariationalEM(4, epsilon=3.0, delta=1e-6, unit="user", neighbours=neighbours, n_iterations=3)
    n_sim = int(1000 * ratio)
    assert scaled_noise_model(model, n_sim, 1000).noise_scale() == pytest.approx(model.noise_scale() * n_sim / 1000,
                                                                                rel=1e-6)
    assert model.epsilon == 3.0  # the model itself is untouched


def test_forecast_on_reference_refits_a_public_start_on_the_half_it_does_not_simulate(monkeypatch):

    corpus = _user_corpus(120, 60, 3, 40, seed=1)
    starts, fitted = [], []
    real_init, real_fit = forecast_module.public_init, DPVariationalEM.fit
    monkeypatch.setattr(forecast_module, "public_init", lambda ref, *a, **k: starts.append(ref) or real_init(ref, *a, **k))
    monkeypatch.setattr(DPVariationalEM, "fit", lambda self, c, *a, **k: fitted.append(c) or real_fit(self, c, *a, **k))
    model = DPVariationalEM(3, epsilon=30.0, unit="user", n_iterations=2, init=np.full((3, 60), 1 / 60))
    fc = forecast_module.forecast_on_reference(model, corpus, n_units=400, n_draws=2)
    start_users = set(starts[0].user_ids)
    run_users = {u for c in fitted if c is not starts[0] for u in c.user_ids}
    assert len(starts) == 1 and start_users and run_users and not start_users & run_users
    assert start_users | run_users == set(corpus.user_ids)
    assert fc.method == "public-simulation" and 0.0 <= fc.expected_overlap <= 1.0


def test_forecast_on_reference_tracks_the_noise():
    """Sparse LDA topics (beta 0.05 over 90 words): at epsilon 50 over 1,000 stated users the simulation finds
    them; at epsilon 0.05 over 100 users sigma is about 20x the summed statistics of the 100 reference users, and
    the overlap falls below the readable threshold (0.25)."""
    corpus = _user_corpus(300, 90, 3, 100, seed=2)
    high = forecast_on_reference(DPVariationalEM(3, epsilon=50.0, unit="user", n_iterations=5), corpus, 1000,
                                 n_draws=3)
    low = forecast_on_reference(DPVariationalEM(3, epsilon=0.05, unit="user", n_iterations=5), corpus, 100,
                                n_draws=3)
    # chance for matched top-10 sets of 3 topics among 90 words is about 10 x 10 / 90 words, 0.11; matching the
    # best of 3 x 3 pairs lifts it, and the median of 3 draws of 30 words moves by a few words (0.13 to 0.23 over
    # five noise streams), so the bound is the readable threshold, not the noise one
    assert high.verdict == "readable" and low.verdict != "readable" and low.expected_overlap < 0.25
    assert high.expected_overlap > low.expected_overlap + 0.3


def test_the_simulated_contrast_is_the_median_draw_over_the_median_lda_and_states_its_range(monkeypatch):
    """The contrast forecast: the median over draws of each simulated release's contrast over the median contrast
    of SIMULATION_LDA_SEEDS non-private LDA fits (seeds 0, 1, ...), with the draws' range."""
    import importlib

    import topicdp.topics as topics

    readability = importlib.import_module("topicdp.metrics.readability")  # the package exports a function of the name
    corpus = _user_corpus(120, 60, 3, 40, seed=1)
    seeds, contrasts = [], []
    real_lda, real_contrast = topics.reference_lda, readability._contrast
    monkeypatch.setattr(topics, "reference_lda", lambda c, k, **kw: seeds.append(kw["random_state"])
                        or real_lda(c, k, **kw))
    monkeypatch.setattr(readability, "_contrast", lambda *a: contrasts.append(real_contrast(*a)) or contrasts[-1])
    fc = forecast_module.forecast_on_reference(DPVariationalEM(3, epsilon=30.0, unit="user", n_iterations=2), corpus,
                                           n_units=200, n_draws=5)
    assert seeds == list(range(forecast_module.SIMULATION_LDA_SEEDS))
    lda = np.median([c["contrast"] for c in contrasts[:len(seeds)]])
    draws = [c["contrast"] / lda for c in contrasts[len(seeds):]]
    assert len(draws) == 5 and fc.contrast == pytest.approx(np.median(draws))
    assert fc.contrast_range == pytest.approx((min(draws), max(draws)))
    assert "draws {:.2f}-{:.2f}x".format(*fc.contrast_range) in "\n".join(fc.lines())


def test_the_e_step_sees_the_release_clipped_at_zero_and_the_output_is_thresholded(monkeypatch):
    """The two post-processings of each noisy statistic, replayed from the same seed: the next E-step's topics
    are eta + max(S~, 0); the released topics eta + max(S~_T - tau sigma, 0), normalised."""
    import topicdp.variational as variational

    S = np.array([[40.0, 3.0, 2.0, 0.5], [1.0, 30.0, 2.5, 0.2]])
    seen = []
    monkeypatch.setattr(variational, "unit_statistic",
                        lambda X, weights, beta, alpha, **kw: seen.append(beta.copy()) or S.copy())
    X = sp.csr_matrix(np.ones((6, 4)))
    model = DPVariationalEM(2, epsilon=1.0, delta=1e-5, unit="document", n_iterations=2, warmup_iterations=0,
                             random_state=0).fit(X)
    eta, sigma, tau = 0.5, model.sigma_, model.threshold
    rng = np.random.default_rng(0)
    start = eta + rng.gamma(1.0, 1.0, size=S.shape)
    first, second = (S + rng.normal(0.0, sigma, size=S.shape) for _ in range(2))
    normalise = lambda m: m / m.sum(axis=1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(seen[0], normalise(start))
    np.testing.assert_allclose(seen[1], normalise(eta + np.maximum(first, 0.0)))
    np.testing.assert_allclose(model.topic_word_, normalise(eta + np.maximum(second - tau * sigma, 0.0)))
    assert not np.allclose(seen[1], normalise(eta + np.maximum(first - tau * sigma, 0.0)))


def test_the_warm_up_fits_more_topics_then_merges_its_release(monkeypatch):
    """Replayed from the same seed: T_warm E-steps over K' topics (Dirichlet concentration K alpha kept), then the
    warm-up's last release, soft-thresholded, merged into K topics (post-processing), then K-topic E-steps; one
    sigma for all T releases, calibrated on their T-fold composition."""
    import topicdp.variational as variational
    from topicdp.rdp import calibrate_gaussian

    rng_S = np.random.default_rng(5)
    S_warm, S_final = rng_S.gamma(1.0, 20.0, size=(6, 8)), rng_S.gamma(1.0, 20.0, size=(2, 8))
    seen = []

    def statistic(X, weights, beta, alpha, **kw):
        seen.append((beta.copy(), alpha, kw["max_iter"]))
        return (S_warm if beta.shape[0] == 6 else S_final).copy()

    monkeypatch.setattr(variational, "unit_statistic", statistic)
    X = sp.csr_matrix(np.ones((6, 8)))
    model = DPVariationalEM(2, epsilon=1.0, delta=1e-5, unit="document", n_iterations=3, warmup_iterations=2,
                             warmup_topics=6, random_state=0).fit(X)
    assert [b.shape[0] for b, _, _ in seen] == [6, 6, 2]
    assert [a for _, a, _ in seen] == [pytest.approx(0.5 * 2 / 6)] * 2 + [0.5]
    assert [m for _, _, m in seen] == [variational.WARMUP_E_STEP_MAX_ITER] * 2 + [model.e_step_max_iter]
    assert model.sigma_ == pytest.approx(calibrate_gaussian(1.0, 1e-5, 1.0, method="analytic", count=3))
    eta, sigma, tau = 0.5, model.sigma_, model.threshold
    rng = np.random.default_rng(0)
    rng.gamma(1.0, 1.0, size=(6, 8))  # the warm-up's random start
    first, second, third = (S + rng.normal(0.0, sigma, size=S.shape) for S in (S_warm, S_warm, S_final))
    normalise = lambda m: m / m.sum(axis=1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(seen[1][0], normalise(eta + np.maximum(first, 0.0)))
    merged = variational.merge_topics(eta + np.maximum(second - tau * sigma, 0.0), 2)
    np.testing.assert_allclose(seen[2][0], normalise(merged))
    np.testing.assert_allclose(model.topic_word_, normalise(eta + np.maximum(third - tau * sigma, 0.0)))
    report = model.release_.report
    assert [step["sigma"] for step in report.composition] == [sigma] * 3
    assert "warm-up, 6 topics" in report.composition[0]["name"] and "warm-up" not in report.composition[2]["name"]


def test_merge_topics_joins_the_copies_of_each_topic():
    """Six rows, two near-copies of each of three disjoint topics: exactly three rows come back, each the sum of
    one pair, in the order of the pairs' first rows."""
    from topicdp.variational import merge_topics

    base = np.array([[9.0, 8, 0, 0, 0, 0], [0, 0, 7, 9, 0, 0], [0, 0, 0, 0, 8, 9]]) + 0.01
    rows = np.vstack([base, base * 1.1])[[0, 3, 1, 4, 2, 5]]
    merged = merge_topics(rows, 3)
    np.testing.assert_allclose(merged, base * 2.1)
    np.testing.assert_array_equal(merge_topics(rows, 6), rows)
    with pytest.raises(ValueError, match="warmup_topics"):
        DPVariationalEM(3, warmup_topics=2)._validate()
    with pytest.raises(ValueError, match="warmup_iterations"):
        DPVariationalEM(3, n_iterations=3, warmup_iterations=3)._validate()


def test_the_warm_up_escapes_merged_topic_optima_without_noise():
    """Noiseless, 6 random starts on 4,000 synthetic documents: with the over-complete warm-up every start
    recovers the topics to the corpus' floor (mean L1 about 0.09 after 7 passes: sampling error of ~400,000
    tokens), below 0.12; plain EM from the same starts leaves at least one in a merged-topic optimum (> 0.3:
    two true topics share one fitted topic, so their matched rows differ by a large part of their mass)."""
    from topicdp.metrics.recovery import recovery_error

    data = synthetic_lda(4000, 300, 6, random_state=1)

    def errors(warmup):
        return [recovery_error(VariationalLDA(6, unit="document", warmup_iterations=warmup,
                                              random_state=seed).fit(data.X).topic_word_, data.topic_word)
                for seed in range(6)]

    assert max(errors("auto")) < 0.12
    assert max(errors(0)) > 0.3


# -- the non-private estimator --------------------------------------------------------------------------------


def test_the_private_estimator_refuses_epsilon_none_and_names_the_nonprivate_one():
    X = sp.csr_matrix(np.ones((3, 4)))
    message = r"epsilon must be a real number in \(0, inf\), got None; .*topicdp.VariationalLDA"
    with pytest.raises(ValueError, match=message):
        DPVariationalEM(2, epsilon=None, unit="document").fit(X)
    with pytest.raises(ValueError, match=message):
        DPVariationalEM(2, epsilon=None).noise_scale()
    assert "epsilon" not in VariationalLDA().get_params() and "threshold" not in VariationalLDA().get_params()


def test_variational_lda_is_the_private_algorithm_with_the_noise_switched_off(monkeypatch):
    """The two classes share the passes: with its noise (and so its threshold) patched away, the private
    estimator gives bit for bit the non-private one's topics, warm-up and merge included, from the same seed."""
    data = synthetic_lda(300, 40, 3, random_state=2)
    corpus = Corpus(X=data.X, vocabulary=[f"w{j}" for j in range(40)], doc_users=np.arange(300) // 3)
    free = VariationalLDA(3, n_iterations=4, random_state=1).fit(corpus)
    monkeypatch.setattr(DPVariationalEM, "_perturb", lambda self, S, rng: S)
    silenced = DPVariationalEM(3, n_iterations=4, threshold=0.0, random_state=1).fit(corpus)
    np.testing.assert_array_equal(free.components_, silenced.components_)
    np.testing.assert_array_equal(free.topic_word_, silenced.topic_word_)
    assert free.vocabulary_ == silenced.release_.vocabulary == tuple(corpus.vocabulary)
    assert not hasattr(free, "release_") and not hasattr(free, "sigma_")


def test_variational_lda_checks_a_corpus_vocabulary_on_transform():
    data = synthetic_lda(100, 20, 2, random_state=0)
    words = [f"w{j}" for j in range(20)]
    model = VariationalLDA(2, unit="document", n_iterations=2, random_state=0).fit(Corpus.from_matrix(data.X, words))
    assert model.transform(Corpus.from_matrix(data.X[:3], words)).shape == (3, 2)
    with pytest.raises(ValueError, match="vocabulary=release.vocabulary"):
        model.transform(Corpus.from_matrix(data.X[:3], words[::-1]))


#: ``topic_word_ @ (1, 2, ..., 30) / 30`` of noiseless fits on ``synthetic_lda(200, 30, 3, mean_length=40,
#: random_state=0)``, recorded with the numpy E-step engine from ``DPVariationalEM(..., epsilon=None)`` and
#: ``public_init`` as they were before the non-private estimator became a class of its own (commit 0fa1bba).
OLD_NOISELESS = {
    "document level, default warm-up": (0.5551410350900953, 0.6456678801873845, 0.4526361865983855),
    "public_init, user level": (0.550097687841119, 0.6245104229259071, 0.47257549725947384),
}


def test_variational_lda_reproduces_the_old_noiseless_path(monkeypatch):
    """The same topics, to rounding, as ``DPVariationalEM(epsilon=None)`` gave (digests in ``OLD_NOISELESS``).

    The digests were computed by running the old code on this corpus with ``TOPICDP_ESTEP_ENGINE=numpy``; the
    numba engine differs from numpy in the last digits (floating-point rounding), so the engine is pinned. On
    another platform a difference of about 1e-15 would be rounding too; a regression differs by far more.
    """
    monkeypatch.setenv("TOPICDP_ESTEP_ENGINE", "numpy")
    data = synthetic_lda(200, 30, 3, mean_length=40, random_state=0)
    corpus = Corpus(X=data.X, vocabulary=[f"w{j}" for j in range(30)], doc_users=np.arange(200) // 4)
    probe = np.arange(1, 31) / 30.0
    fits = {"document level, default warm-up": VariationalLDA(3, unit="document", random_state=0).fit(data.X).topic_word_,
            "public_init, user level": public_init(corpus, 3, n_iterations=4)}
    for name, W in fits.items():
        # to 1e-13: BLAS kernels differ by processor in the last bits (1 ulp, 1.1e-16, seen on this project's
        # machines), a regression by far more
        np.testing.assert_allclose(W @ probe, np.array(OLD_NOISELESS[name]), rtol=0, atol=1e-13, err_msg=name)


def test_the_public_simulation_never_draws_a_release_s_noise(monkeypatch):
    """A release seeded s draws its noise from ``random_state=s``; the simulation's draws came from seeds 0, 1, 2,
    so a release seeded 0 published a forecast computed from its own Gaussians. Each draw now has a stream of its
    own, whose first Gaussians differ from those of every small integer seed."""

    states = []
    real_fit = DPVariationalEM.fit
    monkeypatch.setattr(DPVariationalEM, "fit", lambda self, c, *a, **k: states.append(self.random_state)
                        or real_fit(self, c, *a, **k))
    corpus = _user_corpus(60, 40, 3, 30, seed=3)
    forecast_module.forecast_on_reference(DPVariationalEM(3, epsilon=30.0, unit="user", n_iterations=2), corpus,
                                      n_units=200, n_draws=3)
    assert len(states) == 3 and not any(isinstance(s, (int, np.integer)) for s in states)
    firsts = {tuple(np.random.default_rng(seed).standard_normal(4)) for seed in range(1000)}
    drawn = [tuple(np.random.default_rng([forecast_module.SIMULATION_STREAM, d]).standard_normal(4)) for d in range(3)]
    assert not firsts & set(drawn) and len(set(drawn)) == 3


def test_the_simulation_scores_on_the_text_it_is_given(monkeypatch):
    """``score_on``: every NPMI score (the LDA fits' and each draw's) is read on that text, not on the reference the
    draws are fitted on; a text on other words is refused, naming the parameter."""
    import importlib


    readability = importlib.import_module("topicdp.metrics.readability")
    corpus = _user_corpus(120, 60, 3, 40, seed=1)
    text = _user_corpus(240, 60, 3, 80, seed=2)
    read_on = []
    real_contrast = readability._contrast
    monkeypatch.setattr(readability, "_contrast", lambda W, c, *a: read_on.append(c) or real_contrast(W, c, *a))
    model = DPVariationalEM(3, epsilon=30.0, unit="user", n_iterations=2)
    forecast_module.forecast_on_reference(model, corpus, n_units=200, n_draws=2, score_on=text)
    assert len(read_on) == forecast_module.SIMULATION_LDA_SEEDS + 2 and all(c is text for c in read_on)
    other = _user_corpus(240, 61, 3, 80, seed=2)
    with pytest.raises(ValueError, match="score_on"):
        forecast_module.forecast_on_reference(model, corpus, n_units=200, n_draws=2, score_on=other)
