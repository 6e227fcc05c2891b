"""Readability of released topics: four measures of each topic's top words, reported together by :func:`readability`.

* Held-out NPMI (:func:`heldout_npmi`; Bouma, GSCL 2009; Lau, Newman & Baldwin, EACL 2014) of every pair of a
  topic's top words, by document co-occurrence on held-out users' documents (:func:`split_users`): ``log(P(a, b) /
  (P(a) P(b))) / -log P(a, b)``, ``P = df / N``; -1 for a pair never seen together (noisy releases rank rare words
  highly: anything better would reward noise), +1 for one in every document. Sparse products, not sliding windows.
* NPMI contrast (:func:`npmi_contrast`): mean within-topic NPMI minus mean across-topic NPMI, the latter over
  pairs (a, b) with a in one topic's list and b in another's (a word never with itself). NPMI alone rewards lists
  of frequent words; the contrast is 0 in expectation for words dealt to lists at random.
* Topic diversity (:func:`topic_diversity`): distinct words of the K top-n lists / (n K) (Dieng, Ruiz & Blei,
  "Topic modeling in embedding spaces", TACL 2020, Sec. 6).
* Matched top-n overlap (:func:`topic_overlap`): the mean ``|top_i ∩ ref_j| / n`` over the Hungarian matching; two
  unrelated random matrices score at most about ``n K / V``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from .._validation import check_count_matrix, check_int, check_real
from ..corpus import is_corpus, user_hash
from ..topics import matching, top_indices

#: The contrast's definition: what ``evaluate`` and ``compare`` print beside it.
CONTRAST_DEFINITION = ("mean within-topic NPMI minus mean across-topic NPMI, the latter over pairs (a, b) with a in "
                       "one topic's list and b in another's")


def _top_ids(topic_word, top_n: int, name: str = "topic_word") -> np.ndarray:
    """(K, top_n) column indices of each row's largest entries, largest first (ties: smaller index)."""
    W = np.asarray(topic_word, dtype=float)
    if W.ndim != 2 or W.shape[0] < 1 or not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be a finite 2-D array (topics x words), got shape {W.shape}")
    return top_indices(W, check_int(top_n, "top_n", low=1, high=W.shape[1]))


def top_words_matrix(top_ids, n_words: int) -> np.ndarray:
    """A (K, n_words) score matrix whose top lists are the rows of ``top_ids`` (for the matrix-based functions)."""
    ids = np.asarray(top_ids)
    n_words = check_int(n_words, "n_words", low=1)
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer) or ids.size == 0:
        raise ValueError("top_ids must be a non-empty 2-D integer array (topics x list length)")
    if ids.min() < 0 or ids.max() >= n_words:
        raise ValueError(f"top_ids must be word indices in [0, {n_words - 1}]")
    if any(len(set(row)) < len(row) for row in ids.tolist()):
        raise ValueError("top_ids must not repeat a word within a topic")
    n = ids.shape[1]
    W = np.zeros((ids.shape[0], n_words))
    np.put_along_axis(W, ids, np.arange(n, 0, -1, dtype=float)[None, :], axis=1)
    return W


def _heldout_columns(heldout, vocabulary: Sequence[str] | None, n_words: int) -> tuple[sp.csc_matrix, np.ndarray]:
    """Boolean held-out matrix (CSC) and each topic column's held-out column (-1: absent), a Corpus matched by word."""
    if is_corpus(heldout):
        X, held_vocab = heldout.X, heldout.vocabulary
        if vocabulary is None:  # the topics' columns are the corpus' columns
            vocabulary = held_vocab
        if len(vocabulary) != n_words:
            raise ValueError(
                f"vocabulary must have one word per column of topic_word ({n_words}), got {len(vocabulary)}")
        if tuple(vocabulary) == tuple(held_vocab):
            cols = np.arange(n_words)
        else:
            index = {w: j for j, w in enumerate(held_vocab)}
            cols = np.array([index.get(str(w), -1) for w in vocabulary], dtype=np.int64)
    else:
        X = sp.csr_matrix(heldout) if not sp.issparse(heldout) else heldout
        if X.ndim != 2 or X.shape[1] != n_words:
            raise ValueError(f"heldout must be a Corpus or an (N, {n_words}) document-term matrix, got {X.shape}")
        cols = np.arange(n_words)
    if X.shape[0] < 1:
        raise ValueError("heldout must contain at least one document")
    B = sp.csc_matrix(check_count_matrix(X, "heldout", min_docs=0, min_words=0))
    B.data = np.ones_like(B.data, dtype=np.int32)
    return B, cols


def npmi_from_counts(N, df_a, df_b, df_ab) -> np.ndarray:
    """NPMI of word pairs from document counts, the one definition (held-out and private): ``(h_a + h_b) / h_ab - 1``,
    ``h_x = log(N / df_x)`` (Bouma 2009); -1 where ``df_ab = 0``, 1 where ``df_ab = N``."""
    N, df_a, df_b, df_ab = (np.asarray(x, dtype=float) for x in (N, df_a, df_b, df_ab))
    with np.errstate(divide="ignore", invalid="ignore"):
        hs = np.log(N / df_a) + np.log(N / df_b)
        hp = np.log(N / df_ab)
        v = np.where(hp > 1e-12, hs / hp - 1.0, 1.0)
    return np.clip(np.where(df_ab > 0, v, -1.0), -1.0, 1.0)


def _npmi_among(B: sp.csc_matrix, cols: np.ndarray) -> np.ndarray:
    """NPMI matrix among held-out columns ``cols`` (-1 = unseen); the diagonal is left at 1."""
    N = B.shape[0]
    m = cols.size
    seen = cols >= 0
    co = np.zeros((m, m))
    sub = B[:, cols[seen]]
    co[np.ix_(seen, seen)] = (sub.T @ sub).toarray()  # co[a, b] = df(a, b); co[a, a] = df(a)
    df = np.diag(co).copy()
    npmi = npmi_from_counts(N, df[:, None], df[None, :], co)
    np.fill_diagonal(npmi, 1.0)
    return npmi


def _pair_sums(top: np.ndarray, B: sp.csc_matrix, cols: np.ndarray):
    """Within- and across-topic NPMI sums and pair counts for top lists ``top`` (K, n)."""
    words, inverse = np.unique(top, return_inverse=True)
    inverse = inverse.reshape(top.shape)
    M = _npmi_among(B, cols[words])
    np.fill_diagonal(M, 0.0)  # a word paired with itself is never counted (module docstring)
    K, n = top.shape
    A = np.zeros((K, words.size))
    A[np.repeat(np.arange(K), n), inverse.ravel()] = 1.0  # topic membership (lists have distinct words)
    S = A @ M @ A.T  # S[i, j] = sum over a in T_i, b in T_j, a != b of NPMI(a, b)
    C = n * n - A @ A.T  # number of such ordered pairs
    return S, C


def _topic_lists(topic_word, top_n):
    top = _top_ids(topic_word, top_n)
    if top.shape[1] < 2:
        raise ValueError("top_n must be at least 2 for NPMI (it scores pairs of words)")
    return top


def heldout_npmi(topic_word, heldout, vocabulary: Sequence[str] | None = None, *, top_n: int = 10,
                 per_topic: bool = False):
    """Mean NPMI of each topic's top-``top_n`` word pairs, document co-occurrence on ``heldout``.

    ``topic_word``: only each row's ranking is used. ``heldout``: a Corpus (matched by word to ``vocabulary``) or an
    (N, V) count matrix on the topics' columns. ``per_topic``: the K values instead of their mean, in [-1, 1].
    """
    top = _topic_lists(topic_word, top_n)
    B, cols = _heldout_columns(heldout, vocabulary, np.shape(topic_word)[1])
    S, C = _pair_sums(top, B, cols)
    values = np.diag(S) / np.diag(C)  # ordered pairs of distinct words: twice each unordered pair
    return values if per_topic else float(values.mean())


def npmi_contrast(topic_word, heldout, vocabulary: Sequence[str] | None = None, *, top_n: int = 10,
                  per_topic: bool = False):
    """Mean within-topic NPMI minus mean across-topic NPMI (parameters as :func:`heldout_npmi`; K >= 2). Per topic:
    its within NPMI minus the mean NPMI of its words with the other topics' words.
    """
    return _contrast(topic_word, heldout, vocabulary, top_n)["per_topic" if per_topic else "contrast"]


def _contrast(topic_word, heldout, vocabulary, top_n) -> dict:
    top = _topic_lists(topic_word, top_n)
    if top.shape[0] < 2:
        raise ValueError("topic_word needs at least 2 topics for an across-topic NPMI")
    B, cols = _heldout_columns(heldout, vocabulary, np.shape(topic_word)[1])
    return _contrast_from(*_pair_sums(top, B, cols))


def _contrast_from(S: np.ndarray, C: np.ndarray) -> dict:
    within = np.diag(S) / np.diag(C)
    off = ~np.eye(S.shape[0], dtype=bool)
    across_per_topic = np.where(off, S, 0).sum(axis=1) / np.where(off, C, 0).sum(axis=1)
    across = float(S[off].sum() / C[off].sum())
    return {
        "npmi": float(within.mean()),
        "npmi_across": across,
        "contrast": float(within.mean() - across),
        "within": within,
        "per_topic": within - across_per_topic,
    }


def topic_diversity(topic_word, *, top_n: int = 10) -> float:
    """Distinct words among all topics' top-``top_n`` lists divided by ``top_n * K`` (1: no word repeats)."""
    top = _top_ids(topic_word, top_n)
    return float(np.unique(top).size / top.size)


def topic_overlap(topic_word, reference, *, top_n: int = 10, per_topic: bool = False):
    """Matched top-``top_n`` overlap of ``topic_word`` with ``reference`` (same vocabulary; min(K, K') pairs matched by
    :func:`topicdp.topics.matching`); ``per_topic``: each row's matched value (NaN if unmatched).
    """
    a = _top_ids(topic_word, top_n)
    b = _top_ids(reference, top_n, "reference")
    if np.shape(topic_word)[1] != np.shape(reference)[1]:
        raise ValueError(
            f"topic_word and reference must share the vocabulary (columns), got {np.shape(topic_word)[1]} "
            f"and {np.shape(reference)[1]}")
    V = np.shape(topic_word)[1]
    ind_a = np.zeros((a.shape[0], V), dtype=np.int32)
    ind_b = np.zeros((b.shape[0], V), dtype=np.int32)
    np.put_along_axis(ind_a, a, 1, axis=1)
    np.put_along_axis(ind_b, b, 1, axis=1)
    inter = ind_a @ ind_b.T  # inter[i, j] = |top_i ∩ ref_j|
    rows, cols = matching(inter)
    values = inter[rows, cols] / top_n
    if not per_topic:
        return float(values.mean())
    out = np.full(a.shape[0], np.nan)
    out[rows] = values
    return out


def readability(topic_word, vocabulary: Sequence[str], heldout, reference=None, top_n: int = 10) -> dict:
    """All four measures of a topic-word matrix and per-topic values (JSON): ``heldout`` documents of held-out users,
    ``reference`` topics to compare with (``overlap`` None without it); ``npmi_contrast`` None for K = 1."""
    W = np.asarray(topic_word, dtype=float)
    top = _topic_lists(W, top_n)
    B, cols = _heldout_columns(heldout, vocabulary, W.shape[1])
    if len(vocabulary) != W.shape[1]:
        raise ValueError(
            f"vocabulary must have one word per column of topic_word ({W.shape[1]}), got {len(vocabulary)}")
    S, C = _pair_sums(top, B, cols)
    within = np.diag(S) / np.diag(C)
    c = _contrast_from(S, C) if W.shape[0] >= 2 else None
    per = None if reference is None else topic_overlap(W, reference, top_n=top_n, per_topic=True)
    df = np.asarray(B.sum(axis=0)).ravel()
    return {"npmi": float(within.mean()), "npmi_across": None if c is None else c["npmi_across"],
            "npmi_contrast": None if c is None else c["contrast"], "diversity": topic_diversity(W, top_n=top_n),
            "overlap": None if per is None else float(np.nanmean(per)), "top_n": int(top_n),
            "n_heldout_docs": int(B.shape[0]),
            "unseen_top_words": int(sum(1 for j in top.ravel() if cols[j] < 0 or df[cols[j]] == 0)),
            "per_topic": {"npmi": within.tolist(),
                          "npmi_contrast": [None] * W.shape[0] if c is None else c["per_topic"].tolist(),
                          "overlap": None if per is None else [None if np.isnan(v) else float(v) for v in per],
                          "top_words": [[str(vocabulary[j]) for j in row] for row in top]}}


def heldout_user_mask(user_ids: Sequence, test_fraction: float = 0.2, seed: int = 0) -> np.ndarray:
    """Whether each user is held out (its own id decides): its seeded :func:`~topicdp.corpus.user_hash` is below
    ``test_fraction`` of 2^64."""
    test_fraction = check_real(test_fraction, "test_fraction", low=0.0, high=1.0)
    salt = f"topicdp.heldout:{check_int(seed, 'seed')}".encode()
    user_ids = list(user_ids)
    return np.fromiter((user_hash(u, salt) < test_fraction * 2.0 ** 64 for u in user_ids), dtype=bool,
                       count=len(user_ids))


def split_users(corpus, test_fraction: float = 0.2, seed: int = 0):
    """Split a :class:`~topicdp.Corpus` by user into ``(train, test)``; a ``ValueError`` when either side is empty."""
    mask = heldout_user_mask(corpus.user_ids, test_fraction, seed)
    if mask.all() or not mask.any():
        raise ValueError(
            f"test_fraction={test_fraction} with seed={seed} puts all {corpus.n_users} users on one side; "
            "use more users or a test_fraction further from 0 and 1")
    return corpus.subset_users(np.flatnonzero(~mask)), corpus.subset_users(np.flatnonzero(mask))
