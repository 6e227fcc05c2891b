"""The secure samplers against their exact target distributions, their grid releases, and privacy statements.

Goodness-of-fit tests are G-tests (likelihood-ratio chi-square) at level 0.001 with fixed seeds: a correct
sampler fails one with probability 0.001 over seeds; with the seeds fixed the outcome is deterministic.
"""

import math

import numpy as np
import pytest
from scipy.stats import power_divergence

from topicdp.audit.noise import exact_delta
from topicdp.rdp.curves import zcdp_to_dp
from topicdp.mechanisms.secure_noise import (RandomWords, _bernoulli_exp, _discrete_laplace, discrete_gaussian,
                                             grid_step, secure_gaussian, secure_laplace)

LEVEL = 1e-3


def discrete_gaussian_pmf(k, s: float) -> np.ndarray:
    """Exact pmf of ``N_Z(0, s^2)`` at integers ``k`` (normaliser summed over |j| <= 40 s + 10)."""
    j = np.arange(-math.ceil(40 * s) - 10, math.ceil(40 * s) + 11)
    log_z = np.logaddexp.reduce(-(j**2) / (2 * s * s))
    return np.exp(-(np.asarray(k, dtype=float) ** 2) / (2 * s * s) - log_z)


def discrete_gaussian_delta(epsilon: float, s: float, sensitivity: int) -> float:
    """Exact delta(epsilon) of the one-dimensional discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020,
    Thm. 7): ``P[Y > eps s^2 / D - D / 2] - e^eps P[Y > eps s^2 / D + D / 2]``, ``Y ~ N_Z(0, s^2)``."""
    half = math.ceil(40 * s) + 10 + sensitivity
    y = np.arange(-half, half + 1)
    log_p = -(y**2) / (2 * s * s)
    log_p -= np.logaddexp.reduce(log_p)
    shift = epsilon * s * s / sensitivity
    lo, hi = y > shift - sensitivity / 2, y > shift + sensitivity / 2
    tail_lo = np.exp(np.logaddexp.reduce(log_p[lo])) if lo.any() else 0.0
    tail_hi = np.exp(epsilon + np.logaddexp.reduce(log_p[hi])) if hi.any() else 0.0
    return float(max(tail_lo - tail_hi, 0.0))


def g_test(samples: np.ndarray, pmf) -> float:
    """p-value of the G-test of integer samples against ``pmf`` (bins with expected count >= 5, tails merged)."""
    n = samples.size
    support = np.arange(samples.min() - 1, samples.max() + 2)
    p = pmf(support)
    big = np.flatnonzero(n * p >= 5)
    lo, hi = support[big[0]], support[big[-1]]
    inner = np.arange(lo, hi + 1)
    expected = np.concatenate([[n * (1 - pmf(inner).sum()) / 2] * 2, n * pmf(inner)])
    middle = np.bincount(samples[(samples >= lo) & (samples <= hi)] - lo, minlength=inner.size)
    observed = np.concatenate([[np.sum(samples < lo), np.sum(samples > hi)], middle])
    keep = expected > 0
    expected = expected[keep] * observed.sum() / expected[keep].sum()
    return power_divergence(observed[keep], expected, lambda_="log-likelihood").pvalue


@pytest.mark.parametrize("s,seed", [(1, 11), (3, 12), (20, 13)])
def test_discrete_gaussian_matches_its_pmf(s, seed):
    z = discrete_gaussian(s, 200_000, random_state=seed)
    assert g_test(z, lambda k: discrete_gaussian_pmf(k, s)) > LEVEL


def test_discrete_gaussian_at_the_scale_of_a_100_by_5000_release():
    """s = 491537 (what secure_gaussian uses for sigma = 3.73, Delta = 1, 5e5 entries): 50 equiprobable bins.

    For large s the discrete CDF is the midpoint rule for the normal integral,
    P(Z <= k) = Phi((k + 1/2) / s) up to O(1/s^2) ~ 1e-12 here.
    """
    from scipy.stats import norm

    s, n = 491_537, 200_000
    z = discrete_gaussian(s, n, random_state=31)
    edges = np.floor(norm.ppf(np.linspace(0, 1, 51)[1:-1]) * s).astype(np.int64)  # bins (e_i, e_{i+1}]
    cdf = np.concatenate([[0.0], norm.cdf((edges + 0.5) / s), [1.0]])
    observed = np.bincount(np.searchsorted(edges, z, side="left"), minlength=50)
    assert power_divergence(observed, n * np.diff(cdf), lambda_="log-likelihood").pvalue > LEVEL


@pytest.mark.parametrize("t,seed", [(1, 21), (4, 22)])
def test_discrete_laplace_matches_its_pmf(t, seed):
    z = _discrete_laplace(t, 200_000, RandomWords(seed))
    r = math.exp(-1 / t)
    assert g_test(z, lambda k: (1 - r) / (1 + r) * r ** np.abs(k)) > LEVEL


@pytest.mark.parametrize("s", [3, 1000, 2**20])
def test_discrete_gaussian_mean_and_variance(s):
    n = 200_000
    z = discrete_gaussian(s, n, random_state=s).astype(float)
    k = np.arange(-12 * s - 2, 12 * s + 3) if s < 10_000 else None
    var = float((discrete_gaussian_pmf(k, s) * k.astype(float) ** 2).sum()) if k is not None else float(s) ** 2
    assert var <= s**2 * (1 + 1e-12)  # the discrete Gaussian's variance is below s^2 (CKS20)
    assert abs(z.mean()) < 4 * math.sqrt(var / n)
    assert abs(z.var() - var) < 4 * var * math.sqrt(2 / n)


def test_bernoulli_exp_frequencies_mixed_arrays():
    num = np.array([0, 1, 2, 7, 3, 50])
    den = np.array([1, 2, 1, 3, 4, 7])
    reps = 100_000
    num_t, den_t = np.tile(num, reps), np.tile(den, reps)
    draws = _bernoulli_exp(num_t // den_t, num_t % den_t, den_t, RandomWords(5)).reshape(reps, -1)
    p = np.exp(-num / den)
    se = np.sqrt(p * (1 - p) / reps) + 1e-12
    assert np.all(np.abs(draws.mean(axis=0) - p) < 4 * se + 1e-9)


def test_uniform_below_is_uniform():
    src = RandomWords(3)
    x = src.below(np.int64(6), 120_000)
    counts = np.bincount(x, minlength=6)
    assert x.min() >= 0 and x.max() <= 5
    assert power_divergence(counts).pvalue > LEVEL


def test_seeding_and_the_os_source():
    a = discrete_gaussian(5, 1000, random_state=1)
    assert np.array_equal(a, discrete_gaussian(5, 1000, random_state=1))
    assert not np.array_equal(a, discrete_gaussian(5, 1000, random_state=2))
    W = np.full((3, 4), 0.25)
    secure = secure_gaussian(W, 2.0, sensitivity=1.0)
    assert secure.seeded is False and secure.notes == []
    seeded = secure_gaussian(W, 2.0, sensitivity=1.0, random_state=0)
    assert seeded.seeded is True and "NOT secure" in seeded.notes[0]
    assert RandomWords().words(3).dtype == np.uint64


def test_secure_gaussian_release_lives_on_the_grid():
    rng = np.random.default_rng(0)
    W = rng.random((10, 50))
    sigma, delta_2, tol = 3.0, 1.0, 0.01
    rel = secure_gaussian(W, sigma, sensitivity=delta_2, tolerance=tol, random_state=0)
    g = rel.grid
    assert math.frexp(g)[0] == 0.5  # a power of two
    units = rel.values / g
    assert np.array_equal(units, np.round(units))  # exact multiples: the output set does not depend on W
    assert rel.sensitivity_units == pytest.approx(delta_2 / g + math.sqrt(W.size))
    assert math.sqrt(W.size) <= tol * delta_2 / g  # rounding inflates the sensitivity by <= tol
    assert rel.scale_units / rel.sensitivity_units >= sigma / delta_2  # same RDP curve or better
    assert sigma <= rel.noise_scale <= sigma * (1 + tol) + g
    assert rel.rho <= delta_2**2 / (2 * sigma**2) + 1e-15
    assert abs((rel.values - W).std() - rel.noise_scale) < 0.1 * sigma


def test_release_does_not_reveal_low_order_bits():
    """Mironov's attack reads f(D) from the low bits; on the grid, inputs within a cell give identical outputs."""
    W = np.full((4, 8), 0.5)
    g = grid_step(1.0, W.size)
    a = secure_gaussian(W, 1.0, sensitivity=1.0, random_state=7).values
    b = secure_gaussian(W + g / 8, 1.0, sensitivity=1.0, random_state=7).values
    assert np.array_equal(a, b)


def test_secure_laplace_release():
    W = np.random.default_rng(1).random((5, 20))
    rel = secure_laplace(W, 2.0, sensitivity=1.0, random_state=0)
    assert np.array_equal(rel.values / rel.grid, np.round(rel.values / rel.grid))
    assert rel.epsilon() <= 1.0 / 2.0 + 1e-12
    assert rel.sensitivity_units == pytest.approx(1.0 / rel.grid + W.size)
    assert rel.privacy()["epsilon"] == rel.epsilon()


def test_discrete_gaussian_delta_is_the_hockey_stick_divergence():
    s, sens, eps = 7.0, 3, 0.8
    y = np.arange(-400, 401)
    p, q = discrete_gaussian_pmf(y, s), discrete_gaussian_pmf(y - sens, s)
    direct = np.maximum(q - math.exp(eps) * p, 0).sum()
    assert discrete_gaussian_delta(eps, s, sens) == pytest.approx(direct, rel=1e-9)


@pytest.mark.parametrize("s,sens", [(30.0, 10), (400.0, 100)])
def test_discrete_and_continuous_profiles_agree(s, sens):
    for eps in (0.1, 1.0, 3.0):
        cont = exact_delta(sens / s, eps)
        assert discrete_gaussian_delta(eps, s, sens) == pytest.approx(cont, rel=0.02, abs=1e-12)


def test_zcdp_conversion_matches_dp_accounting():
    rdp_accountant = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = np.concatenate([np.linspace(1.01, 10, 200), np.arange(11, 500)])
    for rho, delta in [(0.05, 1e-5), (0.5, 1e-6), (2.0, 1e-3)]:
        theirs, _ = rdp_accountant.compute_epsilon(orders, orders * rho, delta)
        ours = zcdp_to_dp(rho, delta, conversion="improved")
        assert ours <= theirs + 1e-9 and ours == pytest.approx(theirs, rel=0.02)
    rel = secure_gaussian(np.zeros((2, 2)), 5.0, sensitivity=1.0, random_state=0)  # its epsilon is that conversion
    assert rel.epsilon(1e-5) == zcdp_to_dp(rel.rho, 1e-5, conversion="improved")
    with pytest.raises(ValueError, match="delta"):
        rel.epsilon()


def test_release_privacy_statement():
    rel = secure_gaussian(np.zeros((2, 2)), 5.0, sensitivity=1.0, random_state=0)
    info = rel.privacy(delta=1e-5)
    assert info["rho_zcdp"] == rel.rho and info["epsilon_zcdp"] == rel.epsilon(1e-5) > 0
    assert info["noise_multiplier"] >= 5.0


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: discrete_gaussian(0, 3), ValueError, "s must"),
        (lambda: discrete_gaussian(2**25, 3), ValueError, "s must"),
        (lambda: discrete_gaussian(2, (3, -1)), ValueError, "size"),
        (lambda: secure_gaussian([1.0], 0.0, sensitivity=1.0), ValueError, "sigma"),
        (lambda: secure_gaussian([1.0], 1.0, sensitivity=-1.0), ValueError, "sensitivity"),
        (lambda: secure_gaussian([1.0], 1.0, sensitivity=1.0, grid=0.3), ValueError, "power of two"),
        (lambda: secure_gaussian([1.0], 1e6, sensitivity=1.0, tolerance=1e-4), ValueError, "tolerance"),
        (lambda: secure_gaussian([1e300], 1.0, sensitivity=1.0), ValueError, "grid"),
        (lambda: secure_gaussian([1.0], 1.0, sensitivity=1.0, random_state="os"), TypeError, "random_state"),
        (lambda: secure_laplace([1.0], 1.0, sensitivity=1.0, tolerance=2.0), ValueError, "tolerance"),
    ],
)
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
