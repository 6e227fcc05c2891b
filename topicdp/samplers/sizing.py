"""Sample sizing for sensitivity sampling: how many neighbouring pairs h, and which order statistic k.

Both bound the probability that Delta_pair > Delta_s for a pair (D, D') drawn from P (TopicDP Def. 4):
``"lambert-w"`` (Rubinstein & Aldà 2017, "Pain-free random differential privacy with sensitivity sampling"; TopicDP
Alg. 1 and Thm. 1), by the Dvoretzky-Kiefer-Wolfowitz inequality: with probability at least 1 - rho over the
sample, Delta_s covers a fresh pair with probability at least 1 - gamma + rho (sample-conditional);
``"exchangeable"``: ``P(Delta_pair > Delta_(k)) <= (h - k + 1) / (h + 1)`` marginal over the sample and the pair
(:func:`exchangeable_size`), saying nothing about how well one sample covers P.
"""

from __future__ import annotations

import math
from fractions import Fraction

from scipy.special import lambertw

from .._validation import check_gamma, check_int, check_option

SIZINGS = ("lambert-w", "exchangeable")


def optimal_rho(gamma: float) -> float:
    """``rho = exp(W_{-1}(-gamma / (2 sqrt(e))) + 1/2)`` (TopicDP Alg. 1 line 1) minimises ``h(rho) = log(1/rho) /
    (2 (gamma - rho)^2)`` (Thm. 1 Eq. 3): ``dh/drho = 0`` is ``2 rho log(rho) = rho - gamma``, i.e. ``v e^v = -gamma /
    (2 sqrt(e))`` for ``rho = exp(v + 1/2)``; the branch W_{-1} gives the root with rho < gamma, where Eq. 3 applies.
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
    """``k = ceil(h (1 - gamma + rho + sqrt(log(1/rho) / (2h))))``, TopicDP Thm. 1 Eq. 4, capped at h (1e-9 slack for
    floating point in an integer value)."""
    value = h * (1.0 - gamma + rho + math.sqrt(math.log(1.0 / rho) / (2.0 * h)))
    return min(h, max(1, math.ceil(value - 1e-9)))


def sample_size(gamma: float, sizing: str = "lambert-w") -> tuple[float | None, int, int]:
    """(rho, h, k) for gamma by either sizing (rho None for ``"exchangeable"``): 2h model fits, Delta_s the k-th
    smallest distance.

    >>> sample_size(0.1)[1:]
    (285, 285)
    >>> sample_size(0.1, sizing="exchangeable")
    (None, 9, 9)
    """
    sizing = check_option(sizing, "sizing", SIZINGS)
    if sizing == "exchangeable":
        h, k = exchangeable_size(gamma)
        return None, h, k
    rho = optimal_rho(gamma)
    h = pairs_needed(gamma, rho)
    return rho, h, order_statistic(gamma, h, rho)


def exchangeable_size(gamma: float) -> tuple[int, int]:
    """``(h, k) = (ceil(1/gamma) - 1, h)``: the fewest pairs whose maximum fails a fresh pair with probability <= gamma.

    With Delta_0 the distance of the pair (D, D') ~ P to cover and Delta_1..Delta_h the sampled ones, all i.i.d.,
    ``P(Delta_0 > Delta_(k)) <= (h - k + 1) / (h + 1)`` jointly. Proof (the rank argument of conformal prediction,
    Vovk, Gammerman & Shafer 2005): with i.i.d. uniform tie-breakers the h + 1 pairs are exchangeable and a.s.
    distinct, so the rank R of pair 0 is uniform on {1..h+1}; Delta_0 > Delta_(k) implies R >= k + 1, of probability
    (h + 1 - k) / (h + 1). gamma is read exactly (``Fraction``), so rounding never makes h too small.
    """
    g = Fraction(check_gamma(gamma))
    h = max(1, math.ceil(1 / g) - 1)
    return h, exchangeable_order_statistic(gamma, h)


def exchangeable_order_statistic(gamma: float, n_pairs: int) -> int:
    """Smallest k with ``(n - k + 1) / (n + 1) <= gamma``, i.e. ``ceil((n + 1)(1 - gamma))``, capped at n."""
    n = check_int(n_pairs, "n_pairs", low=1)
    k = math.ceil((n + 1) * (1 - Fraction(check_gamma(gamma))))
    return min(n, max(1, k))


def exchangeable_failure_bound(h: int, k: int) -> float:
    """(h - k + 1) / (h + 1): the marginal probability that a fresh pair from P exceeds Delta_(k)."""
    return (h - k + 1) / (h + 1)


def order_statistic_for(gamma: float, n_pairs: int, sizing: str = "lambert-w") -> int:
    """k for any number of pairs under either sizing (fewer pairs than needed void the guarantee; more allow a lower
    k under ``"exchangeable"``)."""
    n_pairs = check_int(n_pairs, "n_pairs", low=1)
    if check_option(sizing, "sizing", SIZINGS) == "exchangeable":
        return exchangeable_order_statistic(gamma, n_pairs)
    return order_statistic(check_gamma(gamma), n_pairs, optimal_rho(gamma))


__all__ = [
    "SIZINGS", "sample_size", "optimal_rho", "pairs_needed", "order_statistic", "order_statistic_for",
    "exchangeable_size", "exchangeable_order_statistic", "exchangeable_failure_bound"
]

