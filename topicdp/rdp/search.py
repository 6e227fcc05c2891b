"""The one calibration search: the smallest noise parameter whose privacy cost meets a target.

For a cost ``c(x)`` non-increasing in the noise ``x > 0`` and a target ``t``, :func:`smallest_meeting` returns the
smallest ``x`` with ``c(x) <= t`` in dp-accounting's three steps (bracket, Brent's method, check) with two
differences: the bracket is multiplicative (``x = 0`` is never evaluated), and the result is rounded *upward* by
doubling relative steps until the cost meets the target as evaluated (the same floating point a test or ledger
will compute), within about ``2 rtol`` of the root. Imports nothing from ``topicdp``.
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

    Give exactly one start: ``guess`` (halve/double from it), ``bracket`` ``(lo, hi)`` (``lo`` returned if it meets),
    or ``root`` (a closed form: only the upward rounding). Brent's method (Brent 1973, via
    :func:`scipy.optimize.brentq`) stops at ``max(rtol, 4 ulp)`` and ``xtol``; ``log_scale`` finds the root of
    ``log cost - log target`` (for deltas), acceptance unchanged. Raises :class:`NoBracketError` when nothing within
    ``2**max_expansions`` of the start meets (or fails) the target.
    """
    if sum(a is not None for a in (guess, bracket, root)) != 1:
        raise ValueError("give exactly one of guess, bracket and root")

    seen: dict = {}

    def evaluated(x: float) -> float:
        # Brent and the rounding re-evaluate points, and an accountant can take a second per call
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
    """First of ``x``, ``x (1 + r)``, ``x (1 + r)(1 + 2 r)``, ... (``r = max(rtol, ulp)``) that meets the target."""
    step = max(rtol, ULP)
    for _ in range(max_steps):
        if meets(x):
            return x
        x = x * (1.0 + step) if x > 0.0 else step
        step *= 2.0
    raise RuntimeError("could not satisfy the privacy constraint by rounding upward")  # pragma: no cover
