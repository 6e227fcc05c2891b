"""topicdp: differentially private topic models.

:func:`release` is the one release path (:mod:`topicdp.pipeline`: a plan from public facts, the DP count, the
forecast and a refusal before the topics' budget is spent); the private estimators run it with their mechanism fixed:
:class:`DPVariationalLDA` (``dp-vem``, the default on real text), :class:`SpectralDP` (DeCarolis et al. 2020) and
:class:`DPSVI` (Park et al. 2016, document level), all (epsilon, delta)-DP. :class:`TopicDP` (Wang et al., KDD 2022)
perturbs any model's output, calibrated to a *sampled* sensitivity (random DP with respect to the sampling
distribution, not DP) or to the global bound sqrt(2K) (DP), with no plan of its own. Without noise:
:class:`~topicdp.variational.VariationalLDA`, :class:`~topicdp.spectral.SpectralLDA`, :class:`SVILDA`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: module -> the public names it defines. Everything is imported on first use (PEP 562), so that ``import topicdp``
#: and the ``topicdp`` command's ``--help`` do not load numpy, scipy or gensim.
_MODULES = {
    ".agnostic": ("TopicDP",),
    ".estimators": ("SpectralDP", "DPSVI", "DPVariationalLDA"),
    ".spectral": ("SpectralLDA",),
    ".baselines": ("SVILDA",),
    ".variational": ("VariationalLDA",),
    ".corpus": ("Corpus", "embedded_corpus"),
    ".private_release": ("PrivateRelease",),
    ".report": ("PrivacyReport",),
    ".rdp": ("PrivacyLedger", "BudgetExceededError"),
    "._repeats": ("RepeatedReleaseWarning",),
    ".adapters": ("CallableModel", "GensimLDA", "GensimHDP", "GensimLSI", "SklearnLDA", "SklearnNMF", "make_model"),
    ".pipeline.options": ("release",),
}
#: public name -> the module that defines it
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = list(_LAZY)

if TYPE_CHECKING:  # static checkers see the real names (``X as X``: a re-export)
    from ._repeats import RepeatedReleaseWarning as RepeatedReleaseWarning
    from .adapters import (CallableModel as CallableModel, GensimHDP as GensimHDP, GensimLDA as GensimLDA,
                           GensimLSI as GensimLSI, SklearnLDA as SklearnLDA, SklearnNMF as SklearnNMF,
                           make_model as make_model)
    from .agnostic import TopicDP as TopicDP
    from .baselines import SVILDA as SVILDA
    from .corpus import Corpus as Corpus, embedded_corpus as embedded_corpus
    from .estimators import DPSVI as DPSVI, DPVariationalLDA as DPVariationalLDA, SpectralDP as SpectralDP
    from .pipeline.options import release as release
    from .private_release import PrivateRelease as PrivateRelease
    from .rdp import BudgetExceededError as BudgetExceededError, PrivacyLedger as PrivacyLedger
    from .report import PrivacyReport as PrivacyReport
    from .spectral import SpectralLDA as SpectralLDA
    from .variational import VariationalLDA as VariationalLDA


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    raise AttributeError(f"module 'topicdp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
