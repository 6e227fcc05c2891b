"""Folding documents into fixed topics (the per-document iteration of Blei, Ng & Jordan 2003, "Latent Dirichlet
Allocation", Eqs. 6-7, with the released beta in place of exp(E[log beta]), as gensim and scikit-learn do), and
held-out perplexity by document completion (Wallach, Murray, Salakhutdinov & Mimno, "Evaluation methods for topic
models", ICML 2009, Sec. 4): each held-out document's tokens are split at random into an observed part, which gives
theta_d, and an evaluation part, scored as ``exp(-sum c'_dw log(sum_k theta_dk beta_kw) / sum c'_dw)`` (Blei et al.
2003, Sec. 7.1; uniform topics give V). Rows are floored at ``min_prob``: compare mechanisms at the same floor.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_random_state, check_real
from .estep import document_gamma


def check_topic_word(topic_word, min_prob: float = 1e-12) -> np.ndarray:
    """Rows normalised to the simplex, floored at ``min_prob`` (a finite cost for a word of zero probability) and
    renormalised; raises on negative, non-finite or empty rows."""
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
    """Posterior-mean topic proportions (n_docs, K) with fixed topics (Blei et al. 2003 Eqs. 6-7); ``alpha`` defaults
    to 1/K (gensim's and scikit-learn's), an empty document gets the prior mean."""
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


def split_documents(X, observed_fraction: float = 0.5, random_state=None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Split each document's tokens uniformly at random into observed (``floor(observed_fraction L)``, clipped to
    [1, L - 1]) and evaluation parts; documents with L < 2 get empty rows in both."""
    X = check_count_matrix(X, min_docs=0, integral=True, dtype=np.int64)  # document completion splits tokens
    f = check_real(observed_fraction, "observed_fraction", low=0.0, high=1.0)
    rng = check_random_state(random_state)
    lengths = np.bincount(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), weights=X.data,
                          minlength=X.shape[0]).astype(np.int64)
    n_obs = np.clip(np.floor(f * lengths).astype(np.int64), 1, np.maximum(lengths - 1, 1))
    n_obs[lengths < 2] = 0
    tok_doc, tok_word, rank = shuffled_tokens(X, X.data, rng)
    observed = rank < n_obs[tok_doc]
    evaluate = ~observed & (lengths[tok_doc] >= 2)
    return token_matrix(tok_doc, tok_word, observed, X.shape), token_matrix(tok_doc, tok_word, evaluate, X.shape)


def shuffled_tokens(X: sp.csr_matrix, counts: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every token of ``X`` (``counts`` its integer data), each document's in uniformly random order (a random
    key sorted per document): the document, the word and the rank within the document of each token."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    tok_doc, tok_word = np.repeat(rows, counts), np.repeat(X.indices, counts)
    order = np.lexsort((rng.random(tok_doc.size), tok_doc))
    tok_doc, tok_word = tok_doc[order], tok_word[order]
    starts = np.concatenate([[0], np.cumsum(np.bincount(tok_doc, minlength=X.shape[0]))[:-1]])
    return tok_doc, tok_word, np.arange(tok_doc.size) - starts[tok_doc]


def token_matrix(tok_doc: np.ndarray, tok_word: np.ndarray, mask: np.ndarray, shape) -> sp.csr_matrix:
    """The counts of the tokens selected by ``mask``."""
    M = sp.csr_matrix((np.ones(int(mask.sum())), (tok_doc[mask], tok_word[mask])), shape=shape)
    M.sum_duplicates()
    return M


def heldout_perplexity(
    topic_word,
    X_heldout,
    *,
    alpha: float | None = None,
    observed_fraction: float = 0.5,
    min_prob: float = 1e-12,
    max_iter: int = 200,
    tol: float = 1e-6,
    random_state=None,
) -> float:
    """Per-word perplexity of held-out documents by document completion (module docstring); compare mechanisms at the
    same ``alpha`` (default 1/K), ``min_prob`` and ``random_state`` (the token split)."""
    beta = check_topic_word(topic_word, check_real(min_prob, "min_prob", low=0.0, high=1.0))
    X = check_count_matrix(X_heldout, "X_heldout", min_docs=0, n_words=beta.shape[1],
                           expected_by="the topic-word matrix", integral=True)
    X_obs, X_eval = split_documents(X, observed_fraction, random_state)
    if X_eval.nnz == 0:
        raise ValueError("X_heldout has no document with at least two tokens")
    theta = fold_in_theta(beta, X_obs, check_alpha(alpha, beta.shape[0]), check_int(max_iter, "max_iter", low=1), tol)
    rows, cols = np.repeat(np.arange(X_eval.shape[0]), np.diff(X_eval.indptr)), X_eval.indices
    p = np.empty(rows.size)  # sum_k theta[rows, k] beta[k, cols] of each nonzero, in chunks to bound memory (nnz x K)
    for s in range(0, rows.size, 200_000):
        r, c = rows[s : s + 200_000], cols[s : s + 200_000]
        p[s : s + 200_000] = np.einsum("nk,kn->n", theta[r], beta[:, c])
    log_p = np.log(p)
    return float(np.exp(-(X_eval.data * log_p).sum() / X_eval.data.sum()))
