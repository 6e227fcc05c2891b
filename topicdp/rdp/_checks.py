"""Parameter checks shared by the ``topicdp.rdp`` modules (on :mod:`topicdp._validation`): every public function
rejects bad input with a ``ValueError`` naming the parameter and the allowed range."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from topicdp._validation import check_int, check_real


def check_sigma(sigma, name: str = "sigma") -> float:
    """A noise scale: a finite real in (0, inf)."""
    return check_real(sigma, name, low=0.0)


def check_sensitivity(sensitivity, *, allow_zero: bool) -> float:
    """An L1/L2 sensitivity: (0, inf), or [0, inf) where zero has an obvious meaning (no privacy loss)."""
    return check_real(sensitivity, "sensitivity", low=0.0, low_open=not allow_zero)


def check_count(count) -> int:
    """How many times a release is composed with itself: an integer >= 1."""
    return check_int(count, "count", low=1)


def check_orders(alpha, name: str = "alpha") -> np.ndarray:
    """Rényi orders as a float array; every order must be finite and >= 1 (order 1 is the KL limit)."""
    arr = np.asarray(alpha, dtype=float)
    if arr.size == 0:
        raise ValueError(f"{name} must contain at least one order in [1, inf)")
    if not np.all(np.isfinite(arr)) or np.any(arr < 1.0):
        bad = arr[~(np.isfinite(arr) & (arr >= 1.0))].ravel()[0]
        raise ValueError(f"{name} must be in [1, inf), got {bad:g}")
    return arr


def as_output(values: np.ndarray, like: npt.ArrayLike):
    """Return a Python float for scalar input, an ndarray otherwise."""
    return float(values) if np.ndim(like) == 0 else values
