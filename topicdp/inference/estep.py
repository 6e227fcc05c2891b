"""The variational E-step of LDA over a minibatch, shared by DP-SVI, the DP variational EM and fold-in; hand-written
because the private estimators' sensitivity arguments need each document to stop on its own, which neither gensim
nor scikit-learn does. With ``E[log beta_kv] = psi(lambda_kv) - psi(sum_v lambda_kv)`` (Blei, Ng & Jordan 2003,
"Latent Dirichlet Allocation", Appendix A.1), per document (their Eqs. 6-7; Hoffman, Blei & Bach 2010, Alg. 2)::

    phi_dvk ∝ exp(E[log theta_dk]) exp(E[log beta_kv]),   gamma_d = alpha + sum_v c_dv phi_dv,

with statistics ``S[k, v] = sum_d c_dv phi_dvk``. Two engines (:func:`resolve_engine`), compiled numba (the
``fast`` extra) and numpy, make the same iteration and differ by floating-point rounding only.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma

from .._extras import install_command


def dirichlet_expectation(a: np.ndarray) -> np.ndarray:
    """``E[log x] = psi(a) - psi(sum a)`` for x ~ Dirichlet(a) along the last axis (Blei et al. 2003, Appendix A.1)."""
    return digamma(a) - digamma(a.sum(axis=-1, keepdims=True))


#: E-step engines: "numba" (compiled, optional extra ``fast``), "numpy" (always available), "auto" (numba when
#: it can be imported). The environment variable ``TOPICDP_ESTEP_ENGINE`` overrides "auto" (for benchmarks).
ENGINES = ("auto", "numba", "numpy")

#: Nonzeros per block of the numpy engine: its (nonzeros x K) temporaries then stay within a few MB (cache).
BLOCK_NNZ = 1 << 16

#: The numpy engine drops stopped documents from its working set (a copy of their nonzeros) once at most this
#: fraction of it is still updating; until then stopped documents ride along and their results are discarded.
RESTRICT_AT = 0.75

_numba_module: object | None = None


def _numba_kernels():
    """The compiled kernels (:mod:`topicdp.inference._estep_numba`), or None when numba is missing."""
    global _numba_module
    if _numba_module is None:
        try:
            from . import _estep_numba
        except ImportError:
            _numba_module = False
        else:
            _numba_module = _estep_numba
    return _numba_module or None


def resolve_engine(engine: str | None = None) -> str:
    """The engine that runs, ``"numba"`` or ``"numpy"``: ``None``/``"auto"`` read ``TOPICDP_ESTEP_ENGINE``, else take
    numba when it can be imported."""
    if engine is None or engine == "auto":
        engine = os.environ.get("TOPICDP_ESTEP_ENGINE", "auto")
        if engine == "auto":
            return "numba" if _numba_kernels() is not None else "numpy"
    if engine not in ENGINES[1:]:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    if engine == "numba" and _numba_kernels() is None:
        raise ImportError(f"the numba E-step engine needs numba; install it with: {install_command('fast')}")
    return engine


def batch_e_step(X: sp.csr_matrix, exp_elog_beta: np.ndarray, alpha, *,
                 max_iter: int = 100, tol: float = 1e-3,
                 row_weights: np.ndarray | None = None, gamma0: np.ndarray | None = None,
                 engine: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(gamma, sufficient statistics) of a minibatch (Hoffman, Blei & Bach 2010, Alg. 2, E step).

    A document stops once the mean absolute change of its gamma is below ``tol``, *independently of the others*, so
    that S_d depends on document d alone (a joint rule would couple them through the iteration count).
    ``row_weights`` scale document d's statistics (the E-step sees raw counts); column v of S sums to the batch's
    weighted count of word v. ``gamma0``, a warm start, keeps that if its row d depends only on document d and
    released or public values (its own gamma of the previous pass), not if it is shared across documents.
    """
    X = _as_csr64(X)
    engine = resolve_engine(engine)
    beta_t = np.ascontiguousarray(exp_elog_beta.T, dtype=np.float64)
    gamma = document_gamma(X, exp_elog_beta, alpha, max_iter=max_iter, tol=tol, beta_t=beta_t, gamma0=gamma0,
                           engine=engine)
    weights = np.ones(X.shape[0]) if row_weights is None else np.asarray(row_weights, dtype=np.float64)
    if engine == "numba":
        out_t = np.zeros_like(beta_t)
        _numba_kernels().weighted_statistics(X.data, X.indices, X.indptr, beta_t, gamma, weights,
                                             out_t)
        return gamma, np.ascontiguousarray(out_t.T)
    if row_weights is not None:
        X = sp.csr_matrix((X.data * np.repeat(weights, np.diff(X.indptr)), X.indices, X.indptr), shape=X.shape)
    return gamma, _sufficient_statistics(X, gamma, exp_elog_beta, beta_t)


def document_gamma(X: sp.csr_matrix, exp_elog_beta: np.ndarray, alpha, *, max_iter: int = 100,
                   tol: float = 1e-3, beta_t: np.ndarray | None = None, gamma0: np.ndarray | None = None,
                   engine: str | None = None) -> np.ndarray:
    """The E-step's per-document iteration alone: gamma (B, K) with the topics held fixed, for fitting and for
    folding in documents (:func:`topicdp.inference.infer_theta`, where ``exp_elog_beta`` may be a released beta).

    Each document stops on its own; one without tokens keeps gamma = alpha; the start is ``alpha + N_d / K``
    (Blei et al. 2003, Fig. 6) or ``gamma0``.
    """
    return _document_gamma(X, exp_elog_beta, alpha, max_iter=max_iter, tol=tol, beta_t=beta_t, gamma0=gamma0,
                           engine=engine)[0]


def _as_csr64(X) -> sp.csr_matrix:
    X = sp.csr_matrix(X)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if not X.has_canonical_format:  # duplicate entries would be separate nonzeros of the same word
        X = X.copy()
        X.sum_duplicates()
    return X


def _document_gamma(X, exp_elog_beta, alpha, *, max_iter=100, tol=1e-3, beta_t=None, gamma0=None,
                    engine=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`document_gamma` and the number of updates each document made (its inner iterations)."""
    X = _as_csr64(X)
    k = exp_elog_beta.shape[0]
    if beta_t is None:
        beta_t = np.ascontiguousarray(exp_elog_beta.T, dtype=np.float64)
    nnz_per_doc = np.diff(X.indptr)
    alpha_k = np.ascontiguousarray(np.broadcast_to(np.asarray(alpha, dtype=np.float64), (k,)))
    if gamma0 is None:
        lengths = np.asarray(X.sum(axis=1)).ravel()
        gamma = alpha_k + np.repeat(lengths[:, None] / k, k, axis=1)
    else:
        gamma = np.array(gamma0, dtype=np.float64, order="C")
        if gamma.shape != (X.shape[0], k) or not np.all(np.isfinite(gamma)) or not np.all(gamma > 0):
            raise ValueError(f"gamma0 must be a positive finite ({X.shape[0]}, {k}) array, got shape {gamma.shape}")
        gamma[nnz_per_doc == 0] = alpha_k  # an empty document keeps gamma = alpha
    n_iter = np.zeros(X.shape[0], dtype=np.int64)
    if resolve_engine(engine) == "numba":
        _numba_kernels().gamma_iterations(X.data, X.indices, X.indptr, beta_t, alpha_k, gamma,
                                          int(max_iter), float(tol), n_iter)
        return gamma, n_iter
    # numpy engine, in blocks of about BLOCK_NNZ nonzeros (whole documents)
    bounds = np.unique(np.searchsorted(X.indptr, np.arange(0, X.nnz, BLOCK_NNZ), side="right") - 1)
    bounds = np.append(bounds[bounds < X.shape[0]], X.shape[0])
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        block = slice(lo, hi)
        rows = lo + np.flatnonzero(nnz_per_doc[block] > 0)  # empty documents have no nonzeros to iterate on
        nz = slice(X.indptr[lo], X.indptr[hi])
        state = _ActiveDocs(X.data[nz], X.indices[nz], beta_t, nnz_per_doc[rows])
        live = np.ones(rows.size, dtype=bool)  # documents of the working set that have not stopped
        for it in range(max_iter):
            if not live.any():
                break
            current = gamma[rows]
            new_gamma = alpha_k + state.gamma_increment(current)
            keep = live & (np.abs(new_gamma - current).mean(axis=1) >= tol)
            gamma[rows[live]] = new_gamma[live]  # a stopped document's gamma is never updated again
            n_iter[rows[live]] = it + 1
            live = keep
            if live.sum() <= RESTRICT_AT * live.size:  # copy the working set only once enough have stopped
                state = state.restrict(live)
                rows, live = rows[live], np.ones(int(live.sum()), dtype=bool)
    return gamma, n_iter


class _ActiveDocs:
    """Per-nonzero data of the documents still updating (contiguous): counts, word ids, their exp(E log beta) rows."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, beta_t: np.ndarray, counts: np.ndarray,
                 beta_nz: np.ndarray | None = None):
        self.data, self.indices, self.beta_t, self.counts = data, indices, beta_t, counts
        self.beta_nz = beta_t[indices] if beta_nz is None else beta_nz
        self.indptr = np.concatenate([[0], np.cumsum(counts)])

    def restrict(self, keep: np.ndarray) -> "_ActiveDocs":
        """The documents with ``keep`` True (every kept document keeps all its nonzeros)."""
        nz_mask = np.repeat(keep, self.counts)
        return _ActiveDocs(self.data[nz_mask], self.indices[nz_mask], self.beta_t, self.counts[keep],
                           self.beta_nz[nz_mask])

    def gamma_increment(self, gamma: np.ndarray) -> np.ndarray:
        """``exp(E log theta_d) * sum_v c_dv exp(E log beta_.v) / sum_k exp(E log theta_dk) exp(E log beta_kv)``."""
        exp_elog_theta = np.exp(dirichlet_expectation(gamma))
        theta_nz = np.repeat(exp_elog_theta, self.counts, axis=0)
        norms = np.einsum("nk,nk->n", theta_nz, self.beta_nz) + 1e-100  # 1e-100: no 0/0 on underflow
        ratio = sp.csr_matrix((self.data / norms, self.indices, self.indptr),
                              shape=(self.counts.size, self.beta_t.shape[0]))
        return exp_elog_theta * (ratio @ self.beta_t)


def _sufficient_statistics(X, gamma, exp_elog_beta, beta_t) -> np.ndarray:
    """S[k, v] = sum_d c_dv phi_dvk with phi from the *final* gamma in numerator and normaliser alike."""
    exp_elog_theta = np.exp(dirichlet_expectation(gamma))
    theta_nz = np.repeat(exp_elog_theta, np.diff(X.indptr), axis=0)
    norms = np.einsum("nk,nk->n", theta_nz, beta_t[X.indices]) + 1e-100
    R = sp.csr_matrix((X.data / norms, X.indices, X.indptr), shape=X.shape)
    return np.asarray((R.T @ exp_elog_theta).T) * exp_elog_beta


def unit_norms(X, doc_units: np.ndarray, n_units: int | None = None) -> np.ndarray:
    """``||a_u||_2`` for each unit u, ``a_u`` the summed word counts of u's documents."""
    if n_units is None:
        n_units = int(doc_units.max()) + 1 if doc_units.size else 0
    indicator = sp.csr_matrix((np.ones(X.shape[0]), (doc_units, np.arange(X.shape[0]))), shape=(n_units, X.shape[0]))
    A = (indicator @ sp.csr_matrix(X)).tocsr()
    return np.sqrt(np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel())


def user_norm_weights(corpus, max_user_norm: float) -> np.ndarray:
    """Per-document weight ``min(1, max_user_norm / ||a_u||_2)``: no user's weighted counts have a norm above the cap,
    and a user's weight depends on their own documents alone."""
    norms = unit_norms(corpus.X, corpus.doc_users, corpus.n_users)
    return np.minimum(1.0, max_user_norm / np.maximum(norms, 1.0))[corpus.doc_users]


def statistic_from_gamma(X, gamma: np.ndarray, exp_elog_beta: np.ndarray, weights: np.ndarray,
                         eps: float | None = None, *, doc_users: np.ndarray | None = None,
                         max_user_norm: float | None = None) -> np.ndarray:
    """The E-step's sufficient statistic from the documents' final gamma, document d's counts weighted by w_d.

    ``S[k, v] = exp(E[log beta_kv]) sum_d w_d c_dv exp(E[log theta_dk]) / norm_phi_dv``, ``norm_phi_dv =
    exp(E[log theta_d]) . exp(E[log beta_v]) + eps`` (Hoffman et al. 2010, Alg. 1): with unit weights what
    scikit-learn's and gensim's E-steps accumulate, so a library's E-step runs as written and only the statistic is
    reweighted. ``eps`` defaults to ``X``'s machine epsilon (both libraries'); ``doc_users`` with ``max_user_norm``
    also caps each user's part of each topic (:func:`user_topic_weights`).
    """
    X = sp.csr_matrix(X)
    exp_theta = np.exp(dirichlet_expectation(np.asarray(gamma, dtype=np.float64)))
    eps = np.finfo(X.dtype).eps if eps is None else eps
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    ratio = np.empty(X.data.size, dtype=np.float64)
    step = 1 << 16  # nonzeros a block: (step, K) temporaries
    for a in range(0, X.data.size, step):
        r, c = rows[a:a + step], X.indices[a:a + step]
        norm_phi = np.einsum("ik,ki->i", exp_theta[r], exp_elog_beta[:, c]) + eps
        ratio[a:a + step] = X.data[a:a + step] * weights[r] / norm_phi
    scaled = sp.csr_matrix((ratio, X.indices, X.indptr), shape=X.shape)
    if max_user_norm is not None:
        if doc_users is None:
            raise ValueError("max_user_norm caps each user's part of each topic: it needs doc_users")
        exp_theta = exp_theta * user_topic_weights(scaled, exp_theta, exp_elog_beta, doc_users, max_user_norm)
    return np.asarray((scaled.T @ exp_theta).T) * exp_elog_beta


def user_topic_weights(scaled: sp.csr_matrix, exp_theta: np.ndarray, exp_elog_beta: np.ndarray,
                       doc_users: np.ndarray, max_user_norm: float, share_power: float = 1.0) -> np.ndarray:
    """Per-document, per-topic weights ``min(1, max_user_norm (K pi_k)^share_power / ||S_uk||_2)``, ``S_uk`` user u's
    part of row k and ``pi_k`` topic k's share of the mass: the part moves the normalised row by about
    ``||S_uk|| / N_k``, so the cap shrinks with the topic's share."""
    scaled = sp.csr_matrix(scaled)
    rows = np.repeat(np.arange(scaled.shape[0]), np.diff(scaled.indptr))
    # S_uk[v] sums the nonzeros of u's documents at word v: group them by (user, word) once, then one pass a topic
    key = doc_users[rows].astype(np.int64) * scaled.shape[1] + scaled.indices
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(key[order]) != 0])
    group_users = key[order][starts] // scaled.shape[1]
    rows, cols, ratio = rows[order], scaled.indices[order], scaled.data[order]
    n_users, n_topics = int(doc_users.max()) + 1, exp_theta.shape[1]
    theta_by_topic = np.ascontiguousarray(exp_theta.T)  # contiguous rows: a gather each topic, not a strided one
    norms, mass = np.empty((n_users, n_topics)), np.empty(n_topics)
    for k in range(n_topics):
        part = np.add.reduceat(ratio * theta_by_topic[k].take(rows) * exp_elog_beta[k].take(cols), starts)
        mass[k] = part.sum()
        norms[:, k] = np.sqrt(np.bincount(group_users, weights=part * part, minlength=n_users))
    limit = max_user_norm * (n_topics * mass / mass.sum()) ** share_power
    return np.minimum(1.0, limit / np.maximum(norms, 1e-300))[doc_users]
