"""Noise that does not leak through floating point: the discrete Gaussian and discrete Laplace on a grid.

The weakness of naive sampling (Mironov 2012)
---------------------------------------------
The textbook release ``W + sigma * rng.standard_normal(W.shape)`` (or ``W + rng.laplace(scale=b)``) is
computed in double precision. Mironov, *On significance of the least significant bits for differential
privacy* (CCS 2012), showed that this is not the mechanism the proof is about: a sampler built from a
uniform double (inverse CDF, Box-Muller, ziggurat) reaches only a sparse, irregular set of doubles, and
the sum ``f(D) + noise`` is rounded in a way that depends on ``f(D)``. The set of outputs that can occur
therefore depends on the data; an output that is reachable from ``f(D)`` and unreachable from ``f(D')``
has infinite privacy loss, and Mironov recovered the noiseless value from the low-order bits for a large
fraction of Laplace releases. Any fix must make the *set* of possible outputs, and the probability of
each, a function of the data that the proof accounts for. His remedy is the snapping mechanism (clamp,
then round to a power-of-two grid).

The mitigation here (Canonne, Kamath & Steinke 2020)
----------------------------------------------------
Canonne, Kamath & Steinke, *The Discrete Gaussian for Differential Privacy* (NeurIPS 2020; "CKS20")
add integer noise to an integer-valued query and sample it *exactly* with integer arithmetic only:
Bernoulli(exp(-gamma)) for rational gamma (CKS20 Sec. 5, Algorithm 1), the discrete Laplace by rejection
(Algorithm 2) and the discrete Gaussian by rejection from the discrete Laplace (Algorithm 3). This module
applies them to a real matrix through a grid:

1. the grid step ``g`` is a power of two, so ``k * g`` is an exact double for every integer
   ``|k| < 2**53`` and the release is an exact function of integers;
2. the query is rounded to the grid, ``q(D) = rint(f(D) / g)`` (exact: dividing by a power of two);
3. integer noise ``Z`` is drawn exactly; the release is ``(q(D) + Z) * g`` — every output lies on the
   same grid whatever the data, and its probability is the discrete distribution the proof uses.

Sensitivity in grid units. Rounding can move each coordinate by up to half a step, so
``|rint(a) - rint(b)| <= |a - b| + 1`` per coordinate and, by the triangle inequality over the ``m``
coordinates that can change,

    Delta_2^Z <= Delta_2 / g + sqrt(m),        Delta_1^Z <= Delta_1 / g + m.

The grid is chosen fine enough that this inflation is a fraction ``tolerance`` of ``Delta / g``
(``g <= tolerance * Delta / sqrt(m)``, resp. ``/ m``), and the integer noise scale is set so that the
noise-to-sensitivity ratio in grid units is at least the requested one (``s / Delta_2^Z >= sigma /
Delta_2``); the released noise is then a factor at most ``1 + tolerance`` larger than requested.

Privacy statements.

* Discrete Gaussian ``N_Z(0, s^2)`` per coordinate, query of L2 sensitivity ``Delta^Z`` in grid units.
  In one dimension, CKS20 show that the Renyi divergence of order alpha between ``N_Z(0, s^2)`` and its
  integer shift by ``Delta^Z`` is at most ``alpha (Delta^Z)^2 / (2 s^2)`` — exactly the continuous
  Gaussian's value — i.e. ``rho``-zCDP with ``rho = (Delta^Z)^2 / (2 s^2)`` (CKS20 Thm. 4). Renyi
  divergences add over independent coordinates, so the d-dimensional release with
  ``||q(D) - q(D')||_2 <= Delta^Z`` has the same RDP curve ``alpha * rho``. Consequently **every sigma
  calibrated through RDP/zCDP for the continuous Gaussian carries over unchanged**. The (epsilon, delta)
  statement from zCDP uses the conversion of CKS20 Prop. 12 (arXiv v4), see :func:`topicdp.rdp.zcdp_to_dp` (``conversion="improved"``).
  For one coordinate, CKS20 Thm. 7 gives the exact profile, :func:`discrete_gaussian_delta`, which is
  numerically indistinguishable from the continuous profile of Balle & Wang (2018, Thm. 8) at the same
  ``s / Delta^Z`` (tested). For d > 1 coordinates no theorem transfers the continuous *analytic*
  (Balle-Wang) calibration to the discrete Gaussian; using such a sigma is valid "up to what CKS20 show"
  (their numerical comparison and the 1-D theorem). For a proven statement, recalibrate: use an
  RDP-calibrated sigma, or read the guarantee off :meth:`SecureRelease.epsilon` (zCDP route).
* Discrete Laplace ``DLap(t)`` (pmf proportional to ``exp(-|k|/t)``) per coordinate, query of L1
  sensitivity ``Delta_1^Z``: ``(Delta_1^Z / t)``-DP (the geometric mechanism, Ghosh, Roughgarden &
  Sundararajan 2012; CKS20 Sec. 2 and Sec. 5.2).

Randomness. By default the bits come from the operating system's CSPRNG (:func:`secrets.token_bytes`,
i.e. ``os.urandom``/``getrandom``). A seed (int, ``SeedSequence`` or numpy ``Generator``) makes the noise
reproducible for tests and audits — **a seeded release is not secure** (anyone with the seed removes the
noise) and :class:`SecureRelease` records ``seeded=True``.

Exactness. All draws are uniform integers below a bound, obtained from 64-bit words by masked rejection
(unbiased), and all comparisons are integer comparisons; the vectorised paths stay in int64 by keeping
``s <= 2**24`` (so ``2 s^2 * K < 2**62`` in Algorithm 1). A candidate whose square would overflow
(``| |Y| - s | >= 2**31``, probability below ``exp(-100)`` per draw) is decided with Python integers, its
number of Bernoulli(exp(-1)) factors capped at ``2**62`` (which changes an acceptance probability below
``exp(-512)`` by less than ``exp(-2**62)``). The cost is measured by ``benchmarks/speed/bench_secure_noise.py``.
"""

from __future__ import annotations

import math
import numbers
import secrets
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int, check_real

__all__ = [
    "RandomWords",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "discrete_gaussian_pmf",
    "discrete_gaussian_delta",
    "grid_step",
    "SecureRelease",
    "secure_gaussian",
    "secure_laplace",
]

_MAX_S = 2**24  # discrete Gaussian scale limit of the int64 path (see module docstring)
_MAX_T = 2**40  # discrete Laplace scale limit (t * K < 2**62 in Algorithm 1)
_SAFE_A = 2**31  # | |Y| - s | below this squares without overflow
_EXACT_INT = 2**52  # |grid units| of query and release must stay below this (exact doubles)


# ---------------------------------------------------------------------------------------------------
# the bit source
# ---------------------------------------------------------------------------------------------------
class RandomWords:
    """Uniform 64-bit words from the OS CSPRNG (default) or from a seeded numpy generator.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` (default) reads :func:`secrets.token_bytes` (``os.urandom``): suitable for releases.
        Anything else is a reproducible pseudo-random stream (PCG64) — for tests and audits only; such
        noise is **not secure** and :attr:`seeded` is True.
    """

    def __init__(self, random_state=None):
        self.seeded = random_state is not None
        self._bitgen = None
        if isinstance(random_state, np.random.Generator):
            self._bitgen = random_state.bit_generator
        elif isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(
            random_state, bool
        ):
            self._bitgen = np.random.PCG64(random_state)
        elif random_state is not None:
            raise TypeError(
                "random_state must be None (OS randomness), an int, a numpy SeedSequence or a numpy "
                f"Generator, got {type(random_state).__name__}"
            )

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
        """Uniform integers in ``[0, bound)`` (int64), ``bound`` a positive int or int64 array < 2**62.

        Masked rejection: draw a uniform lane (16, 32 or 64 bits, the narrowest that holds every bound),
        keep its low ``bit_length(bound - 1)`` bits, accept if below ``bound`` (acceptance >= 1/2), redraw
        the rejected ones. Unbiased, integer-only.
        """
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


# ---------------------------------------------------------------------------------------------------
# CKS20 Sec. 5: exact samplers, vectorised
# ---------------------------------------------------------------------------------------------------
def _bernoulli_exp_fraction(num: np.ndarray, den: np.ndarray, src: RandomWords) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for ``0 <= num <= den`` (CKS20 Algorithm 1, gamma in [0, 1]).

    K = 1; repeat { A ~ Bernoulli(gamma / K); if A == 0 stop; K += 1 }; return [K odd]. The stopping index
    satisfies P(K > k) = gamma^k / k!, so P(K odd) = sum_k (-gamma)^k / k! = exp(-gamma).
    Bernoulli(gamma / K) = [U < num] with U uniform on {0, ..., den * K - 1}.
    """
    n = num.size
    out = np.empty(n, dtype=bool)
    active = np.arange(n)
    k = 1
    while active.size:
        if int(den[active].max()) * k >= 2**62:
            raise OverflowError("Bernoulli(exp(-gamma)) loop exceeded the int64 range (probability ~ 1/K!)")
        a = src.below(den[active] * k) < num[active]
        out[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return out


def _bernoulli_exp_minus_one(n: int, src: RandomWords) -> np.ndarray:
    """n draws of Bernoulli(exp(-1)): Algorithm 1 with gamma = 1 (its first step always continues)."""
    out = np.empty(n, dtype=bool)
    active = np.arange(n)
    k = 2
    while active.size:
        a = src.below(k, active.size) == 0  # Bernoulli(1 / K)
        out[active[~a]] = k % 2 == 1
        active = active[a]
        k += 1
    return out


def bernoulli_exp(num, den, *, random_state=None) -> np.ndarray:
    """Exact Bernoulli(exp(-num/den)) draws for non-negative integer arrays ``num``, ``den > 0``.

    CKS20 Algorithm 1: for gamma = num/den > 1, exp(-gamma) = exp(-1)^floor(gamma) * exp(-(gamma mod 1)),
    so the draw is the AND of floor(gamma) Bernoulli(exp(-1)) draws and one Bernoulli(exp(-frac)).

    Parameters
    ----------
    num, den : array_like of int
        ``den * (small K)`` must stay below 2**62.
    random_state : see :class:`RandomWords`

    Returns
    -------
    ndarray of bool
    """
    num = np.asarray(num, dtype=np.int64).ravel()
    den = np.broadcast_to(np.asarray(den, dtype=np.int64), num.shape).ravel()
    if np.any(num < 0) or np.any(den <= 0):
        raise ValueError("bernoulli_exp needs num >= 0 and den > 0")
    return _bernoulli_exp(num // den, num % den, den, _words(random_state))


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
    """CKS20 Algorithm 2 for integer scale t: pmf proportional to exp(-|y|/t) on the integers.

    U uniform on {0..t-1} kept with probability exp(-U/t), V geometric with P(V >= v) = exp(-v); X = U + tV
    has P(X = x) proportional to exp(-x/t) on x >= 0. A fair sign B, rejecting (B = 1, X = 0), gives the
    two-sided distribution.
    """
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
    """CKS20 Algorithm 3 with integer s and t = s: Y ~ DLap(s), accepted with prob exp(-(|Y| - s)^2 / (2 s^2)).

    P(Y = y, accept) is proportional to exp(-|y|/t - (|y| - s^2/t)^2 / (2 s^2)) = exp(-y^2 / (2 s^2)) * const
    for any t > 0 (CKS20 Sec. 5.3); t = s keeps gamma = a^2 / (2 s^2) with a = | |Y| - s | an integer
    ratio, and the acceptance rate near 0.76.
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
            accept[i] = _bernoulli_exp(
                np.array([min(whole, 2**62)]), np.array([frac]), np.array([int(den)]), src
            )[0]
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out


def discrete_laplace(t: int, size, *, random_state=None) -> np.ndarray:
    """Exact samples of the discrete Laplace distribution, ``P(k) ∝ exp(-|k| / t)`` on the integers.

    CKS20 Sec. 5.2, Algorithm 2 (integer scale).

    Parameters
    ----------
    t : int
        Scale in grid units, ``1 <= t <= 2**40``.
    size : int or tuple of int
    random_state : None (OS CSPRNG, default), int, SeedSequence, Generator or :class:`RandomWords`
        Seeded noise is reproducible and **not secure**.

    Returns
    -------
    ndarray of int64
    """
    t = check_int(t, "t", low=1, high=_MAX_T)
    shape = _shape(size)
    return _discrete_laplace(t, math.prod(shape), _words(random_state)).reshape(shape)


def discrete_gaussian(s: int, size, *, random_state=None) -> np.ndarray:
    """Exact samples of the discrete Gaussian ``N_Z(0, s^2)``: ``P(k) ∝ exp(-k^2 / (2 s^2))``, k integer.

    CKS20 Sec. 5.3, Algorithm 3, with the Bernoulli(exp(-gamma)) of Algorithm 1 and the discrete Laplace of
    Algorithm 2, in integer arithmetic only. Its variance is below ``s^2`` (CKS20).

    Parameters
    ----------
    s : int
        Scale in grid units, ``1 <= s <= 2**24``.
    size : int or tuple of int
    random_state : None (OS CSPRNG, default), int, SeedSequence, Generator or :class:`RandomWords`
        Seeded noise is reproducible and **not secure**.

    Returns
    -------
    ndarray of int64
    """
    s = check_int(s, "s", low=1, high=_MAX_S)
    shape = _shape(size)
    return _discrete_gaussian(s, math.prod(shape), _words(random_state)).reshape(shape)


def _shape(size) -> tuple:
    shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
    for dim in shape:
        check_int(dim, "size", low=0)
    return shape


# ---------------------------------------------------------------------------------------------------
# distributions and privacy profiles
# ---------------------------------------------------------------------------------------------------
def discrete_gaussian_pmf(k, s: float) -> np.ndarray:
    """Exact pmf of ``N_Z(0, s^2)`` at integers ``k`` (normaliser summed over |j| <= 40 s + 10)."""
    s = check_real(s, "s", low=0.0)
    j = np.arange(-math.ceil(40 * s) - 10, math.ceil(40 * s) + 11)
    log_z = np.logaddexp.reduce(-(j**2) / (2 * s * s))
    k = np.asarray(k, dtype=float)
    return np.exp(-(k**2) / (2 * s * s) - log_z)


def discrete_gaussian_delta(epsilon: float, s: float, sensitivity: int) -> float:
    """Exact delta(epsilon) of the one-dimensional discrete Gaussian mechanism (CKS20 Thm. 7).

    For an integer query of sensitivity ``Delta`` plus ``N_Z(0, s^2)`` noise,

        delta = P[Y > eps s^2 / Delta - Delta / 2] - e^eps P[Y > eps s^2 / Delta + Delta / 2],
        Y ~ N_Z(0, s^2),

    and no smaller delta holds. Computed by summing the pmf (``s`` up to a few thousand).
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=False)
    s = check_real(s, "s", low=0.0)
    sensitivity = check_int(sensitivity, "sensitivity", low=1)
    half = math.ceil(40 * s) + 10 + sensitivity
    y = np.arange(-half, half + 1)
    log_p = -(y**2) / (2 * s * s)
    log_p -= np.logaddexp.reduce(log_p)
    shift = epsilon * s * s / sensitivity
    lo = y > shift - sensitivity / 2
    hi = y > shift + sensitivity / 2
    tail_lo = np.exp(np.logaddexp.reduce(log_p[lo])) if lo.any() else 0.0
    tail_hi = np.exp(epsilon + np.logaddexp.reduce(log_p[hi])) if hi.any() else 0.0
    return float(max(tail_lo - tail_hi, 0.0))


def grid_step(sensitivity: float, n_coords: int, *, tolerance: float = 0.01, norm: int = 2) -> float:
    """The power-of-two grid step that keeps the rounding inflation of the sensitivity below ``tolerance``.

    ``g = 2**floor(log2(tolerance * Delta / m^(1/p)))`` so that ``m^(1/p) <= tolerance * Delta / g``,
    where ``m^(1/p)`` is the worst-case Lp norm of the per-coordinate rounding change (<= 1 each; see the
    module docstring).
    """
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    n_coords = check_int(n_coords, "n_coords", low=1)
    tolerance = check_real(tolerance, "tolerance", low=0.0, high=1.0, high_open=False)
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    spread = math.sqrt(n_coords) if norm == 2 else float(n_coords)
    return 2.0 ** math.floor(math.log2(tolerance * sensitivity / spread))


# ---------------------------------------------------------------------------------------------------
# releases
# ---------------------------------------------------------------------------------------------------
@dataclass
class SecureRelease:
    """A noisy matrix on a power-of-two grid, with what it guarantees.

    Attributes
    ----------
    values : ndarray of float64
        The release: every entry is ``k * grid`` for an integer ``k`` (exact doubles).
    mechanism : {"discrete-gaussian", "discrete-laplace"}
    grid : float
        Grid step (a power of two).
    scale_units : int
        ``s`` (discrete Gaussian) or ``t`` (discrete Laplace), in grid units.
    noise_scale : float
        ``scale_units * grid``: the continuous-equivalent sigma (resp. Laplace scale) actually used.
    sensitivity : float
        L2 (Gaussian) or L1 (Laplace) sensitivity of the real-valued query, as given.
    sensitivity_units : float
        Bound on the sensitivity of the rounded query in grid units (``Delta/g + sqrt(m)``, resp. ``+ m``).
    n_changed : int
        Number of coordinates assumed able to change between neighbours (``m``).
    seeded : bool
        True if the noise came from a seed: reproducible and **not secure**.
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
        """zCDP parameter ``(Delta^Z)^2 / (2 s^2)`` of a discrete Gaussian release (CKS20 Thm. 4 + additivity)."""
        if self.mechanism != "discrete-gaussian":
            raise ValueError("rho is defined for the discrete Gaussian only")
        return self.sensitivity_units**2 / (2.0 * self.scale_units**2)

    def epsilon(self, delta: float | None = None) -> float:
        """A proven epsilon: zCDP -> (eps, delta) (CKS20 Prop. 12) for the Gaussian; Delta_1^Z / t for Laplace."""
        if self.mechanism == "discrete-laplace":
            return self.sensitivity_units / self.scale_units
        if delta is None:
            raise ValueError("the discrete Gaussian's epsilon needs delta in (0, 1)")
        from ..rdp.zcdp import zcdp_to_dp

        return zcdp_to_dp(self.rho, delta, conversion="improved")

    def privacy(self, delta: float | None = None) -> dict:
        """JSON-able privacy statement."""
        out = {
            "mechanism": self.mechanism,
            "grid": self.grid,
            "scale_units": self.scale_units,
            "noise_scale": self.noise_scale,
            "sensitivity": self.sensitivity,
            "sensitivity_units": self.sensitivity_units,
            "n_changed": self.n_changed,
            "seeded": self.seeded,
            "notes": list(self.notes),
        }
        if self.mechanism == "discrete-gaussian":
            out["rho_zcdp"] = self.rho
            out["noise_multiplier"] = self.scale_units / self.sensitivity_units
            if delta is not None:
                out["epsilon_zcdp"] = self.epsilon(delta)
                out["delta"] = delta
        else:
            out["epsilon"] = self.epsilon()
        return out


def _grid_query(values: np.ndarray, grid: float) -> np.ndarray:
    q = np.rint(np.asarray(values, dtype=np.float64) / grid)
    if not np.all(np.isfinite(q)) or np.abs(q).max(initial=0.0) >= _EXACT_INT:
        raise ValueError(
            f"values / grid must be finite and below 2**52 in magnitude (grid={grid:g}); "
            "use a coarser grid (larger tolerance) or rescale the values"
        )
    return q.astype(np.int64)


def _release_values(q: np.ndarray, z: np.ndarray, grid: float) -> np.ndarray:
    k = q + z
    if np.abs(k).max(initial=0) >= _EXACT_INT:
        raise ValueError("the noisy release left the exactly representable range (|k| < 2**52)")
    return k.astype(np.float64) * grid


def _seed_note(seeded: bool) -> list:
    return ["seeded noise: reproducible, NOT secure; do not publish"] if seeded else []


def secure_gaussian(
    values,
    sigma: float,
    *,
    sensitivity: float,
    n_changed: int | None = None,
    grid: float | None = None,
    tolerance: float = 0.01,
    random_state=None,
) -> SecureRelease:
    """Release ``values`` with discrete Gaussian noise on a power-of-two grid (CKS20; see module docstring).

    Parameters
    ----------
    values : array_like of float
        The query ``f(D)`` (e.g. a K x V topic-word matrix). A leading batch axis is allowed: the noise is
        i.i.d. over all entries, and ``n_changed`` then counts the coordinates of *one* release.
    sigma : float
        The continuous-Gaussian sigma calibrated for ``sensitivity`` (> 0).
    sensitivity : float
        L2 sensitivity of ``values`` (> 0).
    n_changed : int, optional
        Coordinates that can differ between neighbours (default ``values.size``); enters the rounding
        inflation ``sqrt(n_changed)``.
    grid : float, optional
        Grid step; must be a power of two. Default :func:`grid_step` ``(sensitivity, n_changed, tolerance)``.
    tolerance : float
        Allowed relative inflation of the sensitivity by rounding, in (0, 1].
    random_state : None (OS CSPRNG, default), int, SeedSequence, Generator or :class:`RandomWords`
        Seeded noise is reproducible and **not secure**.

    Returns
    -------
    SecureRelease
        ``noise_scale = s * grid`` with integer ``s = ceil(sigma * Delta^Z / Delta)``, so the
        noise-to-sensitivity ratio in grid units is at least ``sigma / Delta``: the release has the RDP
        curve of the continuous Gaussian mechanism with (sigma, Delta) or better.
    """
    values = np.asarray(values, dtype=np.float64)
    sigma = check_real(sigma, "sigma", low=0.0)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    m = values.size if n_changed is None else check_int(n_changed, "n_changed", low=1)
    g = grid_step(sensitivity, m, tolerance=tolerance) if grid is None else _check_grid(grid)
    delta_units = sensitivity / g + math.sqrt(m)
    s = math.ceil(sigma * delta_units / sensitivity)
    if s > _MAX_S:
        raise ValueError(
            f"the discrete Gaussian scale is {s} grid units, above the supported 2**24; increase tolerance "
            f"(now {tolerance:g}) or pass a coarser grid"
        )
    src = _words(random_state)
    q = _grid_query(values, g)
    z = _discrete_gaussian(s, values.size, src).reshape(values.shape)
    return SecureRelease(
        values=_release_values(q, z, g),
        mechanism="discrete-gaussian",
        grid=g,
        scale_units=s,
        noise_scale=s * g,
        sensitivity=sensitivity,
        sensitivity_units=delta_units,
        n_changed=m,
        seeded=src.seeded,
        notes=_seed_note(src.seeded),
    )


def secure_laplace(
    values,
    scale: float,
    *,
    sensitivity: float,
    n_changed: int | None = None,
    grid: float | None = None,
    tolerance: float = 0.01,
    random_state=None,
) -> SecureRelease:
    """Release ``values`` with discrete Laplace noise on a power-of-two grid (geometric mechanism).

    ``t = ceil(scale * Delta_1^Z / Delta_1)`` grid units with ``Delta_1^Z = Delta_1 / g + n_changed``, so
    the release is ``(Delta_1^Z / t)``-DP with ``Delta_1^Z / t <= Delta_1 / scale`` (Ghosh, Roughgarden &
    Sundararajan 2012; CKS20 Sec. 5.2 for the exact sampler). Parameters as :func:`secure_gaussian`, with
    ``scale`` the continuous Laplace scale and ``sensitivity`` the L1 sensitivity; the default grid keeps the
    L1 rounding inflation ``n_changed * g`` below ``tolerance * Delta_1``.
    """
    values = np.asarray(values, dtype=np.float64)
    scale = check_real(scale, "scale", low=0.0)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    m = values.size if n_changed is None else check_int(n_changed, "n_changed", low=1)
    g = grid_step(sensitivity, m, tolerance=tolerance, norm=1) if grid is None else _check_grid(grid)
    delta_units = sensitivity / g + m
    t = math.ceil(scale * delta_units / sensitivity)
    if t > _MAX_T:
        raise ValueError(f"the discrete Laplace scale is {t} grid units, above the supported 2**40")
    src = _words(random_state)
    q = _grid_query(values, g)
    z = _discrete_laplace(t, values.size, src).reshape(values.shape)
    return SecureRelease(
        values=_release_values(q, z, g),
        mechanism="discrete-laplace",
        grid=g,
        scale_units=t,
        noise_scale=t * g,
        sensitivity=sensitivity,
        sensitivity_units=delta_units,
        n_changed=m,
        seeded=src.seeded,
        notes=_seed_note(src.seeded),
    )


def _check_grid(grid) -> float:
    grid = check_real(grid, "grid", low=0.0)
    mantissa, _ = math.frexp(grid)
    if mantissa != 0.5:
        raise ValueError(f"grid must be a power of two (exact multiples in floating point), got {grid!r}")
    return grid
