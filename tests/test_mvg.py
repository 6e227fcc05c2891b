"""MVG mechanism (Chanyaswad et al., CCS 2018, Theorem 3): closed forms, exact-privacy sanity check, and
the row/column covariance of the sampled noise."""

import math

import numpy as np
import pytest
from dp_accounting.gaussian_mechanism import get_sigma_gaussian
from scipy.stats import norm

from topicdp.mechanisms.mvg import (
    generalized_harmonic,
    mvg_constants,
    mvg_iid_sigma,
    mvg_release,
    precision_norm,
    sample_mvg,
    scale_to_budget,
)


def test_harmonic_numbers():
    assert generalized_harmonic(3, 1.0) == pytest.approx(11 / 6)
    assert generalized_harmonic(2, 0.5) == pytest.approx(1 + 1 / math.sqrt(2))


def test_constants_closed_form_2x3():
    """m=2, n=3 (r=2), eps=1, delta=1e-3, s2=0.5, gamma=1, written out by hand."""
    m, n, eps, delta, s2, g = 2, 3, 1.0, 1e-3, 0.5, 1.0
    h, h_half = 1.5, 1 + 1 / math.sqrt(2)
    t = math.log(1 / delta)
    zeta = math.sqrt(2 * math.sqrt(6 * t) + 2 * t + 6)
    alpha = (h + h_half) * g**2 + 2 * h * g * s2
    beta = 2 * 6**0.25 * h * s2 * zeta
    budget = (-beta + math.sqrt(beta**2 + 8 * alpha * eps)) ** 2 / (4 * alpha**2)
    c = mvg_constants((m, n), eps, delta, s2, g)
    assert (c.r, c.harmonic, c.zeta, c.alpha, c.beta) == pytest.approx((2, h, zeta, alpha, beta))
    assert c.precision_budget == pytest.approx(budget)
    # sqrt(P) is the positive root of alpha y^2 + beta y = 2 eps
    y = math.sqrt(c.precision_budget)
    assert alpha * y**2 + beta * y == pytest.approx(2 * eps)


def test_zeta_is_a_valid_frobenius_quantile_bound():
    """P(||N||_F > zeta(delta)) <= delta for an m x n standard normal N (Laurent-Massart)."""
    m, n, delta = 4, 5, 0.05
    zeta = mvg_constants((m, n), 1.0, delta, 1.0, 1.0).zeta
    rng = np.random.default_rng(0)
    norms = np.linalg.norm(rng.standard_normal((20000, m * n)), axis=1)
    assert np.mean(norms > zeta) <= delta


def test_budget_monotone_in_epsilon_and_sensitivity():
    b = lambda eps, s2: mvg_constants((5, 5), eps, 1e-4, s2, math.sqrt(5)).precision_budget  # noqa: E731
    assert b(1, 0.1) < b(3, 0.1) < b(10, 0.1)
    assert b(3, 0.2) < b(3, 0.1)


def test_iid_sigma_meets_the_condition_with_equality():
    shape, args = (4, 6), (2.0, 1e-5, 0.3, 2.0)
    s = mvg_iid_sigma(shape, *args)
    c = mvg_constants(shape, *args)
    lhs = precision_norm(np.eye(4), s**2 * np.eye(6))
    assert lhs == pytest.approx(c.precision_budget)
    assert precision_norm(np.eye(4), 0.9 * s**2 * np.eye(6)) > c.precision_budget  # less noise fails Theorem 3


@pytest.mark.parametrize("shape", [(2, 2), (10, 10), (3, 7)])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0, 10.0])
def test_iid_mvg_is_dp_by_the_exact_gaussian_profile(shape, eps):
    """With Sigma = I, Psi = s^2 I the MVG mechanism is the Gaussian mechanism with sd s; its exact
    delta(eps) (Balle & Wang 2018) must not exceed the target delta -- and the theorem's s is far above
    the analytic Gaussian sd (it is a sufficient, loose condition)."""
    delta, s2 = 1e-4, 0.05
    s = mvg_iid_sigma(shape, eps, delta, s2, math.sqrt(shape[0]))
    a = s2 / s
    exact_delta = norm.cdf(a / 2 - eps / a) - math.exp(eps) * norm.cdf(-a / 2 - eps / a)
    assert exact_delta <= delta
    assert s > s2 * get_sigma_gaussian(eps, delta)


def test_scale_to_budget_keeps_directions():
    c = mvg_constants((3, 4), 1.0, 1e-3, 0.2, math.sqrt(3))
    row = np.diag([1.0, 2.0, 3.0])
    col = np.array([[2.0, 0.5, 0, 0], [0.5, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 4.0]])
    r2, c2 = scale_to_budget(row, col, c)
    assert precision_norm(r2, c2) == pytest.approx(c.precision_budget)
    np.testing.assert_allclose(c2 / c2[0, 0], col / col[0, 0])


def test_sampled_noise_has_the_row_and_column_covariances():
    """E[Z Z^T] = tr(Psi) Sigma and E[Z^T Z] = tr(Sigma) Psi; whitened draws are i.i.d. N(0, 1)."""
    rng = np.random.default_rng(5)
    G = rng.normal(size=(3, 3))
    Sigma = G @ G.T + 0.5 * np.eye(3)
    H = rng.normal(size=(4, 4))
    Psi = H @ H.T + 0.5 * np.eye(4)
    n = 40000
    Z = sample_mvg(Sigma, Psi, size=n, random_state=6)
    row_est = np.einsum("tij,tkj->ik", Z, Z) / n / np.trace(Psi)
    col_est = np.einsum("tji,tjk->ik", Z, Z) / n / np.trace(Sigma)
    # sampling error of a covariance entry is about sqrt(2 / n) relative; allow 6 of them
    tol = 6 * math.sqrt(2 / n)
    assert np.max(np.abs(row_est - Sigma)) / np.max(np.abs(Sigma)) < tol
    assert np.max(np.abs(col_est - Psi)) / np.max(np.abs(Psi)) < tol
    A, B = np.linalg.cholesky(Sigma), np.linalg.cholesky(Psi)
    W = np.linalg.solve(A, Z) @ np.linalg.inv(B).T
    cov = np.cov(W.reshape(n, -1), rowvar=False)
    assert np.max(np.abs(cov - np.eye(12))) < 6 * math.sqrt(2 / n)


def test_release_report_and_rectangular_input():
    W = np.random.default_rng(0).dirichlet(np.ones(8), size=5) * 0.9  # 5 x 8, rows sum to 0.9
    release = mvg_release(W, 3.0, 1e-4, 0.05, random_state=2)
    noisy, rep = release.noisy, release.report
    assert noisy.shape == (5, 8) and np.allclose(release.topic_word.sum(axis=1), 1.0)
    assert rep.guarantee == "approx-DP" and rep.seeded and rep.calibration == "mvg-theorem-3"
    assert rep.sigma == pytest.approx(mvg_iid_sigma((5, 8), 3.0, 1e-4, 0.05, math.sqrt(5)))
    assert rep.sigma_alternatives["gaussian-analytic"] < rep.sigma
    assert all(c.passed for c in rep.checks)
    assert rep.to_json()  # serialisable
    rep2 = mvg_release(W, 3.0, 1e-4, 0.05, sensitivity_method="sampled", random_dp_gamma=0.1).report
    assert rep2.guarantee == "random-DP" and not rep2.seeded
    assert rep.published["noisy"] == "DP" and rep2.published["noisy"].startswith("random-DP:")


def test_release_with_directional_noise_and_errors():
    W = np.full((3, 3), 0.2)
    with pytest.warns(DeprecationWarning, match="unpacking"):  # the former (noisy, report) tuple still unpacks
        noisy, rep = mvg_release(W, 1.0, 1e-3, 0.1, row_cov=np.diag([1.0, 2, 3]), col_cov=np.eye(3), random_state=0)
    assert rep.sigma is None and noisy.shape == (3, 3)
    with pytest.raises(ValueError, match="gamma"):
        mvg_release(W - 0.5, 1.0, 1e-3, 0.1)
    with pytest.raises(ValueError, match="positive definite"):
        mvg_release(W, 1.0, 1e-3, 0.1, row_cov=np.zeros((3, 3)), col_cov=np.eye(3))
    with pytest.raises(ValueError, match="delta"):
        mvg_release(W, 1.0, 0.0, 0.1)
