"""Empirical privacy auditing: lower-bound the epsilon a mechanism actually provides.

Run a mechanism many times on a corpus D and on its neighbour D' (a canary added or substituted), score
each release with a distinguisher, and turn the false-positive/false-negative rates into an epsilon lower
bound at the claimed delta with Clopper-Pearson intervals (Jagielski, Ullman & Oprea 2020; Nasr et al.
2021). A lower bound above the claimed epsilon refutes the claim for that canary.

Reading an audit
----------------
* ``eps_lower > epsilon`` ("flagged") refutes the claim for this canary, at the stated confidence: the
  mechanism, its sensitivity or its calibration is wrong — or the claim does not cover this neighbour pair.
  The last case is expected for *random DP* (TopicDP with a sampled sensitivity): its guarantee holds only
  for neighbours drawn from the sampling distribution P, and an outlier user whose words no one else uses
  lies outside P. An audit that flags the outlier canary there shows exactly what the report's caveat says:
  such users are not protected at the stated epsilon.
* ``eps_lower <= epsilon`` is not a proof of privacy: it is a lower bound for one canary and one
  distinguisher with finitely many trials (at most about log(n_trials) can be certified).
* With the projection distinguisher and Gaussian output perturbation the audit is tight in the limit
  (Neyman-Pearson), so ``eps_lower`` approaches the true epsilon of that neighbour pair from below.

Main entry points
-----------------
epsilon_lower_bound(scores_out, scores_in, delta, confidence=0.95)
    The bound from two arrays of scores (usable on its own).
audit_output_perturbation / audit_pipeline
    Draw the releases and score them (noise-only re-draws, or full reruns in parallel).
SETUPS[name](SetupOptions(...)) -> AuditSetup;  run_audit(setup, AuditOptions(...)) -> AuditResult
    Ready-made setups (synthetic, TopicDP global/sampled, spectral configuration 1) with typed options.
typical_user_canary / outlier_user_canary / long_document_canary
    Neighbouring datasets from a (X, doc_users, vocabulary) corpus.
ProjectionDistinguisher / CanaryWordDistinguisher
    White-box (needs f) and black-box scores.
plot_tradeoff
    Empirical (FPR, FNR) against the (epsilon, delta)-DP region.
"""

from .bounds import EpsilonBound, clopper_pearson_upper, epsilon_bound, epsilon_lower_bound
from .canaries import (
    CanaryPair,
    CorpusData,
    as_corpus_data,
    long_document_canary,
    make_canary,
    outlier_user_canary,
    typical_user_canary,
)
from .distinguishers import CanaryWordDistinguisher, ProjectionDistinguisher, make_distinguisher
from .gaussian import analytic_sigma, gaussian_delta, gaussian_epsilon, gaussian_tradeoff
from .noise import DiscreteGaussianNoise, GaussianNoise, LaplaceNoise, per_draw
from .plot import dp_region_boundary, plot_tradeoff
from .runner import AuditOptions, AuditResult, AuditSetup, audit_output_perturbation, audit_pipeline, run_audit
from .setups import SETUPS, SetupOptions, register_setup

__all__ = [
    "epsilon_lower_bound",
    "epsilon_bound",
    "EpsilonBound",
    "clopper_pearson_upper",
    "AuditResult",
    "audit_output_perturbation",
    "audit_pipeline",
    "AuditSetup",
    "AuditOptions",
    "run_audit",
    "SetupOptions",
    "SETUPS",
    "register_setup",
    "CorpusData",
    "CanaryPair",
    "as_corpus_data",
    "typical_user_canary",
    "outlier_user_canary",
    "long_document_canary",
    "make_canary",
    "ProjectionDistinguisher",
    "CanaryWordDistinguisher",
    "make_distinguisher",
    "GaussianNoise",
    "LaplaceNoise",
    "DiscreteGaussianNoise",
    "per_draw",
    "plot_tradeoff",
    "dp_region_boundary",
    "analytic_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_tradeoff",
]
