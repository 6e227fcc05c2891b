"""Sensitivity sampling: Lambert-W sizing, neighbour distributions P, and the parallel sampler."""

from .neighbours import PrivateResample, PublicReference
from .sampler import PRIVATE_ORACLE, SensitivitySample, SensitivitySampling, sample_sensitivity
from .sizing import SIZINGS, optimal_rho, sample_size


def __getattr__(name):  # the Dask path imports dask only when asked for
    if name == "sample_sensitivity_on_cluster":
        from .cluster import sample_sensitivity_on_cluster

        return sample_sensitivity_on_cluster
    raise AttributeError(f"module 'topicdp.samplers' has no attribute {name!r}")

__all__ = [
    "SIZINGS", "sample_size", "optimal_rho", "PrivateResample", "PublicReference", "PRIVATE_ORACLE",
    "SensitivitySample", "SensitivitySampling", "sample_sensitivity", "sample_sensitivity_on_cluster"
]
