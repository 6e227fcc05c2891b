"""A chunk of documents: sparse counts over the fixed vocabulary and who wrote each document."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix


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
    X = check_count_matrix(X, f"{where}: X", min_docs=0, min_words=0, n_words=n_words,
                           expected_by=f"the {n_words}-word vocabulary", integral=True, dtype=np.int64)
    nonempty = np.diff(X.indptr) > 0
    return X, nonempty


def drop_empty(X: sp.csr_matrix, users: list, nonempty: np.ndarray) -> tuple[sp.csr_matrix, list, int]:
    """Rows with at least one token, their users, and how many rows were dropped."""
    n_empty = int(nonempty.size - nonempty.sum())
    if n_empty == 0:
        return X, users, 0
    keep = np.flatnonzero(nonempty)
    return X[keep], [users[i] for i in keep], n_empty
