"""The non-private spectral LDA estimator (DeCarolis et al. 2020, Fig. 1, edges e0-e9 without noise)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_int, check_option, check_random_state, check_real, store_init
from ..transform import FoldInMixin
from .moments import M2Operator, prepare_corpus, whitened_m3
from .recovery import SIMPLEX_METHODS, recover_topics
from .tensor import power_method
from .whitening import Whitening, whiten


def check_model_params(n_topics, alpha0, n_words: int | None = None) -> tuple[int, float]:
    """Validate k (>= 2 and < vocabulary size) and alpha0 (> 0)."""
    k = check_int(n_topics, "n_topics", low=2)
    a0 = check_real(alpha0, "alpha0", low=0.0)
    if n_words is not None and k >= n_words:
        raise ValueError(f"n_topics must be smaller than the vocabulary size ({n_words}), got {k}")
    return k, a0


class SpectralLDA(FoldInMixin, BaseEstimator):
    """Method-of-moments LDA by whitening and tensor decomposition (Anandkumar et al. 2012; DeCarolis et al. 2020,
    Sec. 4).

    ``n_topics`` k >= 2 (smaller than the vocabulary), ``alpha0`` the Dirichlet sum (known and public, as in the
    paper), ``simplex`` as in :mod:`.recovery`. ``topic_word_``: the topics by decreasing ``alpha_``;
    ``eigenvalues_`` and ``next_eigenvalue_``: M2_hat's top k and (k+1)-th; ``n_short_documents_``: documents of
    fewer than 3 tokens, left out; ``n_degenerate_topics_``: topics with no positive part (made uniform).
    """

    def __init__(self, n_topics: int = 10, alpha0: float = 1.0, random_state=None, *, simplex: str = "project",
                 n_restarts: int = 5, tol: float = 1e-6, max_iter: int = 300):
        store_init(self, locals())

    def fit(self, X, y=None) -> "SpectralLDA":
        k, a0 = check_model_params(self.n_topics, self.alpha0)
        check_option(self.simplex, "simplex", SIMPLEX_METHODS)
        check_int(self.n_restarts, "n_restarts", low=1)
        rng = check_random_state(self.random_state)
        t0 = time.perf_counter()
        corpus = prepare_corpus(X)
        check_model_params(k, a0, corpus.n_words)
        self.n_features_in_ = corpus.n_words
        t1 = time.perf_counter()
        wh = whiten(M2Operator(corpus, a0).matmat, corpus.n_words, k, rng=rng, tol=self.tol, max_iter=self.max_iter)
        t2 = time.perf_counter()
        T = whitened_m3(corpus, a0, wh.W)
        t3 = time.perf_counter()
        dec = power_method(T, rng=rng, n_restarts=self.n_restarts)
        topics, alpha, n_bad = recover_topics(dec.values, dec.vectors, wh.B, a0, self.simplex)
        t4 = time.perf_counter()
        self._set_fitted(corpus.n_docs, corpus.n_short, wh, T, dec.values, topics, alpha, n_bad)
        self.timings_ = {"prepare": t1 - t0, "whiten": t2 - t1, "tensor": t3 - t2, "decompose": t4 - t3,
                         "total": t4 - t0}
        return self

    def _set_fitted(self, n_docs: int, n_short: int, wh: Whitening, T, tensor_values, topics, alpha, n_bad) -> None:
        self.topic_word_ = topics
        self.alpha_ = alpha
        self.n_documents_ = n_docs
        self.n_short_documents_ = n_short
        self.eigenvalues_ = wh.eigenvalues
        self.next_eigenvalue_ = wh.next_eigenvalue
        self.whitened_tensor_ = T
        self.tensor_eigenvalues_ = np.asarray(tensor_values)
        self.n_degenerate_topics_ = n_bad
