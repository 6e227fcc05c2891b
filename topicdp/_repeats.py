"""A warning when one private dataset is released repeatedly outside a privacy ledger (their budgets compose).

Each document gets a 64-bit hash of its words and counts, and a fit keeps its ``SKETCH_SIZE`` smallest (a bottom-k
sketch, Broder 1997, "On the resemblance and containment of documents"): fits sharing a share ``s`` of documents share
an entry with probability about ``1 - (1 - s)^k``, and fits sharing none never do.
"""

from __future__ import annotations

import warnings
from collections import deque

import numpy as np
import scipy.sparse as sp

SKETCH_SIZE = 64
_SEEN: deque = deque(maxlen=256)  # sketches of the private fits made in this process without a ledger


class RepeatedReleaseWarning(UserWarning):
    """A private fit shares documents with an earlier one made without a ledger: their budgets add up."""


def warn_on_repeated_release(X, who: str, ledger=None) -> None:
    """Warn (:class:`RepeatedReleaseWarning`) when ``X`` shares documents with an earlier private fit of this
    process made without a ledger; with a ``ledger`` the composition is its job and nothing is recorded."""
    if ledger is not None:
        return
    sketch = document_sketch(X)
    overlapping = sum(1 for earlier in _SEEN if earlier & sketch)
    _SEEN.append(sketch)
    if overlapping:
        warnings.warn(
            f"{who}: these documents overlap those of {overlapping} earlier private fit(s) made in this process "
            "without a ledger. Each fit is a release and the budgets of releases of the same data add up (a "
            "GridSearchCV over a DP estimator releases once per candidate and fold). Pass the same "
            "ledger=topicdp.PrivacyLedger(budget=(epsilon, delta)) to every fit of this data to have the total "
            "counted and enforced.", RepeatedReleaseWarning, stacklevel=3)


def document_sketch(X) -> frozenset:
    """The ``SKETCH_SIZE`` smallest 64-bit hashes of the rows of a count matrix (one hash per distinct row)."""
    X = sp.csr_matrix(X)
    if X.nnz == 0:
        return frozenset()
    cols = X.indices.astype(np.uint64)
    vals = np.rint(X.data * 1000).astype(np.int64).astype(np.uint64)  # counts, or weights to 1e-3
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64 is the point
        entry = _mix(cols * np.uint64(0x9E3779B97F4A7C15) + vals * np.uint64(0xC2B2AE3D27D4EB4F))
        nonempty = np.flatnonzero(np.diff(X.indptr))
        rows = _mix(np.add.reduceat(entry, X.indptr[nonempty]))  # order-free within a row: a sum of entries
    return frozenset(np.unique(rows)[:SKETCH_SIZE].tolist())


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads every input bit over the 64 output bits."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))
