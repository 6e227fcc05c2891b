"""Calibrating Gaussian noise to a target (epsilon, delta), and epsilon for a given noise scale.

For ``count`` composed releases of L2 sensitivity ``D``: ``"analytic"``/``"auto"``, the smallest sigma whose exact
profile meets delta (Balle & Wang 2018, "Improving the Gaussian mechanism for differential privacy", Thm. 8, Alg. 1;
the composition is one Gaussian of sensitivity ``D sqrt(count)``, Dong, Roth & Su 2022, Cor. 3.3); ``"rdp"``, the
smallest sigma whose curve ``count alpha D^2/(2 sigma^2)`` (Mironov 2017, Table II) converts to epsilon at the best
order (Canonne, Kamath & Steinke 2020, Prop. 12); ``"paper"``, TopicDP's recipe (Wang et al., KDD 2022, Sec. 3.4,
Alg. 2): Prop. 2's RDP level at order 2, then Thm. 2's ``sigma^2 = count alpha D^2 / (2 eps_R)`` (``count > 1``
our extension), valid but conservative and checked against the exact profile. Every calibration runs the one search
:func:`topicdp.rdp.search.smallest_meeting`, rounding upward until the evaluated cost meets the target.
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
    """Epsilon of ``count`` composed Gaussian releases with std ``sigma`` at ``delta``.

    ``method``: ``"rdp"``, the curve ``alpha rho``, ``rho = count D^2/(2 sigma^2)``, by the improved conversion
    (Canonne, Kamath & Steinke 2020, Prop. 12); ``"mironov"``, the same curve by Mironov 2017, Prop. 3
    (``rho + 2 sqrt(rho log(1/delta))``); ``"exact"``, the inverse of the exact profile (Balle & Wang 2018, Thm. 8).
    Always ``exact <= rdp <= mironov``; a zero sensitivity gives 0.
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
    """Gaussian std so that ``count`` composed releases of L2 sensitivity ``sensitivity`` are (epsilon, delta)-DP.

    ``method`` as in the module docstring (``"paper"`` needs delta < 1/2). A zero sensitivity is refused: it almost
    always means a bug upstream (a model that ignored its input). The evaluated cost meets the target (``"analytic"``:
    :func:`~topicdp.rdp.gaussian_delta` ``<= delta``; ``"rdp"``: :func:`gaussian_epsilon` ``<= epsilon``); ``"paper"``
    warns (RuntimeWarning) if its sigma ever failed the exact profile.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_sensitivity(sensitivity, allow_zero=False)
    method = check_option(method, "method", CALIBRATION_METHODS)
    calibrate = {"auto": _sigma_analytic, "analytic": _sigma_analytic, "rdp": _sigma_rdp, "paper": _sigma_paper}
    return calibrate[method](epsilon, delta, sensitivity, check_count(count))


def calibrate_all(epsilon: float, delta: float, sensitivity: float = 1.0, count: int = 1) -> Dict[str, float]:
    """The sigma of every calibration method, keyed by name (for the privacy report)."""
    return {m: calibrate_gaussian(epsilon, delta, sensitivity, method=m, count=count)
            for m in CALIBRATION_METHODS}


def calibrate_event(make_accountant: Callable[[], Any], make_event: Callable[[float], Any], epsilon: float,
                    delta: float, *, guess: float, rtol: float = 1e-6) -> float:
    """Smallest noise parameter whose dp-accounting event, composed on a fresh accountant, is within epsilon.

    dp-accounting's ``calibrate_dp_mechanism`` in shape (accountant factory, event factory ``x -> DpEvent``,
    target), run by :func:`smallest_meeting` from ``guess`` (a closed-form recipe's value: accountants are slow at
    tiny noise); the result is at most about ``2 rtol`` above the smallest meeting value.
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
    """Balle & Wang 2018, Alg. 1: the one search on the log of the exact profile, rounded upward."""
    scale = sensitivity * math.sqrt(count)  # the GDP parameter is scale / sigma (Dong, Roth & Su, Cor. 3.3)

    def delta_at(sigma: float) -> float:  # bit-for-bit gaussian_delta(sigma, epsilon, sensitivity, count)
        return math.exp(gdp_log_delta(scale / sigma, epsilon))

    return smallest_meeting(delta_at, delta, guess=scale, log_scale=True)


def _sigma_rdp(epsilon: float, delta: float, sensitivity: float, count: int) -> float:
    """The root by a one-dimensional maximisation, then the search's upward rounding.

    The improved conversion at one order is ``alpha rho + c(alpha) <= eps``, ``c(alpha) = log1p(-1/alpha) -
    (log delta + log alpha)/(alpha-1)`` (Canonne, Kamath & Steinke 2020, Prop. 12), so the largest zCDP level is
    ``max_alpha (eps - c(alpha))/alpha`` (with :func:`topicdp.rdp.rdp_to_dp`'s total-variation shortcut).
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

