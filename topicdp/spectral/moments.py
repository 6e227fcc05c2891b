"""Empirical LDA moments from sparse counts, used only implicitly (DeCarolis et al. 2020, Lemma 3, App. C, Eqs. 2-9).

Notation (paper, App. C): ``c_n`` is the count vector of document ``n``, ``l_n = ||c_n||_1`` its length,
``N`` the number of documents kept (``l_n >= 3``). Per-document estimators (Eqs. 2-4, after Zou et al.
2013) average over ordered tuples of *distinct* token positions::

    M1^n = c_n / l_n
    M2^n = (c_n c_n^T - diag(c_n)) / (l_n (l_n - 1))
    M3^n = (c_n^{x3} - sum_ij c_i c_j (e_i e_i e_j + e_i e_j e_i + e_j e_i e_i) + 2 sum_i c_i e_i^{x3})
           / (l_n (l_n - 1) (l_n - 2))

and the LDA moments (Eqs. 5-9, in the U-statistic form used by the proof of Lemma 22, which is what makes
them unbiased) are::

    M2_hat = 1/N sum_n M2^n - a/(N(N-1)) sum_{n != m} M1^n (x) M1^m
    M3_hat = 1/N sum_n M3^n + b/(N(N-1)) sym3(sum_{n != m} M2^n (x) M1^m)
             + c/(N(N-1)(N-2)) sum_{n, m, p distinct} M1^n (x) M1^m (x) M1^p

with ``a = alpha0/(alpha0+1)``, ``b = -alpha0/(alpha0+2)``, ``c = 2 alpha0^2/((alpha0+1)(alpha0+2))`` and
``sym3(A (x) v) = A (x) v + [A_ac v_b] + [A_bc v_a]`` (the three placements B1, B2, B3 of Eq. 8).
Their expectations are the population moments of Lemma 3 in the *standard* form of Anandkumar et al.
(2012)::

    M2 = sum_i alpha_i / (alpha0 (alpha0+1)) mu_i mu_i^T
    M3 = sum_i 2 alpha_i / (alpha0 (alpha0+1) (alpha0+2)) mu_i^{x3}

Deviations from the text, each checked by a test:

* Lemma 3 writes ``-1/(alpha0+2)`` and ``+2/(alpha0(alpha0+1)(alpha0+2))`` in the definition of M3; the
  identity M3 = sum_i ... mu_i^{x3} holds with ``-alpha0/(alpha0+2)`` and ``+2 alpha0^2/((alpha0+1)(alpha0+2))``
  (the constants b, c of Eq. 7, which we use).
* Eq. 7 multiplies M3_hat by ``d = alpha0(alpha0+1)(alpha0+2)/2``; the sensitivity analysis (App. H.2) and
  Lemma 3 are for the unscaled estimator, which is what we compute.
* Eq. 8 defines ``[B3]_ijk = [B1]_kij``, which equals B2 because M2^n is symmetric; the unbiasedness
  proof needs the third placement ``[B1]_jki`` (M2 on modes 2, 3), which we use.
* Eqs. 8-9 as printed include the ``n = m`` (and ``n = m = p``) terms; the proof of Lemma 22 removes them
  (U-statistics), which is what we compute.

User level (per-user weighting)
-------------------------------
With documents grouped by user (``prepare_corpus(X, users=...)``), the moments average over the U users
that own at least one document with >= 3 tokens, each user's documents weighted by ``1/n_u``: with the
user statistics ``q_u = mean_{n in u} M1^n``, ``B_u = mean M2^n``, ``T_u = mean M3^n``::

    M2_hat = 1/U sum_u B_u - a/(U(U-1)) sum_{u != v} q_u (x) q_v
    M3_hat = 1/U sum_u T_u + b/(U(U-1)) sym3(sum_{u != v} B_u (x) q_v)
             + c/(U(U-1)(U-2)) sum_{u, v, w distinct} q_u (x) q_v (x) q_w

These are the document-level formulas with users in place of documents, so they are unbiased for the same
population moments whenever documents of *different* users are independent draws of the LDA model (pairs
within a user never enter a cross term, so within-user dependence, e.g. a shared topic mixture, does
not bias them). Every user has total weight 1 whatever its number of documents, which is what makes the
sensitivity a function of U alone (:mod:`.sensitivity`). With one document per user they are the
document-level moments exactly.

Zero units (the private estimator's stated count)
-------------------------------------------------
The non-private :class:`~topicdp.spectral.SpectralLDA` averages over the units that have a usable document
(>= 3 tokens), as above. The private :class:`~topicdp.spectral.DPSpectralMoments` must not: that number is a count
of the private data, and a neighbour whose unit is replaced by out-of-vocabulary or too-short texts changes
it. There the normaliser is the public number of units ``n`` (stated, or taken as public), counted *before*
filtering, and a unit with no usable document (every document shorter than 3 tokens, or empty) stays in the
count with zero statistics ``T_u = 0``, ``B_u = 0``, ``q_u = 0``::

    M2_hat = 1/n sum_u B_u - a/(n(n-1)) sum_{u != v} q_u (x) q_v                       (all n units)

and likewise for M3_hat with ``1/(n(n-1)(n-2))``: the sums run over all ordered pairs (triples) of distinct
units of the n, and a zero unit adds nothing to any of them. :func:`prepare_corpus` with ``n_units=`` builds
this form (``MomentDocuments.n_empty`` zero units besides the usable ones). With ``s = U/n`` the share of
usable units and the usable units drawn from the model, ``E[M2_hat] = s E[B] - a (U(U-1)/(n(n-1))) M1 M1^T``:
the first-order terms shrink by ``s``, the cross terms by about ``s^2`` (``s^3`` in M3), so
``E[M2_hat] ~ s M2 + s (1 - s) a M1 M1^T``. :mod:`.private` states what this bias costs.

Nothing of size d x d or d x d x d is formed: M2_hat is applied through sparse mat-vecs
(:class:`M2Operator`) and the whitened tensor ``M3_hat(W, W, W)`` is accumulated from projected documents
``y_n = W^T c_n`` (:func:`whitened_m3`) in O(nnz k + (N + d) k^3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_real

#: documents with fewer tokens than this have no third-order estimator (Eq. 4 divides by l(l-1)(l-2))
MIN_DOC_LENGTH = 3


def lda_coefficients(alpha0: float) -> tuple[float, float, float]:
    """``(a, b, c)`` of Eqs. 6-7: ``alpha0/(alpha0+1)``, ``-alpha0/(alpha0+2)``, ``2 alpha0^2/((alpha0+1)(alpha0+2))``."""
    a0 = check_real(alpha0, "alpha0", low=0.0)
    return a0 / (a0 + 1.0), -a0 / (a0 + 2.0), 2.0 * a0 * a0 / ((a0 + 1.0) * (a0 + 2.0))


@dataclass
class MomentDocuments:
    """The documents the moment estimators average over: the kept counts, their lengths and privacy units.

    Not a :class:`topicdp.Corpus` (no vocabulary or user ids): what :func:`prepare_corpus` derives from one.

    Attributes
    ----------
    X : csr_matrix of float64, shape (N, d)
        Counts of the kept documents (length >= 3).
    lengths : ndarray of float64, shape (N,)
    n_short : int
        Documents left out for having fewer than 3 tokens (in X as given; a private count).
    units : ndarray of int64, shape (N,), optional
        User index (0..U-1) of each kept document for per-user weighting; None at document level.
    n_empty : int, default 0
        Units with no kept document that still count in the normaliser ``n`` with zero statistics (module
        docstring, "Zero units"); 0 for the non-private estimator, which averages over usable units only.
    """

    X: sp.csr_matrix
    lengths: np.ndarray
    n_short: int
    units: np.ndarray | None = None
    n_empty: int = 0

    @property
    def n_used(self) -> int:
        """Units with at least one kept document (a private count wherever ``n_empty`` may be nonzero)."""
        if self.units is None:
            return self.n_docs
        return int(self.units.max()) + 1 if self.units.size else 0

    @property
    def n_units(self) -> int:
        """The normaliser n of the moments: the usable units and the zero units (``n_used + n_empty``)."""
        return self.n_used + self.n_empty

    def unit_sizes(self) -> np.ndarray:
        """``n_u`` of each kept document's unit (all ones at document level)."""
        if self.units is None:
            return np.ones(self.n_docs)
        return np.bincount(self.units).astype(np.float64)[self.units]

    def unit_averaging(self) -> sp.csr_matrix:
        """The (U, N) sparse matrix G with ``G[u, n] = 1/(n_u l_n)`` for n in u (U usable units): ``G X`` stacks
        the ``q_u`` (zero units have ``q_u = 0`` and no row)."""
        w = 1.0 / (self.unit_sizes() * self.lengths)
        units = np.arange(self.n_docs) if self.units is None else self.units
        return sp.csr_matrix((w, (units, np.arange(self.n_docs))), shape=(self.n_used, self.n_docs))

    @property
    def n_docs(self) -> int:
        return self.X.shape[0]

    @property
    def n_words(self) -> int:
        return self.X.shape[1]

    def inverse_falling(self, order: int) -> np.ndarray:
        """``1 / (l (l-1) ... (l-order+1))`` per document: the number of ordered distinct position tuples."""
        out = np.ones_like(self.lengths)
        for j in range(order):
            out /= self.lengths - j
        return out


def count_units(X, users=None) -> int:
    """Privacy units of a count matrix as given, before any filtering: its rows, or its distinct ``users``."""
    n_rows = X.shape[0]
    if users is None:
        return int(n_rows)
    return int(np.unique(np.asarray(users)).size)


def prepare_corpus(X, *, users=None, name: str = "X", n_units: int | None = None) -> MomentDocuments:
    """Validate a document-term count matrix and drop documents with fewer than 3 tokens.

    Parameters
    ----------
    X : sparse matrix or 2-D ndarray of counts, shape (n_docs, n_words)
    users : array-like of length n_docs, optional
        The owner of each document: the moments are then per-user weighted (module docstring). Users
        none of whose documents has 3 tokens have no estimator to contribute.
    n_units : int >= 3, optional
        The normaliser n of the private estimator (module docstring, "Zero units"): the units of X (rows, or
        distinct ``users``) and possibly units absent from X (e.g. dropped as empty when the corpus was built),
        at least as many as X has. Units without a document of >= 3 tokens then stay in n with zero statistics,
        and no check reads the number of usable ones. Without it (the non-private estimator), the moments
        average over the usable units, and at least 3 are required.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has fewer than 2 columns, has negative, non-integer or non-finite entries; without
        ``n_units``, if fewer than 3 documents (users) have 3 or more tokens; with it, if ``n_units`` is smaller
        than 3 or than the number of units of X.
    """
    # a canonical copy (the input is never modified); with n_units, X may hold no document at all: every unit is
    # then a zero unit, and the moments are the zero statistics that the noise is added to
    X = check_count_matrix(X, name, min_docs=0 if n_units is not None else 1, min_words=2, integral=True)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    keep = lengths >= MIN_DOC_LENGTH
    n_short = int((~keep).sum())
    if users is not None:
        users = np.asarray(users)
        if users.shape != (X.shape[0],):
            raise ValueError(f"users must have one entry per row of {name} ({X.shape[0]}), got shape {users.shape}")
    if n_units is not None:
        n_units = check_int(n_units, "n_units", low=3)
        found = count_units(X, users)
        if n_units < found:
            raise ValueError(f"n_units must be at least the number of {'users' if users is not None else 'documents'} "
                             f"of {name}, got {n_units}")
    elif not keep.any():
        raise ValueError(
            f"{name}: all {X.shape[0]} documents have fewer than {MIN_DOC_LENGTH} tokens; the third-order "
            "moment needs documents with at least 3 tokens"
        )
    units = None
    if users is not None:
        _, units = np.unique(users[keep], return_inverse=True)
        units = units.astype(np.int64).ravel()
    if n_short:
        X = X[keep]
    corpus = MomentDocuments(X=X, lengths=lengths[keep].astype(np.float64), n_short=n_short, units=units)
    if n_units is not None:
        corpus.n_empty = n_units - corpus.n_used
        return corpus
    if X.shape[0] < 3:
        raise ValueError(f"{name}: the U-statistics of M3 need at least 3 documents with >= 3 tokens, got {X.shape[0]}")
    if corpus.n_used < 3:
        raise ValueError(f"{name}: the U-statistics of M3 need at least 3 users owning a document with >= 3 tokens, "
                         f"got {corpus.n_used}")
    return corpus


#: documents per block in the passes over X (bounds the N x b temporaries to a few tens of MB)
ROW_CHUNK = 65_536


def row_chunks(X: sp.csr_matrix, chunk: int | None = None):
    """``(start, stop, X[start:stop])`` with the row blocks as views of X's data and indices (no copy)."""
    chunk = ROW_CHUNK if chunk is None else chunk
    n = X.shape[0]
    if n <= chunk:
        yield 0, n, X
        return
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        a, b = X.indptr[start], X.indptr[stop]
        block = sp.csr_matrix((X.data[a:b], X.indices[a:b], X.indptr[start:stop + 1] - a),
                              shape=(stop - start, X.shape[1]))
        yield start, stop, block


class M2Operator:
    """``M2_hat`` of Eq. 6 as a symmetric linear operator (never materialised).

    Document level: ``M2_hat = X^T diag(g) X - diag(h) - kappa S S^T`` with ``g_n = s2_n/N + kappa / l_n^2``,
    ``h = X^T s2 / N``, ``kappa = a/(N(N-1))``, ``S = sum_n c_n / l_n`` and ``s2_n = 1/(l_n(l_n-1))``:
    the first two terms are ``1/N sum_n M2^n`` and the last two are the U-statistic
    ``-a/(N(N-1)) (S S^T - sum_n M1^n M1^n^T)``.

    User level: the same with document weights ``v_n = 1/(U n_u)`` in place of ``1/N``, ``kappa = a/(U(U-1))``,
    ``S = sum_u q_u`` and ``sum_u q_u q_u^T = Z^T Z`` for the sparse (U, d) matrix ``Z = G X`` of user means.

    ``N`` (``U``) is ``corpus.n_units``: with zero units (module docstring) the sums run over the kept documents
    (usable users) only, since a zero unit adds nothing to any of them, and only the normalisers count it.
    """

    def __init__(self, corpus: MomentDocuments, alpha0: float):
        a, _, _ = lda_coefficients(alpha0)
        X, n = corpus.X, float(corpus.n_units)
        s1 = 1.0 / corpus.lengths
        s2 = corpus.inverse_falling(2)
        v = 1.0 / (n * corpus.unit_sizes())
        self.kappa = a / (n * (n - 1.0))
        if corpus.units is None:
            self.Z = None
            self.g = s2 * v + self.kappa * s1 * s1
        else:
            self.Z = sp.csr_matrix(corpus.unit_averaging() @ X)
            self.g = s2 * v
        self.h = np.asarray(X.T @ (s2 * v)).ravel()
        self.S = np.asarray(X.T @ (s1 / corpus.unit_sizes())).ravel()
        self.X = X
        self.shape = (X.shape[1], X.shape[1])
        self.dtype = np.dtype(np.float64)

    def matmat(self, Q: np.ndarray) -> np.ndarray:
        """``M2_hat @ Q`` for a (d, b) block, in O(nnz b + d b)."""
        Q = np.asarray(Q, dtype=np.float64)
        vec = Q.ndim == 1
        Q2 = Q[:, None] if vec else Q
        out = np.zeros((self.shape[0], Q2.shape[1]))
        for start, stop, Xc in row_chunks(self.X):  # X^T diag(g) X Q by row blocks: O(chunk b) memory
            XQ = Xc @ Q2
            XQ *= self.g[start:stop, None]
            out += Xc.T @ XQ
        out -= self.h[:, None] * Q2
        out -= self.kappa * np.outer(self.S, self.S @ Q2)
        if self.Z is not None:
            out += self.kappa * (self.Z.T @ (self.Z @ Q2))
        return out[:, 0] if vec else out

    __matmul__ = matmat

    def dense(self) -> np.ndarray:
        """The explicit d x d matrix (tests and tiny vocabularies only)."""
        return self.matmat(np.eye(self.shape[0]))


def sym3_outer(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A_ab v_c + A_ac v_b + A_bc v_a`` for symmetric ``A`` (k, k): the three placements of Eq. 8."""
    t = A[:, :, None] * v[None, None, :]
    return t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0)


def _sum_cubes(Y: np.ndarray, weights: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``sum_n weights_n y_n^{x3}`` by BLAS over document chunks, using symmetry in the last two modes.

    Only the k(k+1)/2 products ``y_b y_c`` with ``b <= c`` are formed (half the flops of the full
    Khatri-Rao product); the result is filled back symmetrically.
    """
    n, k = Y.shape
    iu, ju = np.triu_indices(k)
    acc = np.zeros((k, iu.size))
    for start in range(0, n, chunk):
        Yc = Y[start:start + chunk]
        pairs = Yc[:, iu] * Yc[:, ju]  # (chunk, k(k+1)/2)
        acc += (Yc * weights[start:start + chunk, None]).T @ pairs
    out = np.empty((k, k, k))
    out[:, iu, ju] = acc
    out[:, ju, iu] = acc
    return out


def _sum_rows_cubes(W: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``sum_i beta_i w_i^{x3}`` over the d rows of W (Eq. 4's diagonal term, whitened)."""
    return _sum_cubes(W, beta)


def _sum_rows_sq_outer(W: np.ndarray, Z: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``sum_i w_i (x) w_i (x) z_i`` over the d rows of W and Z (the pair-diagonal terms of Eq. 4), in O(d k^3)."""
    d, k = W.shape
    out = np.zeros((k * k, k))
    for start in range(0, d, chunk):
        Wc = W[start:start + chunk]
        pairs = (Wc[:, :, None] * Wc[:, None, :]).reshape(Wc.shape[0], k * k)
        out += pairs.T @ Z[start:start + chunk]
    return out.reshape(k, k, k)


def whitened_m3(corpus: MomentDocuments, alpha0: float, W: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """``M3_hat(W, W, W)`` (k x k x k) from projected documents, never forming a d x d x d array.

    With ``y_n = W^T c_n``, ``w_i`` the i-th row of W, ``s_j = 1/(l(l-1)...(l-j+1))``, ``b' = b/(N(N-1))``,
    ``c' = c/(N(N-1)(N-2))``, ``P = sum_n y_n/l_n`` (N is ``corpus.n_units``; the power sums over distinct
    tuples below are identities over any set of vectors, so zero units enter through N only), expanding
    Eqs. 4-9 through W gives::

        T = sum_n omega_n y_n^{x3} + sum_i beta_i w_i^{x3} + sym3(sum_i w_i w_i^T (x) zeta_i)
            + sym3(K (x) P) + c' P^{x3}
        omega_n = s3_n/N - 3 b' s2_n s1_n + 2 c' s1_n^3          beta = 2 X^T s3 / N
        zeta    = -X^T(s3 Y)/N + b' X^T(s2 s1 Y)                   (d x k)
        K       = b' (Y^T diag(s2) Y - W^T diag(X^T s2) W) - c' Y^T diag(s1^2) Y

    (A: ``1/N sum_n M3^n``; B: ``b' sym3((sum_n M2^n) (x) P - sum_n M2^n (x) y_n/l_n)``; b-term:
    ``c' (P^3 - sym3(sum_n p_n p_n^T (x) P) + 2 sum_n p_n^3)`` with ``p_n = y_n/l_n``.)
    Cost O(nnz k + N k^3/2 + d k^3).

    Parameters
    ----------
    corpus : MomentDocuments
    alpha0 : float
    W : ndarray (d, k)
        Any d x k matrix (the whitening matrix in the algorithm).
    Y : ndarray (N, k), optional
        ``X @ W`` if already computed.
    """
    if corpus.units is not None:
        return _whitened_m3_users(corpus, alpha0, np.asarray(W, dtype=np.float64))
    _, b, c = lda_coefficients(alpha0)
    X, N = corpus.X, float(corpus.n_units)  # n: the kept documents and any zero units (module docstring)
    W = np.asarray(W, dtype=np.float64)
    k = W.shape[1]
    s1 = 1.0 / corpus.lengths
    s2 = corpus.inverse_falling(2)
    s3 = corpus.inverse_falling(3)
    bp = b / (N * (N - 1.0))
    cp = c / (N * (N - 1.0) * (N - 2.0))
    omega = s3 / N - 3.0 * bp * s2 * s1 + 2.0 * cp * s1 ** 3

    # one pass over document blocks accumulates every document sum (no N x k array is kept)
    T = np.zeros((k, k, k))
    zeta = np.zeros((X.shape[1], k))
    YsY2 = np.zeros((k, k))
    YsY11 = np.zeros((k, k))
    P = np.zeros(k)
    for start, stop, Xc in row_chunks(X):
        Yc = np.asarray(Xc @ W) if Y is None else Y[start:stop]
        sl = slice(start, stop)
        T += _sum_cubes(Yc, omega[sl])
        zeta += Xc.T @ (Yc * (bp * s2[sl] * s1[sl] - s3[sl] / N)[:, None])
        YsY2 += (Yc * s2[sl, None]).T @ Yc
        YsY11 += (Yc * (s1[sl] * s1[sl])[:, None]).T @ Yc
        P += Yc.T @ s1[sl]
    T += _sum_rows_cubes(W, 2.0 * np.asarray(X.T @ s3).ravel() / N)
    T += _sym3_tensor(_sum_rows_sq_outer(W, zeta))
    v2 = np.asarray(X.T @ s2).ravel()
    K = bp * (YsY2 - (W * v2[:, None]).T @ W) - cp * YsY11
    T += sym3_outer(K, P)
    T += cp * np.einsum("a,b,c->abc", P, P, P)
    return T


def _whitened_m3_users(corpus: MomentDocuments, alpha0: float, W: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``M3_hat(W, W, W)`` of the per-user weighted moments (module docstring), in O(nnz k + N k^3 + d k^3).

    With ``v_n = 1/(U n_u)``, ``b' = b/(U(U-1))``, ``c' = c/(U(U-1)(U-2))``, user means ``q_u`` (whitened),
    ``P = sum_u q_u`` and ``SB = sum_u B_u(W, W)``::

        T = sum_n v_n M3^n(W, W, W) + b' (sym3(SB (x) P) - sym3(sum_u B_u (x) q_u))
            + c' (P^{x3} - sym3(sum_u q_u q_u^T (x) P) + 2 sum_u q_u^{x3})

    ``sum_u B_u (x) q_u = sum_n (s2_n/n_u) (y_n y_n^T - W^T diag(c_n) W) (x) q_{u(n)}``. Keeps the N x k
    projected documents (user-level corpora are the smaller ones).
    """
    _, b, c = lda_coefficients(alpha0)
    X, U = corpus.X, float(corpus.n_units)
    k = W.shape[1]
    size = corpus.unit_sizes()
    s2, s3 = corpus.inverse_falling(2), corpus.inverse_falling(3)
    v = 1.0 / (U * size)
    bp = b / (U * (U - 1.0))
    cp = c / (U * (U - 1.0) * (U - 2.0))
    Y = np.asarray(X @ W)
    q = np.asarray(corpus.unit_averaging() @ Y)  # (U, k) whitened user means
    P = q.sum(axis=0)
    Qn = q[corpus.units]
    # 1/U sum_u T_u = sum_n v_n M3^n(W, W, W)  (Eq. 4 through W)
    T = _sum_cubes(Y, v * s3)
    T += _sum_rows_cubes(W, 2.0 * np.asarray(X.T @ (v * s3)).ravel())
    T -= _sym3_tensor(_sum_rows_sq_outer(W, X.T @ (Y * (v * s3)[:, None])))
    # b-term
    w2 = s2 / size
    SB = (Y * w2[:, None]).T @ Y - (W * np.asarray(X.T @ w2).ravel()[:, None]).T @ W
    BQ = np.zeros((k * k, k))
    for start in range(0, Y.shape[0], chunk):
        Yc = Y[start:start + chunk]
        pairs = ((Yc * w2[start:start + chunk, None])[:, :, None] * Yc[:, None, :]).reshape(Yc.shape[0], k * k)
        BQ += pairs.T @ Qn[start:start + chunk]
    BQ = BQ.reshape(k, k, k) - _sum_rows_sq_outer(W, X.T @ (Qn * w2[:, None]))
    T += bp * (sym3_outer(SB, P) - _sym3_tensor(BQ))
    # c-term: the sum over distinct ordered user triples
    T += cp * (np.einsum("a,b,c->abc", P, P, P) - sym3_outer(q.T @ q, P) + 2.0 * _sum_cubes(q, np.ones(q.shape[0])))
    return T


def _sym3_tensor(t: np.ndarray) -> np.ndarray:
    """``t_abc + t_acb + t_cba`` for t symmetric in its first two modes (the three placements of mode c)."""
    return t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0)


# -- explicit references (tests, tiny d) ---------------------------------------------------------------

def explicit_moments(X, alpha0: float, users=None, n_units: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense ``(M1_hat, M2_hat, M3_hat)`` straight from Eqs. 2-9 by loops over documents (tiny d, N only).

    An independent implementation for tests: per-document estimators are built from the definitions
    and the U-statistics by summing over distinct index tuples explicitly (O(N^3 d^3)). With ``users``,
    each user's estimators are first averaged over its documents and the users play the documents' part.
    With ``n_units``, the units without a usable document are appended as explicit zero statistics until
    there are ``n_units`` of them, and the loops run over all of them (module docstring, "Zero units").
    """
    corpus = prepare_corpus(X, users=users, n_units=n_units)
    a, b, c = lda_coefficients(alpha0)
    Xd = corpus.X.toarray()
    d = Xd.shape[1]
    m1, m2, m3 = [], [], []
    eye = np.eye(d)
    for cn in Xd:
        l = cn.sum()
        m1.append(cn / l)
        m2.append((np.outer(cn, cn) - np.diag(cn)) / (l * (l - 1)))
        t = np.einsum("i,j,k->ijk", cn, cn, cn)
        cc = np.outer(cn, cn)
        pair = np.einsum("ij,ia,ib,jc->abc", cc, eye, eye, eye)  # sum_ij c_i c_j e_i e_i e_j
        t -= pair + pair.transpose(0, 2, 1) + pair.transpose(2, 1, 0)
        t += 2 * np.einsum("i,ia,ib,ic->abc", cn, eye, eye, eye)
        m3.append(t / (l * (l - 1) * (l - 2)))
    if corpus.units is not None:  # per-user means of the per-document estimators
        groups = [np.flatnonzero(corpus.units == u) for u in range(corpus.n_used)]
        m1, m2, m3 = ([np.mean([m[i] for i in g], axis=0) for g in groups] for m in (m1, m2, m3))
    m1 = list(m1) + [np.zeros(d)] * corpus.n_empty
    m2 = list(m2) + [np.zeros((d, d))] * corpus.n_empty
    m3 = list(m3) + [np.zeros((d, d, d))] * corpus.n_empty
    N = len(m1)
    M1 = np.mean(m1, axis=0)
    cross2 = sum(np.outer(m1[n], m1[m]) for n in range(N) for m in range(N) if n != m)
    M2 = np.mean(m2, axis=0) - a / (N * (N - 1)) * cross2
    B1 = sum(np.einsum("ab,c->abc", m2[n], m1[m]) for n in range(N) for m in range(N) if n != m)
    B = B1 + B1.transpose(0, 2, 1) + B1.transpose(2, 1, 0)
    cube = sum(np.einsum("a,b,c->abc", m1[n], m1[m], m1[p])
               for n in range(N) for m in range(N) for p in range(N) if len({n, m, p}) == 3)
    M3 = np.mean(m3, axis=0) + b / (N * (N - 1)) * B + c / (N * (N - 1) * (N - 2)) * cube
    return M1, M2, M3


def population_moments(topic_word: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lemma 3 (standard constants): ``M1 = sum w_i mu_i``, ``M2 = sum alpha_i/(a0(a0+1)) mu_i mu_i^T``,
    ``M3 = sum 2 alpha_i/(a0(a0+1)(a0+2)) mu_i^{x3}`` (dense; small d only)."""
    mu = np.asarray(topic_word, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    a0 = alpha.sum()
    M1 = (alpha / a0) @ mu
    M2 = (mu.T * (alpha / (a0 * (a0 + 1)))) @ mu
    M3 = np.einsum("i,ia,ib,ic->abc", 2 * alpha / (a0 * (a0 + 1) * (a0 + 2)), mu, mu, mu)
    return M1, M2, M3
