"""Shard readers, one per format, each yielding :class:`Chunk` s of at most ``chunk_size`` documents of one shard
(a file, or an in-memory row range); small picklable objects, so that a Dask task reads its shard itself.

Text is tokenised with ``Corpus.from_texts``' analyzer (:class:`Tokenizer`) and a vocabulary built by
``CountVectorizer``'s rules from counts that add up over shards (:class:`TokenCounts`). In ``.npz`` shards each
document is its own user (``row``, or ``(shard_index, row)`` with several shards) unless a ``<stem>.users.npy``
sidecar holds ids (:func:`write_npz_shard`).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import islice
from numbers import Integral
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from .._files import atomic_path
from .._validation import check_count_matrix
from ..corpus import count_words, make_vectorizer, read_jsonl_records


@dataclass
class Chunk:
    """Consecutive non-empty documents of one shard: int64 CSR counts, each row's user id (not an index: a global table
    would need the whole stream), and the documents dropped as empty and tokens out of the vocabulary."""

    X: sp.csr_matrix
    users: list
    empty_documents_dropped: int = 0
    out_of_vocabulary_tokens: int | None = None

    @property
    def n_docs(self) -> int:
        return self.X.shape[0]


def drop_empty(X: sp.csr_matrix, users: list) -> tuple[sp.csr_matrix, list, int]:
    """Rows with at least one token, their users, and how many rows were dropped."""
    nonempty = np.diff(X.indptr) > 0
    n_empty = int(nonempty.size - nonempty.sum())
    if n_empty == 0:
        return X, users, 0
    keep = np.flatnonzero(nonempty)
    return X[keep], [users[i] for i in keep], n_empty


@dataclass
class TokenCounts:
    """Document frequency and total count of every token, and the number of documents seen."""

    document_frequency: Counter = field(default_factory=Counter)
    term_frequency: Counter = field(default_factory=Counter)
    n_docs: int = 0

    def add_document(self, tokens: list[str]) -> None:
        counts = Counter(tokens)
        self.term_frequency.update(counts)
        self.document_frequency.update(counts.keys())
        self.n_docs += 1

    def __add__(self, other: "TokenCounts") -> "TokenCounts":
        return TokenCounts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def vocabulary(self, min_df=1, max_df=1.0, max_features: int | None = None) -> list[str]:
        """The words ``CountVectorizer(min_df, max_df, max_features).fit`` keeps, sorted, by its ``_limit_features``
        (fractions of all documents read, then the largest total counts, ties by the same argsort)."""
        terms = sorted(self.document_frequency)
        if not terms:
            raise ValueError("no vocabulary could be built: the texts have no tokens (only stop words?)")
        dfs = np.fromiter((self.document_frequency[t] for t in terms), dtype=np.int64, count=len(terms))
        high = float(max_df) if isinstance(max_df, Integral) else max_df * self.n_docs
        low = float(min_df) if isinstance(min_df, Integral) else min_df * self.n_docs
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        mask = (dfs <= high) & (dfs >= low)
        if max_features is not None and mask.sum() > max_features:
            tfs = np.fromiter((self.term_frequency[t] for t in terms), dtype=np.int64, count=len(terms))
            keep = np.where(mask)[0][(-tfs[mask]).argsort()[:max_features]]
            mask = np.zeros(len(terms), dtype=bool)
            mask[keep] = True
        if not mask.any():
            raise ValueError("After pruning, no terms remain. Try a lower min_df or a higher max_df.")
        return [t for t, m in zip(terms, mask) if m]


class Tokenizer:
    """Texts -> (CSR counts over a fixed vocabulary, out-of-vocabulary token count); picklable, so the scikit-learn
    analyzer (a closure) is built lazily, and again after unpickling on a Dask worker."""

    def __init__(self, vocabulary: Sequence[str] | None, options: dict):
        self.vocabulary = None if vocabulary is None else tuple(vocabulary)
        self.options = dict(options)

    def __getstate__(self):
        return {"vocabulary": self.vocabulary, "options": self.options}

    @cached_property
    def analyze(self) -> Callable[[str], list[str]]:
        return make_vectorizer(**self.options).build_analyzer()

    def count(self, texts: list[str]) -> tuple[sp.csr_matrix, int]:
        """Counts of ``texts`` over the vocabulary (rows may be empty) and the out-of-vocabulary tokens
        (:func:`topicdp.corpus.count_words`)."""
        if self.vocabulary is None:
            raise ValueError("the tokenizer has no vocabulary yet (build one first)")
        return count_words(texts, self.vocabulary, stop_words=self.options.get("stop_words", "english"),
                           min_token_length=self.options.get("min_token_length", 3))


@dataclass(frozen=True)
class Shard:
    """One unit of work: a file path (or a row range of an in-memory matrix) and its position."""

    source: Any  # a path (str or PathLike), or a (first, last) row range of an in-memory matrix
    index: int


def _chunk_from_counts(X, users: list, n_words: int, where: str) -> Chunk:
    """Counts read from disk as canonical int64 CSR without empty rows (a wrong width or negative, fractional or
    non-finite counts are a ``ValueError`` naming ``where``)."""
    X = check_count_matrix(X, f"{where}: X", min_docs=0, min_words=0, n_words=n_words,
                           expected_by=f"the {n_words}-word vocabulary", integral=True, dtype=np.int64)
    X, users, n_empty = drop_empty(X, users)
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
            X, users, n_empty = drop_empty(X, list(owners))
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
            rows = list(range(start, stop))
            users = ids[start:stop] if ids is not None else [(shard.index, r) for r in rows] if self.multi else rows
            yield _chunk_from_counts(X[start:stop], users, self.n_words, str(shard.source))

    def describe(self) -> dict:
        return {"format": self.format, "chunk_size": self.chunk_size}


def users_sidecar(path) -> Path:
    """``shard.npz`` -> ``shard.users.npy``."""
    p = Path(path)
    return p.with_name(p.name[: -len(".npz")] + ".users.npy" if p.name.endswith(".npz") else p.name + ".users.npy")


def write_npz_shard(path: str | os.PathLike, X: sp.spmatrix, users=None) -> Path:
    """Save one CSR shard atomically (int32 indices and counts when they fit, uncompressed), and ``users`` (ints or
    strings, one per row) to a ``.users.npy`` sidecar."""
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
