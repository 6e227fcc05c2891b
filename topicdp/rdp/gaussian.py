"""The exact privacy profile of the Gaussian mechanism.

A Gaussian release ``f(D) + N(0, sigma^2 I)`` of a function with L2 sensitivity ``D`` is, for every
pair of neighbours, exactly as distinguishable as ``N(0, 1)`` versus ``N(mu, 1)`` with
``mu = D / sigma``; ``J`` such releases composed (adaptively or not) are exactly ``N(0, 1)`` versus
``N(mu sqrt(J), 1)``, and heterogeneous ones compose into ``mu = sqrt(sum_i mu_i^2)`` (Dong, Roth & Su
2022, "Gaussian differential privacy", JRSS-B, Cor. 3.3). The tightest (epsilon, delta) pairs of a
``mu``-GDP mechanism form the privacy profile (Balle & Wang 2018, "Improving the Gaussian mechanism for
differential privacy", ICML, Thm. 8; Dong, Roth & Su, Cor. 2.13)::

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).

Everything here is exact up to floating point; the accountants in :mod:`topicdp.rdp.calibration` and
:mod:`topicdp.rdp.ledger` are checked against it.

Why hand-written: ``dp_accounting.pld`` discretises the privacy loss (a pessimistic but approximate
answer) and ``scipy.stats.norm`` evaluates the two terms separately, which cancels catastrophically in
the tails (eps large, delta ~ 1e-12). The closed form below removes the cancellation analytically.
"""

from __future__ import annotations

import math

from scipy import special

from topicdp._validation import check_delta, check_real

from ._checks import check_count, check_sensitivity, check_sigma
from .search import smallest_meeting

_SQRT2 = math.sqrt(2.0)
_LOG2 = math.log(2.0)


def gdp_log_delta(mu: float, epsilon: float) -> float:
    """Natural log of the exact privacy profile of ``mu``-GDP (no validation; ``mu >= 0``, ``eps >= 0``).

    Balle & Wang 2018, Thm. 8: ``delta = Phi(a) - e^eps Phi(b)`` with ``a = mu/2 - eps/mu`` and
    ``b = -mu/2 - eps/mu``. Because ``b^2 - a^2 = 2 eps`` exactly, for ``a < 0`` write
    ``Phi(x) = erfcx(-x/sqrt2) exp(-x^2/2) / 2``; the factor ``e^eps`` then cancels the Gaussian tails
    analytically::

        delta = exp(-a^2/2) / 2 * (erfcx(-a/sqrt2) - erfcx(-b/sqrt2)),

    a difference of two O(1/|a|) numbers that differ in relative terms by about ``mu/|b|``, so only a
    few digits are lost where the old form lost all of them. For ``a >= 0`` delta is at least of the
    order ``mu * phi(0)`` and the log form ``log Phi(a) + log(1 - exp(eps + log Phi(b) - log Phi(a)))``
    is accurate.
    """
    if mu <= 0.0:
        return -math.inf
    a = mu / 2.0 - epsilon / mu
    b = -mu / 2.0 - epsilon / mu
    if a < 0.0:
        diff = special.erfcx(-a / _SQRT2) - special.erfcx(-b / _SQRT2)
        if diff <= 0.0:  # both terms underflowed to the same double: delta is below ~1e-300
            return -math.inf
        return -0.5 * a * a - _LOG2 + math.log(diff)
    log_pa = float(special.log_ndtr(a))
    z = epsilon + float(special.log_ndtr(b)) - log_pa  # log(e^eps Phi(b) / Phi(a)) < 0
    return log_pa + math.log(-math.expm1(z))


def gdp_delta(mu: float, epsilon: float) -> float:
    """Exact delta(epsilon) of a ``mu``-GDP mechanism (Dong, Roth & Su 2022, Cor. 2.13).

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu >= 0`` (``mu = sensitivity * sqrt(count) / sigma`` for Gaussian noise).
    epsilon : float
        ``epsilon >= 0``.

    Returns
    -------
    float
        The smallest delta for which the mechanism is (epsilon, delta)-DP.
    """
    mu = check_real(mu, "mu", low=0.0, low_open=False)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    return math.exp(gdp_log_delta(mu, epsilon))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon with ``gdp_delta(mu, epsilon) <= delta`` (inverse of the exact profile).

    The profile is strictly decreasing in epsilon, so the inverse is the package's calibration search
    (:func:`topicdp.rdp.search.smallest_meeting`) with epsilon as the parameter: a 1-D root, rounded
    *upward* (Balle & Wang 2018, Alg. 1 in spirit) so the returned epsilon always satisfies the profile
    in floating point.

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu >= 0``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float
        epsilon >= 0; ``0.0`` when ``delta`` is at least the total variation distance ``2 Phi(mu/2) - 1``.
    """
    mu = check_real(mu, "mu", low=0.0, low_open=False)
    delta = check_delta(delta)
    # The search returns the lower end 0 itself when delta(0) (the total variation distance) meets delta.
    # Upper bracket: the zCDP bound rho + 2 sqrt(rho log(1/delta)), rho = mu^2/2 (Bun & Steinke 2016,
    # Prop. 1.3) is a valid epsilon, hence above the exact one (the search widens it defensively anyway).
    # delta(eps) is decreasing in eps, so this is the package's one search with eps as the parameter.
    rho = 0.5 * mu * mu
    hi = rho + 2.0 * math.sqrt(rho * -math.log(delta)) + 1e-12
    return smallest_meeting(lambda e: math.exp(gdp_log_delta(mu, e)), delta, bracket=(0.0, hi),
                            xtol=1e-15, log_scale=True)


def gaussian_mu(sigma: float, sensitivity: float = 1.0, count: int = 1) -> float:
    """GDP parameter ``mu = sensitivity * sqrt(count) / sigma`` of ``count`` composed Gaussian releases.

    Dong, Roth & Su 2022, Thm. 2.7 (one release is ``D/sigma``-GDP) and Cor. 3.3 (composition).
    """
    sigma = check_sigma(sigma)
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    count = check_count(count)
    return sensitivity * math.sqrt(count) / sigma


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0, count: int = 1) -> float:
    """Exact delta(epsilon) of ``count`` composed Gaussian releases with std ``sigma``.

    Balle & Wang 2018, Thm. 8: ``delta = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)`` with
    ``D = sensitivity * sqrt(count)`` (composition of Gaussians is one Gaussian, Dong, Roth & Su 2022,
    Cor. 3.3). Evaluated in the cancellation-free form of :func:`gdp_log_delta`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``sigma > 0``.
    epsilon : float
        ``epsilon >= 0``.
    sensitivity : float, default 1.0
        L2 sensitivity of each release, ``>= 0`` (zero gives ``delta = 0``).
    count : int, default 1
        Number of composed releases, ``>= 1``.

    Returns
    -------
    float
        The smallest delta for which the composition is (epsilon, delta)-DP.
    """
    mu = gaussian_mu(sigma, sensitivity, count)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    return math.exp(gdp_log_delta(mu, epsilon))
