"""Audit runners: draw releases on D and D', score them, and bound epsilon from below.

* :func:`audit_output_perturbation` — f(D) and f(D') are computed once; only the noise is re-drawn, in
  batches, so 10^4-10^5 trials are cheap.
* :func:`audit_pipeline` — the whole randomized pipeline (e.g. a spectral configuration, whose noise
  enters mid-computation) reruns per trial, in parallel with joblib; for small corpora.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..report import _jsonable

from .._validation import check_int, check_real
from .bounds import EpsilonBound, epsilon_bound
from .distinguishers import make_distinguisher
from .noise import as_noise

_BATCH_ELEMENTS = 2**22  # ~32 MB of float64 per batch of releases


@dataclass
class AuditResult:
    """What an audit found.

    Attributes
    ----------
    eps_lower : float
        Empirical lower bound on epsilon at ``delta`` (see :func:`topicdp.audit.epsilon_lower_bound`).
    epsilon : float or None
        The claimed epsilon (None if no claim was given).
    delta, confidence : float
    n_trials : int
        Releases drawn on each of D and D'.
    distinguisher, mechanism, canary : str
    selection : {"held-out", "same-sample"}
    threshold, direction, inequality : the best test (see :class:`~topicdp.audit.bounds.EpsilonBound`)
    fpr, fnr, fpr_hi, fnr_hi : float
        Empirical rates of the best test and their Clopper-Pearson upper bounds.
    curve_fpr, curve_fnr : ndarray
        Empirical trade-off points (for :func:`topicdp.audit.plot_tradeoff`).
    details : dict
        Seeds, sigma, sensitivity, canary description, timings...
    """

    eps_lower: float
    epsilon: float | None
    delta: float
    confidence: float
    n_trials: int
    distinguisher: str
    mechanism: str
    canary: str | None
    selection: str
    threshold: float
    direction: str
    inequality: str
    fpr: float
    fnr: float
    fpr_hi: float
    fnr_hi: float
    curve_fpr: np.ndarray
    curve_fnr: np.ndarray
    details: dict = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        """True when the audit refutes the claim: ``eps_lower > epsilon``."""
        return self.epsilon is not None and self.eps_lower > self.epsilon

    @classmethod
    def from_bound(cls, bound: EpsilonBound, *, epsilon, n_trials, distinguisher, mechanism, canary, details):
        return cls(
            eps_lower=bound.eps_lower,
            epsilon=epsilon,
            delta=bound.delta,
            confidence=bound.confidence,
            n_trials=n_trials,
            distinguisher=distinguisher,
            mechanism=mechanism,
            canary=canary,
            selection=bound.selection,
            threshold=bound.threshold,
            direction=bound.direction,
            inequality=bound.inequality,
            fpr=bound.fpr,
            fnr=bound.fnr,
            fpr_hi=bound.fpr_hi,
            fnr_hi=bound.fnr_hi,
            curve_fpr=bound.curve_fpr,
            curve_fnr=bound.curve_fnr,
            details=details,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (arrays become lists, non-finite floats strings)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["flagged"] = self.flagged
        return _jsonable(out)

    def summary(self) -> str:
        claim = "n/a" if self.epsilon is None else f"{self.epsilon:.4g}"
        verdict = "FLAGGED: eps_lower > claimed epsilon" if self.flagged else "not flagged"
        return "\n".join(
            [
                f"mechanism        {self.mechanism}",
                f"canary           {self.canary}",
                f"distinguisher    {self.distinguisher}",
                f"trials           {self.n_trials} per dataset",
                f"claimed          epsilon={claim}, delta={self.delta:.3g}",
                f"audited          eps_lower={self.eps_lower:.4g} "
                + (f"at {self.confidence:.0%} confidence (held-out test)" if self.selection == "held-out"
                   else "(same-sample test: exploratory, no confidence statement)"),
                f"best test        score {self.direction} {self.threshold:.6g}: FPR={self.fpr:.4g} "
                f"(<= {self.fpr_hi:.4g}), FNR={self.fnr:.4g} (<= {self.fnr_hi:.4g})",
                f"verdict          {verdict}",
            ]
        )


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


def audit_output_perturbation(
    W_out,
    W_in,
    noise,
    *,
    n_trials: int = 10_000,
    distinguisher="projection",
    canary_words=None,
    canary_weights=None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    confidence: float = 0.95,
    selection: str = "held-out",
    random_state=None,
    batch_size: int | None = None,
    mechanism: str | None = None,
    canary: str | None = None,
    details: dict | None = None,
) -> AuditResult:
    """Audit an output-perturbation mechanism: f(D), f(D') fixed, noise re-drawn ``n_trials`` times each.

    Parameters
    ----------
    W_out, W_in : ndarray
        ``f(D)`` and ``f(D')``, computed once.
    noise : float, callable, or a pair of them
        A float is a Gaussian sigma; otherwise ``noise(W, rng, n) -> (n, *W.shape)`` releases (see
        :mod:`topicdp.audit.noise`: ``GaussianNoise``, ``LaplaceNoise``, ``DiscreteGaussianNoise``,
        ``per_draw``). A pair ``(noise_out, noise_in)`` gives each dataset its own mechanism — needed when
        the noise scale is itself computed from the data (e.g. a sensitivity sampled from the private
        corpus, so sigma(D) != sigma(D')): the audit must then run each side as the mechanism would.
    n_trials : int
        Releases per dataset.
    distinguisher : {"projection", "canary-words"} or object with ``score(releases) -> scores``
    canary_words, canary_weights : array, optional
        Vocabulary indices (and weights) for the canary-word distinguisher.
    epsilon, delta : float
        The claim being audited (``epsilon`` may be None: just measure).
    confidence : float
        See :func:`topicdp.audit.epsilon_lower_bound`.
    selection : {"held-out", "same-sample"}
        Threshold selection (see :func:`topicdp.audit.epsilon_lower_bound`): only ``"held-out"`` (the default)
        carries the confidence statement.
    random_state : None, int or SeedSequence
        Seeds the noise of both sides (independent streams) and the held-out split; the entropy is stored
        in ``details["seed_entropy"]``.
    batch_size : int, optional
        Releases per batch (default: ~32 MB of float64).
    mechanism, canary : str, optional
        Labels for the result.
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
    dist = make_distinguisher(
        distinguisher, W_out=W_out, W_in=W_in, canary_words=canary_words, canary_weights=canary_weights
    )
    if batch_size is None:
        batch_size = max(1, min(n_trials, _BATCH_ELEMENTS // max(1, W_out.size)))
    batch_size = check_int(batch_size, "batch_size", low=1)
    ss, info = _seeds(random_state)
    s_out, s_in, s_split = ss.spawn(3)
    scores_out = _noise_scores(W_out, noise_out, dist, np.random.default_rng(s_out), n_trials, batch_size)
    scores_in = _noise_scores(W_in, noise_in, dist, np.random.default_rng(s_in), n_trials, batch_size)
    split_rng = np.random.default_rng(s_split)
    bound = epsilon_bound(scores_out, scores_in, delta, confidence, selection=selection, random_state=split_rng)
    info.update(details or {})
    info["distance"] = float(np.linalg.norm(W_in - W_out))
    return AuditResult.from_bound(
        bound,
        epsilon=epsilon,
        n_trials=n_trials,
        distinguisher=getattr(dist, "name", type(dist).__name__),
        mechanism=mechanism or getattr(noise_out, "name", "output-perturbation"),
        canary=canary,
        details=info,
    )


def _pipeline_scores(release, dataset, seeds, distinguisher) -> np.ndarray:
    out = np.empty(len(seeds))
    for i, seed in enumerate(seeds):
        M = np.asarray(release(dataset, np.random.default_rng(seed)), dtype=np.float64)
        out[i] = distinguisher.score(M[None])[0]
    return out


def _chunks(items: list, n_chunks: int) -> list:
    size = max(1, math.ceil(len(items) / n_chunks))
    return [items[i : i + size] for i in range(0, len(items), size)]


def audit_pipeline(
    release: Callable[[Any, np.random.Generator], np.ndarray],
    D_out,
    D_in,
    *,
    distinguisher,
    n_trials: int = 1000,
    canary_words=None,
    canary_weights=None,
    reference: tuple | None = None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    confidence: float = 0.95,
    selection: str = "held-out",
    random_state=None,
    n_jobs: int = 1,
    mechanism: str = "pipeline",
    canary: str | None = None,
    details: dict | None = None,
) -> AuditResult:
    """Audit a mechanism that must rerun end to end: ``release(dataset, rng) -> released matrix``.

    Each trial gets its own seed (spawned from ``random_state``), so the result does not depend on
    ``n_jobs``. Trials run in chunks through :class:`joblib.Parallel` (``n_jobs=-1``: all cores; with the
    loky backend ``release``, the datasets and the distinguisher must be picklable — module-level functions
    or dataclasses, not lambdas).

    Parameters
    ----------
    release : callable
        The randomized mechanism under audit, on one dataset.
    D_out, D_in : any
        The neighbouring datasets (e.g. a :class:`~topicdp.audit.canaries.CanaryPair`'s D, D_prime, or
        corpora built from them).
    distinguisher : {"projection", "canary-words"} or object with ``score``
        ``"projection"`` needs ``reference=(f(D), f(D'))``, the non-private outputs.
    Other parameters as :func:`audit_output_perturbation`.
    """
    from joblib import Parallel, delayed

    n_trials, epsilon, delta = _check_common(n_trials, epsilon, delta)
    n_jobs = check_int(n_jobs, "n_jobs", low=-1)
    W_out, W_in = (None, None) if reference is None else reference
    dist = make_distinguisher(
        distinguisher, W_out=W_out, W_in=W_in, canary_words=canary_words, canary_weights=canary_weights
    )
    ss, info = _seeds(random_state)
    s_out, s_in, s_split = ss.spawn(3)
    n_chunks = 1 if n_jobs == 1 else 4 * (n_jobs if n_jobs > 0 else 8)
    scores = {}
    for side, data, s in (("out", D_out, s_out), ("in", D_in, s_in)):
        chunks = _chunks(s.spawn(n_trials), n_chunks)
        parts = Parallel(n_jobs=n_jobs)(delayed(_pipeline_scores)(release, data, c, dist) for c in chunks)
        scores[side] = np.concatenate(parts)
    split_rng = np.random.default_rng(s_split)
    bound = epsilon_bound(scores["out"], scores["in"], delta, confidence, selection=selection, random_state=split_rng)
    info.update(details or {})
    return AuditResult.from_bound(
        bound,
        epsilon=epsilon,
        n_trials=n_trials,
        distinguisher=getattr(dist, "name", type(dist).__name__),
        mechanism=mechanism,
        canary=canary,
        details=info,
    )
