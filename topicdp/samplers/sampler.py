"""Sensitivity sampling (TopicDP Alg. 1, after Rubinstein & Aldà 2017, "Pain-free random differential privacy with
sensitivity sampling").

Draw h neighbouring pairs (D, D') from P, compute ``Delta_i = ||f(D) - f(D')||_F`` with two fresh deterministic
fits per pair, and return the k-th smallest as Delta_s: a mechanism calibrated to it is (epsilon, delta,
gamma)-random DP with respect to P (Thm. 1), *not* DP, gamma bounding the failure jointly over the sample and the
pair. (h, k) come from :mod:`.sizing`. Pairs run through joblib (any backend, Dask included), each drawn from its
own child of one ``SeedSequence``, so the result does not depend on ``n_jobs`` or the backend.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from .._names import UNITS
from .._validation import check_gamma, check_int, check_option, check_real
from .neighbours import PrivateResample, PublicReference, ResampledRecords
from .pairs import shared
from .._progress import progress_enabled, say
from .progress import CostForecast, PairProgress, check_budget
from .sizing import SIZINGS, exchangeable_failure_bound, order_statistic_for, sample_size


@dataclass
class SensitivitySample:
    """Result of sensitivity sampling: Delta_s (``sensitivity``, the k-th order statistic of the h ``deltas``), the
    sizing's numbers (``rho`` None for the exchangeable sizing; ``sufficient`` False only behind
    ``insecure_testing``), P's description, the seed that reproduces it, and timings.
    """

    sensitivity: float
    deltas: list
    gamma: float
    rho: float | None
    h: int
    k: int
    sufficient: bool
    distribution: dict
    seed: int
    fit_seconds: list = field(default_factory=list)
    wall_seconds: float = 0.0
    n_jobs: int = 1
    from_cache: bool = False
    sizing: str = "lambert-w"

    @property
    def statement(self) -> str:
        """What Delta_s guarantees about a neighbouring pair drawn from P, in words."""
        if self.sizing == "exchangeable":
            return (f"P(Delta_pair > Delta_s) <= (h - k + 1)/(h + 1) = {exchangeable_failure_bound(self.h, self.k):.4g}, "
                    "marginal over the sensitivity sample and the neighbouring pair drawn from P (exchangeable "
                    "sizing: the h + 1 pairs are i.i.d.); not conditional on the sample")
        assert self.rho is not None  # the Lambert-W sizing has a rho
        return (f"with probability >= 1 - rho = {1 - self.rho:.4g} over the sensitivity sample, Delta_s bounds the "
                f"distance of a neighbouring pair drawn from P with probability >= 1 - gamma + rho "
                "(Lambert-W sizing, TopicDP Thm. 1 after Rubinstein & Alda 2017); in total >= 1 - gamma")

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> dict:
        """What a report needs (without the full list of distances)."""
        quantiles = np.quantile(np.asarray(self.deltas), [0, 0.5, 0.9, 1]).tolist()
        out = {k: getattr(self, k) for k in ("sensitivity", "h", "k", "rho", "sufficient", "sizing", "statement")}
        out["deltas_quantiles"] = dict(zip(("min", "median", "p90", "max"), quantiles))
        out["seconds_per_pair_median"] = float(np.median(self.fit_seconds)) if self.fit_seconds else None
        return {**out, **{k: getattr(self, k) for k in ("wall_seconds", "n_jobs", "from_cache", "seed")}}


def _pair_distance(model, source, rec_d: np.ndarray, rec_dp: np.ndarray) -> tuple[float, float]:
    """``(Delta_i, seconds)`` for one pair: two fresh fits on the corpora of ``source`` (a builder or a handle)."""
    start = time.perf_counter()
    corpora = source.get().pair(rec_d, rec_dp)
    W = model.fit_topic_word(next(corpora))
    W_prime = model.fit_topic_word(next(corpora))
    return float(np.linalg.norm(W - W_prime)), time.perf_counter() - start


PRIVATE_ORACLE = "private-oracle"


@dataclass(frozen=True, eq=False)  # P may be a corpus: compared by identity, not element-wise
class SensitivitySampling:
    """How the sensitivity is sampled (TopicDP Alg. 1), stated once and checked when made (:class:`topicdp.TopicDP`,
    :func:`sample_sensitivity` and the pipeline take it).

    ``distribution`` is P, the owner's statement (no default): a public reference corpus with the private vocabulary
    (:class:`.neighbours.PublicReference`, cut to the private bounds by :func:`bounded_like`; Delta_s is then
    public), or ``"private-oracle"``, resampling the private corpus as TopicDP did (sigma then depends on the private
    data; the report says so). ``gamma`` in (0, 0.5) is the failure probability of random DP, jointly over the sample
    and the pair; ``sizing`` TopicDP Thm. 1 (sample-conditional) or ``"exchangeable"`` (marginal,
    :func:`.sizing.exchangeable_size`); ``n_pairs`` overrides h, below the sizing's only with ``insecure_testing``
    (``sufficient=False``). ``random_state`` seeds the pair draws (None: from the OS, recorded); seeded samples are
    cached in ``cache_dir`` by (model, corpus fingerprint, gamma, unit, P, seed, h), as sampling "can be performed
    offline, once" (TopicDP Sec. 3.4). ``progress`` shows the cost forecast (:mod:`topicdp._progress`);
    ``max_minutes`` refuses a run forecast over it, naming what would fit.
    """

    distribution: object = None
    gamma: float = 0.1
    sizing: str = "lambert-w"
    n_pairs: int | None = None
    insecure_testing: bool = False
    random_state: int | None = None
    cache_dir: str | os.PathLike | None = None
    progress: bool | None = None
    max_minutes: float | None = None

    def __post_init__(self) -> None:
        check_gamma(self.gamma)
        check_option(self.sizing, "sizing", SIZINGS)
        if self.n_pairs is not None:
            check_int(self.n_pairs, "n_pairs", low=1)
        if self.random_state is not None:
            check_int(self.random_state, "random_state", low=0)
        if self.max_minutes is not None:
            check_real(self.max_minutes, "max_minutes", low=0.0)
        if self.progress is not None and not isinstance(self.progress, bool):
            raise TypeError(f"progress must be True, False or None, got {self.progress!r}")
        d = self.distribution
        if isinstance(d, str) and d != PRIVATE_ORACLE:
            raise ValueError(f"distribution must be a public reference Corpus, {PRIVATE_ORACLE!r} or "
                             f"ResampledRecords, got {d!r}")

    @property
    def private_oracle(self) -> bool:
        """Whether P resamples the private corpus itself (sigma is then a function of the private data)."""
        d = self.distribution
        return (isinstance(d, str) and d == PRIVATE_ORACLE) or (isinstance(d, ResampledRecords)
                                                                 and d.kind == "private-resample")

    def records(self, corpus, unit: str) -> ResampledRecords:
        """P as a record distribution at ``unit`` for the private ``corpus``."""
        d = self.distribution
        if d is None:
            raise ValueError(
                "sensitivity sampling needs the sampling distribution P: distribution=<a public reference Corpus> "
                f"(random DP with respect to a P independent of the private data), or distribution={PRIVATE_ORACLE!r} "
                "to resample the private corpus itself (sigma then leaks; the report says so)")
        if isinstance(d, str):  # PRIVATE_ORACLE, checked when made
            return PrivateResample(corpus, unit)
        if isinstance(d, ResampledRecords):
            if d.unit != unit:
                raise ValueError(f"distribution.unit ({d.unit!r}) must equal unit ({unit!r})")
            return d
        return PublicReference(bounded_like(d, corpus.bounds), unit)

    def size(self) -> tuple[float | None, int, int, bool]:
        """(rho, h, k, sufficient): the sizing's numbers for gamma, or the ``n_pairs`` override's."""
        rho, h, k = sample_size(self.gamma, self.sizing)
        if self.n_pairs is None:
            return rho, h, k, True
        if self.n_pairs < h and not self.insecure_testing:
            theorem = "exchangeable bound" if self.sizing == "exchangeable" else "TopicDP Thm. 1"
            raise ValueError(
                f"n_pairs must be at least h={h} for gamma={self.gamma:g} ({self.sizing} sizing, {theorem}); fewer "
                "pairs void the guarantee and are allowed only with insecure_testing=True")
        return rho, self.n_pairs, order_statistic_for(self.gamma, self.n_pairs, self.sizing), self.n_pairs >= h


def bounded_like(reference, bounds: dict):
    """The public ``reference`` cut to the private corpus' contribution ``bounds`` (unchanged without bounds).

    The guarantee's neighbours differ in one bounded unit, so P's records must be bounded alike (the bounds are
    public parameters); bounding is per unit, seeded 0 for a reproducible sample.
    """
    if not bounds or reference.bounds == bounds:
        return reference
    return reference.bound(**bounds, random_state=0)


def draw_pairs(distribution, n_records: int, seed: int, h: int) -> list:
    """The h pairs (record indices of D and D') of a sample seeded ``seed``: one child seed per pair, so the first
    pairs are the same for any h."""
    children = np.random.SeedSequence(seed).spawn(h)
    return [distribution.draw_indices(n_records, np.random.default_rng(child)) for child in children]


def sample_sensitivity(model, corpus, sampling: SensitivitySampling, *, unit: str = "user", n_jobs: int = 1,
                       fit_seconds: float | None = None) -> SensitivitySample:
    """Sample the Frobenius sensitivity of ``model`` (the deterministic f) on datasets like ``corpus`` (TopicDP Alg. 1).

    ``corpus`` fixes N (users, or documents at ``unit="document"``) and the vocabulary; ``sampling`` is P, gamma,
    the sizing and the options; ``n_jobs`` joblib workers. ``fit_seconds`` (one fit's time, if measured) lets the
    cost and ETA be forecast before the first pair; without it and with ``max_minutes`` a fit is timed.
    """
    if not isinstance(sampling, SensitivitySampling):
        raise TypeError(f"sampling must be a SensitivitySampling, got {type(sampling).__name__}")
    check_option(unit, "unit", UNITS)
    if fit_seconds is not None:
        fit_seconds = check_real(fit_seconds, "fit_seconds", low=0.0, low_open=False)
    gamma, sizing, max_minutes = sampling.gamma, sampling.sizing, sampling.max_minutes
    rho, h, k, sufficient = sampling.size()
    distribution = sampling.records(corpus, unit)
    if distribution.reference.vocabulary != corpus.vocabulary:
        raise ValueError("the distribution's reference corpus must share the private corpus' vocabulary")
    n_records = corpus.n_users if unit == "user" else corpus.n_docs
    if n_records < 2:
        raise ValueError(f"the corpus needs at least 2 {unit}s for neighbouring datasets, got {n_records}")

    if sampling.random_state is None:
        entropy = np.random.SeedSequence().entropy
        assert isinstance(entropy, int)  # numpy draws an int when it is given no entropy
        seed = entropy % 2**63
    else:
        seed = sampling.random_state
    parts = dict(model=model.describe(), corpus=corpus.fingerprint(), gamma=gamma, unit=unit,
                 distribution=distribution.describe(), seed=seed, h=h)
    if sizing != "lambert-w":  # Lambert-W keys stay as they were
        parts["sizing"] = sizing
    key = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]
    show = progress_enabled(sampling.progress)
    path = None if sampling.cache_dir is None else Path(sampling.cache_dir) / f"{key}.json"
    if path is not None and sampling.random_state is not None and path.exists():
        say(f"sensitivity sample loaded from the cache ({sizing} sizing, h={h})", show=show)
        return SensitivitySample(**{**json.loads(path.read_text()), "from_cache": True})

    n_workers = max(1, min(effective_n_jobs(n_jobs), h))
    if fit_seconds is None and max_minutes is not None:
        # the second of two fits: a process's first fit also pays one-time costs (imports, compilation)
        for _ in range(2):
            start = time.perf_counter()
            model.fit_topic_word(corpus)
            fit_seconds = time.perf_counter() - start
    if fit_seconds is not None:
        forecast = CostForecast(h, fit_seconds, n_workers)
        say(f"sensitivity sampling: h={h} pairs ({sizing} sizing, gamma={gamma:g}): {forecast.describe()}", show=show)
        if max_minutes is not None:
            check_budget(forecast, max_minutes, gamma=gamma, sizing=sizing, exchangeable_pairs=sample_size(gamma, "exchangeable")[1],
                         n_records=n_records, unit=unit, max_workers=effective_n_jobs(-1))

    draws = draw_pairs(distribution, n_records, seed, h)
    start = time.perf_counter()
    results = []
    with shared(distribution.pair_builder(), n_jobs) as source:
        if n_jobs == 1:
            pairs = (_pair_distance(model, source, d, dp) for d, dp in draws)
        else:
            tasks = (delayed(_pair_distance)(model, source, d, dp) for d, dp in draws)
            pairs = Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
        tracker = PairProgress(h, bar=show)
        try:
            for r in pairs:
                results.append(r)
                tracker.update()
        finally:
            tracker.close()
    wall = time.perf_counter() - start
    deltas = [r[0] for r in results]
    result = SensitivitySample(sensitivity=float(np.sort(deltas)[k - 1]), deltas=deltas, gamma=gamma, rho=rho, h=h,
                               k=k, sufficient=sufficient, distribution=distribution.describe(), seed=seed,
                               fit_seconds=[r[1] for r in results], wall_seconds=wall, n_jobs=n_jobs, sizing=sizing)
    if path is not None:
        from .._files import atomic_write

        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(result.to_dict()), private=True)
    return result

