"""From Rényi DP to (epsilon, delta)-DP and back, the order optimised continuously.

Each order of an RDP curve gives a valid (epsilon, delta); accountants such as dp-accounting's minimise over a
fixed grid, here over continuous ``t = log(alpha - 1)`` (a coarse guard grid, so a non-convex curve cannot trap
the search, then bounded Brent). Any order is valid, so imperfect optimisation costs tightness, never validity.
Also TopicDP's Prop. 2 (:func:`topicdp_rdp_level`).
"""

from __future__ import annotations

import math
from typing import Callable, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from topicdp._validation import check_delta, check_epsilon, check_option, check_real

from ._checks import check_orders

RdpCurve = Union[Callable[[np.ndarray], ArrayLike], Tuple[ArrayLike, ArrayLike]]
"""A callable ``alpha -> eps(alpha)`` (vectorised or scalar) or a pair ``(orders, eps_values)``."""

CONVERSIONS = ("improved", "mironov")

# t = log(alpha - 1): a Gaussian's best order 1 + sqrt(log(1/delta)/rho) stays inside for rho in [1e-12, 1e8]
_T_LO, _T_HI = math.log(1e-6), math.log(1e8)
_GUARD_GRID = np.linspace(_T_LO, _T_HI, 321)
_ALPHA_NEAR_ONE = 1.0 + 1e-6


def minimize_over_orders(objective: Callable[[np.ndarray], np.ndarray]) -> Tuple[float, float]:
    """Minimise the array function ``objective(t)`` over ``t = log(alpha - 1)`` in ``[log 1e-6, log 1e8]`` (``nan``
    is ``+inf``); returns ``(minimum, alpha at the minimum)``."""
    values = _finite_or_inf(objective(_GUARD_GRID))
    i = int(np.argmin(values))
    best_val, best_t = float(values[i]), float(_GUARD_GRID[i])
    if not math.isfinite(best_val):
        return math.inf, math.nan
    lo = _GUARD_GRID[max(i - 1, 0)]
    hi = _GUARD_GRID[min(i + 1, _GUARD_GRID.size - 1)]
    res = optimize.minimize_scalar(
        lambda t: float(_finite_or_inf(objective(np.array([t])))[0]),
        bounds=(lo, hi), method="bounded", options={"xatol": 1e-10},
    )
    if res.fun < best_val:
        best_val, best_t = float(res.fun), float(res.x)
    return best_val, 1.0 + math.exp(best_t)


def rdp_to_dp(rdp: RdpCurve, delta: float, conversion: str = "improved") -> Tuple[float, float]:
    """Epsilon of an RDP curve at ``delta``, and the order that attains it.

    ``"improved"`` (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy", Prop. 12;
    Asoodeh et al. 2021): ``eps = r + log1p(-1/alpha) - (log delta + log alpha) / (alpha - 1)``, and ``eps = 0`` when
    ``delta >= sqrt(1 - exp(-KL))`` (Bretagnolle-Huber, KL bounded by the curve near order 1), as dp-accounting does.
    ``"mironov"`` (Mironov 2017, Prop. 3; TopicDP Prop. 1): ``eps = r + log(1/delta)/(alpha - 1)``, never smaller.
    ``rdp``: a callable (optimised over continuous orders) or ``(orders, values)`` (minimised over orders > 1).
    """
    delta = check_delta(delta)
    conversion = check_option(conversion, "conversion", CONVERSIONS)
    log_delta = math.log(delta)

    def eps_at(r: np.ndarray, t: np.ndarray) -> np.ndarray:
        am1 = np.exp(t)
        if conversion == "mironov":
            return r - log_delta / am1
        log_a = np.log1p(am1)
        return r + (t - log_a) - (log_delta + log_a) / am1  # log1p(-1/a) = log(a-1) - log(a)

    value, alpha = _minimize_curve(rdp, eps_at)
    if conversion == "improved" and delta * delta >= -math.expm1(-_kl_bound(rdp)):
        return 0.0, _smallest_order(rdp)
    return max(0.0, value), alpha


def topicdp_rdp_level(epsilon: float, delta: float, alpha: float = 2.0) -> float:
    """TopicDP's Prop. 2: the RDP level ``eps_R`` at order ``alpha`` assigned to a target (epsilon, delta).

    Wang et al., KDD 2022, Sec. 3.4, Prop. 2 (citing Asoodeh et al. 2021), as printed, for ``0 < alpha delta < 1``::

        eps_R = max{ eps - 1/(alpha-1) log(zeta_alpha / delta),
                     eps + 1/(alpha-1) log((e^eps - alpha delta) ((delta-1)/(delta-e^eps))^alpha + alpha delta) },
        zeta_alpha = (1/alpha) (1 - 1/alpha)^(alpha-1).

    The first term is the improved conversion of :func:`rdp_to_dp` solved for ``r``, so it alone implies
    (eps, delta)-DP; the second is at most the smallest order-``alpha`` divergence of a pair violating
    (eps, delta)-DP (a 2-point minimisation by data processing), so the map is valid (verified numerically, not
    proven here) if loose. Computed in logs (``e^eps`` overflows past 709).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_real(alpha, "alpha", low=1.0)
    if alpha * delta >= 1.0:
        raise ValueError(f"delta must be in (0, 1/alpha) = (0, {1.0 / alpha:g}) for TopicDP's "
                         f"Prop. 2 (0 < alpha*delta < 1), got {delta:g}")
    am1 = alpha - 1.0
    log_zeta = -math.log(alpha) + am1 * math.log1p(-1.0 / alpha)
    first = epsilon - (log_zeta - math.log(delta)) / am1

    def log_exp_eps_minus(x: float) -> float:  # log(e^eps - x), 0 <= x < 1 <= e^eps
        return epsilon + math.log1p(-x * math.exp(-epsilon))

    log_ratio = math.log1p(-delta) - log_exp_eps_minus(delta)  # log((1-delta)/(e^eps-delta))
    inner = np.logaddexp(log_exp_eps_minus(alpha * delta) + alpha * log_ratio,
                         math.log(alpha * delta))
    second = epsilon + float(inner) / am1
    level = max(first, second)
    if not level > 0.0:
        raise ValueError(f"epsilon={epsilon:g} is too small for TopicDP's Prop. 2 to give a positive "
                         f"RDP level (got {level:g})")
    return level


def _finite_or_inf(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return np.where(np.isnan(v), np.inf, v)


def _evaluate_curve(curve: Callable, alphas: np.ndarray) -> np.ndarray:
    """A user curve on an array of orders (a loop for scalar-only callables)."""
    try:
        values = np.asarray(curve(alphas), dtype=float)
        if values.shape == alphas.shape:
            return values
    except (TypeError, ValueError):
        pass
    return np.array([float(curve(float(a))) for a in alphas])


def _grid_curve(rdp) -> Tuple[np.ndarray, np.ndarray]:
    orders = check_orders(rdp[0], "orders").ravel()
    values = np.asarray(rdp[1], dtype=float).ravel()
    if values.shape != orders.shape:
        raise ValueError(f"rdp values must have one entry per order: got {values.size} values for "
                         f"{orders.size} orders")
    return orders, values


def _minimize_curve(rdp: RdpCurve, formula) -> Tuple[float, float]:
    """min over orders of ``formula(r(alpha), log(alpha-1))``, for a callable or a gridded curve."""
    if callable(rdp):
        return minimize_over_orders(lambda t: formula(_evaluate_curve(rdp, 1.0 + np.exp(t)), t))
    orders, values = _grid_curve(rdp)
    keep = orders > 1.0
    if not np.any(keep):
        return math.inf, math.nan
    with np.errstate(divide="ignore"):
        out = _finite_or_inf(formula(values[keep], np.log(orders[keep] - 1.0)))
    i = int(np.argmin(out))
    return float(out[i]), float(orders[keep][i])


def _kl_bound(rdp: RdpCurve) -> float:
    """An upper bound on the KL divergence: the curve at its smallest order (RDP is monotone in alpha)."""
    if callable(rdp):
        return float(_evaluate_curve(rdp, np.array([_ALPHA_NEAR_ONE]))[0])
    orders, values = _grid_curve(rdp)
    return float(values[int(np.argmin(orders))])


def _smallest_order(rdp: RdpCurve) -> float:
    return _ALPHA_NEAR_ONE if callable(rdp) else float(np.min(_grid_curve(rdp)[0]))
