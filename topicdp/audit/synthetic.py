"""A self-contained synthetic setup with a *provable* sensitivity, to test the auditor end to end.

:func:`synthetic_corpus` draws a small user-grouped LDA-like corpus; :class:`BoundedContributionSum` is a
deterministic K x V statistic whose L2 sensitivity is proven (<= 1 for adding/removing a user, <= 2 for
replacing one), so the Gaussian mechanism on it is (epsilon, delta)-DP for the analytic sigma — whatever
the canary — and an audit must not flag it unless the noise is cut.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import check_int, check_random_state
from .canaries import CorpusData, as_corpus_data


def synthetic_corpus(n_users: int = 60, n_words: int = 300, n_topics: int = 5, docs_per_user: tuple[int, int] = (1, 6),
                     doc_length: tuple[int, int] = (20, 80), random_state=0) -> CorpusData:
    """An LDA-like corpus: topics ~ Dir(0.1), document mixtures ~ Dir(0.5), Zipf-free uniform lengths."""
    rng = check_random_state(random_state)
    n_users = check_int(n_users, "n_users", low=2)
    n_words = check_int(n_words, "n_words", low=2)
    topics = rng.dirichlet(np.full(n_words, 0.1), size=check_int(n_topics, "n_topics", low=1))
    n_docs = rng.integers(docs_per_user[0], docs_per_user[1] + 1, size=n_users)
    users = np.repeat(np.arange(n_users), n_docs)
    lengths = rng.integers(doc_length[0], doc_length[1] + 1, size=users.size)
    theta = rng.dirichlet(np.full(topics.shape[0], 0.5), size=users.size)
    counts = np.stack([rng.multinomial(L, th @ topics) for L, th in zip(lengths, theta)])
    vocabulary = [f"w{i:04d}" for i in range(n_words)]
    return CorpusData(sp.csr_matrix(counts.astype(np.int64)), users.astype(np.int64), vocabulary)


@dataclass
class BoundedContributionSum:
    """f(D) = sum over users u of clip(C_u), a K x V matrix with proven L2 sensitivity.

    C_u = sum over u's documents d of e_{k(d)} x_d^T puts each document's counts in row k(d), a fixed hash
    of the document's own counts (so a user's block depends on that user only); clip(C) = C min(1, 1/||C||_F).

    Sensitivity. Adding or removing user u changes f by clip(C_u), of Frobenius norm <= 1; replacing user u
    by v changes it by clip(C_v) - clip(C_u), of norm <= 2 (triangle inequality). Replacing one document
    changes one user's block: also <= 2.
    """

    n_rows: int = 5

    def __call__(self, corpus) -> np.ndarray:
        data = as_corpus_data(corpus)
        X = data.X.astype(np.float64)
        U, K, V = data.n_users, self.n_rows, X.shape[1]
        h = (np.arange(V, dtype=np.int64) * 2654435761) % 1000003  # fixed per-word hash
        rows = np.rint(X @ h.astype(np.float64)).astype(np.int64) % K  # row k(d) of each document
        N = X.shape[0]
        assign = sp.csr_matrix((np.ones(N), (data.doc_users * K + rows, np.arange(N))), shape=(U * K, N))
        blocks = (assign @ X).toarray().reshape(U, K, V)  # C_u for every user
        norms = np.sqrt((blocks**2).sum(axis=(1, 2)))
        return (blocks / np.maximum(1.0, norms)[:, None, None]).sum(axis=0)

    def sensitivity(self, neighbours: str) -> float:
        """1 for add-remove, 2 for replace-one (see the class docstring)."""
        return 1.0 if neighbours == "add-remove" else 2.0
