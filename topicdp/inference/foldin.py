"""Folding documents into fixed topics: theta_d given a topic-word matrix (variational fold-in).

The per-document iteration of LDA (Blei, Ng & Jordan 2003, "Latent Dirichlet Allocation", Eqs. 6-7) run by
:func:`topicdp.inference.estep.document_gamma` with the released point estimate beta in place of
exp(E[log beta]), as gensim's ``LdaModel.inference`` and scikit-learn's ``transform`` do with fitted topics.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_real
from .estep import document_gamma


def check_topic_word(topic_word, min_prob: float = 1e-12) -> np.ndarray:
    """Rows normalised to the simplex and floored at ``min_prob`` (so a word of zero probability everywhere has a
    finite cost), renormalised; raises on negative, non-finite or empty rows."""
    beta = np.array(topic_word, dtype=float)
    if beta.ndim != 2 or not np.all(np.isfinite(beta)):
        raise ValueError("topic_word must be a finite 2-D array (topics x words)")
    if np.any(beta < 0):
        raise ValueError(
            "topic_word has negative entries; post-process a noisy release (clip at 0 and renormalise) "
            "before computing perplexity"
        )
    sums = beta.sum(axis=1, keepdims=True)
    if np.any(sums <= 0):
        raise ValueError("every row of topic_word must have positive mass")
    beta = np.maximum(beta / sums, min_prob)
    return beta / beta.sum(axis=1, keepdims=True)


def check_alpha(alpha, n_topics: int):
    """``1/K`` for None, a positive float, or a positive finite (K,) array (an asymmetric Dirichlet)."""
    if alpha is None:
        return 1.0 / n_topics
    if np.ndim(alpha) == 0:
        return check_real(alpha, "alpha", low=0.0)
    a = np.asarray(alpha, dtype=float)
    if a.shape != (n_topics,) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha must be a positive float or a positive finite array of shape ({n_topics},), "
                         f"got shape {a.shape}")
    return a


def infer_theta(topic_word, X, *, alpha=None, max_iter: int = 200, tol: float = 1e-6) -> np.ndarray:
    """Posterior-mean topic proportions (n_docs, K) with fixed topics (Blei et al. 2003 Eqs. 6-7).

    ``alpha`` defaults to 1/K (gensim's and scikit-learn's); a document stops when the mean absolute change of its
    gamma is below ``tol``; an empty document gets the prior mean.
    """
    beta = check_topic_word(topic_word)
    X = check_count_matrix(X, min_docs=0, n_words=beta.shape[1], expected_by="the topic-word matrix")
    return fold_in_theta(beta, X, check_alpha(alpha, beta.shape[0]), check_int(max_iter, "max_iter", low=1), tol)


def fold_in_theta(beta: np.ndarray, X: sp.csr_matrix, alpha, max_iter: int, tol: float,
                  chunk: int = 4096) -> np.ndarray:
    """:func:`infer_theta` on validated inputs: ``theta_d = gamma_d / sum_k gamma_dk``; documents are independent, so
    chunks of rows bound memory without changing the result."""
    beta_t = np.ascontiguousarray(beta.T)
    gamma = np.vstack([document_gamma(X[s:s + chunk], beta, alpha, max_iter=max_iter, tol=tol, beta_t=beta_t)
                       for s in range(0, X.shape[0], chunk)] or [np.empty((0, beta.shape[0]))])
    return gamma / gamma.sum(axis=1, keepdims=True)
