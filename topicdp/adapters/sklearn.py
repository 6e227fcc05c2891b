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
    by its sum so that topics are on the simplex and comparable across fits.
    """

    name = "sklearn-nmf"
    defaults = {"init": "nndsvda", "max_iter": 400}

    def __init__(self, n_topics: int, random_state: int = 0, **params) -> None:
        super().__init__(n_topics, random_state, **{**self.defaults, **params})

    def _fit(self, corpus) -> np.ndarray:
        from sklearn.decomposition import NMF

        model = NMF(n_components=self.n_topics, random_state=self.random_state, **self.params)
        model.fit(corpus.X.astype(np.float64))
        return _normalise_rows(model.components_, "NMF")
