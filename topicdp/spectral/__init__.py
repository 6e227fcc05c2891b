"""The principled spectral backend: method-of-moments LDA and its differentially private configurations.

Follows DeCarolis, Ram, Esmaeili, Wang & Huang, *An end-to-end differentially private LDA using a
spectral algorithm* (ICML 2020; ``../shared/papers/000_*``), with the corrections documented in each
module (see also :mod:`.sensitivity`).

Public API
----------
:class:`SpectralLDA`
    Non-private spectral LDA (``topic_word_``, ``alpha_``).
:class:`SpectralDP`
    The same with noise at one of the four configurations (``report_`` is a PrivacyReport).
:func:`recommend_configuration`
    Which configuration to use for (N, d, k, alpha0), and why.
"""

from .estimator import SpectralLDA

__all__ = ["SpectralLDA"]
from .private import PreconditionError, SpectralDP, group_privacy  # noqa: E402

__all__ += ["SpectralDP", "PreconditionError", "group_privacy"]
from .recommend import Recommendation, recommend_configuration  # noqa: E402

__all__ += ["Recommendation", "recommend_configuration"]
