"""The names of the models, mechanisms and guarantees, and one line on each: the one place they are stated. Pure
Python, so the ``topicdp`` command builds its ``--help`` without numpy, scipy or gensim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class _Name(StrEnum):
    """A name the library and its users spell as a string: equal to it, and shown as it (in an estimator's repr)."""

    def __repr__(self) -> str:
        return repr(self.value)


class Unit(_Name):
    """Whose contribution a release protects."""

    USER = "user"
    DOCUMENT = "document"


class Neighbours(_Name):
    """The neighbour relation a guarantee is stated for: ``REPLACE_ONE``, one unit's data replaced by anything, the
    number of units public (stated by the owner); ``ADD_REMOVE``, one unit added or removed, the number private."""

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"


def neighbour_factor(neighbours: str) -> float:
    """The L2 sensitivity of a sum of nonnegative per-unit vectors of norm at most 1: 1 for add-remove, sqrt 2 for
    replace-one (``||x - y||^2 <= ||x||^2 + ||y||^2`` when ``x, y >= 0``)."""
    if neighbours not in (Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE):
        raise ValueError(f"neighbours must be 'add-remove' or 'replace-one', got {neighbours!r}")
    return 1.0 if neighbours == Neighbours.ADD_REMOVE else math.sqrt(2.0)


class Guarantee(_Name):
    """What a release road promises (the report's ``guarantee`` field spells the outcome: approx-DP, random-DP)."""

    DP = "dp"
    RANDOM_DP = "random-dp"


UNITS: tuple[str, ...] = tuple(Unit)
NEIGHBOURS: tuple[str, ...] = tuple(Neighbours)

# The defaults every private estimator and the release request share: one budget a data owner can read once.
#: epsilon of a release (the whole budget of the request; of the topics for an estimator called directly)
DEFAULT_EPSILON: float = 3.0
#: delta: below 1/N for the corpora this library targets (thousands to millions of units), as DP requires
DEFAULT_DELTA: float = 1e-6
#: the privacy unit: a person, whose documents are correlated, not one of their documents
DEFAULT_UNIT: str = Unit.USER.value  # a plain str: scikit-learn wants defaults of basic types
#: the neighbour relation, at either unit: add/remove, because the number of units is private unless the owner
#: states it (then replace-one with that count). TopicDP's sampled road is the one exception: its sensitivity
#: sampler draws replace-one pairs, so that is the only relation its random DP can state.
DEFAULT_NEIGHBOURS: str = Neighbours.ADD_REMOVE.value


@dataclass(frozen=True)
class ReleaseDefaults:
    """The defaults of a release of a corpus: the ``topicdp privatize`` flags and :func:`topicdp.privatize` read them
    here (``n_topics`` is ``--topics``)."""

    n_topics: int = 10
    epsilon: float = DEFAULT_EPSILON
    delta: float = DEFAULT_DELTA
    unit: str = DEFAULT_UNIT
    text_field: str = "text"
    user_field: str = "user"
    max_features: int = 5000
    min_df: int = 5
    max_df: float = 0.5
    n_jobs: int = 2


RELEASE_DEFAULTS = ReleaseDefaults()

#: (registry name, adapter class in ``topicdp.adapters``, one line on the model)
_MODEL_TABLE: tuple[tuple[str, str, str], ...] = (
    ("gensim-lda", "GensimLDA", "gensim LdaModel, online variational Bayes LDA (batch from a public start)"),
    ("gensim-lda-multicore", "GensimLDAMulticore", "gensim LdaMulticore (workers=1 by default)"),
    ("gensim-hdp", "GensimHDP", "gensim HdpModel, online HDP truncated to K topics"),
    ("gensim-lsi", "GensimLSI", "gensim LsiModel, truncated SVD of the term-document matrix"),
    ("sklearn-lda", "SklearnLDA", "scikit-learn LatentDirichletAllocation (batch variational Bayes; public start "
     "through the library's init)"),
    ("sklearn-nmf", "SklearnNMF", "scikit-learn NMF of the counts (nndsvda start)"),
    ("spectral", "SpectralModel", "spectral method-of-moments LDA (non-private; topicdp.spectral)"),
    ("vem", "VariationalModel", "full-batch variational EM LDA (non-private; topicdp.variational)"),
)

#: model registry name -> adapter class name (``topicdp.adapters.make_model`` builds it)
MODELS: dict[str, str] = {name: cls for name, cls, _ in _MODEL_TABLE}
#: model registry name -> one line on the model
MODEL_SUMMARIES: dict[str, str] = {name: line for name, _, line in _MODEL_TABLE}

#: (mechanism name, has a closed-form readability forecast, neighbour relations it is calibrated for, units,
#:  the guarantee it gives)
_MECHANISM_TABLE: tuple[tuple[str, bool, tuple[str, ...], tuple[str, ...], str], ...] = (
    ("dp-vem", True, NEIGHBOURS, UNITS,
     "(eps, delta)-DP: variational EM LDA, Gaussian noise on per-unit normalised statistics"),
    ("gaussian-global", True, NEIGHBOURS, UNITS,
     "(eps, delta)-DP: TopicDP output perturbation, global L2 sensitivity sqrt(2K)"),
    ("laplace", True, NEIGHBOURS, UNITS, "eps-DP (pure): Laplace output perturbation, global L1 sensitivity 2K"),
    ("spectral-config-1", False, ("replace-one",), UNITS,
     "(eps, delta)-DP: spectral LDA (DeCarolis et al. 2020), noise on M3 and twice on M2; needs a stated unit count"),
    ("spectral-config-2", False, ("replace-one",), UNITS,
     "(eps, delta)-DP: spectral LDA, noise on M2 and on the whitened tensor; needs a stated unit count"),
    ("spectral-config-3", False, ("replace-one",), UNITS,
     "(eps, delta)-DP: spectral LDA, noise on M2 and on the tensor decomposition's output; needs a stated unit count"),
    ("spectral-config-4", False, ("replace-one",), UNITS,
     "(eps, delta)-DP: spectral LDA, noise on M2 and on the final topics and weights; needs a stated unit count"),
    ("dpsvi", False, ("add-remove",), ("document",),
     "(eps, delta)-DP, document level only: DP stochastic variational inference (Park et al. 2016)"),
)

#: mechanisms of ``--guarantee dp`` with a closed-form readability forecast (``topicdp.pipeline.roads``): the plan's
#: rule picks among them
FORECAST_MECHANISMS: tuple[str, ...] = tuple(row[0] for row in _MECHANISM_TABLE if row[1])
#: every mechanism of ``--guarantee dp``
RIGOROUS_MECHANISMS: tuple[str, ...] = tuple(row[0] for row in _MECHANISM_TABLE)
#: mechanism name -> the neighbour relations its calibration covers
MECHANISM_NEIGHBOURS: dict[str, tuple[str, ...]] = {row[0]: row[2] for row in _MECHANISM_TABLE}
#: mechanism name -> the privacy units it supports
MECHANISM_UNITS: dict[str, tuple[str, ...]] = {row[0]: row[3] for row in _MECHANISM_TABLE}
#: mechanism name -> the guarantee it gives, in one line
MECHANISM_SUMMARIES: dict[str, str] = {row[0]: row[4] for row in _MECHANISM_TABLE}

#: guarantee name -> one line on what it means
GUARANTEE_SUMMARIES: dict[str, str] = {
    "dp": "(epsilon, delta)-DP for every pair of neighbouring datasets, by one of the mechanisms below",
    "random-dp": "TopicDP over --model with a SAMPLED sensitivity: (epsilon, delta, gamma)-random DP with "
                 "respect to the sampling distribution P; NOT DP (units unlike P's draws are not covered)",
}
GUARANTEES: tuple[str, ...] = tuple(Guarantee)
assert set(GUARANTEES) == set(GUARANTEE_SUMMARIES)

#: how TopicDP obtains the sensitivity of the topic-word matrix
SENSITIVITY_SUMMARIES: dict[str, str] = {
    "sampled": "sampled over neighbour pairs drawn from P (TopicDP Alg. 1): random DP, not DP",
    "global": "the provable bound sqrt(2K) of row-stochastic K x V matrices: DP",
}
SENSITIVITIES: tuple[str, ...] = tuple(SENSITIVITY_SUMMARIES)


#: the contribution bounds of :meth:`topicdp.Corpus.bound`, as its keyword arguments and its log's fields
BOUND_PARAMETERS = ("max_docs_per_user", "max_tokens_per_doc", "max_tokens_per_user")
