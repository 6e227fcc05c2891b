"""Adapter for the built-in non-private spectral LDA (:class:`topicdp.spectral.SpectralLDA`).

Lets the agnostic road (TopicDP's output perturbation with sampled sensitivity) wrap the very same
model the principled road makes private, for a principled-vs-agnostic comparison on one model.
The fit is deterministic: the eigen-solver start and the power-method restarts are seeded by
``random_state``, and the whole computation is single-process BLAS.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .base import SEED, TopicModelSpec


class SpectralModel(TopicModelSpec):
    """Spectral method-of-moments LDA (DeCarolis et al. 2020, non-private) as f: Corpus -> k x V.

    Parameters
    ----------
    n_topics : int >= 2, default=10
    random_state : int, default=0
        Seeds the eigen-solver start and the power-method restarts (an int: f must be deterministic).
    alpha0 : float > 0, default=1.0
        Sum of the Dirichlet parameter (public, as in the paper).
    simplex : {"project", "clip"}, default="project"
    n_restarts : int >= 1, default=5
    tol : float > 0, default=1e-6
    max_iter : int >= 1, default=300
        These are :class:`~topicdp.spectral.SpectralLDA`'s, with its defaults and meanings.
    """

    name = "spectral"
    _parameter_constraints = {
        "n_topics": [Interval(Integral, 2, None, closed="left")],  # the method of moments needs k >= 2
        "random_state": SEED,
        "alpha0": [Interval(Real, 0, None, closed="neither")],
        "simplex": [StrOptions({"project", "clip"})],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, alpha0: float = 1.0, simplex: str = "project",
                 n_restarts: int = 5, tol: float = 1e-6, max_iter: int = 300) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.alpha0 = alpha0
        self.simplex = simplex
        self.n_restarts = n_restarts
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, corpus) -> np.ndarray:
        """SpectralLDA's topics; on a corpus with fewer than 3 documents of at least 3 tokens, where its third-order
        U-statistics are not defined, the uniform topics, as on a corpus without documents
        (:meth:`TopicModelSpec.fit_topic_word`): f must be defined on every corpus (a period may hold one document,
        and how many it holds is private), and a data-independent value keeps its rows probability vectors."""
        from ..spectral import SpectralLDA
        from ..spectral.moments import MIN_DOC_LENGTH

        if int((np.asarray(corpus.X.sum(axis=1)).ravel() >= MIN_DOC_LENGTH).sum()) < 3:
            return np.full((self.n_topics, corpus.n_words), 1.0 / corpus.n_words)
        model = SpectralLDA(self.n_topics, random_state=self.random_state, **self.params)
        model.fit(corpus.X)
        return model.topic_word_

    def stability(self) -> tuple[bool | None, str]:
        return False, ("deterministic, but a few neighbouring corpora move it far (on blog posts the largest of 61 "
                       "sampled pair distances was 2.2, of their first 9 0.011); a likely reason: the whitening keeps "
                       "the top-K eigenvectors of M2 and the power method the components of largest eigenvalue, "
                       "which change where two eigenvalues are close. No parameter is known to remove it")
