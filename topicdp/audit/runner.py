"""Audit runners: draw releases on D and D', score them, and bound epsilon from below.

:func:`audit_output_perturbation` computes f(D), f(D') once and redraws only the noise, in batches;
:func:`audit_pipeline` reruns a whole randomized pipeline per trial (noise entering mid-computation), in
parallel; :func:`run_audit` runs either for an :class:`AuditSetup` with :class:`AuditOptions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Callable

import numpy as np

from ..report import _jsonable

from .._validation import check_int, check_option, check_real
from .bounds import SELECTIONS, EpsilonBound, epsilon_bound
from .canaries import CanaryPair
from .distinguishers import DISTINGUISHERS, make_distinguisher
from .noise import as_noise

_BATCH_ELEMENTS = 2**22  # ~32 MB of float64 per batch of releases


@dataclass
class AuditResult:
    """What an audit found: the :class:`~topicdp.audit.bounds.EpsilonBound` (bound, best test, error rates,
    Clopper-Pearson bounds, trade-off curve), the claimed epsilon (or None), trials per side, labels and details."""

    bound: EpsilonBound
    epsilon: float | None
    n_trials: int
    distinguisher: str
    mechanism: str
    canary: str | None = None
    details: dict = field(default_factory=dict)

    @property
    def eps_lower(self) -> float:
        """Empirical lower bound on epsilon at ``delta``."""
        return self.bound.eps_lower

    @property
    def delta(self) -> float:
        return self.bound.delta

    @property
    def confidence(self) -> float:
        return self.bound.confidence

    @property
    def selection(self) -> str:
        return self.bound.selection

    @property
    def flagged(self) -> bool:
        """True when the audit refutes the claim: ``eps_lower > epsilon``."""
        return self.epsilon is not None and self.eps_lower > self.epsilon

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable flat dict: the bound's fields, the claim and labels, ``flagged`` and ``details``."""
        out = {k: getattr(self.bound, k) for k in self.bound.__dataclass_fields__}
        out.update({k: getattr(self, k) for k in self.__dataclass_fields__ if k != "bound"})
        out["flagged"] = self.flagged
        return _jsonable(out)

    def summary(self) -> str:
        b = self.bound
        claim = "n/a" if self.epsilon is None else f"{self.epsilon:.4g}"
        verdict = "FLAGGED: eps_lower > claimed epsilon" if self.flagged else "not flagged"
        confidence = (f"at {b.confidence:.0%} confidence (held-out test)" if b.selection == "held-out"
                      else "(same-sample test: exploratory, no confidence statement)")
        return "\n".join([
            f"mechanism        {self.mechanism}",
            f"canary           {self.canary}",
            f"distinguisher    {self.distinguisher}",
            f"trials           {self.n_trials} per dataset",
            f"claimed          epsilon={claim}, delta={b.delta:.3g}",
            f"audited          eps_lower={b.eps_lower:.4g} {confidence}",
            f"best test        score {b.direction} {b.threshold:.6g}: FPR={b.fpr:.4g} "
            f"(<= {b.fpr_hi:.4g}), FNR={b.fnr:.4g} (<= {b.fnr_hi:.4g})",
            f"verdict          {verdict}"])


def _seeds(random_state) -> tuple[np.random.SeedSequence, dict]:
    """A SeedSequence and its entropy (recorded so that any audit can be replayed)."""
    if isinstance(random_state, np.random.SeedSequence):
        ss = random_state
    elif random_state is None or isinstance(random_state, (int, np.integer)):
        ss = np.random.SeedSequence(random_state)
    else:
        raise TypeError(f"random_state must be None, an int or a SeedSequence, got {type(random_state).__name__}")
    return ss, {"seed_entropy": str(ss.entropy)}


def _check_common(n_trials, epsilon, delta) -> tuple[int, float | None, float]:
    n_trials = check_int(n_trials, "n_trials", low=1)
    epsilon = None if epsilon is None else check_real(epsilon, "epsilon", low=0.0, low_open=False)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_open=False)
    return n_trials, epsilon, delta


def _noise_scores(W, noise, distinguisher, rng, n_trials, batch_size) -> np.ndarray:
    scores = []
    done = 0
    while done < n_trials:
        b = min(batch_size, n_trials - done)
        releases = np.asarray(noise(W, rng, b))
        if releases.shape != (b,) + W.shape:
            raise ValueError(f"noise(W, rng, {b}) must return shape {(b,) + W.shape}, got {releases.shape}")
        scores.append(np.asarray(distinguisher.score(releases), dtype=np.float64))
        done += b
    return np.concatenate(scores)


def audit_output_perturbation(W_out, W_in, noise, *, n_trials: int = 10_000, distinguisher="projection",
                              canary_words=None, canary_weights=None, epsilon: float | None = None,
                              delta: float = 1e-5, confidence: float = 0.95, selection: str = "held-out",
                              random_state=None, batch_size: int | None = None, mechanism: str | None = None,
                              canary: str | None = None, details: dict | None = None) -> AuditResult:
    """Audit an output-perturbation mechanism: f(D), f(D') fixed, the noise redrawn ``n_trials`` times each.

    ``noise`` is a Gaussian sigma or ``noise(W, rng, n) -> (n, *W.shape)`` (:mod:`topicdp.audit.noise`), or a pair
    ``(noise_out, noise_in)`` running each side as the mechanism would when its noise scale is computed from the data.
    ``distinguisher`` is ``"projection"``, ``"canary-words"`` (with ``canary_words``, ``canary_weights``) or an object
    with ``score``; ``epsilon``, ``delta`` the claim (``epsilon`` None: measure only); ``confidence`` and
    ``selection`` as :func:`topicdp.audit.epsilon_lower_bound`; ``random_state`` seeds both sides and the split (its
    entropy is recorded in ``details``); ``batch_size`` defaults to ~32 MB of releases.
    """
    n_trials, epsilon, delta = _check_common(n_trials, epsilon, delta)
    W_out = np.asarray(W_out, dtype=np.float64)
    W_in = np.asarray(W_in, dtype=np.float64)
    if W_out.shape != W_in.shape:
        raise ValueError(f"W_out and W_in must have the same shape, got {W_out.shape} and {W_in.shape}")
    pair = noise if isinstance(noise, tuple) else (noise, noise)
    if len(pair) != 2:
        raise ValueError(f"noise must be one noise or a (noise_out, noise_in) pair, got {len(pair)} items")
    noise_out, noise_in = as_noise(pair[0]), as_noise(pair[1])
    dist = make_distinguisher(distinguisher, W_out=W_out, W_in=W_in, canary_words=canary_words,
                              canary_weights=canary_weights)
    if batch_size is None:
        batch_size = max(1, min(n_trials, _BATCH_ELEMENTS // max(1, W_out.size)))
    batch_size = check_int(batch_size, "batch_size", low=1)
    ss, info = _seeds(random_state)
    s_out, s_in, s_split = ss.spawn(3)
    scores_out = _noise_scores(W_out, noise_out, dist, np.random.default_rng(s_out), n_trials, batch_size)
    scores_in = _noise_scores(W_in, noise_in, dist, np.random.default_rng(s_in), n_trials, batch_size)
    info.update(details or {})
    info["distance"] = float(np.linalg.norm(W_in - W_out))
    return _result((scores_out, scores_in), s_split, dist, info, epsilon, delta, confidence, selection, n_trials,
                   mechanism or str(getattr(noise_out, "name", "output-perturbation")), canary)


def _result(scores, s_split, dist, info: dict, epsilon, delta: float, confidence: float, selection: str,
            n_trials: int, mechanism: str, canary) -> AuditResult:
    """The bound from the two sides' scores (held-out split seeded by ``s_split``), as an :class:`AuditResult`."""
    bound = epsilon_bound(scores[0], scores[1], delta, confidence, selection=selection,
                          random_state=np.random.default_rng(s_split))
    return AuditResult(bound, epsilon=epsilon, n_trials=n_trials, distinguisher=getattr(dist, "name", type(dist).__name__),
                       mechanism=mechanism, canary=canary, details=info)


def _pipeline_scores(release, dataset, seeds, distinguisher) -> np.ndarray:
    out = np.empty(len(seeds))
    for i, seed in enumerate(seeds):
        M = np.asarray(release(dataset, np.random.default_rng(seed)), dtype=np.float64)
        out[i] = distinguisher.score(M[None])[0]
    return out


def audit_pipeline(release: Callable[[Any, np.random.Generator], np.ndarray], D_out, D_in, *, distinguisher,
                   n_trials: int = 1000, canary_words=None, canary_weights=None, reference: tuple | None = None,
                   epsilon: float | None = None, delta: float = 1e-5, confidence: float = 0.95,
                   selection: str = "held-out", random_state=None, n_jobs: int = 1, mechanism: str = "pipeline",
                   canary: str | None = None, details: dict | None = None) -> AuditResult:
    """Audit a mechanism that reruns end to end: ``release(dataset, rng) -> released matrix``.

    Each trial has its own seed spawned from ``random_state``, so the result does not depend on ``n_jobs``;
    trials run in chunks through :class:`joblib.Parallel` (with loky, ``release``, the datasets and the
    distinguisher must be picklable). ``"projection"`` needs ``reference=(f(D), f(D'))``. Other parameters as
    :func:`audit_output_perturbation`.
    """
    from joblib import Parallel, delayed

    n_trials, epsilon, delta = _check_common(n_trials, epsilon, delta)
    n_jobs = check_int(n_jobs, "n_jobs", low=-1)
    W_out, W_in = (None, None) if reference is None else reference
    dist = make_distinguisher(distinguisher, W_out=W_out, W_in=W_in, canary_words=canary_words,
                              canary_weights=canary_weights)
    ss, info = _seeds(random_state)
    s_out, s_in, s_split = ss.spawn(3)
    n_chunks = 1 if n_jobs == 1 else 4 * (n_jobs if n_jobs > 0 else 8)
    size = max(1, math.ceil(n_trials / n_chunks))  # trials per chunk
    scores = {}
    for side, data, s in (("out", D_out, s_out), ("in", D_in, s_in)):
        seeds = s.spawn(n_trials)
        chunks = [seeds[i : i + size] for i in range(0, n_trials, size)]
        parts = Parallel(n_jobs=n_jobs)(delayed(_pipeline_scores)(release, data, c, dist) for c in chunks)
        scores[side] = np.concatenate(parts)
    info.update(details or {})
    return _result((scores["out"], scores["in"]), s_split, dist, info, epsilon, delta, confidence, selection, n_trials,
                   mechanism, canary)


@dataclass
class AuditSetup:
    """What to audit (built by :mod:`topicdp.audit.setups`): the claim and either ``W_out``, ``W_in`` and ``noise``
    (output perturbation; ``noise`` may be a per-side pair) or ``release``, ``D_out``, ``D_in`` (rerun per trial;
    ``reference=(f(D), f(D'))`` for the projection distinguisher).
    """

    mechanism: str
    epsilon: float
    delta: float
    canary: CanaryPair | None = None
    W_out: np.ndarray | None = None
    W_in: np.ndarray | None = None
    noise: Any = None
    release: Callable | None = None
    D_out: Any = None
    D_in: Any = None
    reference: tuple | None = None
    details: dict = field(default_factory=dict)


def cli_field(default, help: str, **metadata):
    """A dataclass field whose metadata carries the CLI help (and ``choices``, ``type``, ``group``, the range)."""
    return field(default=default, metadata={"help": help, **metadata})


@dataclass(frozen=True)
class AuditOptions:
    """How to audit a setup; the defaults here are their only statement (the CLI reads them). ``seed`` None draws
    the noise from the operating system (its entropy is recorded); ``n_jobs`` parallelises pipeline trials."""

    n_trials: int = cli_field(20_000, "releases per dataset", flags=("--trials",), low=1)
    distinguisher: str = cli_field("projection", "test statistic", choices=DISTINGUISHERS)
    confidence: float = cli_field(0.95, "Clopper-Pearson confidence", low=0.0, high=1.0)
    selection: str = cli_field("held-out", "threshold selection: held-out (exact confidence) or same-sample "
                               "(exploratory, no confidence)", choices=SELECTIONS)
    seed: int | None = cli_field(None, "noise seed of the audited releases, as --seed everywhere (None: from the "
                                 "OS, recorded)", type=int, low=0)
    n_jobs: int = cli_field(1, "parallel workers (pipeline trials, sensitivity sampling)", low=-1)

    def __post_init__(self) -> None:
        check_fields(self)


def check_fields(options) -> None:
    """Check each field of an options dataclass by its metadata: one of its ``choices``, or an int or float in its
    ``low``/``high`` range (``low_open``); a None default allows None."""
    for f in fields(options):
        value, meta = getattr(options, f.name), f.metadata
        if value is None and f.default is None:
            continue
        if "choices" in meta:
            check_option(value, f.name, meta["choices"])
        elif "low" in meta:
            bounds = {k: meta[k] for k in ("low", "high", "low_open") if k in meta}
            (check_int if meta.get("type", type(f.default)) is int else check_real)(value, f.name, **bounds)


def run_audit(setup: AuditSetup, options: AuditOptions | None = None) -> AuditResult:
    """Run the audit described by ``setup`` with ``options`` (default :class:`AuditOptions()`)."""
    options = AuditOptions() if options is None else options
    canary = setup.canary
    common: dict[str, Any] = dict(  # the keyword arguments both audits share, each typed at its parameter
        n_trials=options.n_trials,
        distinguisher=options.distinguisher,
        canary_words=None if canary is None else canary.canary_words,
        canary_weights=None if canary is None else canary.canary_weights,
        epsilon=setup.epsilon,
        delta=setup.delta,
        confidence=options.confidence,
        selection=options.selection,
        random_state=options.seed,
        mechanism=setup.mechanism,
        canary=None if canary is None else canary.name,
        details={**setup.details, **({} if canary is None else {"canary_info": canary.to_dict()})},
    )
    if setup.release is not None:
        return audit_pipeline(setup.release, setup.D_out, setup.D_in, reference=setup.reference,
                              n_jobs=options.n_jobs, **common)
    if setup.W_out is None or setup.W_in is None or setup.noise is None:
        raise ValueError("an AuditSetup needs W_out, W_in and noise, or release, D_out and D_in")
    return audit_output_perturbation(setup.W_out, setup.W_in, setup.noise, **common)
