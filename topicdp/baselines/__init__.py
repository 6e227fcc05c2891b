"""Baselines that every comparison keeps: DP stochastic variational inference (Park et al. 2016).

The MVG output-perturbation baseline lives in :mod:`topicdp.mechanisms.mvg`.
"""

from .accounting import (SamplingScheme, accountant_epsilon, calibrate_noise_multiplier, make_scheme, paper_epsilon,
                         paper_noise_multiplier)
from .dpsvi import DPStochasticVI, SVILDA
from .sensitivity import cap_document_lengths, sstats_sensitivity

__all__ = [
    "DPStochasticVI", "SVILDA", "SamplingScheme", "make_scheme", "accountant_epsilon", "calibrate_noise_multiplier",
    "paper_epsilon", "paper_noise_multiplier", "sstats_sensitivity", "cap_document_lengths"
]
