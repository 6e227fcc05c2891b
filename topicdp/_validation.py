"""Parameter validation shared by every public entry point.

Each check raises ``ValueError`` (or ``TypeError`` for a wrong kind of object) with a message that names
the parameter and the allowed range, in the style of scikit-learn's parameter validation.
"""

from __future__ import annotations

import math
import numbers
from typing import Iterable

import numpy as np


def check_real(value, name: str, *, low=None, high=None, low_open: bool = True, high_open: bool = True) -> float:
    """Return ``value`` as a finite float inside the given interval, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    lo_ok = low is None or (value > low if low_open else value >= low)
    hi_ok = high is None or (value < high if high_open else value <= high)
    if not (lo_ok and hi_ok):
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(f"{name} must be in {lb}{lo}, {hi}{rb}, got {value:g}")
    return value


def check_int(value, name: str, *, low=None, high=None) -> int:
    """Return ``value`` as an int with ``low <= value <= high`` (bounds inclusive), or raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else str(low)
        hi = "inf" if high is None else str(high)
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value}")
    return value


def check_n_jobs(value, name: str = "n_jobs") -> int:
    """joblib's convention: a positive number of workers, or -1 for all cores (-2 all but one, ...); not 0."""
    value = check_int(value, name)
    if value == 0:
        raise ValueError(f"{name} must be a non-zero integer (-1 for all cores), got 0")
    return value


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    return check_real(epsilon, name, low=0.0)


def check_delta(delta, name: str = "delta") -> float:
    return check_real(delta, name, low=0.0, high=1.0)


def check_gamma(gamma, name: str = "gamma") -> float:
    """gamma of (eps, delta, gamma)-random DP; Rubinstein & Alda's sizing needs 0 < gamma < 0.5."""
    return check_real(gamma, name, low=0.0, high=0.5)


def check_option(value, name: str, options: Iterable[str]) -> str:
    options = tuple(options)
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def check_count_values(data: np.ndarray, name: str = "X", block: int = 1 << 20) -> None:
    """Raise unless every entry is finite, non-negative and integral (checked in blocks, so a
    10^8-entry matrix needs no full-size temporaries). The message says which property failed."""
    for start in range(0, data.size, block):
        part = data[start:start + block]
        if not np.all(np.isfinite(part)):
            found = "NaN or inf"
        elif part.min() < 0:
            found = f"the negative value {part.min()}"
        elif not np.all(part == np.rint(part)):
            found = "fractional values"
        else:
            continue
        raise ValueError(f"{name} must hold finite, non-negative integer counts (found {found})")


def check_random_state(random_state) -> np.random.Generator:
    """A numpy Generator: OS-seeded for ``None``, seeded for an int, passed through for a Generator."""
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def check_count_matrix(X, name: str = "X", *, min_docs: int = 1, min_words: int = 1):
    """A document-term matrix as a float64 CSR matrix: 2-D, finite, non-negative, large enough.

    Array-likes, dense and sparse input go through scikit-learn's ``check_array`` (its messages for
    NaN/inf, 1-D input and complex data); integrality is left to the callers that need it
    (:func:`check_count_values`). The input is never modified.
    """
    import scipy.sparse as sp
    from sklearn.utils.validation import check_array, check_non_negative

    X = check_array(X, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, input_name=name,
                    ensure_min_samples=min_docs, ensure_min_features=min_words)
    check_non_negative(X, f"{name} (documents x words counts)")
    return sp.csr_matrix(X, copy=True)
