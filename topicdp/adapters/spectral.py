"""Adapter for the built-in non-private spectral LDA (:class:`topicdp.spectral.SpectralLDA`), the model the
principled road makes private; deterministic (seeded starts, single-process BLAS).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import store_init
from .base import POSITIVE, POSITIVE_INT, SEED, TopicModelSpec


class SpectralModel(TopicModelSpec):
    """Spectral method-of-moments LDA (DeCarolis et al. 2020, non-private) as f: Corpus -> k x V.

    Parameters
    ----------
    n_topics, random_state, alpha0, simplex, n_restarts, tol, max_iter
        :class:`~topicdp.spectral.SpectralLDA`'s, with its defaults (``n_topics`` >= 2).
    """

    name = "spectral"
    _parameter_constraints = {
        "n_topics": [Interval(Integral, 2, None, closed="left")],  # the method of moments needs k >= 2
        "random_state": SEED,
        **dict.fromkeys(("alpha0", "tol"), POSITIVE),
        "simplex": [StrOptions({"project", "clip"})],
        **dict.fromkeys(("n_restarts", "max_iter"), POSITIVE_INT),
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, alpha0: float = 1.0, simplex: str = "project",
                 n_restarts: int = 5, tol: float = 1e-6, max_iter: int = 300) -> None:
        store_init(self, locals())

    def _fit(self, corpus) -> np.ndarray:
        """SpectralLDA's topics; the uniform topics where fewer than 3 documents have 3 tokens (its U-statistics are not
        defined there, and f must be defined on every corpus)."""
        from ..spectral import SpectralLDA
        from ..spectral.moments import MIN_DOC_LENGTH

        if int((np.asarray(corpus.X.sum(axis=1)).ravel() >= MIN_DOC_LENGTH).sum()) < 3:
            return np.full((self.n_topics, corpus.n_words), 1.0 / corpus.n_words)
        model = SpectralLDA(self.n_topics, random_state=self.random_state, **self.params)
        model.fit(corpus.X)
        return model.topic_word_

    def stability(self) -> tuple[bool | None, str]:
        return False, ("deterministic, but a few neighbouring corpora move it far; a likely reason: the whitening keeps "
                       "the top-K eigenvectors of M2 and the power method the components of largest eigenvalue, "
                       "which change where two eigenvalues are close. No parameter is known to remove it")
