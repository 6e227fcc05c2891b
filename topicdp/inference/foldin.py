"""Folding documents into fixed topics: theta_d given a topic-word matrix (variational fold-in).

With the topics held fixed, only each document's proportions are inferred: the per-document variational
iteration of LDA (Blei, Ng & Jordan 2003, "Latent Dirichlet Allocation", Eqs. 6-7), run by
:func:`topicdp.inference.estep.document_gamma` with the released point estimate beta in place of
exp(E[log beta]), as gensim's ``LdaModel.inference`` and scikit-learn's
``LatentDirichletAllocation.transform`` do with their fitted topics. Used by held-out perplexity
(:mod:`topicdp.inference.perplexity`) and by ``transform`` of every estimator and release
(:mod:`topicdp.transform`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_real
from .estep import document_gamma


def check_topic_word(topic_word, min_prob: float = 1e-12) -> np.ndarray:
    """Rows normalised to the simplex, floored at ``min_prob``; raises on negative or empty rows.

    Parameters
    ----------
    topic_word : (K, V) array-like
        Non-negative topics (a release is post-processed to be so), each row with positive mass.
    min_prob : float, default=1e-12
        Floor on every word probability (then the rows are renormalised), so that a word with zero
        probability under every topic has a finite cost.

    Returns
    -------
    beta : (K, V) float array, rows on the simplex
    """
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
    """1/K for None, a positive float, or a positive finite (K,) array (an asymmetric Dirichlet).

    Parameters
    ----------
    alpha : None, float or (K,) array-like
        Dirichlet prior on theta.
    n_topics : int
        K.

    Returns
    -------
    float or (K,) array
    """
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
    """Posterior-mean topic proportions with fixed topics (variational fold-in, Blei et al. 2003 Eqs. 6-7).

    The iteration is the E-step of the fitting code (:func:`topicdp.inference.estep.document_gamma`) with
    exp(E[log beta]) replaced by the released point estimate beta.

    Parameters
    ----------
    topic_word : (K, V) array, rows on the simplex (see :func:`check_topic_word`)
    X : (n_docs, V) counts
    alpha : float or (K,) array, optional
        Dirichlet prior on theta (symmetric for a float); default 1/K (gensim's and scikit-learn's default).
    max_iter, tol : int, float
        A document stops when the mean absolute change of its gamma is below ``tol``.

    Returns
    -------
    theta : ndarray (n_docs, K)
        gamma_d / sum(gamma_d); the prior mean alpha / sum(alpha) for empty documents.
    """
    beta = check_topic_word(topic_word)
    X = check_count_matrix(X, min_docs=0, n_words=beta.shape[1], expected_by="the topic-word matrix")
    return fold_in_theta(beta, X, check_alpha(alpha, beta.shape[0]), check_int(max_iter, "max_iter", low=1), tol)


def fold_in_theta(beta: np.ndarray, X: sp.csr_matrix, alpha, max_iter: int, tol: float,
                  chunk: int = 4096) -> np.ndarray:
    """The fixed-topic variational iteration of :func:`infer_theta` on validated inputs.

    :func:`topicdp.inference.estep.document_gamma` with the released point estimate beta in place of
    exp(E[log beta]) (Blei, Ng & Jordan 2003, Eqs. 6-7 with the topics held fixed), normalised to the
    posterior mean theta_d = gamma_d / sum_k gamma_dk. Documents are independent (each stops on its own),
    so chunks of rows bound memory (nnz x K) without changing the result.

    Parameters
    ----------
    beta : (K, V) array
        Topics on the simplex, as returned by :func:`check_topic_word`.
    X : csr_matrix (n_docs, V)
        Counts, already checked against ``beta``'s columns.
    alpha : float or (K,) array
        As returned by :func:`check_alpha`.
    max_iter, tol : int, float
        Per-document stopping rule.
    chunk : int, default=4096
        Documents per call of the E-step.

    Returns
    -------
    theta : (n_docs, K) array
    """
    beta_t = np.ascontiguousarray(beta.T)
    gamma = np.vstack([document_gamma(X[s:s + chunk], beta, alpha, max_iter=max_iter, tol=tol, beta_t=beta_t)
                       for s in range(0, X.shape[0], chunk)] or [np.empty((0, beta.shape[0]))])
    return gamma / gamma.sum(axis=1, keepdims=True)
