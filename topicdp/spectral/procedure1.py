"""Procedure 1 / Lemma 8 of DeCarolis et al. 2020: private confidence bounds for data-dependent sensitivities.

A quantity q(D) with global sensitivity Delta (given everything released before) is released as
``q_hat = q + Lap(Delta/eps)``, which is (eps, 0)-DP, and turned into a one-sided bound that fails with
probability exactly delta:

    lower = q_hat - (Delta/eps) ln(1/(2 delta)),   P[lower > q] = P[Lap(1) > ln(1/(2 delta))] = delta.

(Procedure 1 as printed adds ``Lap(1/(N eps1))`` but subtracts ``2/(N eps1) ln(1/(2 delta1))``: with Lemma 9's
sensitivity 2/N the Laplace scale should be ``2/(N eps1)``, so the printed release is only (2 eps1)-DP;
and Lemma 9's 2/N is itself not the sensitivity -- see :mod:`.sensitivity`. We calibrate the scale to the
sensitivity we prove.)

A later release whose noise is calibrated to a local sensitivity computed from such a bound is
(eps_1 + eps, delta_1 + delta)-DP (Lemma 8). For the RDP total, the failure probability is added after the
conversion: on the event that the bound holds the pair of output distributions is that of the composed
Laplace and Gaussian mechanisms, so ``P[out in S | D] <= e^eps_rdp P[out in S | D'] + delta_rdp + delta_1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class PrivateBound:
    """A Laplace release and the confidence bound derived from it."""

    name: str
    noisy: float
    bound: float
    side: str
    sensitivity: float
    scale: float
    epsilon: float
    delta: float

    def as_dict(self) -> dict:
        return {"name": self.name, "noisy_value": self.noisy, "bound": self.bound, "side": self.side,
                "sensitivity": self.sensitivity, "laplace_scale": self.scale, "epsilon": self.epsilon,
                "failure_probability": self.delta}


def laplace_bound(name: str, value: float, sensitivity: float, epsilon: float, delta: float,
                  rng: np.random.Generator, side: str = "lower") -> PrivateBound:
    """(epsilon, 0)-DP release of ``value`` and a one-sided bound that fails with probability ``delta``."""
    if not (epsilon > 0 and 0 < delta < 0.5 and sensitivity > 0):
        raise ValueError("laplace_bound needs epsilon > 0, 0 < delta < 1/2 and sensitivity > 0")
    scale = sensitivity / epsilon
    noisy = float(value + rng.laplace(0.0, scale))
    margin = scale * math.log(1.0 / (2.0 * delta))
    bound = noisy - margin if side == "lower" else noisy + margin
    return PrivateBound(name, noisy, bound, side, sensitivity, scale, epsilon, delta)


def sigma_k_lower_bound(sigma_k: float, n_docs: int, alpha0: float, epsilon: float, delta: float,
                        rng: np.random.Generator) -> PrivateBound:
    """Procedure 1, line 1-2: (epsilon, 0)-DP lower bound of the k-th eigenvalue of M2_hat.

    Sensitivity ``Delta2_F = sqrt(2 + 4a^2)/N`` (Weyl: ``|lambda_k(A) - lambda_k(A + E)| <= ||E||_2 <= ||E||_F``,
    App. H.7's own argument, with the Frobenius bound of :func:`.sensitivity.delta_m2` in place of Lemma 9's 2/N). The configurations here whiten with
    a released M2, whose lambda_k is public, so they do not spend budget on this bound; it is provided
    for the paper's data-dependent calibrations and for checking a corpus before a release.
    """
    from .sensitivity import delta_m2

    return laplace_bound("sigma_k", sigma_k, delta_m2(n_docs, alpha0, norm="fro"), epsilon, delta, rng, side="lower")
