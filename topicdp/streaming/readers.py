"""Shard readers: one per format, each yielding :class:`Chunk` s of at most ``chunk_size`` documents.

A shard is one file (or an in-memory row range). Readers are small picklable objects: a Dask task gets the reader
and one shard and reads it itself (so the paths must be readable by every worker). ``.npz`` shards have no users:
each document is its own, ``row`` with one shard and ``(shard_index, row)`` otherwise, unless a
``<stem>.users.npy`` sidecar holds ids (:func:`write_npz_shard`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import scipy.sparse as sp

from ..corpus import read_jsonl_records
from .chunks import Chunk, canonical_counts, drop_empty
from .tokenize import Tokenizer
from .vocabulary import TokenCounts


@dataclass(frozen=True)
class Shard:
    """One unit of work: a file path (or a row range of an in-memory matrix) and its position."""

    source: Any  # a path (str or PathLike), or a (first, last) row range of an in-memory matrix
    index: int


def _default_users(shard: Shard, multi: bool, start: int, stop: int) -> list:
    rows = range(start, stop)
    return [(shard.index, r) for r in rows] if multi else list(rows)


def _chunk_from_counts(X, users: list, n_words: int, where: str) -> Chunk:
    X, nonempty = canonical_counts(X, n_words, where)
    X, users, n_empty = drop_empty(X, users, nonempty)
    return Chunk(X=X, users=users, empty_documents_dropped=n_empty)


class JsonlReader:
    """JSON Lines (plain or gzip, see :func:`topicdp.corpus.read_jsonl_records`) with a text and a user field,
    tokenised as :meth:`topicdp.corpus.Corpus.from_jsonl` does."""

    format = "jsonl"

    def __init__(self, tokenizer: Tokenizer, *, text_field: str = "text", user_field: str = "user",
                 users=None, chunk_size: int = 10_000):
        self.tokenizer = tokenizer
        self.text_field = text_field
        self.user_field = user_field
        self.keep = None if users is None else frozenset(users)
        self.chunk_size = chunk_size

    def _records(self, shard: Shard) -> Iterator[tuple[str, object]]:
        """(text, user) of the documents kept by the user filter, in file order."""
        return read_jsonl_records(shard.source, self.text_field, self.user_field, self.keep)

    def read(self, shard: Shard) -> Iterator[Chunk]:
        records = self._records(shard)
        while batch := list(islice(records, self.chunk_size)):
            texts, owners = zip(*batch)
            X, n_oov = self.tokenizer.count(list(texts))
            X, users, n_empty = drop_empty(X, list(owners), np.diff(X.indptr) > 0)
            yield Chunk(X=X, users=users, empty_documents_dropped=n_empty, out_of_vocabulary_tokens=n_oov)

    def count_tokens(self, shard: Shard) -> TokenCounts:
        """Token statistics of one shard, for building a vocabulary (:mod:`.vocabulary`)."""
        counts = TokenCounts()
        analyze = self.tokenizer.analyze
        for text, _ in self._records(shard):
            counts.add_document(analyze(text))
        return counts

    def with_vocabulary(self, vocabulary) -> "JsonlReader":
        tokenizer = Tokenizer(vocabulary, self.tokenizer.options)
        return JsonlReader(tokenizer, text_field=self.text_field, user_field=self.user_field,
                           users=self.keep, chunk_size=self.chunk_size)

    def describe(self) -> dict:
        return {"format": self.format, "text_field": self.text_field, "user_field": self.user_field,
                "user_filter": None if self.keep is None else len(self.keep), "chunk_size": self.chunk_size,
                "tokenizer": self.tokenizer.options}


class NpzReader:
    """CSR shards written by ``scipy.sparse.save_npz`` (e.g. by :func:`write_npz_shard`)."""

    format = "npz"

    def __init__(self, n_words: int, *, multi: bool, chunk_size: int = 10_000):
        self.n_words = n_words
        self.multi = multi
        self.chunk_size = chunk_size

    def read(self, shard: Shard) -> Iterator[Chunk]:
        X = sp.load_npz(shard.source).tocsr()
        sidecar = users_sidecar(shard.source)
        ids = np.load(sidecar, allow_pickle=False).tolist() if sidecar.exists() else None
        if ids is not None and len(ids) != X.shape[0]:
            raise ValueError(f"{sidecar}: {len(ids)} user ids for {X.shape[0]} documents")
        for start in range(0, X.shape[0], self.chunk_size):
            stop = min(start + self.chunk_size, X.shape[0])
            users = ids[start:stop] if ids is not None else _default_users(shard, self.multi, start, stop)
            yield _chunk_from_counts(X[start:stop], users, self.n_words, str(shard.source))

    def describe(self) -> dict:
        return {"format": self.format, "chunk_size": self.chunk_size}


class MemoryReader:
    """Row ranges of an in-memory count matrix (a :class:`~topicdp.corpus.Corpus` seen as a stream)."""

    format = "memory"

    def __init__(self, X: sp.csr_matrix, users: list, *, chunk_size: int = 10_000):
        self.X = X
        self.users = users
        self.n_words = X.shape[1]
        self.chunk_size = chunk_size

    def read(self, shard: Shard) -> Iterator[Chunk]:
        first, last = shard.source
        for start in range(first, last, self.chunk_size):
            stop = min(start + self.chunk_size, last)
            yield _chunk_from_counts(self.X[start:stop], self.users[start:stop], self.n_words, "X")

    def describe(self) -> dict:
        return {"format": self.format, "chunk_size": self.chunk_size}


def users_sidecar(path) -> Path:
    """``shard.npz`` -> ``shard.users.npy``."""
    p = Path(path)
    return p.with_name(p.name[: -len(".npz")] + ".users.npy" if p.name.endswith(".npz") else p.name + ".users.npy")


def write_npz_shard(path: str | os.PathLike, X: sp.spmatrix, users=None) -> Path:
    """Save one CSR shard atomically (int32 indices and counts when they fit, uncompressed), and ``users`` (ints or
    strings, one per row) to a ``.users.npy`` sidecar.
    """
    from .._files import atomic_path

    path = Path(path)
    if not path.name.endswith(".npz"):
        raise ValueError(f"path must end in .npz, got {path.name!r}")
    X = sp.csr_matrix(X)
    small = X.nnz == 0 or (X.data.max() < 2**31 and X.shape[1] < 2**31 and X.nnz < 2**31)
    if small:
        X = sp.csr_matrix((X.data.astype(np.int32), X.indices.astype(np.int32), X.indptr.astype(np.int64)),
                          shape=X.shape)
    ids = None if users is None else np.asarray(users)
    if ids is not None and (ids.shape != (X.shape[0],) or ids.dtype.kind not in "iuU"):
        raise ValueError("users must be one int or str id per row")
    with atomic_path(path) as tmp:
        sp.save_npz(tmp, X, compressed=False)
    if ids is not None:
        with atomic_path(users_sidecar(path)) as tmp:
            np.save(tmp, ids, allow_pickle=False)
    return path
