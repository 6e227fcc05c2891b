"""Batched output-perturbation noise for audits, ``noise(W, rng, n) -> (n, *W.shape)`` releases of ``W = f(D)``
(post-processing inside, so the audit measures the released object), and the exact privacy of the Gaussian
mechanism, kept here so that the auditor does not depend on the calibration code it audits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from .._validation import check_real
from ..mechanisms.secure_noise import secure_gaussian


@dataclass
class GaussianNoise:
    """``W + sigma * N(0, I)`` with numpy's (floating-point) sampler."""

    sigma: float
    name: str = "gaussian"

    def __post_init__(self) -> None:
        self.sigma = check_real(self.sigma, "sigma", low=0.0)

    def __call__(self, W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return W + self.sigma * rng.standard_normal((n,) + W.shape)


@dataclass
class DiscreteGaussianNoise:
    """The secure sampler (:func:`topicdp.mechanisms.secure_noise.secure_gaussian`), seeded from ``rng``."""

    sigma: float
    sensitivity: float
    tolerance: float = 0.01
    name: str = "discrete-gaussian"

    def __call__(self, W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return secure_gaussian(np.broadcast_to(W, (n,) + W.shape), self.sigma, sensitivity=self.sensitivity,
                               n_changed=W.size, tolerance=self.tolerance, random_state=rng).values


def per_draw(release: Callable[[np.ndarray, np.random.Generator], np.ndarray], name: str = "custom") -> Callable:
    """Turn a one-release callable ``release(W, rng) -> noisy W`` into a batched noise function (a loop)."""

    def batched(W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.stack([release(W, rng) for _ in range(n)])

    batched.name = name  # type: ignore[attr-defined]
    return batched


def as_noise(noise) -> Callable:
    """A float is a Gaussian sigma; a callable is used as it is."""
    return noise if callable(noise) else GaussianNoise(noise)


def exact_delta(mu: float, epsilon: float) -> float:
    """delta(eps) of the Gaussian mechanism with mu = Delta / sigma (Balle & Wang 2018, Thm. 8).

        delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
    """
    a = math.exp(log_ndtr(mu / 2 - epsilon / mu))
    b = math.exp(epsilon + log_ndtr(-mu / 2 - epsilon / mu))
    return max(a - b, 0.0)


def exact_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon of the Gaussian mechanism at ``delta``: smallest eps with delta(eps) <= delta."""
    mu = check_real(mu, "mu", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    if exact_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while exact_delta(mu, hi) > delta:
        hi *= 2.0
    return brentq(lambda e: exact_delta(mu, e) - delta, 0.0, hi, xtol=1e-12)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma giving (epsilon, delta)-DP (analytic Gaussian mechanism, Balle & Wang 2018, Thm. 8)."""
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    hi = 1.0
    while exact_delta(hi, epsilon) < delta:
        hi *= 2.0
    mu = brentq(lambda m: exact_delta(m, epsilon) - delta, 1e-12, hi, xtol=1e-14)
    return sensitivity / mu * (1 + 1e-12)
