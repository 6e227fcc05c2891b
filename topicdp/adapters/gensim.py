"""Adapters for gensim's topic models: LDA (single and multi-core), HDP and LSI.

Every adapter builds the gensim model from the corpus' own vocabulary (ids = column indices), fixes the
model's seed and returns a K x V matrix; :class:`~topicdp.adapters.base.TopicModelSpec` puts it in
canonical order.
"""

from __future__ import annotations

import numpy as np

from ..topics import GENSIM_LDA_DEFAULTS, fit_gensim_lda
from .base import TopicModelSpec

# gensim logs every pass at INFO; that reaches no one unless the application configures logging, and the
# application's choice is not ours to change (no setLevel on other libraries' loggers here)


class GensimLDA(TopicModelSpec):
    """gensim ``LdaModel`` (online variational Bayes, Hoffman et al. 2010).

    Extra keyword parameters go to ``LdaModel`` (defaults here: ``passes=1``, ``iterations=50``,
    ``alpha="symmetric"``). Rows are ``get_topics()``, i.e. the normalised variational topic-word
    parameters, on the simplex.
    """

    name = "gensim-lda"
    defaults = dict(GENSIM_LDA_DEFAULTS)

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **{**self.defaults, **params})

    def _model_class(self):
        from gensim.models import LdaModel

        return LdaModel

    def _fit(self, corpus) -> np.ndarray:
        return fit_gensim_lda(corpus, self.n_topics, self.random_state, model_class=self._model_class(),
                              **self.params)

    def fit_topic_word(self, corpus) -> np.ndarray:
        if self.params.get("init") is None:
            return super().fit_topic_word(corpus)  # canonical order
        # from public topics, row k grew from start k: that order is a deterministic function of the data and
        # the start, and unlike the canonical order it does not flip when two top words swap ranks
        return np.ascontiguousarray(np.asarray(self._fit(corpus), dtype=np.float64))


class GensimLDAMulticore(GensimLDA):
    """gensim ``LdaMulticore`` (``workers=1`` by default).

    With more than one worker, the order in which workers' updates are merged depends on timing, so the
    output is *not* a deterministic function of the data and sensitivity sampling over it is not
    meaningful; the adapter refuses ``workers > 1`` for that reason. Parallelise over neighbour pairs
    instead (``n_jobs`` of :class:`~topicdp.TopicDP`).
    """

    name = "gensim-lda-multicore"
    defaults = {**GensimLDA.defaults, "workers": 1}

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **params)
        if self.params["workers"] != 1:
            raise ValueError(
                "workers must be 1: with several workers LdaMulticore is not a deterministic function of the "
                "data, which sensitivity sampling requires; use n_jobs to run neighbour pairs in parallel"
            )

    def _model_class(self):
        from gensim.models import LdaMulticore

        return LdaMulticore


class GensimHDP(TopicModelSpec):
    """gensim ``HdpModel`` (online HDP, Wang et al. 2011), truncated deterministically to K topics.

    HDP infers its own number of topics up to the truncation level ``T`` (default 150). The K topics
    kept are those with the largest expected stick-breaking weights (the ``alpha`` of ``hdp_to_lda()``),
    ties broken by topic index; their rows are ``get_topics()`` (normalised lambda), on the simplex.
    """

    name = "gensim-hdp"
    defaults = {"T": 150, "K": 15}

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **{**self.defaults, **params})
        if self.params["T"] < n_topics:
            raise ValueError(f"T (HDP truncation) must be at least n_topics={n_topics}, got {self.params['T']}")

    def _fit(self, corpus) -> np.ndarray:
        from gensim.models import HdpModel

        dictionary, bow = corpus.to_gensim()
        model = HdpModel(bow, id2word=dictionary, random_state=self.random_state, **self.params)
        weights, _ = model.hdp_to_lda()
        keep = np.lexsort((np.arange(weights.size), -np.asarray(weights)))[: self.n_topics]
        topics = model.get_topics()[keep]
        return topics / topics.sum(axis=1, keepdims=True)


class GensimLSI(TopicModelSpec):
    """gensim ``LsiModel`` (truncated SVD of the term-document matrix).

    LSI loadings are signed and each topic's sign is arbitrary (u and -u span the same direction). The
    keyword weight of word w in topic j is the *squared* loading u_{wj}^2: it is invariant to the sign
    flip, and since the left singular vectors have unit norm the weights of a topic sum to 1, so the
    rows are on the simplex like a probabilistic model's and the same post-processing applies.
    """

    name = "gensim-lsi"
    defaults = {"power_iters": 2, "extra_samples": 100}

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **{**self.defaults, **params})

    def _fit(self, corpus) -> np.ndarray:
        from gensim.models import LsiModel

        dictionary, bow = corpus.to_gensim()
        model = LsiModel(bow, id2word=dictionary, num_topics=self.n_topics, random_seed=self.random_state, **self.params)
        loadings = model.get_topics()  # (K', V) rows = left singular vectors
        if loadings.shape[0] < self.n_topics:
            raise ValueError(
                f"LSI found only {loadings.shape[0]} non-zero singular values; n_topics={self.n_topics} is too large"
            )
        weights = loadings[: self.n_topics] ** 2
        return weights / weights.sum(axis=1, keepdims=True)
