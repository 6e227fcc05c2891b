import math

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.adapters import CallableModel
from topicdp.corpus import Corpus
from topicdp.samplers import PRIVATE_ORACLE, PublicReference, SensitivitySampling, sample_sensitivity, sample_size
from topicdp.samplers.sampler import draw_pairs


def _table_independently(gamma):
    """Rubinstein & Alda's sizing recomputed by brute force over rho (not via Lambert W)."""
    rhos = np.linspace(1e-6, gamma - 1e-6, 400_000)
    h_cont = np.log(1 / rhos) / (2 * (gamma - rhos) ** 2)
    rho = rhos[np.argmin(h_cont)]
    h = math.ceil(np.log(1 / rho) / (2 * (gamma - rho) ** 2))
    k = math.ceil(h * (1 - gamma + rho + math.sqrt(math.log(1 / rho) / (2 * h))) - 1e-9)
    return rho, h, min(k, h)


@pytest.mark.parametrize("gamma", [0.02, 0.05, 0.1, 0.15, 0.2, 0.22])
def test_rho_h_k_table(gamma):
    rho, h, k = sample_size(gamma)
    rho_bf, h_bf, k_bf = _table_independently(gamma)
    assert abs(rho - rho_bf) < 1e-4 * max(rho, 1e-3)
    assert (h, k) == (h_bf, k_bf)
    # rho is the W_{-1} stationary point: 2 rho log(rho) = rho - gamma
    assert abs(2 * rho * math.log(rho) - (rho - gamma)) < 1e-12
    assert h >= math.log(1 / rho) / (2 * (gamma - rho) ** 2)


def test_known_h_for_gamma_0_1():
    assert sample_size(0.1)[1:] == (285, 285)


@pytest.mark.parametrize("gamma", [0.0, 0.5, -0.1, 0.7])
def test_gamma_range(gamma):
    with pytest.raises(ValueError, match="gamma"):
        sample_size(gamma)


# -- coverage on a function whose sensitivity distribution is known in closed form ----------------
M = 1000  # reference users; user u writes word 0 exactly u + 1 times


def _reference():
    counts = np.arange(1, M + 1)
    X = sp.csr_matrix((counts, (np.arange(M), np.zeros(M, dtype=int))), shape=(M, 2))
    return Corpus.from_matrix(X, ["w0", "w1"])


def _f(corpus):
    return np.array([[corpus.X[:, 0].sum() / M, 0.0]])


def _cdf(t):
    """P(|a - b| / M <= t) for a, b i.i.d. uniform on {1..M}: (M + 2 sum_{i=1..j} (M - i)) / M^2."""
    j = min(int(math.floor(t * M + 1e-9)), M - 1)
    return (M + 2 * j * M - j * (j + 1)) / M**2


def test_pairs_are_neighbours_and_seeded_sampling_reproduces():
    ref = _reference()
    private = ref.subset_users(np.arange(20))
    dist = PublicReference(ref, "user")
    d, dp = dist.draw_indices(private.n_users, np.random.default_rng(0))
    assert np.array_equal(d[:-1], dp[:-1]) and d.size == private.n_users
    model = CallableModel(_f, n_topics=1, name="count-of-w0")
    sampling = SensitivitySampling(dist, 0.2, random_state=5)
    a = sample_sensitivity(model, private, sampling)
    b = sample_sensitivity(model, private, sampling, n_jobs=2)
    assert a.deltas == b.deltas and a.h == 61 and a.k == 61
    assert a.sensitivity == max(a.deltas)


@pytest.mark.parametrize("random_state", [5, None])
def test_a_sample_is_drawn_again_from_its_seed(random_state):
    """``draw_pairs`` at a sample's recorded seed gives its pairs: on _f a pair's distance is |u - v| / M for the
    users u, v it swaps (user u writes word 0 u + 1 times), so each recorded distance is recomputed exactly."""
    ref = _reference()
    private = ref.subset_users(np.arange(20))
    dist = PublicReference(ref, "user")
    model = CallableModel(_f, n_topics=1, name="count-of-w0")
    sample = sample_sensitivity(model, private, SensitivitySampling(dist, 0.2, random_state=random_state))
    pairs = draw_pairs(dist, private.n_users, sample.seed, sample.h)
    assert [abs(int(d[-1]) - int(dp[-1])) / M for d, dp in pairs] == pytest.approx(sample.deltas, abs=1e-12)
    first = draw_pairs(dist, private.n_users, sample.seed, 5)  # a prefix: the same first pairs for any h
    assert all(np.array_equal(a, c) and np.array_equal(b, e) for (a, b), (c, e) in zip(first, pairs[:5]))


def test_coverage_at_least_one_minus_gamma_over_repeated_runs():
    """Thm. 1: Pr(fresh Delta <= Delta_s) >= 1 - gamma, over the sample and the fresh pair.

    Per run the coverage c = F(Delta_s) is exact (closed form). With R runs the mean of c estimates
    E[c] >= 1 - gamma; by Hoeffding (c in [0, 1]) the empirical mean falls below E[c] - 0.27 with
    probability <= exp(-2 R 0.27^2) < 1e-6 for R = 100, so mean >= 1 - gamma - 0.27 must hold. Also each
    run's Delta_s is checked against 2000 fresh pairs drawn independently.
    """
    ref = _reference()
    private = ref.subset_users(np.arange(30))
    model = CallableModel(_f, n_topics=1, name="count-of-w0")
    gamma, R = 0.2, 100
    cover = [
        _cdf(sample_sensitivity(model, private, SensitivitySampling(PublicReference(ref), gamma, random_state=s)
                                ).sensitivity)
        for s in range(R)
    ]
    assert np.mean(cover) >= 1 - gamma - 0.27
    fresh = np.abs(np.random.default_rng(99).integers(1, M + 1, (2000, 2)) @ np.array([1, -1])) / M
    empirical = [(fresh <= _inverse(c)).mean() for c in cover[:10]]
    assert np.mean(empirical) >= 1 - gamma - 0.27


def _inverse(c):
    """Smallest t on the grid with F(t) >= c."""
    for j in range(M):
        if _cdf(j / M) >= c - 1e-12:
            return j / M
    return 1.0


def test_too_few_pairs_follow_the_order_statistic_law():
    """With n_pairs = 3 (insecure testing) k = 3, so F(Delta_s) ~ max of 3 uniforms: Beta(3, 1), mean 3/4,
    variance 3/80 (up to O(1/M) discreteness). Bernstein's inequality with that variance bounds the
    deviation of the mean of R = 300 runs by 0.092 with probability 1 - 1e-6."""
    ref = _reference()
    private = ref.subset_users(np.arange(30))
    model = CallableModel(_f, n_topics=1, name="count-of-w0")
    cover = [
        _cdf(sample_sensitivity(model, private, SensitivitySampling(PublicReference(ref), 0.2, n_pairs=3,
                                                                    insecure_testing=True, random_state=s)
                                ).sensitivity)
        for s in range(300)
    ]
    assert abs(np.mean(cover) - 0.75) <= 0.092


def test_fewer_pairs_need_the_testing_flag(lee_corpus):
    model = CallableModel(lambda c: np.ones((1, c.n_words)) / c.n_words, n_topics=1)
    with pytest.raises(ValueError, match="insecure_testing"):
        sample_sensitivity(model, lee_corpus, SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=5))
    s = sample_sensitivity(model, lee_corpus,
                           SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=5, insecure_testing=True, random_state=0))
    assert not s.sufficient and s.h == 5


def test_cache_hits_on_the_same_key(tmp_path):
    ref = _reference()
    private = ref.subset_users(np.arange(10))
    calls = []

    def f(c):
        calls.append(1)
        return _f(c)

    model = CallableModel(f, n_topics=1, name="counting")
    a = sample_sensitivity(model, private, SensitivitySampling(PRIVATE_ORACLE, 0.2, random_state=1, cache_dir=tmp_path))
    n = len(calls)
    b = sample_sensitivity(model, private, SensitivitySampling(PRIVATE_ORACLE, 0.2, random_state=1, cache_dir=tmp_path))
    assert len(calls) == n and b.from_cache and b.sensitivity == a.sensitivity
    sample_sensitivity(model, private, SensitivitySampling(PRIVATE_ORACLE, 0.2, random_state=2, cache_dir=tmp_path))
    assert len(calls) > n  # another seed is another key


def test_p_is_bounded_as_the_private_corpus():
    """A pair swaps one *bounded* unit: P's users are cut to the private corpus' bounds before pairs are drawn.

    User u of the reference writes u + 1 one-word documents and f counts documents, so a pair's distance is the
    difference of the two swapped users' document counts: at most m - 1 = 2 once both are cut to m = 3
    documents, up to 49 drawn raw.
    """
    n_users = 50
    doc_users = np.repeat(np.arange(n_users), np.arange(1, n_users + 1))
    X = sp.csr_matrix(np.ones((doc_users.size, 1)))
    reference = Corpus.from_matrix(sp.hstack([X, sp.csr_matrix(X.shape)]).tocsr(), ["w0", "w1"], users=doc_users)
    model = CallableModel(lambda c: np.array([[float(c.n_docs), 0.0]]), n_topics=1, name="count-of-documents")
    sampling = SensitivitySampling(reference, 0.2, random_state=3)

    private = reference.subset_users(np.arange(10)).bound(max_docs_per_user=3, random_state=0)
    bounded = sample_sensitivity(model, private, sampling)
    assert max(bounded.deltas) <= 2 and bounded.distribution["bounds"] == {"max_docs_per_user": 3}
    raw = sample_sensitivity(model, reference.subset_users(np.arange(10)), sampling)
    assert max(raw.deltas) > 2 and "bounds" not in raw.distribution
    # a reference already cut to the same bounds is used as it is
    cut = reference.bound(max_docs_per_user=3, random_state=1)
    assert sampling.records(private, "user").reference is not reference
    assert SensitivitySampling(cut, 0.2).records(private, "user").reference is cut
