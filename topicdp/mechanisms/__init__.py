"""Mechanisms that release a topic-word matrix, and post-processing."""

from .output_perturbation import (check_row_stochastic, gaussian_perturbation, laplace_perturbation,
                                  simplex_l1_sensitivity, simplex_l2_sensitivity)
from .postprocess import to_simplex, top_words
from .mvg import mvg_release
from .secure_noise import SecureRelease, secure_gaussian, secure_laplace

__all__ = [
    "gaussian_perturbation", "laplace_perturbation", "simplex_l1_sensitivity", "simplex_l2_sensitivity",
    "check_row_stochastic", "to_simplex", "top_words", "mvg_release", "secure_gaussian", "secure_laplace",
    "SecureRelease"
]
