"""User-grouped corpora: sparse document-term counts, a vocabulary, and who wrote what.

A :class:`Corpus` holds ``X`` (N x V sparse integer counts), the ``vocabulary`` (the output domain of every
release: public only when the caller gives it, otherwise the report marks it not covered) and ``doc_users``.
:meth:`Corpus.bound` caps each user's contribution per privacy unit, so neighbouring corpora stay neighbours;
what it removes is counted in :attr:`Corpus.log` (private diagnostics). :func:`read_source_records` is the one
record reader of every source.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import math
import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from ._names import BOUND_PARAMETERS
from ._validation import check_count_matrix, check_int
from .tables import check_fields, describe, is_frame, source_format, table_fields, table_rows

#: tokens are runs of at least ``min_token_length`` letters (unicode letters, no digits or underscores)
_TOKEN_PATTERN = r"(?u)\b[^\W\d_]{%d,}\b"
#: the same tokens in lower-cased ASCII text, where the letters are a-z and the word characters [a-z0-9_]; faster
_ASCII_TOKEN_PATTERN = r"(?a)\b[a-z]{%d,}\b"


def _normalise(text: str) -> str:
    """Lower-cased text with HTML character references decoded (``&amp;`` is not the word ``amp``)."""
    return html.unescape(text).lower()


@dataclass
class CorpusLog:
    """What construction and bounding removed, so that nothing is dropped silently."""

    empty_documents_dropped: int = 0
    users_without_documents: int = 0
    documents_cut_by_max_docs_per_user: int = 0
    users_capped: int = 0
    tokens_cut_by_max_tokens_per_doc: int = 0
    documents_truncated: int = 0
    out_of_vocabulary_tokens: int | None = None
    max_docs_per_user: int | None = None
    max_tokens_per_doc: int | None = None
    users_token_capped: int = 0
    tokens_cut_by_max_tokens_per_user: int = 0
    documents_emptied_by_max_tokens_per_user: int = 0
    max_tokens_per_user: int | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        return [f"{k.replace('_', ' ')}: {v}" for k, v in self.__dict__.items() if v]


@dataclass
class Corpus:
    """A user-grouped document-term count matrix (build it with the ``from_*`` constructors).

    Parameters
    ----------
    X : sparse matrix of shape (n_docs, n_words)
        Non-negative integer counts; ``n_docs`` may be 0 (whether a private corpus is empty is private).
    doc_users : array of int, shape (n_docs,)
        User index of each document, into ``user_ids`` (default ``range(n_users)``; every user owns a document).
    vocabulary_source : {"private-texts", "public"}, default="private-texts"
        ``"public"`` when the caller gave the word list; built from these texts, a release marks it NOT COVERED.
    """

    X: sp.csr_matrix
    vocabulary: tuple
    doc_users: np.ndarray
    user_ids: tuple = None  # type: ignore[assignment]
    log: CorpusLog = field(default_factory=CorpusLog)
    vocabulary_source: str = "private-texts"

    def __post_init__(self) -> None:
        self.X = check_count_matrix(self.X, min_docs=0, min_words=0, integral=True, dtype=np.int64)
        self.vocabulary = tuple(str(w) for w in self.vocabulary)
        n_docs, n_words = self.X.shape
        if n_words == 0 or len(self.vocabulary) != n_words:
            raise ValueError(
                f"vocabulary must have one word per column of X ({n_words}), got {len(self.vocabulary)}"
            )
        if len(set(self.vocabulary)) != n_words:
            raise ValueError("vocabulary must not contain duplicate words")
        doc_users = np.asarray(self.doc_users)
        if doc_users.shape != (n_docs,) or not np.issubdtype(doc_users.dtype, np.integer):
            raise ValueError(f"doc_users must be an integer array of shape ({n_docs},)")
        if n_docs and doc_users.min() < 0:
            raise ValueError("doc_users must be non-negative user indices")
        n_users = (int(doc_users.max()) + 1 if n_docs else 0) if self.user_ids is None else len(self.user_ids)
        if n_docs and doc_users.max() >= n_users:
            raise ValueError(f"doc_users holds index {doc_users.max()} but there are only {n_users} user_ids")
        owned = np.bincount(doc_users, minlength=n_users)
        if np.any(owned == 0):
            missing = [u if self.user_ids is None else self.user_ids[u] for u in np.flatnonzero(owned == 0)[:5]]
            raise ValueError(
                f"user_ids contains {int(np.sum(owned == 0))} user(s) with no documents (e.g. {missing}); "
                "every user must own at least one document"
            )
        self.doc_users = doc_users.astype(np.int64, copy=False)
        self.user_ids = tuple(range(n_users)) if self.user_ids is None else tuple(self.user_ids)

    @property
    def n_docs(self) -> int:
        return self.X.shape[0]

    @property
    def n_words(self) -> int:
        return self.X.shape[1]

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_tokens(self) -> int:
        return int(self.X.sum())

    @property
    def bounds(self) -> dict[str, int]:
        """The contribution bounds this corpus was cut to (public parameters: ``P.bound(**corpus.bounds)``)."""
        return {name: getattr(self.log, name) for name in BOUND_PARAMETERS if getattr(self.log, name)}

    def __repr__(self) -> str:
        return f"Corpus(n_docs={self.n_docs}, n_words={self.n_words}, n_users={self.n_users}, n_tokens={self.n_tokens})"

    @classmethod
    def from_matrix(cls, X, vocabulary: Sequence[str] | Mapping[str, int],
                    users: Sequence | np.ndarray | None = None) -> "Corpus":
        """From a document-term matrix and its vocabulary (a list in column order or a ``CountVectorizer.vocabulary_``
        dict). ``users``: each document's user id (default one user per document). Empty documents are dropped."""
        if isinstance(vocabulary, dict):
            vocab: list[str] = [""] * len(vocabulary)
            for word, col in vocabulary.items():
                vocab[col] = word
            vocabulary = vocab
        return cls._from_counts(X, list(vocabulary), users)

    @classmethod
    def from_gensim(cls, dictionary, bow_corpus: Iterable, users: Sequence | None = None) -> "Corpus":
        """From a gensim ``Dictionary`` and a bag-of-words corpus (lists of ``(id, count)``)."""
        from gensim.matutils import corpus2csc

        X = corpus2csc(bow_corpus, num_terms=len(dictionary), dtype=np.float64).T.tocsr()
        return cls._from_counts(X, [dictionary[i] for i in range(len(dictionary))], users)

    @classmethod
    def from_texts(
        cls,
        texts: Sequence[str],
        users: Sequence | None = None,
        *,
        vocabulary: Sequence[str] | None = None,
        stop_words: str | Sequence[str] | None = "english",
        min_token_length: int = 3,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        max_features: int | None = None,
        allow_empty: bool = False,
        n_jobs: int = 1,
    ) -> "Corpus":
        """Tokenise texts deterministically (:func:`make_vectorizer`) and count words on ``vocabulary`` if given (a
        public word list; other tokens are counted as out-of-vocabulary), else on words built from the texts with
        ``CountVectorizer``'s ``min_df``, ``max_df`` and ``max_features``. ``allow_empty``: with a given vocabulary,
        an N=0 corpus where no document is left (the pipeline's private corpus, whose emptiness is private).
        ``n_jobs``: processes counting on a given vocabulary (:func:`count_words`; the counts do not depend on it).
        """
        texts = list(texts)
        if not texts and not (allow_empty and vocabulary is not None):
            raise ValueError("texts is empty: a corpus needs at least one document")
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("texts must be a sequence of str")
        if vocabulary is not None:  # counts on a fixed word list (the out-of-vocabulary tokens are counted too)
            vocabulary = list(vocabulary)
            if not vocabulary or len(set(vocabulary)) != len(vocabulary):
                raise ValueError("vocabulary must be a non-empty list of distinct words")
            X, n_oov = count_words(texts, vocabulary, stop_words=stop_words, min_token_length=min_token_length,
                                   n_jobs=n_jobs)
            corpus = cls._from_counts(X, vocabulary, users, allow_empty=allow_empty)
            corpus.log.out_of_vocabulary_tokens = n_oov
            corpus.vocabulary_source = "public"  # the caller's word list: stated public by giving it
            return corpus
        vectorizer = make_vectorizer(stop_words=stop_words, min_token_length=min_token_length, min_df=min_df,
                                     max_df=max_df, max_features=max_features)
        try:
            X = vectorizer.fit_transform(texts)
        except ValueError as exc:  # e.g. every document was stop words only
            raise ValueError(f"no vocabulary could be built from texts: {exc}") from exc
        return cls._from_counts(X.tocsr(), list(vectorizer.get_feature_names_out()), users)

    @classmethod
    def from_jsonl(
        cls,
        path: str | os.PathLike,
        *,
        text_field: str = "text",
        user_field: str = "user",
        users: Sequence | None = None,
        n_users: int | None = None,
        **text_options,
    ) -> "Corpus":
        """Read JSON Lines (:func:`read_jsonl_records`). ``users`` keeps those user ids and ``n_users`` the first
        ``n_users`` distinct users; other keyword arguments go to :meth:`from_texts`."""
        records = read_jsonl_records(path, text_field, user_field, users)  # a generator: nothing is read yet
        if n_users is not None:
            records = _first_users(records, check_int(n_users, "n_users", low=1))
        where = os.fspath(path) + ("" if users is None else " (the requested users)")
        return cls._from_source_records(records, where, text_options)

    @classmethod
    def from_frame(cls, frame, *, text_field: str = "text", user_field: str = "user", **text_options) -> "Corpus":
        """From a pandas or polars DataFrame with a text and a user column, read as every source is
        (:func:`read_source_records`); other keyword arguments go to :meth:`from_texts`."""
        if not is_frame(frame):
            raise TypeError(f"frame must be a pandas or polars DataFrame, got {type(frame).__name__}")
        return cls._from_source_records(read_source_records(frame, text_field, user_field), describe(frame),
                                        text_options)

    @classmethod
    def from_table(cls, path: str | os.PathLike, *, query: str | None = None, text_field: str = "text",
                   user_field: str = "user", **text_options) -> "Corpus":
        """From a Parquet or CSV file, or the rows of ``query`` on a database URL (:func:`read_source_records`)."""
        path = os.fspath(path)
        return cls._from_source_records(read_source_records(path, text_field, user_field, query=query),
                                        describe(path, query), text_options)

    @classmethod
    def _from_source_records(cls, records: Iterable[tuple[str, object]], where: str, text_options: dict) -> "Corpus":
        pairs = list(records)
        if not pairs:
            raise ValueError(f"{where}: no documents")
        return cls.from_texts([t for t, _ in pairs], [u for _, u in pairs], **text_options)

    @classmethod
    def _from_counts(cls, X: sp.csr_matrix, vocabulary: list, users: Sequence | np.ndarray | None, *,
                     allow_empty: bool = False) -> "Corpus":
        """Validate the counts, attach users, drop (and count) empty documents; ``allow_empty`` permits N=0."""
        X = check_count_matrix(X, min_docs=0, min_words=0, integral=True, dtype=np.int64)
        n_docs = X.shape[0]
        if n_docs == 0 and not allow_empty:
            raise ValueError("the corpus is empty: no documents")
        users = list(np.arange(n_docs) if users is None else users)
        if len(users) != n_docs:
            raise ValueError(f"users must give one user id per document ({n_docs}), got {len(users)}")
        nonempty = np.asarray(X.sum(axis=1)).ravel() > 0
        if not nonempty.any() and not allow_empty:
            raise ValueError("every document is empty after tokenisation (no in-vocabulary tokens)")
        log = CorpusLog(empty_documents_dropped=int(n_docs - nonempty.sum()))
        kept_users = [users[i] for i in np.flatnonzero(nonempty)]
        user_ids = list(dict.fromkeys(kept_users))  # in order of first appearance
        log.users_without_documents = len(dict.fromkeys(users)) - len(user_ids)
        index = {u: i for i, u in enumerate(user_ids)}
        doc_users = np.fromiter((index[u] for u in kept_users), dtype=np.int64, count=len(kept_users))
        return cls(X=X[nonempty], vocabulary=tuple(vocabulary), doc_users=doc_users, user_ids=tuple(user_ids), log=log)

    def user_documents(self) -> list[np.ndarray]:
        """For each user, the (sorted) indices of its documents."""
        order, bounds = user_grouping(self.doc_users, self.n_users)
        return [order[bounds[u] : bounds[u + 1]] for u in range(self.n_users)]

    def subset_documents(self, docs: np.ndarray) -> "Corpus":
        """The corpus of documents ``docs`` (any order, repeats allowed); users renumbered by first appearance."""
        docs = np.asarray(docs, dtype=np.int64)
        if docs.size == 0:
            raise ValueError("docs is empty: a corpus needs at least one document")
        old_users = self.doc_users[docs]
        uniq, first = np.unique(old_users, return_index=True)
        uniq = uniq[np.argsort(first)]
        remap = np.full(self.n_users, -1, dtype=np.int64)
        remap[uniq] = np.arange(uniq.size)
        return replace(self, X=self.X[docs], doc_users=remap[old_users], user_ids=tuple(self.user_ids[u] for u in uniq))

    def subset_users(self, users: np.ndarray) -> "Corpus":
        """The corpus of the given user *indices* (repeats become distinct copies of that user)."""
        per_user = self.user_documents()
        users = np.asarray(users, dtype=np.int64)
        if users.size == 0:
            raise ValueError("users is empty: a corpus needs at least one user")
        docs = np.concatenate([per_user[u] for u in users])
        owner = np.repeat(np.arange(users.size), [per_user[u].size for u in users])
        seen: dict = {}  # a repeat is the c-th copy of its user, named (id, c)
        ids = []
        for u in users.tolist():
            c = seen[u] = seen.get(u, -1) + 1
            ids.append(self.user_ids[u] if c == 0 else (self.user_ids[u], c))
        return replace(self, X=self.X[docs], doc_users=owner, user_ids=tuple(ids))

    def bound(
        self,
        max_docs_per_user: int | None = None,
        max_tokens_per_doc: int | None = None,
        random_state: int | np.random.SeedSequence | np.random.Generator | None = None,
        *,
        max_tokens_per_user: int | None = None,
    ) -> "Corpus":
        """Cap each user's contribution; return a new corpus whose ``log`` counts what was cut.

        Each cap keeps a uniformly random part, from a generator seeded with a seed ``s`` drawn independently of the
        data and a stable hash of the unit: of the user's id (not its index, which other users renumber), a subset of
        its documents (``max_docs_per_user``) or a sub-multiset of all its tokens (``max_tokens_per_user``; a
        document left empty is dropped); of a document's words and counts, a sub-multiset of its tokens
        (``max_tokens_per_doc``, multivariate hypergeometric). For a fixed ``s``, corpora that differ in one user are
        bounded to corpora that differ in that user's rows only, so an (eps, delta)-DP mechanism on bounded corpora
        stays so after bounding, for a data-independent ``s`` too (a mixture). ``max_tokens_per_doc`` is also
        document-level; the per-user caps are user-level only (a document added re-draws its owner's choices).

        Parameters
        ----------
        max_docs_per_user, max_tokens_per_doc, max_tokens_per_user : int >= 1, optional
        random_state : None, int >= 0, SeedSequence or Generator, default=None
            The seed ``s``: ``None`` for fresh OS entropy; a Generator is drawn from once.
        """
        random_state = np.random.SeedSequence() if random_state is None else random_state  # fresh OS entropy
        if isinstance(random_state, np.random.Generator):  # 32 bytes of seed, the root of every unit's generator
            root = random_state.bytes(32)
        elif isinstance(random_state, np.random.SeedSequence):
            root = random_state.generate_state(8, dtype=np.uint32).tobytes()
        else:
            root = hashlib.sha256(b"int:" + str(check_int(random_state, "random_state", low=0)).encode()).digest()
        log = CorpusLog(**self.log.as_dict())
        docs = np.arange(self.n_docs)
        if max_docs_per_user is not None:
            log.max_docs_per_user = m = check_int(max_docs_per_user, "max_docs_per_user", low=1)
            kept = []
            for u, user_docs in enumerate(self.user_documents()):
                if user_docs.size > m:
                    log.users_capped += 1
                    log.documents_cut_by_max_docs_per_user += int(user_docs.size - m)
                    rng = _unit_rng(root, b"user", _id_key(self.user_ids[u]))
                    user_docs = user_docs[np.sort(rng.choice(user_docs.size, size=m, replace=False))]
                kept.append(user_docs)
            docs = np.sort(np.concatenate(kept)) if kept else docs  # no user: nothing to keep (an N=0 corpus)
        X = self.X[docs]
        if max_tokens_per_doc is not None:
            log.max_tokens_per_doc = check_int(max_tokens_per_doc, "max_tokens_per_doc", low=1)
            X = _truncate_rows(X, log.max_tokens_per_doc, root, self.vocabulary, log)
        doc_users = self.doc_users[docs]
        if max_tokens_per_user is not None:
            log.max_tokens_per_user = check_int(max_tokens_per_user, "max_tokens_per_user", low=1)
            X = _subsample_users(X, doc_users, log.max_tokens_per_user, root, self.user_ids, log)
            # a user keeps at least one token, but one of their documents may keep none: it is dropped
            keep = np.flatnonzero(np.diff(X.indptr) > 0)
            log.documents_emptied_by_max_tokens_per_user += int(X.shape[0] - keep.size)
            X, doc_users = X[keep], doc_users[keep]
        return replace(self, X=X, doc_users=doc_users, log=log)

    def to_gensim(self):
        """``(gensim.corpora.Dictionary, list of bag-of-words)`` with ids equal to column indices."""
        from gensim.corpora import Dictionary

        dictionary = Dictionary()
        dictionary.token2id = {w: i for i, w in enumerate(self.vocabulary)}
        dictionary.id2token = dict(enumerate(self.vocabulary))
        dictionary.dfs = dict(enumerate(np.bincount(self.X.indices, minlength=self.n_words).tolist()))
        dictionary.cfs = dict(enumerate(np.asarray(self.X.sum(axis=0)).ravel().astype(int).tolist()))
        dictionary.num_docs = self.n_docs
        dictionary.num_pos = self.n_tokens
        dictionary.num_nnz = int(self.X.nnz)
        return dictionary, self.bow()

    def bow(self) -> list[list[tuple[int, int]]]:
        """The documents as gensim bag-of-words lists."""
        X = self.X
        return [
            list(zip(X.indices[a:b].tolist(), X.data[a:b].astype(int).tolist()))
            for a, b in zip(X.indptr[:-1], X.indptr[1:])
        ]

    def fingerprint(self) -> str:
        """SHA-256 (16 hex digits) of the counts, vocabulary and document owners."""
        h = hashlib.sha256()
        X = self.X
        for arr in (X.indptr, X.indices, X.data, self.doc_users):
            h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
        h.update("\x00".join(self.vocabulary).encode())
        return h.hexdigest()[:16]


#: the fields that make an object a user-grouped corpus (what every estimator and the audit read of one)
CORPUS_FIELDS = ("X", "doc_users", "vocabulary")


def is_corpus(obj) -> bool:
    """Whether ``obj`` is a :class:`Corpus` or has its fields ``X``, ``doc_users`` and ``vocabulary`` (duck-typed, so
    that the audit's corpora and a caller's class are read alike)."""
    return isinstance(obj, Corpus) or all(hasattr(obj, name) for name in CORPUS_FIELDS)


def split_corpus(X) -> tuple:
    """``(counts, doc_users, vocabulary)`` of a corpus (:func:`is_corpus`), ``(X, None, None)`` of anything else."""
    return (X.X, np.asarray(X.doc_users), tuple(X.vocabulary)) if is_corpus(X) else (X, None, None)


def as_corpus(X) -> Corpus:
    """A :class:`Corpus` of ``X``: itself, a corpus of another class' fields, or of a count matrix with one user per
    document and words ``w0, w1, ...`` (the form scikit-learn estimators are fitted on)."""
    if isinstance(X, Corpus):
        return X
    counts, users, vocabulary = split_corpus(X)
    counts = check_count_matrix(counts)
    if vocabulary is None:
        vocabulary = tuple(f"w{j}" for j in range(counts.shape[1]))
    return Corpus.from_matrix(counts, list(vocabulary), users)


def _truncate_rows(X: sp.csr_matrix, L: int, root: bytes, vocabulary: tuple, log: CorpusLog) -> sp.csr_matrix:
    """Rows longer than ``L`` keep ``L`` of their tokens, each drawn from a generator keyed by the row alone."""
    lengths = np.asarray(X.sum(axis=1)).ravel()
    long_rows = np.flatnonzero(lengths > L)
    if long_rows.size == 0:
        return X
    X = X.copy()
    for r in long_rows:
        a, b = X.indptr[r], X.indptr[r + 1]
        counts = X.data[a:b]
        # the key is the document itself (its words, not column indices, and their counts), so neither its
        # position in the corpus nor its owner's other documents can change what it keeps
        key = "\x00".join(f"{vocabulary[j]}\x01{c}" for j, c in zip(X.indices[a:b].tolist(), counts.tolist()))
        X.data[a:b] = _unit_rng(root, b"document", key.encode()).multivariate_hypergeometric(counts, L)
    X.eliminate_zeros()
    log.documents_truncated += int(long_rows.size)
    log.tokens_cut_by_max_tokens_per_doc += int(lengths[long_rows].sum() - L * long_rows.size)
    return X


def user_grouping(doc_users: np.ndarray, n_users: int) -> tuple[np.ndarray, np.ndarray]:
    """``(order, bounds)``: user u's documents, in corpus order, are ``order[bounds[u]:bounds[u + 1]]``."""
    order = np.argsort(doc_users, kind="stable")
    return order, np.searchsorted(doc_users[order], np.arange(n_users + 1))


def _subsample_users(X: sp.csr_matrix, doc_users: np.ndarray, T: int, root: bytes, user_ids: tuple,
                     log: CorpusLog) -> sp.csr_matrix:
    """Users with more than ``T`` tokens keep ``T``, drawn over all their counts from a generator keyed by their id."""
    X = X.tocsr(copy=True)
    lengths = np.bincount(doc_users, weights=np.asarray(X.sum(axis=1)).ravel(), minlength=len(user_ids))
    heavy = np.flatnonzero(lengths > T)
    if heavy.size == 0:
        return X
    order, bounds = user_grouping(doc_users, len(user_ids))
    for u in heavy:
        cells = np.concatenate([np.arange(X.indptr[r], X.indptr[r + 1]) for r in order[bounds[u]:bounds[u + 1]]])
        kept = _unit_rng(root, b"user-tokens", _id_key(user_ids[u])).multivariate_hypergeometric(
            X.data[cells].astype(np.int64), T)
        X.data[cells] = kept.astype(X.data.dtype)
    X.eliminate_zeros()
    log.users_token_capped += int(heavy.size)
    log.tokens_cut_by_max_tokens_per_user += int(lengths[heavy].sum() - T * heavy.size)
    return X


def _unit_rng(root: bytes, kind: bytes, key: bytes) -> np.random.Generator:
    """The generator of one privacy unit: seeded by a hash of (root seed, kind of unit, unit key)."""
    digest = hashlib.sha256(root + b"\x00" + kind + b"\x00" + key).digest()
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest, "little")))


def user_selected(user, fraction: float) -> bool:
    """Whether ``user`` is in the subset of ``fraction`` of all users: a function of the id alone."""
    return user_hash(user, b"topicdp.user_fraction") < fraction * 2.0 ** 64


def user_hash(user, salt: bytes) -> int:
    """A user id hashed to 64 bits (the first 8 bytes, little-endian, of SHA-256 of ``salt``, a zero byte and
    :func:`_id_key`): a function of the id alone, so adding or removing a user moves no other user across any cut."""
    return int.from_bytes(hashlib.sha256(salt + b"\x00" + _id_key(user)).digest()[:8], "little")


def _id_key(uid) -> bytes:
    """A stable, injective, type-tagged byte encoding of the :func:`canonical_user_id` (``"1"``, ``1``, ``("1",)`` differ)."""
    uid = canonical_user_id(uid)
    if uid is None:
        return b"n"
    if isinstance(uid, int):
        return b"i" + str(uid).encode()
    if isinstance(uid, float):
        return b"f" + uid.hex().encode()
    if isinstance(uid, str):
        body = uid.encode("utf-8", "surrogatepass")
        return b"s%d:" % len(body) + body
    if isinstance(uid, bytes):
        return b"y%d:" % len(uid) + uid
    if isinstance(uid, tuple):
        parts = [_id_key(x) for x in uid]
        return b"t%d(" % len(parts) + b"".join(b"%d:" % len(p) + p for p in parts) + b")"
    raise TypeError(
        f"user ids must be str, int, float, bytes, None or tuples of them for bounding, got {type(uid).__name__}"
    )


def _first_users(records: Iterable[tuple[str, object]], n: int) -> Iterator[tuple[str, object]]:
    """The records of the first ``n`` distinct users."""
    first: set = set()
    for text, user in records:
        if user in first or len(first) < n:
            first.add(user)
            yield text, user


#: web-text artefacts (an opt-in list, ``--stop-words web``): entity names of twice-escaped markup, a link
#: placeholder, address parts, and the halves of contractions that tokenisation splits off ("don't" -> "don")
WEB_ARTEFACTS: tuple[str, ...] = (
    "urllink", "nbsp", "amp", "quot", "apos", "http", "https", "www", "com", "html", "htm", "org", "net",
    "don", "didn", "doesn", "isn", "wasn", "aren", "weren", "couldn", "wouldn", "shouldn", "haven", "hasn", "hadn",
)


def stop_word_list(extra: Sequence[str] = ()):
    """``"english"`` (scikit-learn's list), or that list with ``extra`` added, for :func:`make_vectorizer`."""
    if not extra:
        return "english"
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | set(extra))


def make_vectorizer(*, stop_words="english", min_token_length: int = 3, min_df=1, max_df=1.0,
                    max_features: int | None = None, vocabulary: Sequence[str] | None = None):
    """The ``CountVectorizer`` behind every tokenisation: lower-cased runs of at least ``min_token_length`` unicode
    letters after HTML references are decoded; scikit-learn's English stop words by default."""
    from sklearn.feature_extraction.text import CountVectorizer

    check_int(min_token_length, "min_token_length", low=1)
    if max_features is not None:
        check_int(max_features, "max_features", low=1)
    vectorizer = CountVectorizer(
        preprocessor=_normalise,
        token_pattern=_TOKEN_PATTERN % min_token_length,
        stop_words=list(stop_words) if isinstance(stop_words, (list, tuple, set, frozenset)) else stop_words,
        min_df=min_df,
        max_df=max_df,
        max_features=max_features,
        vocabulary=list(vocabulary) if vocabulary is not None else None,
        dtype=np.int64,
    )
    vectorizer._validate_params()  # scikit-learn's own messages for min_df / max_df / stop_words
    return vectorizer


#: fewer documents than this are counted in one process (starting a second costs more than it saves)
PARALLEL_MIN_DOCS = 20_000


def count_words(texts: Sequence[str], vocabulary: Sequence[str], *, stop_words="english", min_token_length: int = 3,
                n_jobs: int = 1) -> tuple[sp.csr_matrix, int]:
    """Counts of ``texts`` on a fixed word list (N x V int64 CSR, sorted indices) and the number of their tokens
    outside it, with :func:`make_vectorizer`'s tokens (its pattern, normalisation and stop words): what
    ``CountVectorizer(vocabulary=...)`` counts, without its per-token Python loop. ``n_jobs`` > 1 splits the
    texts into that many consecutive chunks counted by forked processes (where the platform forks; else one
    process); counts add over documents, so the result is the same for every ``n_jobs``.
    """
    texts = list(texts)
    parts = forked_map(_count_chunk, texts, parallel_jobs(n_jobs, len(texts)), vocabulary, stop_words,
                       min_token_length)
    if len(parts) == 1:
        return parts[0]
    return sp.vstack([X for X, _ in parts], format="csr"), sum(oov for _, oov in parts)


def parallel_jobs(n_jobs: int, n_docs: int) -> int:
    """The processes worth starting for ``n_docs`` documents: at most ``n_jobs``, one per :data:`PARALLEL_MIN_DOCS`."""
    from joblib import effective_n_jobs

    return max(1, min(effective_n_jobs(n_jobs), n_docs // PARALLEL_MIN_DOCS))


def forked_map(work, items: list, n: int, *options) -> list:
    """``[work(chunk, *options)]`` over ``n`` consecutive chunks of ``items``, in order; the chunks after the first in
    forked processes, which inherit ``items`` (only index ranges and results cross), where the platform forks."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if n <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [work(items, *options)]
    bounds = np.linspace(0, len(items), n + 1).astype(int).tolist()
    global _FORKED
    _FORKED = (work, items)
    try:
        with ProcessPoolExecutor(n - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            others = [pool.submit(_forked_chunk, a, b, *options) for a, b in zip(bounds[1:-1], bounds[2:])]
            return [work(items[:bounds[1]], *options)] + [f.result() for f in others]
    finally:
        _FORKED = None


_FORKED: tuple | None = None


def _forked_chunk(start: int, stop: int, *options):
    assert _FORKED is not None  # set by forked_map before the fork
    work, items = _FORKED
    return work(items[start:stop], *options)


def token_finder(stop_words, min_token_length: int):
    """``(find, stop)``: ``find(text)`` lists the tokens of :func:`make_vectorizer`'s analyzer, stop words included
    (lower-cased ASCII text on a faster pattern that finds the same tokens), and ``stop`` is the set to drop."""
    vectorizer = make_vectorizer(stop_words=stop_words, min_token_length=min_token_length)
    find_any, find_ascii = vectorizer.build_tokenizer(), re.compile(_ASCII_TOKEN_PATTERN % min_token_length).findall

    def find(text: str) -> list[str]:
        text = _normalise(text)
        return find_ascii(text) if text.isascii() else find_any(text)

    return find, frozenset(vectorizer.get_stop_words() or ())


def _count_chunk(texts: list, vocabulary: Sequence[str], stop_words,
                 min_token_length: int) -> tuple[sp.csr_matrix, int]:
    """:func:`count_words` in one process: each document's tokens counted in C (``Counter``), and those that are
    words of the list or stop words found by one set intersection (stop words take the columns after the list's, so
    their tokens are counted as neither, and are then cut off)."""
    find, stop = token_finder(stop_words, min_token_length)
    index = {w: j for j, w in enumerate(vocabulary) if w not in stop}  # a stop word is never counted
    index.update((w, len(vocabulary) + k) for k, w in enumerate(sorted(stop)))
    known = frozenset(index)
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    cols: list[int] = []
    vals: list[int] = []
    n_tokens = 0
    for i, text in enumerate(texts):
        tokens = find(text)
        counts = Counter(tokens)
        present = known.intersection(counts)
        cols.extend(map(index.__getitem__, present))
        vals.extend(map(counts.__getitem__, present))
        n_tokens += len(tokens)
        indptr[i + 1] = len(cols)
    X = sp.csr_matrix((np.asarray(vals, dtype=np.int64), np.asarray(cols, dtype=np.int64), indptr),
                      shape=(len(texts), len(vocabulary) + len(stop)))
    n_other = n_tokens - int(X.data.sum())  # tokens that are neither stop words nor in the word list
    X = X[:, :len(vocabulary)]
    X.sort_indices()
    return X, n_other


def _jsonl_opener(where: str):
    """``gzip.open`` for a gzip-compressed file (recognised by content), else ``open``."""
    with open(where, "rb") as raw:
        return gzip.open if raw.read(2) == b"\x1f\x8b" else open


def read_jsonl_records(
    path: str | os.PathLike,
    text_field: str = "text",
    user_field: str = "user",
    users: Iterable | None = None,
) -> Iterator[tuple[str, object]]:
    """Yield ``(text, user)`` of each record of a JSON Lines file (gzip'd or not, recognised by content), in order,
    user ids as :func:`canonical_user_id`, only those in ``users`` if given. Blank lines are skipped, nothing else:
    every problem is a ``ValueError`` (``TypeError`` for a field of the wrong type) starting with ``path:line``.
    """
    keep = None if users is None else frozenset(users)
    where = os.fspath(path)
    if os.path.isdir(where):
        raise ValueError(f"{where}: is a directory; the corpus must be a JSON Lines file (.jsonl or .jsonl.gz)")
    opener = _jsonl_opener(where)
    if opener is open and where.endswith(".gz"):
        raise ValueError(f"{where}: the name ends in .gz but the file is not gzip-compressed")
    lineno = 0
    try:
        # text mode decodes in C, fast; utf-8-sig drops a byte-order mark at the start of the file
        with opener(where, "rt", encoding="utf-8-sig", newline="\n") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                text, user = _parse_record(line, where, lineno, text_field, user_field)
                if keep is None or user in keep:
                    yield text, user
    except UnicodeDecodeError:
        with opener(where, "rb") as fh:  # the decoder works in blocks, so find the line again byte by byte
            for lineno, raw in enumerate(fh, 1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{where}:{lineno}: not UTF-8 (byte 0x{raw[exc.start]:02x} at byte "
                                     f"{exc.start + 1} of the line)") from None
        raise ValueError(f"{where}: not UTF-8") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"{where}:{lineno + 1}: corrupt or truncated gzip data ({exc})") from None


def _parse_record(line: str, where: str, lineno: int, text_field: str, user_field: str) -> tuple[str, object]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}:{lineno}: invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(row, dict):
        raise ValueError(f"{where}:{lineno}: a record must be a JSON object, got {type(row).__name__}")
    for field_name, role in ((text_field, "text_field"), (user_field, "user_field")):
        if field_name not in row:
            present = ", ".join(map(repr, list(row)[:6])) or "none"
            raise ValueError(f"{where}:{lineno}: missing field {field_name!r} ({role}; the record's fields: {present})")
    return _checked_record(row[text_field], row[user_field], f"{where}:{lineno}", text_field, user_field)


def _checked_record(text, user, where: str, text_field: str, user_field: str) -> tuple[str, object]:
    """``(text, user)`` of one record as every source checks it, the user id as :func:`canonical_user_id`, or a
    ``TypeError`` starting with ``where`` (a text that is not a string, a user id not a string or a finite number)."""
    if not isinstance(text, str):
        raise TypeError(f"{where}: field {text_field!r} (text_field) must be a string, got {type(text).__name__}")
    if isinstance(user, np.generic):
        user = user.item()
    finite = not isinstance(user, float) or math.isfinite(user)
    if isinstance(user, bool) or not isinstance(user, (str, int, float)) or not finite:
        got = repr(user) if isinstance(user, float) else type(user).__name__
        raise TypeError(f"{where}: field {user_field!r} (user_field) must be a string or a finite number, got {got}")
    return text, canonical_user_id(user)


def read_source_records(
    path,
    text_field: str = "text",
    user_field: str = "user",
    *,
    query: str | None = None,
    users: Iterable | None = None,
) -> Iterator[tuple[str, object]]:
    """Yield ``(text, user)`` of each record of any corpus source, in its order: the one record reader.

    JSON Lines goes to :func:`read_jsonl_records`; Parquet, CSV, a DataFrame or the rows of ``query`` on a database
    URL to :func:`topicdp.tables.table_rows`, each value checked as a JSON Lines field is (a ``TypeError`` naming the
    row), so the same rows are the same records, ids and bounds whatever the source. A missing field is a
    :class:`topicdp.tables.FieldError` before any row is read.
    """
    if source_format(path) == "jsonl":
        if query is not None:
            raise ValueError(f"query: {os.fspath(path)} is a file; a query is run on a database URL")
        yield from read_jsonl_records(path, text_field, user_field, users)
        return
    keep = None if users is None else frozenset(users)
    where = describe(path, query)
    rows = table_rows(path, {"text_field": text_field, "user_field": user_field}, query=query)
    for number, (text, user) in enumerate(rows, 1):
        text, user = _checked_record(text, user, f"{where}: row {number}", text_field, user_field)
        if keep is None or user in keep:
            yield text, user


def check_source_fields(path, text_field: str = "text", user_field: str = "user", *,
                        query: str | None = None) -> None:
    """Refuse, before the corpus is read, a source without the text or user field (:func:`topicdp.tables.check_fields`):
    a table's fields are its schema's, a JSON Lines file's its first record's."""
    wanted = {"text_field": text_field, "user_field": user_field}
    if source_format(path) != "jsonl":
        check_fields(describe(path, query), table_fields(path, query=query), wanted)
        return
    where = os.fspath(path)
    try:
        with _jsonl_opener(where)(where, "rt", encoding="utf-8-sig", newline="\n") as fh:
            lineno, line = next((i, line) for i, line in enumerate(fh, 1) if line.strip())
            row = json.loads(line)
    except (OSError, ValueError, EOFError, zlib.error, StopIteration):
        return  # no readable first record: the reader's own errors say what is wrong
    if isinstance(row, dict):
        check_fields(f"{where}:{lineno}", [str(k) for k in row], wanted, noun="record")


def canonical_user_id(uid):
    """The one form of a user id, which every hash of an id reads (one person in every file and shard): a number with
    an integral value is that int (``7.0`` is ``7``, ``True`` is ``1``); a string is never a number and is compared
    exactly as written (``"7"`` and ``7`` are two users)."""
    if isinstance(uid, np.generic):
        uid = uid.item()
    return int(uid) if isinstance(uid, bool) or (isinstance(uid, float) and uid.is_integer()) else uid


def tokenize(
    texts: Sequence[str],
    *,
    vocabulary: Sequence[str] | None = None,
    stop_words: str | Sequence[str] | None = "english",
    min_token_length: int = 3,
) -> list[list[str]]:
    """Token lists with :meth:`Corpus.from_texts`' rules; with ``vocabulary``, only its words."""
    analyze = make_vectorizer(stop_words=stop_words, min_token_length=min_token_length).build_analyzer()
    keep = None if vocabulary is None else set(vocabulary)
    return [[t for t in analyze(text) if keep is None or t in keep] for text in texts]


def embedded_texts() -> list[str]:
    """The texts of the embedded corpus (gensim's ``lee_background.cor``)."""
    from gensim.test.utils import datapath

    with open(datapath("lee_background.cor"), encoding="latin-1") as fh:
        return [line.strip() for line in fh if line.strip()]


def embedded_corpus() -> Corpus:
    """The embedded default: gensim's Lee news corpus (300 documents shipped with gensim, one user each)."""
    return Corpus.from_texts(embedded_texts(), min_df=2, max_df=0.5)
