"""Procedure 1 / Lemma 8 of DeCarolis et al. 2020: private confidence bounds for data-dependent sensitivities.

A quantity of global sensitivity Delta (given everything released before) is released as ``q_hat = q +
Lap(Delta/eps)``, (eps, 0)-DP, and turned into a one-sided bound failing with probability exactly delta: ``lower =
q_hat - (Delta/eps) ln(1/(2 delta))``. (Procedure 1 as printed adds ``Lap(1/(N eps1))`` for a sensitivity of 2/N,
so it is only (2 eps1)-DP; the scale here is the proven sensitivity's, :mod:`.sensitivity`.) A later release at a
local sensitivity from such a bound is (eps_1 + eps, delta_1 + delta)-DP (Lemma 8); for the RDP total the failure
probability is added after the conversion.
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
