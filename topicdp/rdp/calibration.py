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

One search
----------
Every calibration of the package -- ``"analytic"`` and ``"rdp"`` here, the DP vocabulary's threshold,
DP-SVI's noise multiplier (:func:`calibrate_event`), the paper baselines' advanced composition, the
spectral budget split, and dp-vem (through ``"analytic"``) -- and the inversion of the exact profile for
epsilon (:func:`topicdp.rdp.gdp_epsilon`) run :func:`topicdp.rdp.search.smallest_meeting`: a bracket,
Brent's method, and upward rounding until the cost meets the target as evaluated. dp-accounting's
``calibrate_dp_mechanism`` is not that one search, because most of our costs are not accountants: the exact
Gaussian profile (dp-accounting's PLD discretises it pessimistically), the partition-selection threshold and
the paper's recipes would have to be dressed as ``PrivacyAccountant`` objects; and its guarantee (an absolute
tolerance, a one-step nudge, a bisection fallback) is weaker than rounding upward until the evaluated cost
meets the target. :func:`calibrate_event` keeps dp-accounting's shape (accountant factory, event factory,
target) for the calibrations that do have an accountant, on top of the same search.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Dict

import numpy as np

from topicdp._validation import check_delta, check_epsilon, check_option

from ._checks import check_count, check_sensitivity
from .conversions import minimize_over_orders, rdp_to_dp, topicdp_rdp_level
from .gaussian import gaussian_delta, gaussian_mu, gdp_epsilon, gdp_log_delta
from .search import NoBracketError, smallest_meeting

__all__ = ["CALIBRATION_METHODS", "EPSILON_METHODS", "PAPER_ALPHA", "NoBracketError", "calibrate_all",
           "calibrate_event", "calibrate_gaussian", "gaussian_epsilon", "smallest_meeting"]

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


def calibrate_event(make_accountant: Callable[[], Any], make_event: Callable[[float], Any], epsilon: float,
                    delta: float, *, guess: float, rtol: float = 1e-6) -> float:
    """Smallest noise parameter whose dp-accounting event, composed on a fresh accountant, is within epsilon.

    dp-accounting's ``calibrate_dp_mechanism`` in shape (an accountant factory, an event factory, a target
    (epsilon, delta)), run by :func:`smallest_meeting` (module docstring of :mod:`topicdp.rdp.search` says
    why that search rather than dp-accounting's): the cost is
    ``make_accountant().compose(make_event(x)).get_epsilon(delta)``, non-increasing in the noise ``x``.

    Parameters
    ----------
    make_accountant : callable
        Returns a fresh ``dp_accounting.PrivacyAccountant`` (one per evaluation, as dp-accounting does).
    make_event : callable
        Noise parameter ``x > 0`` -> ``dp_accounting.DpEvent``.
    epsilon, delta : float
        The target.
    guess : float
        A positive noise parameter to start the bracket from (a closed-form recipe's value is ideal:
        accountants are slow at tiny noise).
    rtol : float, default 1e-6
        Relative resolution; the result is at most about ``2 rtol`` above the smallest meeting value.

    Returns
    -------
    float
        ``x`` with the accountant's epsilon at ``delta`` ``<= epsilon`` for ``x`` itself, as evaluated.
    """
    def cost(x: float) -> float:
        accountant = make_accountant()
        accountant.compose(make_event(x))
        return float(accountant.get_epsilon(delta))

    # dp-accounting gives up beyond 2**30 times its guess; so do we (each evaluation composes a fresh event)
    return smallest_meeting(cost, epsilon, guess=guess, rtol=rtol, max_expansions=30)


# --------------------------------------------------------------------------------------------------
# the three calibrations


def _sigma_analytic(epsilon: float, delta: float, sensitivity: float, count: int) -> float:
    """Balle & Wang 2018, Alg. 1: the smallest ``sigma`` whose exact profile (Thm. 8) gives
    ``delta(eps) <= delta``, by the one search on the profile's log (it spans hundreds of orders of
    magnitude), rounded upward until :func:`~topicdp.rdp.gaussian_delta` itself meets delta."""
    scale = sensitivity * math.sqrt(count)  # the GDP parameter is scale / sigma (Dong, Roth & Su, Cor. 3.3)

    def delta_at(sigma: float) -> float:  # bit-for-bit gaussian_delta(sigma, epsilon, sensitivity, count)
        return math.exp(gdp_log_delta(scale / sigma, epsilon))

    return smallest_meeting(delta_at, delta, guess=scale, log_scale=True)


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
    # the closed form is the root; the search adds the upward rounding that makes the evaluated epsilon meet
    return smallest_meeting(lambda s: gaussian_epsilon(s, delta, sensitivity, count, "rdp"), epsilon, root=sigma)


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

