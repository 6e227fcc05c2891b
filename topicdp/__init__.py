"""topicdp: differentially private topic models.

:func:`release` is the one release path (:mod:`topicdp.pipeline`: a plan from public facts, the DP count, the
forecast and a refusal before the topics' budget is spent), with the options of ``topicdp privatize``. The
private estimators run it with their mechanism fixed (:mod:`topicdp.estimators`): :class:`DPVariationalLDA`
(``dp-vem``, (epsilon, delta)-DP, the default on real text), :class:`SpectralDP` (DeCarolis et al. 2020,
(epsilon, delta)-DP) and :class:`DPSVI` (Park et al. 2016, document level). :class:`TopicDP` (Wang et al., KDD
2022) perturbs any model's output, calibrated to a *sampled* sensitivity (random DP with respect to the sampling
distribution, not DP) or to the global bound sqrt(2K) (DP); it has no plan of its own. The algorithms without
noise: :class:`~topicdp.variational.VariationalLDA`, :class:`~topicdp.spectral.SpectralLDA`, :class:`SVILDA`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it. Everything is imported on first use (PEP 562), so that
#: ``import topicdp`` and the ``topicdp`` command's ``--help`` do not load numpy, scipy or gensim.
_LAZY = {
    "TopicDP": ".agnostic",
    "SpectralDP": ".estimators",
    "SpectralLDA": ".spectral",
    "DPSVI": ".estimators",
    "SVILDA": ".baselines",
    "VariationalLDA": ".variational",
    "DPVariationalLDA": ".estimators",
    "Corpus": ".corpus",
    "embedded_corpus": ".corpus",
    "PrivateRelease": ".private_release",
    "PrivacyReport": ".report",
    "PrivacyLedger": ".rdp",
    "BudgetExceededError": ".rdp",
    "RepeatedReleaseWarning": "._repeats",
    "CallableModel": ".adapters",
    "GensimLDA": ".adapters",
    "GensimHDP": ".adapters",
    "GensimLSI": ".adapters",
    "SklearnLDA": ".adapters",
    "SklearnNMF": ".adapters",
    "make_model": ".adapters",
    "release": ".pipeline.options",
}

__all__ = list(_LAZY)

if TYPE_CHECKING:  # static checkers see the real names (``X as X``: a re-export)
    from .adapters import CallableModel as CallableModel
    from .adapters import GensimHDP as GensimHDP
    from .adapters import GensimLDA as GensimLDA
    from .adapters import GensimLSI as GensimLSI
    from .adapters import SklearnLDA as SklearnLDA
    from .adapters import SklearnNMF as SklearnNMF
    from .adapters import make_model as make_model
    from .agnostic import TopicDP as TopicDP
    from .baselines import SVILDA as SVILDA
    from .corpus import Corpus as Corpus
    from .corpus import embedded_corpus as embedded_corpus
    from .estimators import DPSVI as DPSVI
    from .estimators import DPVariationalLDA as DPVariationalLDA
    from .estimators import SpectralDP as SpectralDP
    from .pipeline.options import release as release
    from .private_release import PrivateRelease as PrivateRelease
    from .rdp import BudgetExceededError as BudgetExceededError
    from .rdp import PrivacyLedger as PrivacyLedger
    from ._repeats import RepeatedReleaseWarning as RepeatedReleaseWarning
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
