"""Held-out per-word perplexity of a released topic-word matrix by document completion.

The one perplexity estimator of the package: :func:`topicdp.metrics.heldout_perplexity` (the comparison
tables), the estimators' ``score`` (:class:`topicdp.transform.FoldInMixin`) and
:meth:`topicdp.baselines.DPStochasticVI.perplexity` all call :func:`heldout_perplexity`.

Estimator
---------
The topics are fixed (a released K x V matrix, rows on the simplex); only the held-out documents'
topic proportions are unknown. We use the *document completion* estimator (Wallach, Murray,
Salakhutdinov & Mimno, "Evaluation methods for topic models", ICML 2009, Sec. 4; Rosen-Zvi et al. 2004):

1. each held-out document's tokens are split at random into an observed part (``observed_fraction`` of
   its tokens, rounded down, at least one) and an evaluation part (the rest); documents with fewer
   than two tokens are left out;
2. theta_d is inferred from the observed part alone by mean-field variational inference with the
   topics held fixed (Blei, Ng & Jordan 2003, Eqs. 6-7 with E[log beta] replaced by log beta, since a
   released matrix is a point estimate): phi_{dwk} ∝ exp(E_q[log theta_dk]) beta_kw and
   gamma_d = alpha + sum_w c_dw phi_dw, iterated to convergence; theta_d = gamma_d / sum(gamma_d)
   (:func:`topicdp.inference.infer_theta`);
3. perplexity = exp( - sum_d sum_w c'_dw log(sum_k theta_dk beta_kw) / sum_d sum_w c'_dw ) over the
   evaluation counts c' (the per-word perplexity of Blei, Ng & Jordan 2003, Sec. 7.1, on the evaluation
   tokens, with p(w | d) = sum_k theta_dk beta_kw).

Because the evaluated words were never used to fit theta_d, this measures prediction of unseen text
(unlike the ELBO bound on the training batch). It is not the left-to-right estimator (Wallach et al.
2009, Alg. 3), which is more faithful to the marginal likelihood but needs particles per token.
Closed forms: uniform topics give perplexity V exactly; a single topic p gives
exp(-sum c'_w log p_w / sum c'_w).

Zero probabilities: rows are normalised and floored at ``min_prob`` (then renormalised) so that a word
with zero probability under every topic costs -log(min_prob) instead of an infinite perplexity; the
same floor must be used for every mechanism that is compared.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_random_state, check_real
from .foldin import check_alpha, check_topic_word, fold_in_theta


def split_documents(X, observed_fraction: float = 0.5, random_state=None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Split each document's tokens at random into observed and evaluation parts (document completion).

    Parameters
    ----------
    X : sparse or dense (n_docs, V) counts
    observed_fraction : float in (0, 1)
        A document of length L contributes floor(observed_fraction L), clipped to [1, L - 1], observed
        tokens, drawn uniformly without replacement; documents with L < 2 get empty rows in both parts.
    random_state : None, int or Generator

    Returns
    -------
    X_observed, X_evaluate : csr_matrix
        ``X_observed + X_evaluate == X`` on documents with at least two tokens.
    """
    X = check_count_matrix(X, min_docs=0, integral=True, dtype=np.int64)  # document completion splits tokens
    f = check_real(observed_fraction, "observed_fraction", low=0.0, high=1.0)
    rng = check_random_state(random_state)
    counts = X.data
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    lengths = np.bincount(rows, weights=counts, minlength=X.shape[0]).astype(np.int64)
    n_obs = np.clip(np.floor(f * lengths).astype(np.int64), 1, np.maximum(lengths - 1, 1))
    n_obs[lengths < 2] = 0
    # one entry per token; a random key sorts tokens uniformly inside each document
    tok_doc = np.repeat(rows, counts)
    tok_word = np.repeat(X.indices, counts)
    order = np.lexsort((rng.random(tok_doc.size), tok_doc))
    tok_doc, tok_word = tok_doc[order], tok_word[order]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rank = np.arange(tok_doc.size) - starts[tok_doc]
    observed = rank < n_obs[tok_doc]
    evaluate = ~observed & (lengths[tok_doc] >= 2)
    shape = X.shape

    def build(mask):
        ones = np.ones(int(mask.sum()))
        M = sp.csr_matrix((ones, (tok_doc[mask], tok_word[mask])), shape=shape)
        M.sum_duplicates()
        return M

    return build(observed), build(evaluate)


def _row_dot(theta: np.ndarray, beta: np.ndarray, rows: np.ndarray, cols: np.ndarray, chunk: int = 200_000):
    """sum_k theta[rows, k] beta[k, cols] for each nonzero, in chunks to bound memory (nnz x K)."""
    out = np.empty(rows.size)
    for s in range(0, rows.size, chunk):
        r, c = rows[s : s + chunk], cols[s : s + chunk]
        out[s : s + chunk] = np.einsum("nk,kn->n", theta[r], beta[:, c])
    return out


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
    """Per-word perplexity of held-out documents by document completion (see module docstring).

    Parameters
    ----------
    topic_word : (K, V) array-like
        Released topics; non-negative rows (normalised here).
    X_heldout : (n_docs, V) integer counts
        Documents not used to fit the topics.
    alpha : float, optional
        Symmetric Dirichlet prior of the fold-in; default 1/K. Use the same value for every compared
        mechanism.
    observed_fraction : float, default=0.5
        Share of each document's tokens used to infer theta; the rest are evaluated.
    min_prob : float, default=1e-12
        Floor on word probabilities.
    max_iter, tol : fold-in stopping rule.
    random_state : seeds the token split (use the same seed across mechanisms for paired comparisons).

    Returns
    -------
    float
        exp(-log-likelihood of the evaluation tokens / their number).
    """
    beta = check_topic_word(topic_word, check_real(min_prob, "min_prob", low=0.0, high=1.0))
    X = check_count_matrix(X_heldout, "X_heldout", min_docs=0, n_words=beta.shape[1],
                           expected_by="the topic-word matrix", integral=True)
    X_obs, X_eval = split_documents(X, observed_fraction, random_state)
    if X_eval.nnz == 0:
        raise ValueError("X_heldout has no document with at least two tokens")
    theta = fold_in_theta(beta, X_obs, check_alpha(alpha, beta.shape[0]), check_int(max_iter, "max_iter", low=1), tol)
    rows = np.repeat(np.arange(X_eval.shape[0]), np.diff(X_eval.indptr))
    log_p = np.log(_row_dot(theta, beta, rows, X_eval.indices))
    return float(np.exp(-(X_eval.data * log_p).sum() / X_eval.data.sum()))
