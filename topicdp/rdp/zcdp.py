"""Zero-concentrated DP (Bun & Steinke 2016, "Concentrated differential privacy: simplifications, extensions, and
lower bounds"): rho-zCDP is (alpha, alpha rho)-RDP for every alpha, so levels add under composition.
"""

from __future__ import annotations

import math

from topicdp._validation import check_delta, check_epsilon, check_option, check_real

from ._checks import check_count, check_sensitivity, check_sigma
from .conversions import rdp_to_dp

ZCDP_CONVERSIONS = ("bun-steinke", "improved")


def gaussian_zcdp(sigma: float, sensitivity: float = 1.0, count: int = 1) -> float:
    """``rho = count D^2 / (2 sigma^2)`` (Bun & Steinke 2016, Prop. 1.6 and Lemma 1.7)."""
    sigma = check_sigma(sigma)
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    count = check_count(count)
    return count * (sensitivity / sigma) ** 2 / 2.0


def pure_dp_zcdp(epsilon: float) -> float:
    """zCDP level implied by epsilon-DP: ``rho = epsilon^2 / 2`` (Bun & Steinke 2016, Prop. 1.4)."""
    epsilon = check_epsilon(epsilon)
    return epsilon * epsilon / 2.0


def zcdp_to_dp(rho: float, delta: float, conversion: str = "bun-steinke") -> float:
    """Epsilon of rho-zCDP at ``delta``: ``"bun-steinke"``, ``rho + 2 sqrt(rho log(1/delta))`` (Bun & Steinke 2016,
    Prop. 1.3); ``"improved"``, the curve ``alpha rho`` by :func:`topicdp.rdp.rdp_to_dp`, never larger.
    """
    rho = check_real(rho, "rho", low=0.0, low_open=False)
    delta = check_delta(delta)
    conversion = check_option(conversion, "conversion", ZCDP_CONVERSIONS)
    if conversion == "bun-steinke":
        return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    return rdp_to_dp(lambda a: a * rho, delta, conversion="improved")[0]
