"""A chunk of documents: sparse counts over the fixed vocabulary and who wrote each document."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Chunk:
    """Consecutive documents of one shard, as :class:`~topicdp.corpus.Corpus` would hold them.

    Attributes
    ----------
    X : csr_matrix of int64, shape (n, n_words)
        Counts of the chunk's non-empty documents, canonical CSR (sorted indices, no explicit zeros),
        columns in vocabulary order.
    users : list
        The original user id of each row. Ids rather than indices into a user table: a global index
        would need every user of the stream in memory, which a chunk must not depend on.
    empty_documents_dropped : int
        Documents of this chunk that had no in-vocabulary token (dropped, as ``Corpus`` drops them).
    out_of_vocabulary_tokens : int or None
        Tokens of this chunk outside the vocabulary (text sources only).
    """

    X: sp.csr_matrix
    users: list
    empty_documents_dropped: int = 0
    out_of_vocabulary_tokens: int | None = None
    meta: dict = field(default_factory=dict)

    @property
    def n_docs(self) -> int:
        return self.X.shape[0]

    def to_corpus(self, vocabulary):
        """This chunk alone as an in-memory :class:`~topicdp.corpus.Corpus`."""
        from ..corpus import Corpus

        return Corpus.from_matrix(self.X, list(vocabulary), self.users)


def canonical_counts(X: sp.spmatrix, n_words: int, where: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """Validate counts read from disk; return canonical int64 CSR and the mask of non-empty rows.

    Raises ``ValueError`` naming ``where`` for a wrong width or negative, fractional or non-finite counts.
    """
    X = sp.csr_matrix(X)
    if X.shape[1] != n_words:
        raise ValueError(f"{where}: {X.shape[1]} columns, but the vocabulary has {n_words} words")
    data = X.data
    if data.size and (not np.all(np.isfinite(data)) or data.min() < 0 or np.any(data != np.rint(data))):
        raise ValueError(f"{where}: counts must be non-negative integers")
    X = X.astype(np.int64) if X.dtype != np.int64 else X.copy()
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    nonempty = np.diff(X.indptr) > 0
    return X, nonempty


def drop_empty(X: sp.csr_matrix, users: list, nonempty: np.ndarray) -> tuple[sp.csr_matrix, list, int]:
    """Rows with at least one token, their users, and how many rows were dropped."""
    n_empty = int(nonempty.size - nonempty.sum())
    if n_empty == 0:
        return X, users, 0
    keep = np.flatnonzero(nonempty)
    return X[keep], [users[i] for i in keep], n_empty
