"""Exact (GDP) composition of the all-Gaussian configurations against the exact Gaussian privacy profile
(Balle & Wang 2018, Thm. 8, evaluated here independently with mpmath) and dp-accounting's PLD accountant."""

import math

import mpmath
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

from topicdp.spectral.accounting import DEFAULT_SPLITS, SpectralBudget
from topicdp.spectral.configurations import CONFIGURATIONS


def _profile_delta(mu: float, eps: float) -> float:
    """delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), in 50-digit arithmetic."""
    mpmath.mp.dps = 50
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return float(mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu))


def _budget(cfg, eps, delta, accounting):
    spec = CONFIGURATIONS[cfg]
    return SpectralBudget(eps, delta, dict(DEFAULT_SPLITS[cfg]), spec["gaussian"], spec["laplace"], accounting)


@pytest.mark.parametrize("cfg", [1, 2])
@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-6), (3.0, 1e-7), (10.0, 1e-6)])
def test_exact_composition_meets_the_budget_exactly(cfg, eps, delta):
    b = _budget(cfg, eps, delta, "auto")
    assert b.accounting == "exact"
    # data-dependent sensitivities (as config 2's Delta_T): the total mu does not depend on them
    sens = {"e3": 0.013, "e4": 7e-4, "e8": 7e-4, "e6": 41.0}
    mus = [sens[g] / b.gaussian_sigma(g, sens[g]) for g in CONFIGURATIONS[cfg]["gaussian"]]
    mu = math.sqrt(sum(m * m for m in mus))
    d = _profile_delta(mu, eps)
    assert d <= delta * (1 + 1e-9) and d >= delta * (1 - 1e-6)  # exact, not merely valid
    # dp-accounting: compose the same Gaussians (noise multiplier sigma/Delta each) by PLD; its
    # discretisation is pessimistic, so its epsilon is slightly above ours, never below by more than float
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    for m in mus:
        acc.compose(dp_event.GaussianDpEvent(noise_multiplier=1.0 / m))
    pld_eps = acc.get_epsilon(delta)
    assert eps * (1 - 1e-6) <= pld_eps <= eps * 1.01
    # the reported totals: exact equals the budget, and is what 'best' picks
    totals = b.totals()
    assert math.isclose(totals["exact"], eps, rel_tol=1e-6) and totals["best"] <= eps * (1 + 1e-9)


@pytest.mark.parametrize("cfg", [1, 2])
def test_exact_needs_less_noise_than_rdp_and_simple(cfg):
    """Same shared multiplier structure: exact < rdp < simple sigmas at eps in {1, 3, 10}."""
    for eps in (1.0, 3.0, 10.0):
        s = {acc: _budget(cfg, eps, 1e-6, acc).gaussian_sigma("e8", 1.0) for acc in ("exact", "rdp", "simple")}
        assert s["exact"] < s["rdp"] < s["simple"]


def test_exact_is_refused_with_laplace_releases():
    with pytest.raises(ValueError, match="exact"):
        _budget(3, 1.0, 1e-6, "exact")
    assert _budget(3, 1.0, 1e-6, "auto").accounting == "rdp"
