"""Empirical LDA moments from sparse counts, used only implicitly (DeCarolis et al. 2020, Lemma 3, App. C, Eqs. 2-9).

With ``c_n`` document n's counts and ``l_n >= 3`` its length, the per-document estimators (Eqs. 2-4, after Zou et
al. 2013) average over ordered tuples of distinct positions::

    M1^n = c_n / l_n        M2^n = (c_n c_n^T - diag(c_n)) / (l_n (l_n - 1))
    M3^n = (c_n^{x3} - sum_ij c_i c_j (e_i e_i e_j + e_i e_j e_i + e_j e_i e_i) + 2 sum_i c_i e_i^{x3})
           / (l_n (l_n - 1) (l_n - 2))

and the LDA moments, in the unbiased U-statistic form of the proof of Lemma 22::

    M2_hat = 1/N sum_n M2^n - a/(N(N-1)) sum_{n != m} M1^n (x) M1^m
    M3_hat = 1/N sum_n M3^n + b/(N(N-1)) sym3(sum_{n != m} M2^n (x) M1^m)
             + c/(N(N-1)(N-2)) sum_{n, m, p distinct} M1^n (x) M1^m (x) M1^p

(``a, b, c``: :func:`lda_coefficients`), whose expectations are Anandkumar et al.'s (2012) M2 and M3. Deviations
from the text, each tested: Lemma 3's constants ``-1/(alpha0+2)`` and ``+2/(alpha0(alpha0+1)(alpha0+2))`` are
wrong (we use Eq. 7's); Eq. 7's scaling by ``alpha0(alpha0+1)(alpha0+2)/2`` is dropped (App. H.2 analyses the
unscaled estimator); Eq. 8's third placement must be ``[B1]_jki``; Eqs. 8-9's ``n = m`` terms are removed.

User level: the users play the documents' part, each user's statistics ``(T_u, B_u, q_u)`` the means of its
documents' estimators: unbiased when different users are independent, and every user has total weight 1, so the
sensitivity depends on the number of units alone (:mod:`.sensitivity`). Zero units: the private estimator
normalises by the public number of units ``n``; a unit without a document of 3 tokens stays in n with zero
statistics. With ``s`` the usable share, ``E[M2_hat] ~ s M2 + s (1 - s) a M1 M1^T``, a bias :mod:`.private` states.
Nothing of size d x d or d^3 is formed (:class:`M2Operator`, :func:`whitened_m3`).
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
    """The documents the moment estimators average over: the kept counts (``X``, length >= 3), their ``lengths``, the
    user index of each (``units``, None at document level), ``n_short`` documents left out (a private count) and
    ``n_empty`` zero units that still count in the normaliser (module docstring).
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
        """The (U, N) matrix ``G[u, n] = 1/(n_u l_n)`` for n in u: ``G X`` stacks the ``q_u``."""
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
    return int(X.shape[0]) if users is None else int(np.unique(np.asarray(users)).size)


def prepare_corpus(X, *, users=None, name: str = "X", n_units: int | None = None) -> MomentDocuments:
    """Validate a document-term count matrix and drop documents with fewer than 3 tokens.

    ``users``: each document's owner (per-user weighted moments). ``n_units``: the private estimator's public
    normaliser, at least the units of X; units without a usable document count with zero statistics (X may hold
    none) and no check reads how many are usable. Without it, at least 3 usable units are required.
    """
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
        if n_units < count_units(X, users):
            raise ValueError(f"n_units must be at least the number of {'users' if users is not None else 'documents'} "
                             f"of {name}, got {n_units}")
    elif not keep.any():
        raise ValueError(f"{name}: all {X.shape[0]} documents have fewer than {MIN_DOC_LENGTH} tokens; the third-order "
                         "moment needs documents with at least 3 tokens")
    units = None if users is None else np.unique(users[keep], return_inverse=True)[1].astype(np.int64).ravel()
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
    ``h = X^T s2 / N``, ``kappa = a/(N(N-1))``, ``S = sum_n c_n / l_n`` and ``s2_n = 1/(l_n(l_n-1))``. User level:
    weights ``1/(U n_u)`` in place of ``1/N``, ``S = sum_u q_u`` and the diagonal of the U-statistic ``Z^T Z`` for
    ``Z = G X``. N (U) counts the zero units too.
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
    return _sym3_tensor(A[:, :, None] * v[None, None, :])


def _sum_cubes(Y: np.ndarray, weights: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``sum_n weights_n y_n^{x3}`` by BLAS over chunks, forming only the products ``y_b y_c`` with ``b <= c``."""
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


def _sum_pair_outer(A: np.ndarray, B: np.ndarray, Z: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``sum_i a_i (x) b_i (x) z_i`` over the rows of A, B and Z (e.g. Eq. 4's pair-diagonal terms), in O(d k^3)."""
    d, k = A.shape
    out = np.zeros((k * k, k))
    for start in range(0, d, chunk):
        Ac, Bc = A[start:start + chunk], B[start:start + chunk]
        pairs = (Ac[:, :, None] * Bc[:, None, :]).reshape(Ac.shape[0], k * k)
        out += pairs.T @ Z[start:start + chunk]
    return out.reshape(k, k, k)


def whitened_m3(corpus: MomentDocuments, alpha0: float, W: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """``M3_hat(W, W, W)`` (k x k x k) from projected documents ``y_n = W^T c_n``, never forming a d^3 array.

    With ``s_j = 1/(l(l-1)...(l-j+1))``, ``b' = b/(N(N-1))``, ``c' = c/(N(N-1)(N-2))``, ``P = sum_n y_n/l_n`` and
    ``w_i`` the rows of W, Eqs. 4-9 through W give::

        T = sum_n omega_n y_n^{x3} + sum_i beta_i w_i^{x3} + sym3(sum_i w_i w_i^T (x) zeta_i)
            + sym3(K (x) P) + c' P^{x3}
        omega_n = s3_n/N - 3 b' s2_n s1_n + 2 c' s1_n^3          beta = 2 X^T s3 / N
        zeta    = -X^T(s3 Y)/N + b' X^T(s2 s1 Y)                   (d x k)
        K       = b' (Y^T diag(s2) Y - W^T diag(X^T s2) W) - c' Y^T diag(s1^2) Y

    in O(nnz k + N k^3/2 + d k^3). ``Y``: ``X @ W`` if already computed.
    """
    if corpus.units is not None:
        return _whitened_m3_users(corpus, alpha0, np.asarray(W, dtype=np.float64))
    _, b, c = lda_coefficients(alpha0)
    X, N = corpus.X, float(corpus.n_units)  # n: the kept documents and any zero units (module docstring)
    W = np.asarray(W, dtype=np.float64)
    s1, s2, s3 = 1.0 / corpus.lengths, corpus.inverse_falling(2), corpus.inverse_falling(3)
    bp, cp = b / (N * (N - 1.0)), c / (N * (N - 1.0) * (N - 2.0))
    acc = _m3_sums(X.shape[1], W.shape[1])
    for start, stop, Xc in row_chunks(X):  # one pass over document blocks: no N x k array is kept
        sl = slice(start, stop)
        _add_m3_sums(acc, Xc, np.asarray(Xc @ W) if Y is None else Y[sl], s1[sl], s2[sl], s3[sl], N, bp, cp)
    return _finish_m3(acc, W, np.asarray(X.T @ s2).ravel(), np.asarray(X.T @ s3).ravel(), N, bp, cp)


def _m3_sums(d: int, k: int) -> dict:
    """Zeroed document sums of :func:`whitened_m3`."""
    return {"cubes": np.zeros((k, k, k)), "zeta": np.zeros((d, k)), "P": np.zeros(k), "Ys2Y": np.zeros((k, k)),
            "Ys1Y": np.zeros((k, k))}


def _add_m3_sums(acc: dict, X, Y: np.ndarray, s1, s2, s3, N: float, bp: float, cp: float) -> None:
    """Add a block of documents (counts ``X``, projections ``Y = X W``) to the document sums of :func:`whitened_m3`."""
    acc["cubes"] += _sum_cubes(Y, s3 / N - 3.0 * bp * s2 * s1 + 2.0 * cp * s1 ** 3)
    acc["zeta"] += np.asarray(X.T @ (Y * (bp * s2 * s1 - s3 / N)[:, None]))
    acc["P"] += Y.T @ s1
    acc["Ys2Y"] += (Y * s2[:, None]).T @ Y
    acc["Ys1Y"] += (Y * (s1 * s1)[:, None]).T @ Y


def _finish_m3(acc: dict, W: np.ndarray, v2, v3, N: float, bp: float, cp: float) -> np.ndarray:
    """:func:`whitened_m3` from its document sums and the word sums ``v2 = X^T s2``, ``v3 = X^T s3``."""
    T = acc["cubes"]
    T += _sum_cubes(W, 2.0 * v3 / N)
    T += _sym3_tensor(_sum_pair_outer(W, W, acc["zeta"]))
    K = bp * (acc["Ys2Y"] - (W * v2[:, None]).T @ W) - cp * acc["Ys1Y"]
    T += sym3_outer(K, acc["P"])
    T += cp * np.einsum("a,b,c->abc", acc["P"], acc["P"], acc["P"])
    return T


def _whitened_m3_users(corpus: MomentDocuments, alpha0: float, W: np.ndarray) -> np.ndarray:
    """``M3_hat(W, W, W)`` of the per-user weighted moments: with ``v_n = 1/(U n_u)``, whitened user means ``q_u``,
    ``P = sum_u q_u`` and ``SB = sum_u B_u(W, W)``::

        T = sum_n v_n M3^n(W, W, W) + b' (sym3(SB (x) P) - sym3(sum_u B_u (x) q_u))
            + c' (P^{x3} - sym3(sum_u q_u q_u^T (x) P) + 2 sum_u q_u^{x3})
    """
    _, b, c = lda_coefficients(alpha0)
    X, U = corpus.X, float(corpus.n_units)
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
    T += _sum_cubes(W, 2.0 * np.asarray(X.T @ (v * s3)).ravel())
    T -= _sym3_tensor(_sum_pair_outer(W, W, X.T @ (Y * (v * s3)[:, None])))
    # b-term
    w2 = s2 / size
    SB = (Y * w2[:, None]).T @ Y - (W * np.asarray(X.T @ w2).ravel()[:, None]).T @ W
    BQ = _sum_pair_outer(Y * w2[:, None], Y, Qn) - _sum_pair_outer(W, W, X.T @ (Qn * w2[:, None]))
    T += bp * (sym3_outer(SB, P) - _sym3_tensor(BQ))
    # c-term: the sum over distinct ordered user triples
    T += cp * (np.einsum("a,b,c->abc", P, P, P) - sym3_outer(q.T @ q, P) + 2.0 * _sum_cubes(q, np.ones(q.shape[0])))
    return T


def _sym3_tensor(t: np.ndarray) -> np.ndarray:
    """``t_abc + t_acb + t_cba`` for t symmetric in its first two modes (the three placements of mode c)."""
    return t + t.transpose(0, 2, 1) + t.transpose(2, 1, 0)
