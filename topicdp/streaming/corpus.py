"""A corpus read in chunks from shards on disk, never held in memory as a whole: the pass-only part of
:class:`~topicdp.corpus.Corpus`' interface (random access, to resample users or bound contributions, needs
:meth:`~StreamingCorpus.to_corpus`).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import scipy.sparse as sp

from .._validation import check_int
from ..corpus import Corpus
from .executor import map_reduce
from .readers import (Chunk, JsonlReader, NpzReader, Shard, TokenCounts, Tokenizer, make_vectorizer,
                      write_npz_shard)


@dataclass
class StreamLog:
    """What the last complete pass saw (``None`` before any pass)."""

    n_docs: int | None = None
    n_tokens: int | None = None
    empty_documents_dropped: int | None = None
    out_of_vocabulary_tokens: int | None = None


class StreamingCorpus:
    """Documents read chunk by chunk from ``shards`` by ``reader`` over a fixed, public ``vocabulary`` (build one with
    :meth:`from_jsonl` or :meth:`from_npz`); :attr:`log` holds the counts of the last complete pass."""

    def __init__(self, reader, shards: Sequence[Shard], vocabulary: Sequence[str]):
        self.reader = reader
        self.shards = list(shards)
        self.vocabulary = tuple(str(w) for w in vocabulary)
        if not self.shards:
            raise ValueError("shards is empty: a streaming corpus needs at least one shard")
        if len(self.vocabulary) < 1 or len(set(self.vocabulary)) != len(self.vocabulary):
            raise ValueError("vocabulary must be a non-empty list of distinct words")
        self.log = StreamLog()

    # -- sizes -------------------------------------------------------------------------------------
    @property
    def n_words(self) -> int:
        return len(self.vocabulary)

    @property
    def n_docs(self) -> int | None:
        """Non-empty documents, known after a complete pass (None before)."""
        return self.log.n_docs

    @property
    def n_tokens(self) -> int | None:
        return self.log.n_tokens

    def __repr__(self) -> str:
        return (f"StreamingCorpus(format={self.reader.format!r}, n_shards={len(self.shards)}, "
                f"n_words={self.n_words}, n_docs={self.n_docs})")

    # -- passes ------------------------------------------------------------------------------------
    def iter_chunks(self) -> Iterator[Chunk]:
        """Chunks of all shards in order; a complete pass records its counts in :attr:`log`."""
        n_docs = n_tokens = n_empty = 0
        n_oov = None
        for shard in self.shards:
            for chunk in self.reader.read(shard):
                n_docs += chunk.n_docs
                n_tokens += int(chunk.X.data.sum())
                n_empty += chunk.empty_documents_dropped
                if chunk.out_of_vocabulary_tokens is not None:
                    n_oov = (n_oov or 0) + chunk.out_of_vocabulary_tokens
                yield chunk
        self.log = StreamLog(n_docs, n_tokens, n_empty, n_oov)

    __iter__ = iter_chunks

    def map_reduce(self, fn, *, client=None, progress: str | None = None, **shared):
        """``sum(fn(shard, reader=..., **shared))`` over the shards (:func:`.executor.map_reduce`); ``reader`` defaults
        to this corpus' reader (pass an already scattered one to ship it once per fit)."""
        shared.setdefault("reader", self.reader)
        return map_reduce(fn, self.shards, client=client, progress=progress, **shared)

    # -- conversions -------------------------------------------------------------------------------
    def to_corpus(self):
        """All documents as an in-memory :class:`~topicdp.corpus.Corpus` (small corpora only)."""
        chunks = list(self.iter_chunks())
        X = sp.vstack([c.X for c in chunks], format="csr")
        users = [u for c in chunks for u in c.users]
        corpus = Corpus.from_matrix(X, list(self.vocabulary), users)
        corpus.log.empty_documents_dropped = self.log.empty_documents_dropped
        corpus.log.out_of_vocabulary_tokens = self.log.out_of_vocabulary_tokens
        return corpus

    def save_npz(self, directory: str | os.PathLike, *, prefix: str = "shard") -> "StreamingCorpus":
        """Write one ``.npz`` CSR shard per chunk and return the corpus over them (passes then skip tokenising); user ids
        are kept when they are ints or strings."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for i, chunk in enumerate(self.iter_chunks()):
            if chunk.n_docs == 0:
                continue
            ints = all(isinstance(u, int) and not isinstance(u, bool) for u in chunk.users)
            storable = ints or all(isinstance(u, str) for u in chunk.users)  # numpy would turn a mixed list into str
            users = chunk.users if storable else None
            paths.append(write_npz_shard(directory / f"{prefix}-{i:06d}.npz", chunk.X, users))
        return StreamingCorpus.from_npz(paths, vocabulary=self.vocabulary, chunk_size=self.reader.chunk_size)

    # -- constructors ------------------------------------------------------------------------------
    @classmethod
    def from_jsonl(cls, paths, *, vocabulary: Sequence[str] | None = None, text_field: str = "text",
                   user_field: str = "user", users: Sequence | None = None, chunk_size: int = 10_000,
                   stop_words="english", min_token_length: int = 3, min_df=1, max_df=1.0,
                   max_features: int | None = None, client=None) -> "StreamingCorpus":
        """JSON Lines shards (a path, a glob or a list; ``.gz`` allowed), tokenised as ``Corpus.from_jsonl``; without
        ``vocabulary`` one counting pass (on ``client`` if given) builds it by ``min_df``, ``max_df`` and
        ``max_features`` (ignored with it, as in ``Corpus.from_texts``)."""
        chunk_size = check_int(chunk_size, "chunk_size", low=1)
        options = dict(stop_words=stop_words, min_token_length=min_token_length, min_df=min_df, max_df=max_df,
                       max_features=max_features)
        make_vectorizer(**options)  # validate the options before reading anything
        shards = [Shard(p, i) for i, p in enumerate(expand_paths(paths))]
        reader = JsonlReader(Tokenizer(vocabulary, options), text_field=text_field, user_field=user_field,
                             users=users, chunk_size=chunk_size)
        if vocabulary is None:
            counts: TokenCounts = map_reduce(_count_tokens, shards, client=client, reader=reader)
            if counts.n_docs == 0:
                which = "" if users is None else " for the requested users"
                raise ValueError(f"the JSON Lines shards hold no documents{which}")
            vocabulary = counts.vocabulary(min_df, max_df, max_features)
            reader = reader.with_vocabulary(vocabulary)
        return cls(reader, shards, vocabulary)

    @classmethod
    def from_npz(cls, paths, *, vocabulary, chunk_size: int = 10_000) -> "StreamingCorpus":
        """CSR shards saved with ``scipy.sparse.save_npz`` (see :func:`.readers.write_npz_shard`)."""
        chunk_size = check_int(chunk_size, "chunk_size", low=1)
        files = expand_paths(paths)
        vocabulary = _words(vocabulary)
        reader = NpzReader(len(vocabulary), multi=len(files) > 1, chunk_size=chunk_size)
        return cls(reader, [Shard(str(p), i) for i, p in enumerate(files)], vocabulary)

    def describe(self) -> dict:
        return {"reader": self.reader.describe(), "n_shards": len(self.shards), "n_words": self.n_words,
                "n_docs": self.n_docs}


def _count_tokens(shard: Shard, reader: JsonlReader) -> TokenCounts:
    return reader.count_tokens(shard)


def _words(vocabulary) -> list[str]:
    """A word list from a sequence or a gensim ``Dictionary`` (id -> token)."""
    if hasattr(vocabulary, "token2id") and hasattr(vocabulary, "__getitem__"):
        return [vocabulary[i] for i in range(len(vocabulary))]
    return [str(w) for w in vocabulary]


def expand_paths(paths) -> list[str]:
    """A path, glob pattern or list of them -> existing file paths (globs sorted)."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out = []
    for item in items:
        item = os.fspath(item)
        if glob.has_magic(item):
            matches = sorted(glob.glob(item))
            if not matches:
                raise FileNotFoundError(f"no file matches {item!r}")
            out.extend(matches)
        elif not os.path.isfile(item):
            raise FileNotFoundError(f"no such file: {item!r}")
        else:
            out.append(item)
    if not out:
        raise ValueError("paths is empty: give at least one shard")
    return out
