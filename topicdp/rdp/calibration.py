"""Calibrating Gaussian noise to a target (epsilon, delta), and accounting for a given noise scale.

Three calibrations of ``count`` composed Gaussian releases, each of L2 sensitivity ``D``:

``"analytic"`` (and ``"auto"``)
    The analytic Gaussian mechanism (Balle & Wang 2018, ICML, Thm. 8 and Alg. 1): the smallest sigma
    whose *exact* privacy profile meets delta at epsilon. ``count`` Gaussians compose exactly into one
    with sensitivity ``D sqrt(count)`` (Dong, Roth & Su 2022, Cor. 3.3), so this is optimal: no valid
    sigma is smaller.
``"rdp"``
    The smallest sigma for which the Gaussian RDP curve ``count alpha D^2/(2 sigma^2)`` (Mironov 2017,
    Table II), converted by the improved conversion (Canonne, Kamath & Steinke 2020, Prop. 12) at the
    best *continuous* order, gives at most epsilon. This is what composes with other RDP releases
    (:class:`topicdp.rdp.PrivacyLedger`); for a lone Gaussian it is 5-14% above the analytic sigma
    for eps in [0.1, 10], delta in [1e-7, 1e-4] (more for delta near 1/2).
``"paper"``
    TopicDP's recipe (Wang et al., KDD 2022, Sec. 3.4, Alg. 2), reproduced as written: fixed order
    ``alpha = 2``; the target (epsilon, delta) is mapped to an RDP level ``eps_R`` by Prop. 2
    (:func:`topicdp.rdp.topicdp_rdp_level`); Thm. 2 then gives ``sigma^2 = alpha D^2 / (2 eps_R)``.
    For ``count > 1`` RDP composition at the same order gives ``sigma^2 = count alpha D^2/(2 eps_R)``
    (the paper releases one matrix; the extension is ours). Prop. 1 (Mironov's conversion) is not
    usable at ``alpha = 2``: it would need ``eps_R = eps - log(1/delta) < 0`` for typical targets.
    Prop. 2's first term (the improved conversion at alpha = 2) is negative there too, so its second
    term sets ``eps_R`` on all of eps in [0.1, 10] x delta in [1e-7, 1e-4] except at eps = 10,
    delta = 1e-4. The recipe is valid (see :func:`topicdp.rdp.topicdp_rdp_level`; every returned
    sigma is also checked against the exact profile and a ``RuntimeWarning`` is raised if it ever
    fails) but very conservative: at eps = 3, delta = 1e-4 it needs about 13.2x the analytic sigma
    (1.09x for ``"rdp"``), and 1.5x-375x over eps in [0.1, 10], delta in [1e-7, 1e-4], because the
    order is not optimised.

:func:`gaussian_epsilon` is the accounting direction (sigma -> epsilon) with the same three views.
"""

from __future__ import annotations

import math
import warnings
from typing import Dict

import numpy as np
from scipy import optimize

from topicdp._validation import check_delta, check_epsilon, check_option

from ._checks import check_count, check_sensitivity
from .conversions import minimize_over_orders, rdp_to_dp, topicdp_rdp_level
from .gaussian import _round_up, gaussian_delta, gaussian_mu, gdp_epsilon, gdp_log_delta

CALIBRATION_METHODS = ("auto", "analytic", "rdp", "paper")
EPSILON_METHODS = ("rdp", "mironov", "exact")
PAPER_ALPHA = 2.0  # TopicDP Sec. 3.4: "We set the value alpha = 2"


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0, count: int = 1,
                     method: str = "rdp") -> float:
    """Epsilon of ``count`` composed Gaussian releases with std ``sigma`` at the given delta.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``.
    delta : float
        In (0, 1).
    sensitivity : float, default 1.0
        L2 sensitivity of each release, ``>= 0`` (zero gives epsilon 0).
    count : int, default 1
        Number of composed releases, ``>= 1``.
    method : {"rdp", "mironov", "exact"}, default "rdp"
        ``"rdp"``: curve ``alpha rho`` with ``rho = count D^2/(2 sigma^2)`` (Mironov 2017, Table II and
        Prop. 1), improved conversion (Canonne, Kamath & Steinke 2020, Prop. 12) at the best continuous
        order. ``"mironov"``: same curve, Mironov 2017 Prop. 3 conversion ``r + log(1/delta)/(alpha-1)``
        at the best order (equal to ``rho + 2 sqrt(rho log(1/delta))``). ``"exact"``: inverse of the
        exact profile (Balle & Wang 2018, Thm. 8) of one Gaussian with sensitivity ``D sqrt(count)``.

    Returns
    -------
    float
        epsilon >= 0. Always ``exact <= rdp <= mironov``.
    """
    mu = gaussian_mu(sigma, sensitivity, count)
    delta = check_delta(delta)
    method = check_option(method, "method", EPSILON_METHODS)
    if mu == 0.0:
        return 0.0
    if method == "exact":
        return gdp_epsilon(mu, delta)
    rho = 0.5 * mu * mu
    conversion = "improved" if method == "rdp" else "mironov"
    return rdp_to_dp(lambda a: a * rho, delta, conversion=conversion)[0]


def calibrate_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0, method: str = "auto",
                       count: int = 1) -> float:
    """Gaussian std so that ``count`` composed releases are (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta in (0, 1) (``"paper"`` needs delta < 1/2, Prop. 2's ``alpha delta < 1``).
    sensitivity : float, default 1.0
        L2 sensitivity of each release, ``> 0``. Zero is rejected rather than answered with
        ``sigma = 0``: a zero sensitivity almost always means a bug upstream (e.g. a sensitivity
        sampler whose model ignored its input), and a noiseless release should be a deliberate choice.
    method : {"auto", "analytic", "rdp", "paper"}, default "auto"
        See the module docstring. ``"auto"`` returns the smallest valid sigma for this release, which
        for homogeneous Gaussian composition is the analytic one.
    count : int, default 1
        Number of composed releases, ``>= 1``.

    Returns
    -------
    float
        sigma > 0. For ``"analytic"``/``"auto"`` the exact profile, as evaluated, satisfies
        ``gaussian_delta(sigma, epsilon, sensitivity, count) <= delta`` (the root is rounded upward);
        for ``"rdp"`` likewise ``gaussian_epsilon(sigma, delta, sensitivity, count) <= epsilon``.

    Warns
    -----
    RuntimeWarning
        For ``"paper"``, if the recipe's sigma fails the exact profile (not observed on any tested
        (epsilon, delta); the check is kept because the paper's Prop. 2 is quoted, not proven here).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_sensitivity(sensitivity, allow_zero=False)
    method = check_option(method, "method", CALIBRATION_METHODS)
    count = check_count(count)
    if method in ("auto", "analytic"):
        return _sigma_analytic(epsilon, delta, sensitivity, count)
    if method == "rdp":
        return _sigma_rdp(epsilon, delta, sensitivity, count)
    return _sigma_paper(epsilon, delta, sensitivity, count)


def calibrate_all(epsilon: float, delta: float, sensitivity: float = 1.0, count: int = 1) -> Dict[str, float]:
    """The sigma every calibration method gives, keyed by method name (for the privacy report).

    Returns
    -------
    dict
        ``{"auto": ..., "analytic": ..., "rdp": ..., "paper": ...}`` (plain floats, JSON-ready).
    """
    return {m: calibrate_gaussian(epsilon, delta, sensitivity, method=m, count=count)
            for m in CALIBRATION_METHODS}


# --------------------------------------------------------------------------------------------------
# the three calibrations


def _sigma_analytic(epsilon: float, delta: float, sensitivity: float, count: int) -> float:
    """Balle & Wang 2018, Alg. 1, solved for the GDP parameter: the largest ``mu`` with
    ``delta(mu, eps) <= delta``, then ``sigma = D sqrt(count) / mu`` rounded upward."""
    log_target = math.log(delta)

    def excess(mu: float) -> float:  # increasing in mu
        return gdp_log_delta(mu, epsilon) - log_target

    lo = hi = 1.0
    while excess(hi) <= 0.0:
        hi *= 2.0
    while excess(lo) > 0.0:
        lo *= 0.5
    mu = optimize.brentq(excess, lo, hi, xtol=1e-300, rtol=4 * 2.0**-52, maxiter=500)
    sigma = sensitivity * math.sqrt(count) / mu
    return _round_up(sigma, lambda s: gaussian_delta(s, epsilon, sensitivity, count) <= delta)


def _sigma_rdp(epsilon: float, delta: float, sensitivity: float, count: int) -> float:
    """Largest Gaussian zCDP level ``rho`` whose curve ``alpha rho`` converts to <= epsilon.

    For one order the improved conversion is ``alpha rho + c(alpha) <= eps`` with
    ``c(alpha) = log1p(-1/alpha) - (log delta + log alpha)/(alpha-1)`` (Canonne, Kamath & Steinke
    2020, Prop. 12), i.e. ``rho <= (eps - c(alpha))/alpha``; some order works iff
    ``rho <= max_alpha (eps - c(alpha))/alpha``, a one-dimensional maximisation (no nested root
    finding). The total-variation shortcut of :func:`topicdp.rdp.rdp_to_dp` is honoured too.
    """
    log_delta = math.log(delta)

    def neg_rho(t):
        am1 = np.exp(t)
        log_a = np.log1p(am1)
        c = (t - log_a) - (log_delta + log_a) / am1
        return -(epsilon - c) / (1.0 + am1)

    neg, _ = minimize_over_orders(neg_rho)
    rho = max(-neg, -math.log1p(-delta * delta) / (1.0 + 1e-6))
    sigma = sensitivity * math.sqrt(count / (2.0 * rho))
    return _round_up(sigma, lambda s: gaussian_epsilon(s, delta, sensitivity, count, "rdp") <= epsilon)


def _sigma_paper(epsilon: float, delta: float, sensitivity: float, count: int) -> float:
    """TopicDP Prop. 2 at alpha = 2, then Thm. 2: ``sigma^2 = count alpha D^2 / (2 eps_R)``."""
    level = topicdp_rdp_level(epsilon, delta, PAPER_ALPHA)
    sigma = sensitivity * math.sqrt(count * PAPER_ALPHA / (2.0 * level))
    if gaussian_delta(sigma, epsilon, sensitivity, count) > delta:
        warnings.warn(
            f"TopicDP's alpha=2 recipe gives sigma={sigma:.6g}, which is NOT ({epsilon:g}, {delta:g})-DP "
            "under the exact Gaussian privacy profile; use method='analytic' or 'rdp'",
            RuntimeWarning, stacklevel=3)
    return sigma

