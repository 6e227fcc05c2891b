"""The one calibration search of ``topicdp``: the smallest noise parameter whose privacy cost meets a target.

Every calibration in the package is the same question: given a privacy cost ``c(x)`` of a noise
parameter ``x > 0`` that is non-increasing in ``x`` (more noise, less privacy loss) and a target ``t``,
return the smallest ``x`` with ``c(x) <= t``. :func:`smallest_meeting` answers it in the three steps of
dp-accounting's ``mechanism_calibration.calibrate_dp_mechanism`` (a bracket, Brent's method, a check
that the result meets the target), with two differences that are the reasons it is ours:

* the bracket is multiplicative (halve / double from a guess): noise scales span orders of magnitude
  and have no natural additive step, and ``x = 0`` (no noise) is never evaluated, where an accountant
  would divide by zero;
* the last step rounds *upward* until the cost meets the target **as evaluated** -- the same function,
  the same floating point, that a test or a ledger will later compute -- by relative steps
  ``rtol, 2 rtol, 4 rtol, ...`` (with ``rtol`` down to one ulp). dp-accounting instead nudges by one
  absolute tolerance and falls back to bisection; rounding upward keeps the guarantee exact and the
  result within about ``2 rtol`` of the root.

Callers with a closed-form root (the RDP order maximisation, the partition-selection threshold) pass it
as ``root`` and skip the bracket and Brent's method; the rounding step is then what the search adds. A
caller whose constraint is *delta* at a fixed epsilon passes ``log_scale=True``: the root is found on
``log c(x) - log t`` (deltas span hundreds of orders of magnitude), while acceptance is still
``c(x) <= t`` on the cost itself.

This module imports nothing from ``topicdp``, so the exact profile (:mod:`.gaussian`, which inverts
delta(eps) for epsilon with the same search) and every calibration above it can use it.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Tuple

from scipy import optimize

#: one unit in the last place, relative (2**-52): the default resolution of the search
ULP = 2.0**-52
#: scipy's brentq refuses rtol below 4 ulp
_BRENT_MIN_RTOL = 4.0 * ULP


class NoBracketError(ValueError):
    """No noise parameter within ``2**max_expansions`` of the guess meets (or fails) the target."""


def smallest_meeting(
    cost: Callable[[float], float],
    target: float,
    *,
    guess: Optional[float] = None,
    bracket: Optional[Tuple[float, float]] = None,
    root: Optional[float] = None,
    rtol: float = ULP,
    xtol: float = 1e-300,
    log_scale: bool = False,
    max_expansions: int = 60,
    max_round_steps: int = 200,
) -> float:
    """Smallest ``x`` (to relative ``rtol``) with ``cost(x) <= target``, for ``cost`` non-increasing in ``x``.

    Parameters
    ----------
    cost : callable
        The privacy cost of the noise parameter (an epsilon at fixed delta, a delta at fixed epsilon, ...).
        Must be non-increasing in ``x``; it is evaluated only at ``x > 0`` unless ``bracket`` starts at 0.
    target : float
        The cost to meet.
    guess : float, optional
        A positive starting point; the bracket is found by halving and doubling from it.
    bracket : (float, float), optional
        ``(lo, hi)`` with ``lo >= 0``. If ``cost(lo) <= target`` then ``lo`` is returned (nothing smaller
        is asked for); otherwise ``hi`` is doubled until it meets the target. Exactly one of ``guess``,
        ``bracket`` and ``root`` is given.
    root : float, optional
        A closed-form (or otherwise computed) approximation of the answer: the bracket and Brent's method
        are skipped and only the upward rounding is applied.
    rtol : float, default one ulp
        Relative resolution: Brent's method stops at ``max(rtol, 4 ulp)`` (Brent 1973, ch. 4, through
        :func:`scipy.optimize.brentq`), and the upward rounding starts with relative steps of ``rtol``.
    xtol : float, default 1e-300
        Absolute resolution of Brent's method (matters only for roots near 0).
    log_scale : bool, default False
        Find the root of ``log cost(x) - log target`` (for costs that are deltas); acceptance is unchanged.
    max_expansions : int, default 60
        Halvings or doublings allowed while bracketing.
    max_round_steps : int, default 200
        Upward steps allowed in the rounding (each doubles the previous relative step).

    Returns
    -------
    float
        ``x`` with ``cost(x) <= target`` as evaluated, at most about ``2 rtol`` (relative) above the
        smallest such ``x`` when ``cost`` is continuous and evaluated to within that resolution.

    Raises
    ------
    NoBracketError
        If no ``x`` within ``2**max_expansions`` of the guess meets the target (or every one does, which
        means the cost vanishes with the noise: the calibration has no privacy cost to meet).
    """
    if sum(a is not None for a in (guess, bracket, root)) != 1:
        raise ValueError("give exactly one of guess, bracket and root")

    seen: dict = {}

    def evaluated(x: float) -> float:
        # Brent's method re-evaluates the bracket's ends and the rounding re-evaluates Brent's last point;
        # an accountant composes a fresh event per call (~1 s for sampling without replacement), so keep them
        if x not in seen:
            seen[x] = cost(x)
        return seen[x]

    def meets(x: float) -> bool:
        return evaluated(x) <= target

    if root is None:
        lo, hi = _bracket(meets, guess, bracket, max_expansions)
        if lo == hi:  # the lower end of an explicit bracket already meets the target
            return lo
        log_target = math.log(target) if log_scale else 0.0

        def gap(x: float) -> float:
            c = evaluated(x)
            if not log_scale:
                return c - target
            return (math.log(c) if c > 0.0 else -math.inf) - log_target

        root = optimize.brentq(gap, lo, hi, xtol=xtol, rtol=max(rtol, _BRENT_MIN_RTOL), maxiter=500)
    return _round_up(root, meets, rtol, max_round_steps)


def _bracket(meets: Callable[[float], bool], guess: Optional[float], bracket: Optional[Tuple[float, float]],
             max_expansions: int) -> Tuple[float, float]:
    """``(lo, hi)`` with ``hi`` meeting the target and ``lo`` failing it (or ``(lo, lo)`` if ``lo`` meets)."""
    if bracket is not None:
        lo, hi = float(bracket[0]), float(bracket[1])
        if not 0.0 <= lo < hi:
            raise ValueError(f"bracket must satisfy 0 <= lo < hi, got {bracket}")
        if meets(lo):
            return lo, lo
        hi_meets = meets(hi)
    else:
        assert guess is not None
        if not guess > 0.0:
            raise ValueError(f"guess must be > 0, got {guess}")
        lo = hi = float(guess)
        hi_meets = meets(hi)
        if hi_meets:  # walk down until the target fails; hi keeps the last value that met it
            for _ in range(max_expansions):
                lo *= 0.5
                if not meets(lo):
                    return lo, hi
                hi = lo
            raise NoBracketError(f"the target is met at 2**-{max_expansions} times the guess {guess:g}: "
                                 "the cost does not grow as the noise vanishes")
    for _ in range(max_expansions):
        if hi_meets:
            return lo, hi
        lo, hi = hi, 2.0 * hi
        hi_meets = meets(hi)
    if hi_meets:
        return lo, hi
    raise NoBracketError(f"the target is not met at 2**{max_expansions} times the starting point ({hi:g})")


def _round_up(x: float, meets: Callable[[float], bool], rtol: float = ULP, max_steps: int = 200) -> float:
    """First of ``x``, ``x (1 + r)``, ``x (1 + r)(1 + 2 r)``, ... (``r = max(rtol, ulp)``) that meets the target.

    A root finder stops on either side of the root; stepping upward by a doubling relative amount makes the
    returned value satisfy the constraint exactly as evaluated, at a cost of a few multiples of ``rtol``.
    """
    step = max(rtol, ULP)
    for _ in range(max_steps):
        if meets(x):
            return x
        x = x * (1.0 + step) if x > 0.0 else step
        step *= 2.0
    raise RuntimeError("could not satisfy the privacy constraint by rounding upward")  # pragma: no cover
