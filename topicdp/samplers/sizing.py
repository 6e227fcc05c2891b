"""Sample sizing for sensitivity sampling (Rubinstein & Alda 2017; TopicDP Alg. 1 and Thm. 1)."""

from __future__ import annotations

import math
from scipy.special import lambertw

from .._validation import check_gamma, check_int


def optimal_rho(gamma: float) -> float:
    """rho = exp(W_{-1}(-gamma / (2 sqrt(e))) + 1/2), TopicDP Alg. 1 line 1.

    This rho minimises the sample size h(rho) = log(1/rho) / (2 (gamma - rho)^2) of Thm. 1 Eq. (3):
    setting dh/drho = 0 gives 2 rho log(rho) = rho - gamma; writing rho = exp(v + 1/2) turns this into
    v e^v = -gamma / (2 sqrt(e)), so v = W(-gamma / (2 sqrt(e))). Of the two real branches, W_{-1} gives
    the minimiser with rho < gamma (the principal branch W_0 gives rho > gamma, where Eq. (3) does not
    apply).
    """
    gamma = check_gamma(gamma)
    w = lambertw(-gamma / (2.0 * math.sqrt(math.e)), k=-1)
    return float(math.exp(w.real + 0.5))


def pairs_needed(gamma: float, rho: float | None = None) -> int:
    """h = ceil(log(1/rho) / (2 (gamma - rho)^2)), TopicDP Thm. 1 Eq. (3)."""
    gamma = check_gamma(gamma)
    rho = optimal_rho(gamma) if rho is None else rho
    if not 0.0 < rho < min(gamma, 0.5):
        raise ValueError(f"rho must be in (0, min(gamma, 1/2)) = (0, {min(gamma, 0.5):g}), got {rho:g}")
    return math.ceil(math.log(1.0 / rho) / (2.0 * (gamma - rho) ** 2))


def order_statistic(gamma: float, h: int, rho: float) -> int:
    """k = ceil(h (1 - gamma + rho + sqrt(log(1/rho) / (2h)))), TopicDP Thm. 1 Eq. (4), capped at h.

    Eq. (4) is a lower bound on k; the smallest integer satisfying it gives the smallest valid Delta_s.
    For the h of Eq. (3) the expression is at most h (up to rounding), so k = h: Delta_s is the largest
    sampled sensitivity. The 1e-9 slack absorbs floating-point error in a value that is an integer.
    """
    value = h * (1.0 - gamma + rho + math.sqrt(math.log(1.0 / rho) / (2.0 * h)))
    return min(h, max(1, math.ceil(value - 1e-9)))


def sample_size(gamma: float) -> tuple[float, int, int]:
    """(rho, h, k) for confidence gamma: TopicDP Alg. 1 lines 1-2.

    Parameters
    ----------
    gamma : float in (0, 0.5)
        The probability with which the sampled sensitivity may fail to bound the sensitivity of a
        neighbouring pair drawn from P.

    Returns
    -------
    rho : float
        Approximation confidence, from the W_{-1} branch of the Lambert W function.
    h : int
        Number of neighbouring pairs to sample.
    k : int
        Index (1-based) of the order statistic returned as Delta_s.

    Examples
    --------
    >>> sample_size(0.1)[1:]
    (285, 285)
    """
    rho = optimal_rho(gamma)
    h = pairs_needed(gamma, rho)
    return rho, h, order_statistic(gamma, h, rho)


def order_statistic_for(gamma: float, n_pairs: int) -> int:
    """k for an arbitrary number of pairs (testing only: fewer than Thm. 1 needs voids the guarantee)."""
    n_pairs = check_int(n_pairs, "n_pairs", low=1)
    return order_statistic(check_gamma(gamma), n_pairs, optimal_rho(gamma))


def coverage_bound(gamma: float, h: int, k: int, rho: float) -> bool:
    """Whether (h, k, rho) satisfy Thm. 1's conditions (3) and (4) for gamma."""
    if not 0 < rho < min(gamma, 0.5):
        return False
    return h >= math.log(1 / rho) / (2 * (gamma - rho) ** 2) and k >= h * (
        1 - gamma + rho + math.sqrt(math.log(1 / rho) / (2 * h))
    ) - 1e-9 and k <= h


__all__ = ["sample_size", "optimal_rho", "pairs_needed", "order_statistic", "order_statistic_for", "coverage_bound"]

