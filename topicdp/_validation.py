"""Parameter validation shared by every public entry point: ``ValueError`` (``TypeError`` for a wrong kind of
object) naming the parameter and the allowed range, in the manner of scikit-learn's parameter validation.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterable

import numpy as np

from ._names import NEIGHBOURS, UNITS, Neighbours, Unit


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


def check_epsilon(epsilon, name: str = "epsilon", *, nonprivate: str | None = None) -> float:
    """``epsilon`` as a finite float > 0. ``nonprivate`` names the estimator to use instead when ``epsilon`` is
    None: a private estimator always adds noise, and its fit without noise is a class of its own."""
    if epsilon is None and nonprivate is not None:
        raise ValueError(f"{name} must be a real number in (0, inf), got None; for a fit without noise use "
                         f"{nonprivate}")
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


def check_random_state(random_state) -> np.random.Generator:
    """A numpy Generator: OS-seeded for ``None``, seeded for an int, passed through for a Generator."""
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)  # type: ignore[arg-type]  # numbers.Integral: numpy's stubs want int
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(random_state).__name__}"
    )


def check_count_matrix(X, name: str = "X", *, min_docs: int = 1, min_words: int = 1, n_words: int | None = None,
                       expected_by: str = "the model", integral: bool = False, dtype=np.float64):
    """The one validator of document-term count matrices: a new canonical CSR matrix (sorted indices, no duplicates,
    no stored zeros). Structure (2-D, numeric, at least ``min_docs`` x ``min_words``; 0 disables) by scikit-learn's
    ``check_array``, whose messages its estimator checks expect; ``n_words`` columns in scikit-learn's words; the
    entries finite, non-negative and, if ``integral``, integers, the ``ValueError`` naming ``name`` and what failed.
    """
    import scipy.sparse as sp
    from sklearn.utils.validation import check_array

    X = check_array(X, accept_sparse=("csr", "csc", "coo"), dtype="numeric", input_name=name,
                    ensure_all_finite=False, ensure_min_samples=min_docs, ensure_min_features=min_words)
    if n_words is not None and X.shape[1] != n_words:
        raise ValueError(f"{name} has {X.shape[1]} features, but {expected_by} is expecting {n_words} features as "
                         "input (one column per word of its vocabulary, in its order)")
    data, kind = X.data if sp.issparse(X) else X.ravel(), "non-negative integer" if integral else "non-negative"
    for start in range(0, data.size, 1 << 20):  # every entry finite, non-negative (integral), in blocks
        part = data[start:start + (1 << 20)]
        if not np.all(np.isfinite(part)):
            found = "NaN or inf"
        elif part.min() < 0:
            found = f"the negative value {part.min()}"
        elif integral and not np.all(part == np.rint(part)):
            found = "fractional values"
        else:
            continue
        # "Negative values in data" is scikit-learn's wording for positive-only estimators (its common checks look for it)
        prefix = "Negative values in data: " if found.startswith("the negative") else ""
        raise ValueError(f"{prefix}{name} must hold finite, {kind} counts (found {found})")
    X = sp.csr_matrix(X, dtype=dtype, copy=True)  # a copy: canonicalising below must not touch the input
    X.sum_duplicates()  # also sorts the indices
    X.eliminate_zeros()
    return X


#: The privacy parameters of every private estimator (TopicDP, DPVariationalEM, DPSpectralMoments, DPSVILDA) and of the
#: release request, and their one check each: the name, its allowed values, and the message that names both (the
#: ledger's Budget checks its pair with the same two functions).
PRIVACY_PARAMETERS: dict[str, Callable[[Any], Any]] = {
    "epsilon": check_epsilon,  # a finite float > 0
    "delta": check_delta,  # a float in (0, 1)
    "unit": lambda value: Unit(check_option(value, "unit", UNITS)),
    "neighbours": lambda value: Neighbours(check_option(value, "neighbours", NEIGHBOURS)),
}


def check_privacy_parameters(estimator, *, nonprivate: str | None = None, optional: tuple[str, ...] = ()) -> dict:
    """The :data:`PRIVACY_PARAMETERS` ``estimator`` has, checked by the one table (unit and neighbours as enums);
    ``nonprivate`` names the estimator for a fit without noise; ``optional`` ones may be None."""
    checked: dict[str, Any] = {}
    for name, check in PRIVACY_PARAMETERS.items():
        if not hasattr(estimator, name):
            continue
        value = getattr(estimator, name)
        if value is None and name in optional:
            checked[name] = None
        elif name == "epsilon":
            checked[name] = check_epsilon(value, nonprivate=nonprivate)
        else:
            checked[name] = check(value)
    return checked


def store_init(obj, arguments: dict[str, Any]) -> None:
    """Store an estimator's ``__init__`` arguments (``locals()`` taken first thing) unchanged under their own names,
    as scikit-learn's ``get_params`` and ``clone`` expect."""
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(obj, name, value)
