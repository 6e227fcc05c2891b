"""Model adapters: each turns a model spec into f: Corpus -> K x V topic-word matrix (canonical order)."""

from __future__ import annotations

from .._names import MODELS  # registry name -> class name, stated once (importable without numpy)
from ..topics import canonical_order
from .base import TopicModelSpec
from .callable import CallableModel
from .gensim import GensimHDP, GensimLDA, GensimLDAMulticore, GensimLSI
from .sklearn import SklearnLDA, SklearnNMF
from .tomotopy import TomotopyLDA
from .variational import VariationalModel


def model_class(name: str) -> type[TopicModelSpec]:
    """The spec class of a registry name (see ``MODELS``)."""
    if name not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {name!r}")
    if name == "spectral":
        from .spectral import SpectralModel

        return SpectralModel
    return globals()[MODELS[name]]


def make_model(name: str, n_topics: int, random_state: int = 0, **params) -> TopicModelSpec:
    """The spec of a registry name (``MODELS``) with the class's keyword ``params``, as the CLI builds it (a value out
    of range is an ``InvalidParameterError`` when the spec is first used)."""
    return model_class(name)(n_topics, random_state, **params)


__all__ = [
    "TopicModelSpec",
    "canonical_order",
    "CallableModel",
    "GensimLDA",
    "GensimLDAMulticore",
    "GensimHDP",
    "GensimLSI",
    "SklearnLDA",
    "VariationalModel",
    "SklearnNMF",
    "TomotopyLDA",
    "MODELS",
    "make_model",
    "model_class",
]
