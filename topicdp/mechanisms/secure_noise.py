"""Noise that does not leak through floating point: the discrete Gaussian and discrete Laplace on a grid.

Floating-point noise ``W + sigma * rng.standard_normal(...)`` reaches a sparse, data-dependent set of doubles, so an
output reachable from ``f(D)`` and not from ``f(D')`` has infinite privacy loss (Mironov 2012, "On significance of
the least significant bits for differential privacy"). Here (Canonne, Kamath & Steinke 2020, "The discrete Gaussian
for differential privacy", CKS20) the query is rounded to a power-of-two grid ``g`` (``q = rint(f / g)``, exact),
integer noise ``Z`` is drawn exactly with integer arithmetic (CKS20 Sec. 5, Algorithms 1-3) and ``(q + Z) g`` is
released: every output lies on the same grid whatever the data. Rounding moves a coordinate by at most half a step,
so over the ``m`` coordinates that can change ``Delta_2^Z <= Delta_2 / g + sqrt(m)`` and ``Delta_1^Z <= Delta_1 / g +
m``; the grid keeps this inflation a fraction ``tolerance`` of ``Delta / g``, the integer scale ``s / Delta^Z >=
sigma / Delta``.

Privacy. ``N_Z(0, s^2)`` per coordinate is ``(Delta_2^Z)^2 / (2 s^2)``-zCDP (CKS20 Thm. 4), the continuous
Gaussian's RDP curve, so every RDP/zCDP-calibrated sigma carries over; (epsilon, delta) by CKS20 Prop. 12. The exact
profile is proven in one dimension only (CKS20 Thm. 7): an analytic (Balle & Wang) sigma for d > 1 rests on CKS20's
numerical comparison, not a theorem. ``DLap(t)`` per coordinate is ``(Delta_1^Z / t)``-DP (Ghosh, Roughgarden &
Sundararajan 2012). Randomness: the OS CSPRNG (:func:`secrets.token_bytes`) by default; a seed makes the noise
reproducible and **not secure** (``seeded=True``). Uniform integers come from masked rejection on 64-bit words;
int64 paths need ``s <= 2**24``; a candidate whose square would overflow (probability below ``exp(-100)``) is
decided with Python integers, its Bernoulli(exp(-1)) factors capped at ``2**62`` (an error below ``exp(-2**62)``).
"""

from __future__ import annotations

import math
import numbers
import secrets
from dataclasses import dataclass, field, fields

import numpy as np

from .._validation import check_int, check_real

__all__ = ["RandomWords", "discrete_gaussian", "grid_step", "SecureRelease", "secure_gaussian", "secure_laplace"]

_MAX_S = 2**24  # discrete Gaussian scale limit of the int64 path (see module docstring)
_MAX_T = 2**40  # discrete Laplace scale limit (t * K < 2**62 in Algorithm 1)
_SAFE_A = 2**31  # | |Y| - s | below this squares without overflow
_EXACT_INT = 2**52  # |grid units| of query and release must stay below this (exact doubles)


class RandomWords:
    """Uniform 64-bit words from the OS CSPRNG (``random_state=None``) or, reproducibly and **not securely**, from PCG64
    seeded by an int, SeedSequence or Generator (:attr:`seeded` True)."""

    def __init__(self, random_state=None):
        self.seeded = random_state is not None
        self._bitgen = None
        if isinstance(random_state, np.random.Generator):
            self._bitgen = random_state.bit_generator
        elif isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(random_state, bool):
            self._bitgen = np.random.PCG64(random_state)
        elif random_state is not None:
            raise TypeError("random_state must be None (OS randomness), an int, a numpy SeedSequence or a numpy "
                            f"Generator, got {type(random_state).__name__}")

    def words(self, n: int) -> np.ndarray:
        """``n`` independent uniform ``uint64`` words."""
        if n == 0:
            return np.empty(0, dtype=np.uint64)
        if self._bitgen is not None:
            return self._bitgen.random_raw(n)
        return np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)

    def bits(self, n: int) -> np.ndarray:
        """``n`` independent fair bits (bool), 64 per word."""
        w = self.words((n + 63) // 64)
        return np.unpackbits(w.view(np.uint8))[:n].astype(bool)

    def below(self, bound, n: int | None = None) -> np.ndarray:
        """Uniform integers in ``[0, bound)`` (int64; ``bound`` a positive int or int64 array < 2**62) by masked
        rejection on the narrowest lane (16, 32 or 64 bits) that holds every bound: unbiased, acceptance >= 1/2."""
        bound = np.asarray(bound, dtype=np.int64).astype(np.uint64)
        if n is None:
            n = bound.size
        if n == 0:
            return np.empty(0, dtype=np.int64)
        top = int(bound.max())
        lane = np.uint16 if top <= 2**16 else np.uint32 if top <= 2**32 else np.uint64
        mask = _bit_mask(bound - np.uint64(1)).astype(lane)
        x = self._lanes(n, lane) & mask
        bad = np.flatnonzero(x >= bound)
        while bad.size:
            m_bad = mask if mask.ndim == 0 else mask[bad]
            b_bad = bound if bound.ndim == 0 else bound[bad]
            redraw = self._lanes(bad.size, lane) & m_bad
            x[bad] = redraw
            bad = bad[redraw >= b_bad]
        return x.astype(np.int64)

    def _lanes(self, n: int, dtype) -> np.ndarray:
        """``n`` uniform unsigned integers of ``dtype`` cut from 64-bit words."""
        per_word = 8 // np.dtype(dtype).itemsize
        return self.words(-(-n // per_word)).view(dtype)[:n]


def _bit_mask(x: np.ndarray) -> np.ndarray:
    """Smallest all-ones masks ``2**k - 1 >= x`` (x >= 0), as uint64."""
    m = x.astype(np.uint64)
    for shift in (1, 2, 4, 8, 16, 32):
        m = m | (m >> np.uint64(shift))
    return m


def _words(random_state) -> RandomWords:
    return random_state if isinstance(random_state, RandomWords) else RandomWords(random_state)


def _first_failure_odd(n: int, k: int, draw) -> np.ndarray:
    """CKS20 Algorithm 1's loop: ``[K odd]`` for the first ``K >= k`` at which ``draw(active, K)`` is False."""
    out = np.empty(n, dtype=bool)
    active = np.arange(n)
    while active.size:
        a = draw(active, k)
        out[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return out


def _bernoulli_exp_fraction(num: np.ndarray, den: np.ndarray, src: RandomWords) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for ``0 <= num <= den`` (CKS20 Algorithm 1).

    K = 1; repeat { A ~ Bernoulli(gamma / K); if A == 0 stop; K += 1 }; return [K odd]: P(K > k) = gamma^k / k!, so
    P(K odd) = exp(-gamma). Bernoulli(gamma / K) = [U < num], U uniform below den * K.
    """
    def draw(active: np.ndarray, k: int) -> np.ndarray:
        if int(den[active].max()) * k >= 2**62:
            raise OverflowError("Bernoulli(exp(-gamma)) loop exceeded the int64 range (probability ~ 1/K!)")
        return src.below(den[active] * k) < num[active]

    return _first_failure_odd(num.size, 1, draw)


def _bernoulli_exp_minus_one(n: int, src: RandomWords) -> np.ndarray:
    """n draws of Bernoulli(exp(-1)): Algorithm 1 with gamma = 1 (its first step always continues)."""
    return _first_failure_odd(n, 2, lambda active, k: src.below(k, active.size) == 0)  # Bernoulli(1 / K)


def _bernoulli_exp(whole: np.ndarray, num: np.ndarray, den: np.ndarray, src: RandomWords) -> np.ndarray:
    """Bernoulli(exp(-(whole + num/den))), ``0 <= num < den``."""
    alive = np.ones(whole.size, dtype=bool)
    cand = np.flatnonzero(whole > 0)
    i = 0
    while cand.size:  # each round kills with probability 1 - 1/e, so this ends after ~log(n) rounds
        ok = _bernoulli_exp_minus_one(cand.size, src)
        alive[cand[~ok]] = False
        cand = cand[ok]
        i += 1
        cand = cand[whole[cand] > i]
    idx = np.flatnonzero(alive)
    alive[idx] = _bernoulli_exp_fraction(num[idx], den[idx], src)
    return alive


def _geometric_exp_minus_one(n: int, src: RandomWords) -> np.ndarray:
    """V = number of Bernoulli(exp(-1)) successes before the first failure: P(V >= v) = exp(-v)."""
    v = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        ok = _bernoulli_exp_minus_one(active.size, src)
        active = active[ok]
        v[active] += 1
    return v


def _discrete_laplace(t: int, n: int, src: RandomWords) -> np.ndarray:
    """CKS20 Algorithm 2, integer scale t: ``X = U + tV`` (U uniform below t kept with probability exp(-U/t), V
    geometric with P(V >= v) = exp(-v)), a fair sign, rejecting the negative zero."""
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    tt = np.int64(t)
    while todo.size:
        u = src.below(tt, todo.size)
        keep = _bernoulli_exp_fraction(u, np.full(u.size, tt), src)
        idx, u = todo[keep], u[keep]
        x = u + tt * _geometric_exp_minus_one(idx.size, src)
        neg = src.bits(idx.size)
        good = ~(neg & (x == 0))
        out[idx[good]] = np.where(neg[good], -x[good], x[good])
        todo = np.concatenate([todo[~keep], idx[~good]])
    return out


def _discrete_gaussian(s: int, n: int, src: RandomWords) -> np.ndarray:
    """CKS20 Algorithm 3 with t = s: ``Y ~ DLap(s)`` accepted with probability ``exp(-(|Y| - s)^2 / (2 s^2))``.

    P(Y = y, accept) is proportional to ``exp(-y^2 / (2 s^2))`` (CKS20 Sec. 5.3); t = s keeps gamma an integer
    ratio and the acceptance near 0.76.
    """
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    den = np.int64(2 * s * s)
    while todo.size:
        y = _discrete_laplace(s, todo.size, src)
        a = np.abs(np.abs(y) - s)
        accept = np.zeros(y.size, dtype=bool)
        safe = a < _SAFE_A
        sq = a[safe] * a[safe]
        accept[safe] = _bernoulli_exp(sq // den, sq % den, np.full(sq.size, den), src)
        for i in np.flatnonzero(~safe):  # probability < exp(-100) per draw: exact Python integers
            whole, frac = divmod(int(a[i]) ** 2, int(den))
            accept[i] = _bernoulli_exp(np.array([min(whole, 2**62)]), np.array([frac]), np.array([int(den)]), src)[0]
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out


def discrete_gaussian(s: int, size, *, random_state=None) -> np.ndarray:
    """Exact samples of ``N_Z(0, s^2)``, ``P(k) ∝ exp(-k^2 / (2 s^2))``, ``1 <= s <= 2**24`` (CKS20 Algorithm 3)."""
    s = check_int(s, "s", low=1, high=_MAX_S)
    shape = tuple(check_int(dim, "size", low=0) for dim in ((size,) if isinstance(size, numbers.Integral) else size))
    return _discrete_gaussian(s, math.prod(shape), _words(random_state)).reshape(shape)


def grid_step(sensitivity: float, n_coords: int, *, tolerance: float = 0.01, norm: int = 2) -> float:
    """``2**floor(log2(tolerance Delta / m^(1/p)))``: the power-of-two grid whose rounding inflates the Lp sensitivity
    by at most ``tolerance``."""
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    n_coords = check_int(n_coords, "n_coords", low=1)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1.0, high_open=False)
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    spread = math.sqrt(n_coords) if norm == 2 else float(n_coords)
    return 2.0 ** math.floor(math.log2(tolerance * sensitivity / spread))


@dataclass
class SecureRelease:
    """A noisy matrix on a power-of-two grid, with what it guarantees.

    ``values`` are ``k * grid`` for integers ``k``; ``scale_units`` is ``s`` (Gaussian) or ``t`` (Laplace) in grid
    units and ``noise_scale = scale_units * grid``; ``sensitivity`` is the real query's (L2 or L1),
    ``sensitivity_units`` the rounded query's bound over ``n_changed`` coordinates; ``seeded`` noise is **not secure**.
    """

    values: np.ndarray
    mechanism: str
    grid: float
    scale_units: int
    noise_scale: float
    sensitivity: float
    sensitivity_units: float
    n_changed: int
    seeded: bool
    notes: list = field(default_factory=list)

    @property
    def rho(self) -> float:
        """zCDP parameter ``(Delta^Z)^2 / (2 s^2)`` of a discrete Gaussian release (CKS20 Thm. 4)."""
        if self.mechanism != "discrete-gaussian":
            raise ValueError("rho is defined for the discrete Gaussian only")
        return self.sensitivity_units**2 / (2.0 * self.scale_units**2)

    def epsilon(self, delta: float | None = None) -> float:
        """A proven epsilon: zCDP at ``delta`` (CKS20 Prop. 12) for the Gaussian; ``Delta_1^Z / t`` for the Laplace."""
        if self.mechanism == "discrete-laplace":
            return self.sensitivity_units / self.scale_units
        if delta is None:
            raise ValueError("the discrete Gaussian's epsilon needs delta in (0, 1)")
        from ..rdp.curves import zcdp_to_dp

        return zcdp_to_dp(self.rho, delta, conversion="improved")

    def privacy(self, delta: float | None = None) -> dict:
        """JSON-able privacy statement."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "values"}
        out["notes"] = list(self.notes)
        if self.mechanism == "discrete-gaussian":
            out["rho_zcdp"] = self.rho
            out["noise_multiplier"] = self.scale_units / self.sensitivity_units
            if delta is not None:
                out["epsilon_zcdp"] = self.epsilon(delta)
                out["delta"] = delta
        else:
            out["epsilon"] = self.epsilon()
        return out


def secure_gaussian(values, sigma: float, *, sensitivity: float, n_changed: int | None = None,
                    grid: float | None = None, tolerance: float = 0.01, random_state=None) -> SecureRelease:
    """Release ``values`` with discrete Gaussian noise on a power-of-two grid (module docstring).

    ``sigma`` is the continuous sigma calibrated for the L2 ``sensitivity``; ``n_changed`` (default ``values.size``)
    counts the coordinates of one release that can change (a leading batch axis is allowed); ``grid`` defaults to
    :func:`grid_step`. The integer scale ``s = ceil(sigma Delta^Z / Delta)`` gives the RDP curve of the continuous
    Gaussian with (sigma, Delta) or better.
    """
    sigma = check_real(sigma, "sigma", low=0.0)
    return _grid_release(values, sigma, sensitivity, n_changed, grid, tolerance, random_state, gaussian=True)


def secure_laplace(values, scale: float, *, sensitivity: float, n_changed: int | None = None,
                   grid: float | None = None, tolerance: float = 0.01, random_state=None) -> SecureRelease:
    """Release ``values`` with discrete Laplace noise on a power-of-two grid (the geometric mechanism).

    ``t = ceil(scale Delta_1^Z / Delta_1)`` with ``Delta_1^Z = Delta_1 / g + n_changed``, so the release is
    ``(Delta_1^Z / t)``-DP, at most ``Delta_1 / scale`` (Ghosh, Roughgarden & Sundararajan 2012). Parameters as
    :func:`secure_gaussian`, with the L1 sensitivity.
    """
    scale = check_real(scale, "scale", low=0.0)
    return _grid_release(values, scale, sensitivity, n_changed, grid, tolerance, random_state, gaussian=False)


def _grid_release(values, scale: float, sensitivity: float, n_changed, grid, tolerance: float, random_state, *,
                  gaussian: bool) -> SecureRelease:
    values = np.asarray(values, dtype=np.float64)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    m = values.size if n_changed is None else check_int(n_changed, "n_changed", low=1)
    if grid is None:
        g = grid_step(sensitivity, m, tolerance=tolerance, norm=2 if gaussian else 1)
    else:
        g = check_real(grid, "grid", low=0.0)
        if math.frexp(g)[0] != 0.5:
            raise ValueError(f"grid must be a power of two (exact multiples in floating point), got {grid!r}")
    delta_units = sensitivity / g + (math.sqrt(m) if gaussian else m)
    units = math.ceil(scale * delta_units / sensitivity)
    kind = "gaussian" if gaussian else "laplace"
    if units > (_MAX_S if gaussian else _MAX_T):
        raise ValueError(f"the discrete {kind.capitalize()} scale is {units} grid units, above the supported "
                         f"2**{24 if gaussian else 40}; increase tolerance (now {tolerance:g}) or pass a coarser grid")
    src = _words(random_state)
    q = np.rint(values / g)
    if not np.all(np.isfinite(q)) or np.abs(q).max(initial=0.0) >= _EXACT_INT:
        raise ValueError(f"values / grid must be finite and below 2**52 in magnitude (grid={g:g}); "
                         "use a coarser grid (larger tolerance) or rescale the values")
    z = (_discrete_gaussian if gaussian else _discrete_laplace)(units, values.size, src).reshape(values.shape)
    k = q.astype(np.int64) + z
    if np.abs(k).max(initial=0) >= _EXACT_INT:
        raise ValueError("the noisy release left the exactly representable range (|k| < 2**52)")
    return SecureRelease(values=k.astype(np.float64) * g, mechanism=f"discrete-{kind}", grid=g, scale_units=units,
                         noise_scale=units * g, sensitivity=sensitivity, sensitivity_units=delta_units, n_changed=m,
                         seeded=src.seeded,
                         notes=["seeded noise: reproducible, NOT secure; do not publish"] if src.seeded else [])
