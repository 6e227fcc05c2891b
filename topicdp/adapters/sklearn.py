"""Adapters for scikit-learn's ``LatentDirichletAllocation`` and ``NMF``."""

from __future__ import annotations

import numpy as np

from .base import TopicModelSpec


def _normalise_rows(components: np.ndarray, model: str) -> np.ndarray:
    sums = components.sum(axis=1, keepdims=True)
    if np.any(sums <= 0):
        raise ValueError(f"{model} produced an all-zero topic; lower n_topics")
    return components / sums


class SklearnLDA(TopicModelSpec):
    """scikit-learn ``LatentDirichletAllocation`` (batch variational Bayes by default, ``n_jobs=1``).

    Rows are ``components_`` normalised to sum to 1 (the posterior mean topic-word distributions).
    """

    name = "sklearn-lda"
    defaults = {"learning_method": "batch", "max_iter": 10}

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **{**self.defaults, **params})

    def _fit(self, corpus) -> np.ndarray:
        from sklearn.decomposition import LatentDirichletAllocation

        model = LatentDirichletAllocation(
            n_components=self.n_topics, random_state=self.random_state, n_jobs=1, **self.params
        )
        model.fit(corpus.X)
        return _normalise_rows(model.components_, "LatentDirichletAllocation")


class SklearnNMF(TopicModelSpec):
    """scikit-learn ``NMF`` on the count matrix (``init="nndsvda"``, deterministic).

    NMF's H rows are non-negative word weights of arbitrary scale (W absorbs it); each row is divided
    by its sum so that topics are on the simplex and comparable across fits. With ``init`` (public starting
    topics, K x V), H starts there (``init="custom"``), W at its non-negative least-squares fit to the counts
    given H (``non_negative_factorization(update_H=False)``), and row k of the result grew from row k of
    ``init``.
    """

    name = "sklearn-nmf"
    defaults = {"init": "nndsvda", "max_iter": 400}

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **{**self.defaults, **params})

    def _fit(self, corpus) -> np.ndarray:
        from sklearn.decomposition import NMF, non_negative_factorization

        params = dict(self.params)
        init = params.pop("init_topics", None)
        X = corpus.X.astype(np.float64)
        if init is None:
            model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
            model.fit(X)
            return _normalise_rows(model.components_, "NMF")
        H = np.asarray(init, dtype=np.float64)
        if H.shape != (self.n_topics, X.shape[1]) or H.min() < 0:
            raise ValueError(f"init_topics must be a non-negative ({self.n_topics}, {X.shape[1]}) array")
        H = H / H.sum(axis=1, keepdims=True) * float(X.sum()) / self.n_topics  # the counts' scale
        W, _, _ = non_negative_factorization(X, H=H, n_components=self.n_topics, init="custom", update_H=False,
                                             max_iter=self.params.get("max_iter", 400))
        params["init"] = "custom"
        model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
        model.fit(X, W=np.maximum(W, 1e-10), H=H)
        return _normalise_rows(model.components_, "NMF")

    def fit_topic_word(self, corpus) -> np.ndarray:
        if self.params.get("init_topics") is None:
            return super().fit_topic_word(corpus)
        return np.ascontiguousarray(np.asarray(self._fit(corpus), dtype=np.float64))
