"""Accounting functions only the tests call (moved out of ``topicdp.rdp``): the inverse of
:func:`topicdp.rdp.rdp_to_dp`, two zCDP levels, and the Gaussian's RDP curve."""

from __future__ import annotations

import math
from typing import Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from topicdp._validation import check_epsilon, check_option, check_real
from topicdp.rdp._checks import as_output, check_count, check_orders, check_sensitivity, check_sigma
from topicdp.rdp.conversions import CONVERSIONS, RdpCurve, _kl_bound, _minimize_curve, _smallest_order


def rdp_to_delta(rdp: RdpCurve, epsilon: float, conversion: str = "improved") -> Tuple[float, float]:
    """Delta of an RDP curve at ``epsilon``, the inverse of :func:`topicdp.rdp.rdp_to_dp` (the conversions solved
    for delta).

    ``"improved"``: ``log delta = (alpha - 1)(r - eps + log1p(-1/alpha)) - log alpha``, capped by
    ``sqrt(1 - exp(-KL))``; ``"mironov"``: ``log delta = (alpha - 1)(r - eps)``. ``rdp_to_dp(c, d)[0] <= e`` iff
    ``rdp_to_delta(c, e)[0] <= d``.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    conversion = check_option(conversion, "conversion", CONVERSIONS)

    def log_delta_at(r: np.ndarray, t: np.ndarray) -> np.ndarray:
        am1 = np.exp(t)
        if conversion == "mironov":
            return am1 * (r - epsilon)
        log_a = np.log1p(am1)
        return am1 * (r - epsilon + t - log_a) - log_a

    value, alpha = _minimize_curve(rdp, log_delta_at)
    delta = min(1.0, math.exp(value)) if math.isfinite(value) else (0.0 if value < 0 else 1.0)
    if conversion == "improved":
        tv = math.sqrt(-math.expm1(-_kl_bound(rdp)))
        if tv < delta:
            return tv, _smallest_order(rdp)
    return delta, alpha


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


def gaussian_rdp(alpha: ArrayLike, sigma: float, sensitivity: float = 1.0) -> Union[float, np.ndarray]:
    """``alpha D^2 / (2 sigma^2)`` (Mironov 2017, Table II; TopicDP, Thm. 2; Bun & Steinke 2016, Prop. 1.6)."""
    a = check_orders(alpha)
    sigma = check_sigma(sigma)
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    return as_output(a * (sensitivity / sigma) ** 2 / 2.0, alpha)
