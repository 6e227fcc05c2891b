"""The E-step as it was before the fast-estep branch (topicdp/inference/estep.py at main, deae66f), kept
verbatim as the reference the new engines are tested against (tests/test_estep_fast.py) and timed against
(benchmarks/speed/bench_estep.py). Not part of the package."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma


def dirichlet_expectation(a: np.ndarray) -> np.ndarray:
    """E[log x] for x ~ Dirichlet(a), row-wise: psi(a) - psi(sum a) (Blei et al. 2003, Eq. 8 / Appendix A.1).

    Parameters
    ----------
    a : (..., K) array
        Positive Dirichlet parameters; the last axis is the simplex.

    Returns
    -------
    ndarray, same shape as ``a``
    """
    return digamma(a) - digamma(a.sum(axis=-1, keepdims=True))


def batch_e_step(X: sp.csr_matrix, exp_elog_beta: np.ndarray, alpha, *,
                 max_iter: int = 100, tol: float = 1e-3,
                 row_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Local variational step for a minibatch; returns (gamma, sufficient statistics).

    The E step of Hoffman, Blei & Bach 2010, Alg. 2 (Blei et al. 2003 Eqs. 6-7 per document), every
    document of the batch at once, and the statistics its M step consumes.

    Parameters
    ----------
    X : csr_matrix (B, V)
        Token counts of the minibatch (possibly fractional after length capping).
    exp_elog_beta : (K, V) array
        exp(E[log beta]) from the current lambda.
    alpha : float or (K,) array
        Dirichlet prior on theta (symmetric for a float).
    max_iter, tol : int, float
        A document stops updating once the mean absolute change of its gamma is below ``tol``
        (Hoffman's rule), *independently of the other documents*: a joint stopping rule would let one
        document's presence change another's statistics (through the iteration count), and the
        sensitivity argument needs S_d to depend on document d alone.
    row_weights : (B,) array, optional
        Scale document d's statistics by ``row_weights[d]`` (the E-step itself sees the raw counts); the
        per-unit weighting of :mod:`topicdp.variational`.

    Returns
    -------
    gamma : (B, K) array
    sstats : (K, V) array
        S = sum_d sum_v c_dv phi_dv; every column v sums to the batch's (weighted) count of word v, so the
        total mass equals the number of tokens (the identity behind the sensitivity bound).
    """
    X = sp.csr_matrix(X)
    beta_t = np.ascontiguousarray(exp_elog_beta.T)
    gamma = document_gamma(X, exp_elog_beta, alpha, max_iter=max_iter, tol=tol, beta_t=beta_t)
    if row_weights is not None:
        X = sp.csr_matrix((X.data * np.repeat(row_weights, np.diff(X.indptr)), X.indices, X.indptr), shape=X.shape)
    return gamma, _sufficient_statistics(X, gamma, exp_elog_beta, beta_t)


def document_gamma(X: sp.csr_matrix, exp_elog_beta: np.ndarray, alpha, *, max_iter: int = 100,
                   tol: float = 1e-3, beta_t: np.ndarray | None = None) -> np.ndarray:
    """The E-step's per-document iteration alone: gamma (B, K) with the topics held fixed.

    The one implementation of the update gamma_d = alpha + sum_v c_dv phi_dv (Blei et al. 2003 Eqs. 6-7,
    with phi substituted into the gamma update) used both for fitting (:func:`batch_e_step`) and for
    folding in new documents (:func:`topicdp.inference.infer_theta`). Each document stops on its own (see
    :func:`batch_e_step`); a document without tokens keeps gamma = alpha. gamma starts at
    alpha + N_d / K (Blei et al. 2003, Fig. 6).

    Parameters
    ----------
    X : csr_matrix (B, V)
        Token counts.
    exp_elog_beta : (K, V) array
        exp(E[log beta]) of the fitted topics, or a released point estimate beta itself (fold-in).
    alpha : float or (K,) array
        Dirichlet prior on theta.
    max_iter, tol : int, float
        Per-document stopping rule (see :func:`batch_e_step`).
    beta_t : (V, K) array, optional
        ``exp_elog_beta.T`` as a C-contiguous array, when the caller already has it.

    Returns
    -------
    gamma : (B, K) array
    """
    X = sp.csr_matrix(X)
    k = exp_elog_beta.shape[0]
    if beta_t is None:
        beta_t = np.ascontiguousarray(exp_elog_beta.T)
    nnz_per_doc = np.diff(X.indptr)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    gamma = alpha + np.repeat(lengths[:, None] / k, k, axis=1)
    active = np.flatnonzero(nnz_per_doc > 0)  # an empty document keeps gamma = alpha (and has no nonzeros)
    state = _ActiveDocs(X.data, beta_t[X.indices], nnz_per_doc[active])
    for _ in range(max_iter):
        if active.size == 0:
            break
        new_gamma = alpha + state.gamma_increment(gamma[active])
        keep = np.abs(new_gamma - gamma[active]).mean(axis=1) >= tol
        gamma[active] = new_gamma
        if not keep.all():  # drop converged documents from the working set
            state = state.restrict(np.repeat(keep, state.counts), np.flatnonzero(keep))
            active = active[keep]
    return gamma


class _ActiveDocs:
    """Per-nonzero data of the documents still being updated: counts c, exp(E log beta_.v) rows, and
    the number of nonzeros of each document (documents stored contiguously, in order)."""

    def __init__(self, data: np.ndarray, beta_nz: np.ndarray, counts: np.ndarray):
        self.data, self.beta_nz, self.counts = data, beta_nz, counts

    def restrict(self, nz_mask: np.ndarray, doc_index: np.ndarray) -> "_ActiveDocs":
        return _ActiveDocs(self.data[nz_mask], self.beta_nz[nz_mask], self.counts[doc_index])

    def gamma_increment(self, gamma: np.ndarray) -> np.ndarray:
        """exp(E log theta_d) * sum_v c_dv exp(E log beta_.v) / sum_k exp(E log theta_dk) exp(E log beta_kv)."""
        exp_elog_theta = np.exp(dirichlet_expectation(gamma))
        theta_nz = np.repeat(exp_elog_theta, self.counts, axis=0)
        norms = np.einsum("nk,nk->n", theta_nz, self.beta_nz) + 1e-100  # 1e-100: no 0/0 on underflow
        weighted = (self.data / norms)[:, None] * self.beta_nz
        starts = np.cumsum(self.counts) - self.counts  # every active document has >= 1 nonzero
        return exp_elog_theta * np.add.reduceat(weighted, starts, axis=0)


def _sufficient_statistics(X, gamma, exp_elog_beta, beta_t) -> np.ndarray:
    """S[k, v] = sum_d c_dv phi_dvk with phi from the *final* gamma in numerator and normaliser alike."""
    exp_elog_theta = np.exp(dirichlet_expectation(gamma))
    theta_nz = np.repeat(exp_elog_theta, np.diff(X.indptr), axis=0)
    norms = np.einsum("nk,nk->n", theta_nz, beta_t[X.indices]) + 1e-100
    R = sp.csr_matrix((X.data / norms, X.indices, X.indptr), shape=X.shape)
    return np.asarray((R.T @ exp_elog_theta).T) * exp_elog_beta


def document_sstats(X: sp.csr_matrix, exp_elog_beta: np.ndarray, alpha: float, **kwargs) -> list[np.ndarray]:
    """Per-document S_d (K x V each); for checking the sensitivity bound by brute force on tiny corpora.

    Parameters
    ----------
    X : csr_matrix (B, V)
    exp_elog_beta : (K, V) array
    alpha : float
    **kwargs
        Passed to :func:`batch_e_step`.

    Returns
    -------
    list of (K, V) arrays, one per row of ``X``
    """
    return [batch_e_step(X[i], exp_elog_beta, alpha, **kwargs)[1] for i in range(X.shape[0])]
