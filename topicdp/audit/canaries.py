"""Canaries: the neighbouring datasets D (canary out) and D' (canary in) built from a corpus.

A corpus is a ``(X, doc_users, vocabulary)`` tuple (CSR counts N x V, user index per document, V words) or an object
with those attributes; builders return :class:`CorpusData` (:meth:`CanaryPair.as_corpora` converts). ``"add-remove"``:
D' = D plus the canary as a new user; ``"replace-one"``: one random record (a user, or a document for the
long-document canary) replaced by it. D and D' share one vocabulary with the canary's words (zero columns in D): the
audit fixes the output domain, as a public vocabulary does (a vocabulary from the private texts would leak the canary
itself, not measured here). :func:`synthetic_corpus` and :class:`BoundedContributionSum` (a statistic of proven
sensitivity) test the auditor end to end: the Gaussian mechanism on it must not be flagged unless its noise is cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_option, check_random_state
from ..corpus import is_corpus

from .._names import NEIGHBOURS  # noqa: E402
CANARIES = ("typical", "outlier", "long-document")


class CorpusData(NamedTuple):
    """The minimal corpus: CSR counts (N x V), user index per document, vocabulary (V words)."""

    X: sp.csr_matrix
    doc_users: np.ndarray
    vocabulary: list

    @property
    def n_users(self) -> int:
        return int(self.doc_users.max()) + 1 if self.doc_users.size else 0


@dataclass
class CanaryPair:
    """Neighbouring datasets ``D``, ``D_prime`` (same vocabulary) and the canary: its ``name``, its words and
    relative frequencies (for the canary-word distinguisher), ``neighbours``, the record ``unit``, a description."""

    name: str
    D: CorpusData
    D_prime: CorpusData
    canary_words: np.ndarray
    canary_weights: np.ndarray
    neighbours: str
    unit: str
    description: str
    details: dict = field(default_factory=dict)

    def as_corpora(self, factory: Callable):
        """``(factory(X, vocabulary, doc_users) for D, for D')``, e.g. ``factory=Corpus.from_matrix``."""
        return tuple(factory(d.X, list(d.vocabulary), d.doc_users) for d in (self.D, self.D_prime))

    def to_dict(self) -> dict:
        labels = {k: getattr(self, k) for k in ("neighbours", "unit", "description")}
        return {"canary": self.name, **labels, "n_canary_words": int(self.canary_words.size),
                "n_docs": [int(self.D.X.shape[0]), int(self.D_prime.X.shape[0])], "n_words": int(self.D.X.shape[1]),
                **self.details}


def as_corpus_data(corpus) -> CorpusData:
    """Validate a ``(X, doc_users, vocabulary)`` tuple or an object with those attributes."""
    if isinstance(corpus, tuple) and len(corpus) == 3:
        X, doc_users, vocabulary = corpus
    elif is_corpus(corpus):
        X, doc_users, vocabulary = corpus.X, corpus.doc_users, corpus.vocabulary
    else:
        raise TypeError("corpus must be a (X, doc_users, vocabulary) tuple or have attributes X, doc_users and "
                        f"vocabulary, got {type(corpus).__name__}")
    X = sp.csr_matrix(X)
    doc_users = np.asarray(doc_users)
    vocabulary = [str(w) for w in vocabulary]
    if X.shape[0] == 0:
        raise ValueError("corpus X has no documents")
    if doc_users.shape != (X.shape[0],) or not np.issubdtype(doc_users.dtype, np.integer) or doc_users.min() < 0:
        raise ValueError(f"doc_users must be non-negative integers, one per document (shape ({X.shape[0]},))")
    if len(vocabulary) != X.shape[1]:
        raise ValueError(f"vocabulary must have one word per column of X ({X.shape[1]}), got {len(vocabulary)}")
    X = check_count_matrix(X, "corpus X", min_docs=0, min_words=0, dtype=X.dtype)
    return CorpusData(X, _renumber(doc_users), vocabulary)


def _renumber(users: np.ndarray) -> np.ndarray:
    """Contiguous user indices 0..U-1 in order of first appearance."""
    uniq, first, inverse = np.unique(users, return_index=True, return_inverse=True)
    rank = np.empty(uniq.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(uniq.size)
    return rank[inverse.ravel()]


def _drop_docs(data: CorpusData, drop: np.ndarray) -> CorpusData:
    keep = np.ones(data.X.shape[0], dtype=bool)
    keep[drop] = False
    if not keep.any():
        raise ValueError("the corpus would be empty without the canary's records")
    return CorpusData(data.X[keep], _renumber(data.doc_users[keep]), data.vocabulary)


def _append(data: CorpusData, rows: sp.csr_matrix) -> CorpusData:
    """Append ``rows`` as the documents of one new user."""
    users = np.concatenate([data.doc_users, np.full(rows.shape[0], data.n_users, dtype=np.int64)])
    X = sp.vstack([data.X, rows.astype(data.X.dtype)], format="csr")
    return CorpusData(X, users, data.vocabulary)


def _replace(base: CorpusData, rows: sp.csr_matrix, unit: str, rng) -> tuple[CorpusData, dict]:
    """D' for replace-one: remove a random user's documents (or one random document) and add the canary."""
    if unit == "user":
        victim = int(rng.integers(base.n_users))
        drop = np.flatnonzero(base.doc_users == victim)
        return _append(_drop_docs(base, drop), rows), {"replaced_user": victim}
    doc = int(rng.integers(base.X.shape[0]))
    X = sp.vstack([base.X[:doc], rows.astype(base.X.dtype), base.X[doc + 1 :]], format="csr")
    return CorpusData(X, base.doc_users.copy(), base.vocabulary), {"replaced_document": doc}


def _pair(name, base, rows, words, weights, neighbours, unit, description, rng, details) -> CanaryPair:
    neighbours = check_option(neighbours, "neighbours", NEIGHBOURS)
    D_prime, extra = (_append(base, rows), {}) if neighbours == "add-remove" else _replace(base, rows, unit, rng)
    return CanaryPair(name, base, D_prime, words, weights, neighbours, unit, description, {**details, **extra})


def _word_profile(rows: sp.csr_matrix):
    counts = np.asarray(rows.sum(axis=0)).ravel()
    words = np.flatnonzero(counts)
    return words, counts[words] / counts[words].sum()


def typical_user_canary(corpus, *, neighbours: str = "add-remove", random_state=None) -> CanaryPair:
    """A typical user (drawn among users whose token count lies in the inter-quartile range) as the canary, its
    words weighted by its frequencies."""
    data, rng = as_corpus_data(corpus), check_random_state(random_state)
    if data.n_users < 2:
        raise ValueError("the typical-user canary needs a corpus with at least 2 users")
    tokens = np.bincount(data.doc_users, weights=np.asarray(data.X.sum(axis=1)).ravel(), minlength=data.n_users)
    q1, q3 = np.percentile(tokens, [25, 75])
    candidates = np.flatnonzero((tokens >= q1) & (tokens <= q3))
    user = int(rng.choice(candidates))
    docs = np.flatnonzero(data.doc_users == user)
    rows = data.X[docs]
    words, weights = _word_profile(rows)
    base = _drop_docs(data, docs)
    desc = f"typical user ({docs.size} documents, {int(tokens[user])} tokens) drawn from the corpus"
    details = {"user": user, "canary_docs": int(docs.size), "canary_tokens": int(tokens[user])}
    return _pair("typical", base, rows, words, weights, neighbours, "user", desc, rng, details)


def outlier_user_canary(corpus, *, n_docs: int = 20, doc_length: int = 100, n_words: int = 10,
                        neighbours: str = "add-remove", random_state=None, prefix: str = "zzcanary") -> CanaryPair:
    """An outlier user: ``n_docs`` documents of ``doc_length`` tokens drawn uniformly from ``n_words`` fresh words.

    Sensitivity sampled from typical neighbours (random DP) does not cover such a user; a proven global bound with
    contribution bounding does.
    """
    data, rng = as_corpus_data(corpus), check_random_state(random_state)
    n_docs = check_int(n_docs, "n_docs", low=1)
    doc_length = check_int(doc_length, "doc_length", low=1)
    n_words = check_int(n_words, "n_words", low=1)
    V = data.X.shape[1]
    taken, i = set(data.vocabulary), 0
    fresh: list[str] = []  # the first n_words of prefix0, prefix1, ... that the corpus does not use
    while len(fresh) < n_words:
        if f"{prefix}{i}" not in taken:
            fresh.append(f"{prefix}{i}")
        i += 1
    vocabulary = data.vocabulary + fresh
    X = sp.hstack([data.X, sp.csr_matrix((data.X.shape[0], n_words), dtype=data.X.dtype)], format="csr")
    base = CorpusData(X, data.doc_users, vocabulary)
    counts = rng.multinomial(doc_length, np.full(n_words, 1.0 / n_words), size=n_docs)
    rows = sp.hstack([sp.csr_matrix((n_docs, V)), sp.csr_matrix(counts.astype(np.float64))], format="csr")
    words = np.arange(V, V + n_words)
    desc = f"outlier user: {n_docs} documents of {doc_length} tokens over {n_words} fresh words"
    details = {"canary_docs": n_docs, "canary_tokens": n_docs * doc_length, "fresh_words": n_words}
    return _pair("outlier", base, rows, words, np.full(n_words, 1.0 / n_words), neighbours, "user", desc, rng, details)


def long_document_canary(corpus, *, length: int | None = None, n_words: int = 20, neighbours: str = "add-remove",
                         random_state=None) -> CanaryPair:
    """A single document of ``length`` tokens (default 10 x the longest) over ``n_words`` words the corpus uses: a
    new one-document user (add-remove) or in place of a random document (replace-one, document level)."""
    data, rng = as_corpus_data(corpus), check_random_state(random_state)
    doc_lengths = np.asarray(data.X.sum(axis=1)).ravel()
    length = int(10 * doc_lengths.max()) if length is None else check_int(length, "length", low=1)
    used = np.flatnonzero(np.asarray(data.X.sum(axis=0)).ravel() > 0)
    n_words = check_int(n_words, "n_words", low=1, high=max(1, used.size))
    words = np.sort(rng.choice(used, size=n_words, replace=False))
    counts = rng.multinomial(length, np.full(n_words, 1.0 / n_words))
    rows = sp.csr_matrix((counts.astype(np.float64), (np.zeros(n_words, int), words)), shape=(1, data.X.shape[1]))
    w, weights = _word_profile(rows)
    desc = f"one document of {length} tokens over {n_words} existing words (corpus max {int(doc_lengths.max())})"
    details = {"canary_tokens": length, "corpus_max_doc_length": int(doc_lengths.max())}
    return _pair("long-document", data, rows, w, weights, neighbours, "document", desc, rng, details)


def make_canary(kind: str, corpus, **kwargs) -> CanaryPair:
    """Build a canary pair by name: ``"typical"``, ``"outlier"`` or ``"long-document"``."""
    builder = {"typical": typical_user_canary, "outlier": outlier_user_canary, "long-document": long_document_canary}
    return builder[check_option(kind, "canary", CANARIES)](corpus, **kwargs)


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
