"""The principled spectral backend: method-of-moments LDA and its differentially private configurations.

Follows DeCarolis, Ram, Esmaeili, Wang & Huang, *An end-to-end differentially private LDA using a
spectral algorithm* (ICML 2020; ``../shared/papers/000_*``), with the corrections documented in each
module (the paper's statements found wrong or loose are listed in :mod:`.moments` and :mod:`.sensitivity`).

Public API
----------
:class:`SpectralLDA`
    Non-private spectral LDA (``topic_word_``, ``alpha_``, ``n_short_documents_``).
:class:`DPSpectralMoments`
    The same with noise at configuration 1, 2, 3 or 4 (``report_`` is a :class:`topicdp.report.PrivacyReport`),
    at document level or at user level by per-user weighting (``unit="user"``), optionally whitening with a
    public reference corpus (``public_whitening=``).
:func:`recommend_configuration`
    Which configuration to use for (N, d, k, alpha0), and why.
:class:`PreconditionError`
    Raised when a configuration's precondition fails on released quantities.

Modules: :mod:`.moments` (M2 operator, whitened M3), :mod:`.whitening`, :mod:`.tensor` (power method,
Jennrich), :mod:`.recovery`, :mod:`.sensitivity`, :mod:`.noise`, :mod:`.procedure1`, :mod:`.accounting`,
:mod:`.configurations`, :mod:`.private`, :mod:`.recommend`.
"""

from .estimator import SpectralLDA
from .private import PreconditionError, DPSpectralMoments
from .recommend import Recommendation, recommend_configuration

__all__ = ["SpectralLDA", "DPSpectralMoments", "PreconditionError", "Recommendation",
           "recommend_configuration"]
