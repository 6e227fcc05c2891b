"""The variational E-step of LDA: the numerical core of online LDA, vectorised over a minibatch.

Every road that runs LDA's local step imports it from here: DP-SVI (:mod:`topicdp.baselines.dpsvi`), the
DP variational EM (:mod:`topicdp.variational`) and the fold-in of new documents into released topics
(:mod:`topicdp.inference.foldin`, behind perplexity and ``transform``). Written with numpy/scipy because
gensim's internals are not an API, and because the sensitivity arguments of the private estimators need
each document to stop on its own (see :func:`batch_e_step`), which neither gensim nor scikit-learn does.

Notation follows Park et al. 2016 (§3): lambda (K x V) are the variational Dirichlet
parameters of the topics, gamma_d those of document d's proportions, phi_dn the topic responsibilities
of token n. With E[log beta_kv] = psi(lambda_kv) - psi(sum_v lambda_kv) (Blei, Ng & Jordan 2003, "Latent
Dirichlet Allocation", Appendix A.1):

    phi_dvk ∝ exp(E[log theta_dk]) exp(E[log beta_kv]),   gamma_d = alpha + sum_v c_dv phi_dv,

iterated per document to convergence (Blei et al. 2003 Eqs. 6-7; Hoffman, Blei & Bach 2010, "Online
learning for Latent Dirichlet Allocation", Alg. 2, E step, with the stopping rule on the mean absolute
change of gamma), and the minibatch's expected sufficient statistics are S[k, v] = sum_d c_dv phi_dvk
(the sum inside lambda~ of Hoffman et al. 2010's M step; Park et al. §3).

Two engines make this iteration (:func:`resolve_engine`): a compiled per-document loop
(:mod:`topicdp.inference._estep_numba`, when the optional ``fast`` extra, numba, is installed) and numpy,
which works on blocks of documents (the normalisers as one dot product per nonzero, the sum over words as a
sparse x dense product). Same start, same update, same per-document stopping rule: they differ by
floating-point rounding only. On 40,000 synthetic documents (V = 2,000, K = 10) a pass costs about 1/13
(numba) and 1/3 (numpy) of the earlier numpy code's (``benchmarks/speed/bench_estep.py``,
``docs/results/bench_estep.md``).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma

from .._extras import install_command


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
    """The engine that runs: ``"numba"`` or ``"numpy"``.

    ``None``/``"auto"`` read ``TOPICDP_ESTEP_ENGINE`` if set, else take numba when it can be imported. Both
    engines make the same iteration (same start, same update, same per-document stopping rule) and differ
    by floating-point rounding only (``tests/test_estep_fast.py``).
    """
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
    gamma0 : (B, K) array, optional
        Starting gamma of each document (a warm start, see :func:`document_gamma`). Privacy: if row d is a
        function of document d and of released (or public) topics only, e.g. document d's own gamma of the
        previous EM pass, then S_d still depends on document d and the released values alone, and the
        per-unit bound of :mod:`topicdp.variational` (every column of S_u sums to w_u a_uv, whatever the
        responsibilities phi) is untouched. A start shared across documents would not be allowed.
    engine : {"auto", "numba", "numpy"}, optional
        See :func:`resolve_engine`.

    Returns
    -------
    gamma : (B, K) array
    sstats : (K, V) array
        S = sum_d sum_v c_dv phi_dv; every column v sums to the batch's (weighted) count of word v, so the
        total mass equals the number of tokens (the identity behind the sensitivity bound).
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
    """The E-step's per-document iteration alone: gamma (B, K) with the topics held fixed.

    The one implementation of the update gamma_d = alpha + sum_v c_dv phi_dv (Blei et al. 2003 Eqs. 6-7,
    with phi substituted into the gamma update; Hoffman, Blei & Bach 2010, Alg. 2, E step) used both for
    fitting (:func:`batch_e_step`) and for folding in new documents (:func:`topicdp.inference.infer_theta`).
    Each document stops on its own (see :func:`batch_e_step`); a document without tokens keeps
    gamma = alpha. gamma starts at alpha + N_d / K (Blei et al. 2003, Fig. 6), or at ``gamma0``.

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
    gamma0 : (B, K) array, optional
        Warm start: row d is where document d's iteration starts (e.g. its own gamma of the previous EM
        pass). Row d of the result then depends on row d of ``X``, row d of ``gamma0`` and the topics only,
        as without it. Ignored for documents without tokens.
    engine : {"auto", "numba", "numpy"}, optional
        See :func:`resolve_engine`.

    Returns
    -------
    gamma : (B, K) array
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
    # numpy engine, in blocks of about BLOCK_NNZ nonzeros (whole documents) for cache locality
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
    """Per-nonzero data of the documents still being updated (stored contiguously, in order): counts c,
    word ids, their exp(E log beta_.v) rows, and the number of nonzeros of each document."""

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
        """exp(E log theta_d) * sum_v c_dv exp(E log beta_.v) / sum_k exp(E log theta_dk) exp(E log beta_kv).

        The normalisers are one dot product per nonzero; the sum over v is a sparse (docs x V) times
        dense (V x K) product, with no (nonzeros x K) temporary (``np.add.reduceat`` along axis 0, used
        before, was most of the E-step's time).
        """
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


def unit_norms(X, doc_units: np.ndarray, n_units: int | None = None) -> np.ndarray:
    """||a_u||_2 for each unit u, a_u the summed word counts of u's documents: (n_units,) float64 (no unit for a
    corpus without documents, whose statistics are zero)."""
    if n_units is None:
        n_units = int(doc_units.max()) + 1 if doc_units.size else 0
    indicator = sp.csr_matrix((np.ones(X.shape[0]), (doc_units, np.arange(X.shape[0]))), shape=(n_units, X.shape[0]))
    A = (indicator @ sp.csr_matrix(X)).tocsr()
    return np.sqrt(np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel())


def user_norm_weights(corpus, max_user_norm: float) -> np.ndarray:
    """Per-document weight ``min(1, max_user_norm / ||a_u||_2)``, a_u the summed word counts of the document's user:
    in a statistic so weighted no user's counts have a norm above ``max_user_norm`` (the norm the sampled
    sensitivity's Frobenius distance answers to), and a user's weight depends on their own documents alone."""
    norms = unit_norms(corpus.X, corpus.doc_users, corpus.n_users)
    return np.minimum(1.0, max_user_norm / np.maximum(norms, 1.0))[corpus.doc_users]


def statistic_from_gamma(X, gamma: np.ndarray, exp_elog_beta: np.ndarray, weights: np.ndarray,
                         eps: float | None = None, *, doc_users: np.ndarray | None = None,
                         max_user_norm: float | None = None) -> np.ndarray:
    """The E-step's sufficient statistic from the documents' final gamma, document d's counts weighted by w_d.

    S[k, v] = exp(E[log beta_kv]) sum_d w_d c_dv exp(E[log theta_dk]) / norm_phi_dv, with norm_phi_dv =
    exp(E[log theta_d]) . exp(E[log beta_v]) + eps (module docstring; Hoffman et al. 2010 Alg. 1): the statistic
    scikit-learn's ``_update_doc_distribution`` and gensim's ``LdaModel.inference`` accumulate after each
    document's coordinate ascent, which is a function of that document's final gamma. With every weight 1 it is
    theirs to rounding (tested), so a library's E-step runs as written and only the statistic is reweighted.

    Parameters
    ----------
    X : sparse matrix (n_docs, V)
        The counts the library's E-step was given.
    gamma : (n_docs, K) array
        Each document's final variational Dirichlet parameter (the prior included).
    exp_elog_beta : (K, V) array
    weights : (n_docs,) array
    eps : float, optional
        The normaliser's floor; default the machine epsilon of ``X``'s dtype (both libraries').
    doc_users, max_user_norm : (n_docs,) int array and float, optional
        With both, each user's share of each topic's row is capped too (:func:`user_topic_weights`).
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
    """Per-document, per-topic weights ``min(1, max_user_norm * (K pi_k) ** share_power / ||S_uk||_2)``, S_uk user
    u's part of the statistic's row k and pi_k topic k's share of the statistic's mass: (n_docs, K).

    A user's part of row k moves the normalised row by about ||S_uk|| / N_k (N_k the row's mass), so a user whose
    words fall in a small topic moves f more than the same norm spread over an average one; the cap is P's median
    user's norm in a topic of average mass (pi_k = 1/K) and shrinks with the topic's share (linearly, the default;
    ``share_power`` 2 is measured in ``benchmarks/privacy/sensitivity_tail.py``'s ``share-power`` caps).
    """
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
