"""Sensitivity sampling: Lambert-W sizing, neighbour distributions P, and the parallel sampler."""

from .neighbours import PrivateResample, PublicReference
from .sampler import SensitivitySample, sample_sensitivity
from .sizing import optimal_rho, sample_size

__all__ = [
    "sample_size",
    "optimal_rho",
    "PrivateResample",
    "PublicReference",
    "SensitivitySample",
    "sample_sensitivity",
]
