"""Batched output-perturbation noise for audits: ``noise(W, rng, n) -> (n, *W.shape)`` releases.

The auditor re-draws only the noise of an output-perturbation mechanism, so a mechanism is described by a
callable taking the exact matrix ``W = f(D)``, a numpy ``Generator`` and a batch size, and returning ``n``
independent releases. Any post-processing the mechanism applies belongs inside the callable: the audit
then measures the released object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

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
class LaplaceNoise:
    """``W + Laplace(0, scale)`` i.i.d. per entry."""

    scale: float
    name: str = "laplace"

    def __post_init__(self) -> None:
        self.scale = check_real(self.scale, "scale", low=0.0)

    def __call__(self, W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return W + rng.laplace(0.0, self.scale, size=(n,) + W.shape)


@dataclass
class DiscreteGaussianNoise:
    """The secure sampler (:func:`topicdp.mechanisms.secure_noise.secure_gaussian`), seeded from ``rng``."""

    sigma: float
    sensitivity: float
    tolerance: float = 0.01
    name: str = "discrete-gaussian"

    def __call__(self, W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        batch = np.broadcast_to(W, (n,) + W.shape)
        release = secure_gaussian(
            batch, self.sigma, sensitivity=self.sensitivity, n_changed=W.size, tolerance=self.tolerance,
            random_state=rng,
        )
        return release.values


def per_draw(release: Callable[[np.ndarray, np.random.Generator], np.ndarray], name: str = "custom") -> Callable:
    """Turn a one-release callable ``release(W, rng) -> noisy W`` into a batched noise function (a loop)."""

    def batched(W: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.stack([release(W, rng) for _ in range(n)])

    batched.name = name  # type: ignore[attr-defined]
    return batched


def as_noise(noise) -> Callable:
    """A float is a Gaussian sigma; a callable is used as it is."""
    if callable(noise):
        return noise
    return GaussianNoise(noise)
