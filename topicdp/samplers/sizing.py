"""Sample sizing for sensitivity sampling: how many neighbouring pairs h, and which order statistic k.

Two sizings, each with its own statement about a neighbouring pair (D, D') drawn from P:

``"lambert-w"`` (default)
    Rubinstein & Alda 2017, "Pain-free random differential privacy with sensitivity sampling";
    TopicDP (Wang et al. 2022) Alg. 1 and Thm. 1. The Dvoretzky-Kiefer-Wolfowitz inequality gives a
    *sample-conditional* statement: with probability at least 1 - rho over the sensitivity sample, the
    sampled Delta_s covers a fresh pair from P with probability at least 1 - gamma + rho. It needs
    h = 285 pairs at gamma = 0.1.
``"exchangeable"``
    A *marginal* statement, over the sensitivity sample and the neighbouring pair drawn from P together:
    P(Delta_pair > Delta_(k)) <= (h - k + 1) / (h + 1) (:func:`exchangeable_size`, proof there). With
    k = h this is 1 / (h + 1), so h = ceil(1/gamma) - 1 pairs give gamma: 9 at gamma = 0.1. It says
    nothing about how well one particular sample covers P (with k = h and a continuous distribution of
    Delta, the coverage F(Delta_s) of one sample is Beta(h, 1)-distributed, below 1 - gamma with
    probability (1 - gamma)^h, about 0.39 at gamma = 0.1).

Both bound the probability of the same event, Delta_pair > Delta_s, which is the event under which the
noise calibrated to Delta_s may be too small for the pair; Definition 4 of TopicDP (random DP) takes the
probability over the neighbouring datasets, and here the sensitivity sample is part of the mechanism's
randomness.
"""

from __future__ import annotations

import math
from fractions import Fraction

from scipy.special import lambertw

from .._validation import check_gamma, check_int, check_option

SIZINGS = ("lambert-w", "exchangeable")


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


def sample_size(gamma: float, sizing: str = "lambert-w") -> tuple[float | None, int, int]:
    """(rho, h, k) for confidence gamma, by either sizing.

    Parameters
    ----------
    gamma : float in (0, 0.5)
        The probability with which the sampled sensitivity may fail to bound the sensitivity of a
        neighbouring pair drawn from P.
    sizing : {"lambert-w", "exchangeable"}, default="lambert-w"
        ``"lambert-w"``: TopicDP Alg. 1 lines 1-2 (Rubinstein & Alda 2017), a sample-conditional
        statement. ``"exchangeable"``: :func:`exchangeable_size`, a statement marginal over the
        sensitivity sample and the neighbouring pair drawn from P.

    Returns
    -------
    rho : float or None
        Approximation confidence, from the W_{-1} branch of the Lambert W function (None for
        ``"exchangeable"``, which has none).
    h : int
        Number of neighbouring pairs to sample (2h model fits).
    k : int
        Index (1-based) of the order statistic returned as Delta_s.

    Notes
    -----
    Both sizings side by side (:func:`sizing_table`; both return the largest sampled distance, k = h):

    =====  =========================  ===========================
    gamma  lambert-w h (2h fits)      exchangeable h (2h fits)
    =====  =========================  ===========================
    0.01   41971 (83942)              99 (198)
    0.02   9498 (18996)               49 (98)
    0.05   1305 (2610)                19 (38)
    0.1    285 (570)                  9 (18)
    0.2    61 (122)                   4 (8)
    =====  =========================  ===========================

    Examples
    --------
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
    """(h, k) = (ceil(1/gamma) - 1, h): the fewest pairs whose maximum fails a fresh pair w.p. <= gamma.

    Statement (marginal over the sensitivity sample and the neighbouring pair drawn from P). Let
    Delta_0 be the distance ||f(D) - f(D')||_F of the neighbouring pair (D, D') ~ P that the release must
    cover, and Delta_1, ..., Delta_h those of the h sampled pairs, so that Delta_0, ..., Delta_h are
    i.i.d. Let Delta_(k) be the k-th smallest of Delta_1, ..., Delta_h. Then

        P(Delta_0 > Delta_(k)) <= (h - k + 1) / (h + 1),

    the probability taken jointly over Delta_0 and the sample.

    Proof. Break ties at random: attach i.i.d. U_0, ..., U_h ~ Uniform(0, 1), independent of the
    Delta_i, and order the h + 1 pairs (Delta_i, U_i) lexicographically. The pairs are i.i.d., hence
    exchangeable, and almost surely distinct, so the rank R of (Delta_0, U_0) among all h + 1 is
    uniform on {1, ..., h + 1}. If Delta_0 > Delta_(k), then Delta_0 > Delta_i for at least k indices
    i >= 1, so (Delta_0, U_0) exceeds at least k other pairs and R >= k + 1. Hence
    P(Delta_0 > Delta_(k)) <= P(R >= k + 1) = (h + 1 - k) / (h + 1). Ties (atoms of the distribution
    of Delta) only make the strict event rarer, so the bound holds for any distribution, with equality
    when that distribution is continuous. QED

    With k = h the bound is 1 / (h + 1) <= gamma for h = ceil(1/gamma) - 1, the smallest such h. More
    pairs allow a lower order statistic: for n pairs the smallest valid k is
    ceil((n + 1)(1 - gamma)) (:func:`exchangeable_order_statistic`). gamma is read as the exact binary
    value of the float (``fractions.Fraction``), so rounding of 1/gamma can never make h too small.

    This is the rank argument behind conformal prediction (Vovk, Gammerman & Shafer 2005,
    "Algorithmic Learning in a Random World"), not Rubinstein & Alda's
    sample-conditional one: it does not say that one particular sample covers P well.
    """
    g = Fraction(check_gamma(gamma))
    h = max(1, math.ceil(1 / g) - 1)
    return h, exchangeable_order_statistic(gamma, h)


def exchangeable_order_statistic(gamma: float, n_pairs: int) -> int:
    """Smallest k with (n - k + 1) / (n + 1) <= gamma, i.e. k = ceil((n + 1)(1 - gamma)), capped at n.

    Capped at n when n is too small for gamma (then even the maximum does not give gamma: see
    :func:`exchangeable_failure_bound`).
    """
    n = check_int(n_pairs, "n_pairs", low=1)
    k = math.ceil((n + 1) * (1 - Fraction(check_gamma(gamma))))
    return min(n, max(1, k))


def exchangeable_failure_bound(h: int, k: int) -> float:
    """(h - k + 1) / (h + 1): the marginal probability that a fresh pair from P exceeds Delta_(k)."""
    return (h - k + 1) / (h + 1)


def order_statistic_for(gamma: float, n_pairs: int, sizing: str = "lambert-w") -> int:
    """k for an arbitrary number of pairs under either sizing.

    Fewer pairs than the sizing needs void the guarantee (testing only); more pairs are valid and, for
    ``"exchangeable"``, allow a lower order statistic.
    """
    n_pairs = check_int(n_pairs, "n_pairs", low=1)
    if check_option(sizing, "sizing", SIZINGS) == "exchangeable":
        return exchangeable_order_statistic(gamma, n_pairs)
    return order_statistic(check_gamma(gamma), n_pairs, optimal_rho(gamma))


def sizing_table(gammas=(0.01, 0.05, 0.1, 0.2)) -> list[dict]:
    """Both sizings side by side: for each gamma, h and k of ``"lambert-w"`` and ``"exchangeable"``.

    Each row: ``{"gamma", "lambert-w h", "lambert-w k", "exchangeable h", "exchangeable k"}``; the model
    fits are 2h (+ 2 for f(D) and the determinism check in :class:`topicdp.TopicDP`).
    """
    rows = []
    for gamma in gammas:
        row = {"gamma": check_gamma(gamma)}
        for sizing in SIZINGS:
            _, h, k = sample_size(gamma, sizing)
            row[f"{sizing} h"], row[f"{sizing} k"] = h, k
        rows.append(row)
    return rows


def coverage_bound(gamma: float, h: int, k: int, rho: float) -> bool:
    """Whether (h, k, rho) satisfy Thm. 1's conditions (3) and (4) for gamma."""
    if not 0 < rho < min(gamma, 0.5):
        return False
    return h >= math.log(1 / rho) / (2 * (gamma - rho) ** 2) and k >= h * (
        1 - gamma + rho + math.sqrt(math.log(1 / rho) / (2 * h))
    ) - 1e-9 and k <= h


__all__ = [
    "SIZINGS",
    "sample_size",
    "optimal_rho",
    "pairs_needed",
    "order_statistic",
    "order_statistic_for",
    "coverage_bound",
    "exchangeable_size",
    "exchangeable_order_statistic",
    "exchangeable_failure_bound",
    "sizing_table",
]

