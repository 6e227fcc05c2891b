"""Empirical privacy auditing: lower-bound the epsilon a mechanism actually provides.

Run a mechanism many times on a corpus D and on its neighbour D' (a canary added or substituted), score each
release with a distinguisher, and turn the error rates into an epsilon lower bound at the claimed delta with
Clopper-Pearson intervals (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021).

``eps_lower > epsilon`` ("flagged") refutes the claim for that canary at the stated confidence: the mechanism,
its sensitivity or its calibration is wrong, or the claim does not cover the pair. The last is expected for
random DP (a sampled sensitivity): a user outside the sampling distribution P is not covered. ``eps_lower <=
epsilon`` is no proof of privacy (one canary, one distinguisher, finitely many trials). With the projection
distinguisher and Gaussian output perturbation the bound is tight in the limit (Neyman-Pearson).
"""

from .bounds import EpsilonBound, clopper_pearson_upper, epsilon_bound, epsilon_lower_bound
from .canaries import (CanaryPair, CorpusData, as_corpus_data, long_document_canary, make_canary, outlier_user_canary,
                       typical_user_canary)
from .distinguishers import CanaryWordDistinguisher, ProjectionDistinguisher, make_distinguisher
from .noise import DiscreteGaussianNoise, GaussianNoise, analytic_sigma, exact_delta, exact_epsilon, per_draw
from .plot import dp_region_boundary, plot_tradeoff
from .runner import AuditOptions, AuditResult, AuditSetup, audit_output_perturbation, audit_pipeline, run_audit
from .setups import SETUPS, SetupOptions, register_setup

__all__ = [
    "epsilon_lower_bound", "epsilon_bound", "EpsilonBound", "clopper_pearson_upper", "AuditResult",
    "audit_output_perturbation", "audit_pipeline", "AuditSetup", "AuditOptions", "run_audit", "SetupOptions", "SETUPS",
    "register_setup", "CorpusData", "CanaryPair", "as_corpus_data", "typical_user_canary", "outlier_user_canary",
    "long_document_canary", "make_canary", "ProjectionDistinguisher", "CanaryWordDistinguisher", "make_distinguisher",
    "GaussianNoise", "DiscreteGaussianNoise", "per_draw", "plot_tradeoff", "dp_region_boundary",
    "analytic_sigma", "exact_delta", "exact_epsilon"
]
