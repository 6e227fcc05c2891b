"""RDP curves (Gaussian, Laplace, pure DP) and the RDP <-> (eps, delta) conversions."""

from __future__ import annotations

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS, _laplace_rdp
from hypothesis import given, settings
from hypothesis import strategies as st

import topicdp.rdp as rdp
from rdp_reference import gaussian_rdp, rdp_to_delta


def laplace_closed_form(alpha: float, lam: float) -> float:
    """Mironov 2017, Table II, as printed, in 50-digit arithmetic."""
    with mpmath.workdps(50):
        a, lam = mpmath.mpf(alpha), mpmath.mpf(lam)
        inner = a / (2 * a - 1) * mpmath.exp((a - 1) / lam) + (a - 1) / (2 * a - 1) * mpmath.exp(-a / lam)
        return float(mpmath.log(inner) / (a - 1))


# -- Gaussian -------------------------------------------------------------------------------------------


def test_gaussian_rdp_closed_form_and_vectorised():
    assert gaussian_rdp(3.0, 2.0, 1.5) == pytest.approx(3 * 1.5**2 / (2 * 4.0))
    arr = gaussian_rdp([1.0, 2.0, 10.0], 1.0)
    assert isinstance(arr, np.ndarray) and arr.tolist() == [0.5, 1.0, 5.0]


# -- Laplace --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1.0001, 1.5, 2.0, 7.3, 64.0, 1000.0])
@pytest.mark.parametrize("lam", [0.3, 1.0, 4.0, 50.0])
def test_laplace_rdp_closed_form(alpha, lam):
    got = rdp.laplace_rdp(alpha, scale=lam * 2.0, sensitivity=2.0)
    assert got == pytest.approx(laplace_closed_form(alpha, lam), rel=1e-9)
    assert got == pytest.approx(_laplace_rdp(1.0 / lam, alpha), rel=1e-9)  # dp-accounting's version


def test_laplace_rdp_limits():
    lam = 2.0
    kl = 1 / lam + math.exp(-1 / lam) - 1
    assert rdp.laplace_rdp(1.0, lam) == pytest.approx(kl, rel=1e-12)
    assert rdp.laplace_rdp(1.0 + 1e-9, lam) == pytest.approx(kl, rel=1e-6)
    assert rdp.laplace_rdp(1e9, lam) == pytest.approx(1 / lam, rel=1e-6)
    assert rdp.laplace_rdp(5.0, lam, sensitivity=0.0) == 0.0
    curve = rdp.laplace_rdp(np.geomspace(1, 1e6, 50), 0.1)  # eps = 10: no overflow
    assert np.all(np.isfinite(curve)) and np.all(np.diff(curve) >= -1e-12) and curve.max() <= 10.0


@pytest.mark.parametrize("scale, count", [(1.0, 1), (3.0, 10), (0.5, 4)])
def test_laplace_vs_rdp_accountant(scale, count):
    acc = RdpAccountant()
    acc.compose(dp_accounting.LaplaceDpEvent(noise_multiplier=scale), count)
    theirs = acc.get_epsilon(1e-6)
    ours_on_grid, _ = rdp.rdp_to_dp(
        (DEFAULT_RDP_ORDERS, count * rdp.laplace_rdp(DEFAULT_RDP_ORDERS, scale)), 1e-6)
    assert ours_on_grid == pytest.approx(theirs, rel=1e-9)
    ours, _ = rdp.rdp_to_dp(lambda a: count * rdp.laplace_rdp(a, scale), 1e-6)
    assert ours <= theirs * (1 + 1e-12)


# -- pure DP --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0])
def test_pure_dp_rdp_never_exceeds_epsilon(eps):
    alphas = np.geomspace(1.0, 1e6, 200)
    curve = rdp.pure_dp_rdp(alphas, eps)
    assert np.all(curve <= eps)
    assert np.allclose(curve, np.minimum(eps, alphas * eps**2 / 2))
    # The Laplace mechanism with scale 1/eps is eps-DP; its exact curve is below the generic bound.
    assert np.all(rdp.laplace_rdp(alphas, 1 / eps) <= curve + 1e-12)


# -- conversions ---------------------------------------------------------------------------------------


def gauss(rho):
    return lambda a: a * rho


def test_improved_at_most_mironov_and_both_monotone():
    deltas = np.geomspace(1e-12, 1e-2, 12)
    rhos = np.geomspace(1e-4, 50, 12)
    for rho in rhos:
        imp = [rdp.rdp_to_dp(gauss(rho), d)[0] for d in deltas]
        mir = [rdp.rdp_to_dp(gauss(rho), d, "mironov")[0] for d in deltas]
        assert all(i <= m * (1 + 1e-12) for i, m in zip(imp, mir))
        assert np.all(np.diff(imp) <= 1e-12) and np.all(np.diff(mir) <= 1e-12)  # decreasing in delta
    for d in (1e-9, 1e-5):
        imp = [rdp.rdp_to_dp(gauss(rho), d)[0] for rho in rhos]
        assert np.all(np.diff(imp) > 0)  # increasing in the RDP level
        dl = [rdp_to_delta(gauss(rho), 1.0)[0] for rho in rhos]
        assert np.all(np.diff(dl) >= 0)


@settings(max_examples=60, deadline=None)
@given(rho=st.floats(1e-4, 20.0), log10_delta=st.floats(-12.0, -2.0),
       conversion=st.sampled_from(["improved", "mironov"]))
def test_rdp_to_dp_inverts_rdp_to_delta(rho, log10_delta, conversion):
    delta = 10.0**log10_delta
    eps, alpha = rdp.rdp_to_dp(gauss(rho), delta, conversion)
    if eps == 0.0:
        return
    back, _ = rdp_to_delta(gauss(rho), eps, conversion)
    assert back == pytest.approx(delta, rel=1e-6)


def test_continuous_alpha_beats_any_grid_and_finds_closed_form_optimum():
    rho, delta = 0.01, 1e-6
    eps, alpha = rdp.rdp_to_dp(gauss(rho), delta, "mironov")
    assert alpha == pytest.approx(1 + math.sqrt(math.log(1 / delta) / rho), rel=1e-4)
    grid = np.array(DEFAULT_RDP_ORDERS, dtype=float)
    assert eps <= rdp.rdp_to_dp((grid, grid * rho), delta, "mironov")[0]


def test_guard_grid_avoids_local_minimum():
    """Two basins in t = log(alpha - 1): a shallow one at t = -5 and the global one at t = 10. A local
    search started at small orders would stop in the first; the guard grid must find the second."""
    def objective(t):
        t = np.asarray(t, dtype=float)
        return np.minimum((t + 5.0) ** 2 + 1.0, (t - 10.0) ** 2)

    value, alpha = rdp.minimize_over_orders(objective)
    assert value == pytest.approx(0.0, abs=1e-12)
    assert math.log(alpha - 1) == pytest.approx(10.0, abs=1e-5)


def test_scalar_only_callable_and_grid_curves():
    def scalar_curve(a: float) -> float:
        return math.fsum([a * 0.5])  # raises TypeError on arrays

    eps_vec = rdp.rdp_to_dp(gauss(0.5), 1e-5)[0]
    assert rdp.rdp_to_dp(scalar_curve, 1e-5)[0] == pytest.approx(eps_vec, rel=1e-12)
    orders = [1.0, 1.5, 2.0, 4.0]
    eps, alpha = rdp.rdp_to_dp((orders, [0.5 * a for a in orders]), 1e-5)
    assert alpha in orders[1:] and eps >= eps_vec


def test_total_variation_shortcut():
    """eps = 0 whenever delta >= sqrt(1 - exp(-KL)) (as in dp_accounting's compute_epsilon)."""
    rho = 1e-6
    assert rdp.rdp_to_dp(gauss(rho), 0.01)[0] == 0.0
    assert rdp_to_delta(gauss(rho), 0.0)[0] <= math.sqrt(-math.expm1(-rho * 1.001))
