"""The principled spectral backend: method-of-moments LDA and its differentially private configurations.

Follows DeCarolis, Ram, Esmaeili, Wang & Huang, "An end-to-end differentially private LDA using a spectral
algorithm" (ICML 2020), with the corrections documented in :mod:`.moments` and :mod:`.sensitivity`.
:class:`SpectralLDA` is the non-private fit; :class:`DPSpectralMoments` adds noise at configuration 1-4 (document or
user level, optionally whitening with a public reference); :func:`recommend_configuration` says which to use;
:class:`PreconditionError` is raised when a configuration's precondition fails on released quantities.
"""

from .estimator import SpectralLDA
from .private import PreconditionError, DPSpectralMoments
from .recommend import Recommendation, recommend_configuration

__all__ = ["SpectralLDA", "DPSpectralMoments", "PreconditionError", "Recommendation",
           "recommend_configuration"]
