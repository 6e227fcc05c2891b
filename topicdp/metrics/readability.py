"""Readability of released topics: held-out NPMI, NPMI contrast, diversity and matched top-n overlap.

What a reader of a release sees is each topic's top ``n`` words (n = 10). Four measures of those lists,
reported together by :func:`readability` (on blog text no single one tells topics from junk):

* **Held-out NPMI** (:func:`heldout_npmi`). Normalised PMI (Bouma, "Normalized (pointwise) mutual
  information in collocation extraction", GSCL 2009) of every pair of a topic's top words, with
  *document* co-occurrence on held-out documents (Aletras & Stevenson, "Evaluating topic coherence
  using distributional semantics", IWCS 2013; Lau, Newman & Baldwin, "Machine reading tea leaves",
  EACL 2014): with B the boolean (N x V) document-term matrix,

      P(w) = df(w) / N,   P(a, b) = df(a, b) / N,   NPMI(a, b) = log(P(a, b) / (P(a) P(b))) / -log P(a, b),

  -1 for a pair that never co-occurs (the limit) and +1 for a pair present in every document. A pair with
  a word the held-out documents never contain scores -1, as in :mod:`topicdp.metrics.coherence` (noisy
  releases rank rare words highly; giving such pairs anything better would reward noise). A topic's value
  is the mean over its n (n - 1) / 2 pairs. Unlike gensim's ``c_npmi`` (10-word sliding windows, see
  :func:`~topicdp.metrics.topic_coherence`) it needs only sparse matrix products: one call on 20,000
  documents x 2,000 words takes about 0.1 s.
* **NPMI contrast** (:func:`npmi_contrast`): mean within-topic NPMI minus mean across-topic NPMI, the
  latter over pairs (a, b) with a in one topic's list and b in another's. Frequent words co-occur with
  everything, so NPMI alone rewards lists of frequent words: on held-out blog users the frequency list
  cut into chunks of 10 scores almost what gensim LDA does (0.163 vs 0.172), and LDA's own top words
  dealt at random to the topics keep 74% of it; the contrast of both is about 0 (0.003), LDA's 0.053
  (``docs/results/readability_reference.md``). The across mean is the baseline that a list of unrelated
  words reaches, so the contrast is 0 in expectation for any random assignment of words to lists. It is
  not 0 for every list that is not a model's topic: on Enron the frequency chunks get 0.24 against LDA's
  0.29, because that frequency list holds calendar-export tokens that always occur together (a real
  cluster) and because e-mail lengths vary widely, which ties NPMI to the words' frequencies (within
  narrow length bands the chunks' contrast falls to 0.06-0.13). Compare contrasts with the shuffled
  control, not with 0.
  Pairs of a word with itself (a word in two lists) are left out of the across mean: their NPMI is 1 by
  definition and says nothing about co-occurrence; repeated words are what diversity measures.
* **Topic diversity** (:func:`topic_diversity`): distinct words among all K top-n lists / (n K)
  (Dieng, Ruiz & Blei, "Topic modeling in embedding spaces", TACL 2020, Sec. 6).
* **Matched top-n overlap** (:func:`topic_overlap`) with a reference (e.g. the non-private model): topics
  are paired by the Hungarian algorithm maximising the summed |top_i ∩ ref_j|; the value is the mean of
  |top_i ∩ ref_j| / n over matched pairs, 1 for identical lists up to topic order. Two unrelated random
  matrices score about n K / V at most (the expected total of all K^2 intersections is K^2 n^2 / V; the
  matching keeps at most all of it), e.g. 0.036 (measured; bound 0.05) for K = n = 10, V = 2,000.

Held-out means *users* not used for training (:func:`split_users`): documents of training users share
their authors' vocabulary with the training data and would flatter the model.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from .._validation import check_count_matrix, check_int, check_real
from ..corpus import user_hash

#: The contrast's definition, as the module docstring states it: what ``evaluate`` and ``compare`` print beside it.
CONTRAST_DEFINITION = ("mean within-topic NPMI minus mean across-topic NPMI, the latter over pairs (a, b) with a in "
                       "one topic's list and b in another's")


# -- top words ---------------------------------------------------------------------------------------


def _top_ids(topic_word, top_n: int, name: str = "topic_word") -> np.ndarray:
    """(K, top_n) column indices of each row's largest entries, largest first (ties: smaller index)."""
    W = np.asarray(topic_word, dtype=float)
    if W.ndim != 2 or W.shape[0] < 1 or not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be a finite 2-D array (topics x words), got shape {W.shape}")
    top_n = check_int(top_n, "top_n", low=1, high=W.shape[1])
    return np.argsort(-W, axis=1, kind="stable")[:, :top_n]


def top_words_matrix(top_ids, n_words: int) -> np.ndarray:
    """A (K, n_words) score matrix whose top lists are exactly the given rows of word indices.

    Row k scores ``top_ids[k][r]`` with ``n - r`` (zero elsewhere), so ``argsort`` gives back the lists in
    their order: a way to evaluate lists (released top words, controls) with the matrix-based functions.
    """
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


# -- held-out co-occurrence ---------------------------------------------------------------------------


def _heldout_columns(heldout, vocabulary: Sequence[str] | None, n_words: int) -> tuple[sp.csc_matrix, np.ndarray]:
    """Boolean held-out matrix (CSC, int32 ones) and, per column of the topics, its held-out column (-1: absent).

    ``heldout`` is a :class:`~topicdp.Corpus` (matched to ``vocabulary`` by word, so its vocabulary may
    differ; without ``vocabulary`` its columns are the topics' columns) or an (N, V) count matrix whose
    columns are the topics' columns.
    """
    from ..corpus import is_corpus

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
    """NPMI of word pairs from document counts (arrays broadcast): the one definition of the measure.

    ``NPMI = log(P(a, b) / (P(a) P(b))) / -log P(a, b)`` with ``P = df / N`` (Bouma 2009), written
    ``(h_a + h_b) / h_ab - 1`` with ``h_x = log(N / df_x)``; -1 where the pair never co-occurs (``df_ab = 0``,
    which includes a word never seen), 1 where it is in every document (``df_ab = N``, 0 / 0 otherwise). Both
    :func:`heldout_npmi` and the private evaluation (:mod:`topicdp.metrics.private`: its exact value and its
    estimator) compute it here, so that they are one measure."""
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

    Parameters
    ----------
    topic_word : (K, V) array-like
        Topic scores (only each row's ranking is used).
    heldout : Corpus or (N, V) count matrix
        Held-out documents (users not used for training). A Corpus is matched by word to ``vocabulary``.
    vocabulary : sequence of V str, optional
        Words of ``topic_word``'s columns, to match them with a held-out Corpus by word. Default: the
        columns are the held-out data's columns.
    top_n : int, default=10
    per_topic : bool, default=False
        Return the K topic values instead of their mean.

    Returns
    -------
    float or ndarray of shape (K,), in [-1, 1]
    """
    top = _topic_lists(topic_word, top_n)
    B, cols = _heldout_columns(heldout, vocabulary, np.shape(topic_word)[1])
    S, C = _pair_sums(top, B, cols)
    values = np.diag(S) / np.diag(C)  # ordered pairs of distinct words: twice each unordered pair
    return values if per_topic else float(values.mean())


def npmi_contrast(topic_word, heldout, vocabulary: Sequence[str] | None = None, *, top_n: int = 10,
                  per_topic: bool = False):
    """Mean within-topic NPMI minus mean across-topic NPMI (pairs from two different topics' lists).

    Parameters as :func:`heldout_npmi`. Needs K >= 2. Per topic: the topic's within NPMI minus the mean
    NPMI of its words with the other topics' words.

    Returns
    -------
    float or ndarray of shape (K,), in [-2, 2]; about 0 for lists that are not topics (see module docstring).
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
    """Matched top-``top_n`` overlap of ``topic_word`` with ``reference`` (same vocabulary).

    Topics are paired by the Hungarian algorithm maximising the total intersection size of their top
    lists; each pair scores |top_i ∩ ref_j| / top_n. With different numbers of topics, min(K, K') pairs
    are matched.

    Parameters
    ----------
    topic_word : (K, V) array-like
    reference : (K', V) array-like
        E.g. the non-private model's topics.
    top_n : int, default=10
    per_topic : bool, default=False
        Return, for each row of ``topic_word``, its matched pair's value (NaN if unmatched).

    Returns
    -------
    float in [0, 1] or ndarray of shape (K,)
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
    rows, cols = linear_sum_assignment(inter, maximize=True)
    values = inter[rows, cols] / top_n
    if not per_topic:
        return float(values.mean())
    out = np.full(a.shape[0], np.nan)
    out[rows] = values
    return out


def readability(topic_word, vocabulary: Sequence[str], heldout, reference=None, top_n: int = 10) -> dict:
    """All four readability measures of a topic-word matrix, plus per-topic values (JSON-serialisable).

    Parameters
    ----------
    topic_word : (K, V) array-like
        Released (or reference) topics; only each row's ranking is used.
    vocabulary : sequence of V str
        Words of the columns.
    heldout : Corpus or (N, V) count matrix
        Documents of held-out users (:func:`split_users`).
    reference : (K', V) array-like, optional
        Topics to compare with (e.g. the non-private model); ``overlap`` is None without it.
    top_n : int, default=10

    Returns
    -------
    dict
        ``npmi`` (mean within-topic held-out NPMI), ``npmi_across``, ``npmi_contrast``
        (``npmi - npmi_across``; None for K = 1), ``diversity``, ``overlap`` (or None), ``top_n``,
        ``n_heldout_docs``, ``unseen_top_words`` (top-list entries absent from the held-out documents)
        and ``per_topic``: lists ``npmi``, ``npmi_contrast``, ``overlap`` (one value per topic; None
        where undefined) and ``top_words``.
    """
    W = np.asarray(topic_word, dtype=float)
    top = _topic_lists(W, top_n)
    B, cols = _heldout_columns(heldout, vocabulary, W.shape[1])
    if len(vocabulary) != W.shape[1]:
        raise ValueError(
            f"vocabulary must have one word per column of topic_word ({W.shape[1]}), got {len(vocabulary)}")
    S, C = _pair_sums(top, B, cols)
    within = np.diag(S) / np.diag(C)
    out: dict = {"npmi": float(within.mean()), "npmi_across": None, "npmi_contrast": None}
    per_contrast = [None] * W.shape[0]
    if W.shape[0] >= 2:
        c = _contrast_from(S, C)
        out.update(npmi_across=c["npmi_across"], npmi_contrast=c["contrast"])
        per_contrast = c["per_topic"].tolist()
    overlap = per_overlap = None
    if reference is not None:
        per = topic_overlap(W, reference, top_n=top_n, per_topic=True)
        overlap = float(np.nanmean(per))
        per_overlap = [None if np.isnan(v) else float(v) for v in per]
    df = np.asarray(B.sum(axis=0)).ravel()
    unseen = int(sum(1 for j in top.ravel() if cols[j] < 0 or df[cols[j]] == 0))
    out.update(
        diversity=topic_diversity(W, top_n=top_n),
        overlap=overlap,
        top_n=int(top_n),
        n_heldout_docs=int(B.shape[0]),
        unseen_top_words=unseen,
        per_topic={
            "npmi": within.tolist(),
            "npmi_contrast": per_contrast,
            "overlap": per_overlap,
            "top_words": [[str(vocabulary[j]) for j in row] for row in top],
        },
    )
    return out


# -- held-out users -----------------------------------------------------------------------------------


def heldout_user_mask(user_ids: Sequence, test_fraction: float = 0.2, seed: int = 0) -> np.ndarray:
    """For each user id, whether it belongs to the held-out part (a deterministic hash of id and seed).

    A user is held out iff :func:`topicdp.corpus.user_hash` of its id (salted by the seed) is below
    ``test_fraction`` of 2^64: a user's side depends on its own id only, so the same user is on the same side in
    every corpus built from the same source, and the held-out share is Binomial(n_users, test_fraction).
    """
    test_fraction = check_real(test_fraction, "test_fraction", low=0.0, high=1.0)
    salt = f"topicdp.heldout:{check_int(seed, 'seed')}".encode()
    user_ids = list(user_ids)
    return np.fromiter((user_hash(u, salt) < test_fraction * 2.0 ** 64 for u in user_ids), dtype=bool,
                       count=len(user_ids))


def split_users(corpus, test_fraction: float = 0.2, seed: int = 0):
    """Split a :class:`~topicdp.Corpus` by user into ``(train, test)`` corpora (see :func:`heldout_user_mask`).

    Held out means users not used for training: every document of a user is on one side.

    Raises
    ------
    ValueError
        If either side would be empty (too few users for ``test_fraction``).
    """
    mask = heldout_user_mask(corpus.user_ids, test_fraction, seed)
    if mask.all() or not mask.any():
        raise ValueError(
            f"test_fraction={test_fraction} with seed={seed} puts all {corpus.n_users} users on one side; "
            "use more users or a test_fraction further from 0 and 1")
    return corpus.subset_users(np.flatnonzero(~mask)), corpus.subset_users(np.flatnonzero(mask))
