"""The exact privacy profile of the Gaussian mechanism.

``J`` Gaussian releases of sensitivity ``D`` and std ``sigma`` are exactly ``N(0, 1)`` versus ``N(mu, 1)``,
``mu = D sqrt(J) / sigma``, and heterogeneous ones compose into ``mu = sqrt(sum mu_i^2)`` (Dong, Roth & Su 2022,
"Gaussian differential privacy", Cor. 3.3). The profile (Balle & Wang 2018, "Improving the Gaussian mechanism
for differential privacy", Thm. 8) is ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``.
Hand-written because dp-accounting's PLD discretises it (pessimistic) and ``scipy.stats.norm`` cancels
catastrophically in the tails; :func:`gdp_log_delta` removes the cancellation analytically.
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
    """Natural log of the exact profile of ``mu``-GDP (no validation).

    With ``a = mu/2 - eps/mu``, ``b = -mu/2 - eps/mu`` and ``b^2 - a^2 = 2 eps``, for ``a < 0`` the tails cancel
    analytically: ``delta = exp(-a^2/2) / 2 (erfcx(-a/sqrt2) - erfcx(-b/sqrt2))``. For ``a >= 0``,
    ``log Phi(a) + log(1 - exp(eps + log Phi(b) - log Phi(a)))`` is accurate.
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
    """Exact delta(epsilon) of a ``mu``-GDP mechanism (Dong, Roth & Su 2022, Cor. 2.13); ``mu, epsilon >= 0``."""
    mu = check_real(mu, "mu", low=0.0, low_open=False)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    return math.exp(gdp_log_delta(mu, epsilon))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon with ``gdp_delta(mu, epsilon) <= delta``: the one search, rounded upward.

    ``0.0`` when ``delta`` is at least the total variation ``2 Phi(mu/2) - 1``. The bracket's upper end is the zCDP
    bound ``rho + 2 sqrt(rho log(1/delta))``, ``rho = mu^2/2`` (Bun & Steinke 2016, Prop. 1.3).
    """
    mu = check_real(mu, "mu", low=0.0, low_open=False)
    delta = check_delta(delta)
    rho = 0.5 * mu * mu
    hi = rho + 2.0 * math.sqrt(rho * -math.log(delta)) + 1e-12
    return smallest_meeting(lambda e: math.exp(gdp_log_delta(mu, e)), delta, bracket=(0.0, hi),
                            xtol=1e-15, log_scale=True)


def gaussian_mu(sigma: float, sensitivity: float = 1.0, count: int = 1) -> float:
    """``mu = sensitivity sqrt(count) / sigma`` (Dong, Roth & Su 2022, Thm. 2.7 and Cor. 3.3)."""
    sigma = check_sigma(sigma)
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    count = check_count(count)
    return sensitivity * math.sqrt(count) / sigma


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0, count: int = 1) -> float:
    """Exact delta(epsilon) of ``count`` Gaussian releases: :func:`gdp_delta` at :func:`gaussian_mu`."""
    mu = gaussian_mu(sigma, sensitivity, count)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    return math.exp(gdp_log_delta(mu, epsilon))
