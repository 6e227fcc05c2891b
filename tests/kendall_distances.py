"""(Moved from topicdp.metrics.ranking: only the tests call it.) Kendall's tau distance between keyword rankings (TopicDP, Wang et al. 2022, §4, Figs. 7, 8, 10).

Over the same items (the n released keywords before and after noise): the share of pairs ordered oppositely, a pair
tied in either vector not discordant (the authors' convention); ``(1 - tau) / 2`` without ties. Top-n lists with
other members: Fagin, Kumar & Sivakumar's K^(p) ("Comparing top k lists", SIAM J. Discrete Math. 17(1), 2003, Sec.
3.1) over the pairs of the two lists' union: 1 for a pair ordered oppositely (an absent item ranks below the listed
ones) or two items each in one list only, p for two items of one list both absent from the other (1/2, K_avg, by
default; a metric for 1/2 <= p <= 1), normalised by its maximum ``k^2 + p k (k - 1)``.
"""

from __future__ import annotations

import numpy as np

from topicdp._validation import check_int, check_real
from topicdp.topics import top_indices


def _finite(x, name: str, ndim: int = 1) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != ndim or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be a finite {ndim}-D array" + (" (topics x words)" if ndim == 2 else ""))
    return x


def _same_items(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = _finite(x, "x"), _finite(y, "y")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    return x, y


def _discordant_pairs(x: np.ndarray, y: np.ndarray, chunk: int = 1024) -> int:
    """#{i < j : (x_i - x_j)(y_i - y_j) < 0}, in O(n^2) time and O(n chunk) memory."""
    n = x.size
    count = 0
    for start in range(0, n, chunk):
        rows = slice(start, min(start + chunk, n))
        # compare signs, not the product of differences: that product can underflow to 0 (1e-293^2)
        sign = np.sign(x[rows, None] - x[None, :]) * np.sign(y[rows, None] - y[None, :])
        count += int((sign < 0).sum())
    return count // 2  # every unordered pair was seen twice


def kendall_tau_distance(x, y) -> float:
    """Normalised Kendall tau distance between two score vectors over the same items (higher ranks first): the
    fraction of the n (n - 1) / 2 pairs ordered oppositely, ties not discordant; 0 for n < 2.
    """
    x, y = _same_items(x, y)
    n = x.size
    if n < 2:
        return 0.0
    return _discordant_pairs(x, y) / (n * (n - 1) / 2)


def top_n(weights, n: int) -> np.ndarray:
    """Indices of the ``n`` largest weights, largest first (ties broken by the smaller index)."""
    w = _finite(weights, "weights")
    return top_indices(w, check_int(n, "n", low=1, high=w.size))


def topn_kendall_distance(x, y, n: int, *, p: float = 0.5, normalize: bool = True) -> float:
    """Fagin et al.'s K^(p) between the top-``n`` lists of two weight vectors over the same vocabulary (module
    docstring); ``normalize`` divides by the maximum ``k^2 + p k (k - 1)``.
    """
    x, y = _same_items(x, y)
    p = check_real(p, "p", low=0.0, high=1.0, low_open=False, high_open=False)
    ta, tb = top_n(x, n), top_n(y, n)
    k = ta.size
    union = np.union1d(ta, tb)
    # rank in each list; an absent item gets rank k, i.e. below every listed item (Fagin et al. §3.1)
    ra = np.full(union.size, k, dtype=float)
    rb = np.full(union.size, k, dtype=float)
    ra[np.searchsorted(union, ta)] = np.arange(k)
    rb[np.searchsorted(union, tb)] = np.arange(k)
    iu, ju = np.triu_indices(union.size, k=1)
    da, db = ra[iu] - ra[ju], rb[iu] - rb[ju]
    # a zero difference can only come from two items both absent from that list (case 4: penalty p)
    opposite = (da * db < 0).sum()
    both_absent = ((da == 0) | (db == 0)).sum()
    value = float(opposite + p * both_absent)
    if normalize:
        value /= k * k + p * k * (k - 1)  # >= 1 for k >= 1
    return value
