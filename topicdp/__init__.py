"""topicdp: differentially private topic models.

Two roads to a private topic-word matrix:

* :class:`TopicDP` — model-agnostic output perturbation (Wang et al., KDD 2022): any model, Gaussian
  noise calibrated to a *sampled* sensitivity. Guarantee: (epsilon, delta, gamma)-random DP with respect
  to the sampling distribution — not DP.
* :class:`~topicdp.spectral.SpectralDP` — spectral method-of-moments LDA with provable sensitivities
  (DeCarolis et al., ICML 2020). Guarantee: (epsilon, delta)-DP.
"""

from .adapters import CallableModel, GensimHDP, GensimLDA, GensimLSI, SklearnLDA, SklearnNMF, make_model
from .agnostic import TopicDP
from .corpus import Corpus, embedded_corpus
from .rdp import BudgetExceededError, PrivacyLedger
from .release import PrivateRelease
from .report import PrivacyReport

__version__ = "0.1.0"

__all__ = [
    "TopicDP",
    "SpectralDP",
    "SpectralLDA",
    "DPSVI",
    "SVILDA",
    "Corpus",
    "embedded_corpus",
    "PrivateRelease",
    "PrivacyReport",
    "PrivacyLedger",
    "BudgetExceededError",
    "CallableModel",
    "GensimLDA",
    "GensimHDP",
    "GensimLSI",
    "SklearnLDA",
    "SklearnNMF",
    "make_model",
]


def __getattr__(name):  # the spectral backend and the baselines are imported on first use
    if name in ("SpectralDP", "SpectralLDA"):
        from . import spectral

        return getattr(spectral, name)
    if name in ("DPSVI", "SVILDA"):
        from . import baselines

        return getattr(baselines, name)
    raise AttributeError(f"module 'topicdp' has no attribute {name!r}")
