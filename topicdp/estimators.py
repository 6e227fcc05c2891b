"""The private estimators a Python user fits: each fixes one mechanism of :data:`topicdp.pipeline.MECHANISMS`, takes
``topicdp privatize``'s options, and ``fit`` runs :func:`topicdp.pipeline.release` on the command's request (DP count,
vocabulary, forecast and refusal before the topics' budget is spent): the same options and seed give the same release.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from ._names import RELEASE_DEFAULTS as D
from ._progress import say
from ._validation import check_count_matrix, check_int, store_init
from .corpus import Corpus, is_corpus
from .tables import is_frame
from .transform import FoldInMixin

__all__ = ["DPSVI", "DPVariationalLDA", "PlannedEstimator", "SpectralDP"]


class PlannedEstimator(FoldInMixin, BaseEstimator):
    """A private estimator whose ``fit`` is :func:`topicdp.release` with the class' mechanism and its parameters
    (``random_state`` is its ``seed``, for tests only).

    ``fit`` takes what :func:`topicdp.release` takes (a file, a directory, a DataFrame), a :class:`topicdp.Corpus` on a
    word list the caller gave (one built from its own texts is refused: DP does not cover its columns; bound it here,
    not with :meth:`~topicdp.Corpus.bound`), or a count matrix at ``unit="document"`` (its column indices public).
    Attributes: ``release_``, ``report_``, ``topic_word_`` = ``components_`` (rows sum to 1), ``vocabulary_``,
    ``n_features_in_``, and ``decision_`` (the mechanism, count and forecasts the release was decided on).
    """

    #: the registry row this class releases with
    mechanism: str = ""
    #: the parameters of a subclass that name its mechanism (not options of the release)
    _own_parameters: tuple[str, ...] = ()

    def __init__(self, n_topics: int = D.n_topics, *, epsilon: float = D.epsilon, delta: float = D.delta,
                 unit: str = D.unit, vocabulary=None, reference: str | None = None, n_units: int | None = None,
                 ledger=None, release_anyway: bool = False, random_state: int | None = None,
                 max_docs_per_user: int | None = None, max_tokens_per_doc: int | None = None,
                 max_tokens_per_user: int | None = None, user_fraction: float | None = None,
                 text_field: str = D.text_field, user_field: str = D.user_field, stop_words=None,
                 max_features: int = D.max_features, min_df: int = D.min_df, max_df: float = D.max_df,
                 vocabulary_epsilon: float | None = None, vocabulary_delta: float | None = None,
                 n_jobs: int = D.n_jobs):
        store_init(self, locals())

    def _options(self) -> dict[str, Any]:
        """The request's keywords: the parameters and the class' mechanism."""
        options = {k: v for k, v in self.get_params(deep=False).items() if k not in self._own_parameters}
        seed = options.pop("random_state")
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise TypeError(f"random_state must be None or an int >= 0 (it seeds every noise draw), got {seed!r}")
        if seed is not None:
            check_int(seed, "random_state", low=0)
        return dict(options, seed=None if seed is None else int(seed), mechanism=self.mechanism, guarantee="dp",
                    out=None, query=None, scheduler=None, work_dir=None, agnostic=None, keep_nonprivate=False)

    def fit(self, X, y=None) -> "PlannedEstimator":
        """Plan and release on ``X`` as ``topicdp privatize`` would (:class:`~topicdp.pipeline.ReleaseRefused`, before
        the topics' budget is spent, where the forecast says noise, unless ``release_anyway``)."""
        from .pipeline import release
        from .pipeline.options import request_from_options

        result = release(request_from_options(self._corpus(X), **self._options()), echo=say)
        released = result.release
        self.release_, self.report_, self.decision_ = released, released.report, result.decision
        self.topic_word_ = self.components_ = np.asarray(released.topic_word)
        self.vocabulary_ = tuple(released.vocabulary)
        self.n_features_in_ = self.topic_word_.shape[1]
        return self

    def _corpus(self, X):
        """``X`` as the request's source: a count matrix becomes a Corpus of one unit per row on its column indices."""
        if isinstance(X, (str, Corpus)) or is_frame(X) or hasattr(X, "__fspath__"):
            return X if not hasattr(X, "__fspath__") else str(X)
        if is_corpus(X):
            raise TypeError(f"X must be a topicdp.Corpus, a file or a DataFrame, got {type(X).__name__}")
        if str(self.unit) != "document":
            raise ValueError("unit='user' needs a topicdp.Corpus or a file with a user field (which documents belong "
                             "to which user); a matrix is released at unit='document'")
        counts = check_count_matrix(X, integral=True, min_docs=1)
        corpus = Corpus.from_matrix(counts, [str(j) for j in range(counts.shape[1])])
        corpus.vocabulary_source = "public"  # the columns' indices: the caller's matrix states them
        return corpus


class DPVariationalLDA(PlannedEstimator):
    """(epsilon, delta)-DP LDA by variational EM on per-unit normalised statistics (``dp-vem``), planned.

    The algorithm and its proof: :mod:`topicdp.variational`. 200 generated documents cannot carry three topics at
    epsilon = 2: the plan counts them under DP and refuses before the topics' budget is spent.

    >>> from topicdp.datasets import synthetic_lda
    >>> from topicdp.pipeline import ReleaseRefused
    >>> X = synthetic_lda(200, 40, 3, random_state=0).X
    >>> try:
    ...     DPVariationalLDA(3, epsilon=2.0, unit="document", random_state=0, n_jobs=1).fit(X)
    ... except ReleaseRefused as refused:
    ...     print(refused.spent)
    ('the unit count (epsilon=0.1, delta=5e-08)',)
    >>> model = DPVariationalLDA(3, epsilon=2.0, unit="document", release_anyway=True, random_state=0, n_jobs=1)
    >>> model.fit(X).decision_.mechanism, model.report_.guarantee, model.topic_word_.shape
    ('dp-vem', 'approx-DP', (3, 40))
    """

    mechanism = "dp-vem"


class SpectralDP(PlannedEstimator):
    """(epsilon, delta)-DP spectral LDA by the method of moments (DeCarolis et al. 2020), planned.

    Calibrated for replace-one neighbours: ``n_units`` (stated public) is required, and a corpus with another number
    of units refused before anything is spent (:class:`topicdp.spectral.DPSpectralMoments`). ``configuration`` (1 to
    4): where the noise enters (DeCarolis et al. 2020, "An End-to-End Differentially Private Latent Dirichlet
    Allocation Using a Spectral Algorithm", Table 3).
    """

    _own_parameters = ("configuration",)

    def __init__(self, n_topics: int = D.n_topics, *, configuration: int = 1, epsilon: float = D.epsilon,
                 delta: float = D.delta, unit: str = D.unit, vocabulary=None, reference: str | None = None,
                 n_units: int | None = None, ledger=None, release_anyway: bool = False,
                 random_state: int | None = None, max_docs_per_user: int | None = None,
                 max_tokens_per_doc: int | None = None, max_tokens_per_user: int | None = None,
                 user_fraction: float | None = None, text_field: str = D.text_field, user_field: str = D.user_field,
                 stop_words=None, max_features: int = D.max_features, min_df: int = D.min_df,
                 max_df: float = D.max_df, vocabulary_epsilon: float | None = None,
                 vocabulary_delta: float | None = None, n_jobs: int = D.n_jobs):
        store_init(self, locals())

    @property
    def mechanism(self) -> str:  # type: ignore[override]
        if isinstance(self.configuration, bool) or self.configuration not in (1, 2, 3, 4):
            raise ValueError(f"configuration must be one of 1, 2, 3, 4; got {self.configuration!r}")
        return f"spectral-config-{int(self.configuration)}"


class DPSVI(PlannedEstimator):
    """(epsilon, delta)-DP stochastic variational inference for LDA (Park et al. 2016), planned: document level only,
    no readability forecast (:class:`topicdp.baselines.DPStochasticVI`)."""

    mechanism = "dpsvi"
    #: PlannedEstimator's parameters, ``unit`` defaulting to "document" (scikit-learn reads this signature)
    __init__ = functools.partialmethod(PlannedEstimator.__init__, unit="document")
