"""Rényi DP curves ``alpha -> eps(alpha)`` of the toolkit's mechanisms (scalar or array orders ``>= 1``; order 1 is
the KL limit), and zCDP levels. Composed curves add pointwise (Mironov 2017, "Rényi differential privacy",
Prop. 1); rho-zCDP is (alpha, alpha rho)-RDP for every alpha (Bun & Steinke 2016, "Concentrated differential
privacy: simplifications, extensions, and lower bounds"), so levels add too."""

from __future__ import annotations

import math
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from topicdp._validation import check_delta, check_epsilon, check_option, check_real

from ._checks import as_output, check_orders, check_sensitivity, check_sigma
from .conversions import rdp_to_dp


def laplace_rdp(alpha: ArrayLike, scale: float, sensitivity: float = 1.0) -> Union[float, np.ndarray]:
    """RDP of the Laplace mechanism of scale ``b`` and L1 sensitivity ``D`` (Mironov 2017, Table II, Prop. 6).

    With ``lam = b / D``, ``eps(alpha) = 1/(alpha-1) log(alpha/(2alpha-1) e^{(alpha-1)/lam} + (alpha-1)/(2alpha-1)
    e^{-alpha/lam})``, evaluated stably as ``e + c log1p(x)/x`` with ``e = 1/lam``, ``c = expm1(-(2alpha-1) e)/(2alpha-1)``,
    ``x = (alpha-1) c`` (``log1p(x)/x := 1`` at 0; the KL divergence ``e + expm1(-e)`` at order 1).
    """
    a = check_orders(alpha)
    scale = check_sigma(scale, "scale")
    sensitivity = check_sensitivity(sensitivity, allow_zero=True)
    e = sensitivity / scale
    c = np.expm1(-(2.0 * a - 1.0) * e) / (2.0 * a - 1.0)
    x = (a - 1.0) * c
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(x == 0.0, 1.0, np.log1p(x) / np.where(x == 0.0, 1.0, x))
    return as_output(np.minimum(e + c * ratio, e), alpha)


def pure_dp_rdp(alpha: ArrayLike, epsilon: float) -> Union[float, np.ndarray]:
    """``min(epsilon, alpha epsilon^2 / 2)``: epsilon-DP is (alpha, epsilon)-RDP (Mironov 2017, Sec. III) and
    ``epsilon^2/2``-zCDP (Bun & Steinke 2016, "Concentrated differential privacy", Prop. 1.4).
    """
    a = check_orders(alpha)
    epsilon = check_epsilon(epsilon)
    return as_output(np.minimum(epsilon, a * epsilon * epsilon / 2.0), alpha)


ZCDP_CONVERSIONS = ("bun-steinke", "improved")


def zcdp_to_dp(rho: float, delta: float, conversion: str = "bun-steinke") -> float:
    """Epsilon of rho-zCDP at ``delta``: ``"bun-steinke"``, ``rho + 2 sqrt(rho log(1/delta))`` (Bun & Steinke 2016,
    Prop. 1.3); ``"improved"``, the curve ``alpha rho`` by :func:`topicdp.rdp.rdp_to_dp`, never larger."""
    rho = check_real(rho, "rho", low=0.0, low_open=False)
    delta = check_delta(delta)
    conversion = check_option(conversion, "conversion", ZCDP_CONVERSIONS)
    if conversion == "bun-steinke":
        return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    return rdp_to_dp(lambda a: a * rho, delta, conversion="improved")[0]
