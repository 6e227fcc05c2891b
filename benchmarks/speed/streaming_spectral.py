"""Spectral LDA in passes over a :class:`~topicdp.streaming.StreamingCorpus` (DeCarolis et al. 2020, App. C-D).

The in-memory estimator touches the data only through block products with ``M2_hat`` (Eq. 6) and the whitened
tensor ``M3_hat(W, W, W)`` (Eq. 7), both sums over documents, so both are computed here chunk by chunk and
shard by shard (locally, or as Dask tasks, :func:`topicdp.streaming.map_reduce`). Pass 1 also collects
:class:`topicdp.spectral.moments.M2Operator`'s statistics (N is known only at its end, so the data term is kept
in two parts); passes 2..m are the eigen-solver's products (block subspace iteration, a randomized range finder
with Rayleigh-Ritz: Halko, Martinsson & Tropp 2011, Algs. 4.4 and 5.3); one more pass accumulates
:func:`topicdp.spectral.moments.whitened_m3`'s document sums. Memory is one chunk plus O(d k); with the same
``random_state`` the fit draws the same numbers as ``SpectralLDA`` and agrees up to floating-point reassociation.
Non-private; kept beside ``bench_streaming.py`` (its peak-memory measurement) and tested beside it
(``test_streaming_spectral.py``), the library's spectral releases being in memory.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from topicdp._validation import check_int, check_option, check_random_state
from topicdp.spectral.estimator import SpectralLDA, check_model_params
from topicdp.spectral.moments import (MIN_DOC_LENGTH, MomentDocuments, _add_m3_sums, _finish_m3, _m3_sums,
                                      lda_coefficients)
from topicdp.spectral.recovery import SIMPLEX_METHODS, recover_topics
from topicdp.spectral.tensor import power_method
from topicdp.spectral.whitening import whiten
from topicdp.streaming import Chunk, Shard, StreamingCorpus, StreamLog
from topicdp.streaming.readers import _chunk_from_counts

# per-shard work, at module level: Dask pickles these by reference


def _documents(shard, reader):
    """Chunks of a shard as moment corpora: float64 counts of the documents with >= 3 tokens.

    Yields ``(MomentDocuments, n_short, n_tokens, n_empty)``; a document with fewer than 3 tokens has no
    third-order estimator (Eq. 4) and is left out, exactly as :func:`topicdp.spectral.moments.prepare_corpus` does.
    """
    for chunk in reader.read(shard):
        X = sp.csr_matrix(chunk.X, dtype=np.float64)
        lengths = np.asarray(X.sum(axis=1)).ravel()
        keep = lengths >= MIN_DOC_LENGTH
        n_short = int((~keep).sum())
        if n_short:
            X = X[keep]
        corpus = MomentDocuments(X=X, lengths=lengths[keep], n_short=n_short)
        yield corpus, n_short, float(lengths.sum()), chunk.empty_documents_dropped


def _first_pass(shard, reader, Q):
    """Corpus statistics and the two halves of ``X^T diag(g) X Q`` for one shard (see module docstring)."""
    d, b = Q.shape
    acc = {"n_docs": 0, "n_short": 0, "n_tokens": 0.0, "n_empty": 0, "S": np.zeros(d), "v2": np.zeros(d),
           "v3": np.zeros(d), "XsXQ": np.zeros((d, 2 * b))}
    for c, n_short, n_tokens, n_empty in _documents(shard, reader):
        acc["n_short"] += n_short
        acc["n_tokens"] += n_tokens
        acc["n_empty"] += n_empty
        if c.n_docs == 0:
            continue
        s1, s2, s3 = 1.0 / c.lengths, c.inverse_falling(2), c.inverse_falling(3)
        XQ = c.X @ Q
        acc["XsXQ"] += np.asarray(c.X.T @ np.hstack([XQ * s2[:, None], XQ * (s1 * s1)[:, None]]))
        acc["S"] += c.X.T @ s1
        acc["v2"] += c.X.T @ s2
        acc["v3"] += c.X.T @ s3
        acc["n_docs"] += c.n_docs
    return acc


def _matmat_pass(shard, reader, Q, N, kappa):
    """``X^T diag(g) X Q`` over one shard, ``g_n = s2_n/N + kappa/l_n^2`` (the data term of Eq. 6)."""
    out = np.zeros(Q.shape)
    for c, *_ in _documents(shard, reader):
        if c.n_docs:
            s1 = 1.0 / c.lengths
            g = c.inverse_falling(2) / N + kappa * s1 * s1
            XQ = c.X @ Q
            XQ *= g[:, None]
            out += c.X.T @ XQ
    return out


def _tensor_pass(shard, reader, W, N, alpha0):
    """Document sums of :func:`topicdp.spectral.moments.whitened_m3` over one shard (``Y = X W`` chunk by chunk)."""
    _, b, c3 = lda_coefficients(alpha0)
    bp, cp = b / (N * (N - 1.0)), c3 / (N * (N - 1.0) * (N - 2.0))
    acc = _m3_sums(*W.shape)
    for c, *_ in _documents(shard, reader):
        if c.n_docs:
            s1, s2, s3 = 1.0 / c.lengths, c.inverse_falling(2), c.inverse_falling(3)
            _add_m3_sums(acc, c.X, np.asarray(c.X @ W), s1, s2, s3, N, bp, cp)
    return acc


class StreamingM2Operator:
    """``M2_hat`` of Eq. 6 as a block operator (:class:`topicdp.spectral.moments.M2Operator`'s form) whose every product is one pass
    over the stream; the first product also collects the corpus statistics (``stats``: N, S, v2, v3), and
    ``n_passes`` counts the passes.
    """

    def __init__(self, stream, alpha0: float, *, client=None, reader=None):
        self.stream = stream
        self.alpha0 = alpha0
        self.client = client
        self.reader = stream.reader if reader is None else reader
        self.stats: SimpleNamespace | None = None  # n_docs, n_short, S, v2, v3, kappa after the first pass
        self.n_passes = 0
        self.shape = (stream.n_words, stream.n_words)

    def _pass(self, fn, **shared):
        self.n_passes += 1
        return self.stream.map_reduce(fn, client=self.client, **{**shared, "reader": self.reader})

    def matmat(self, Q: np.ndarray) -> np.ndarray:
        """``M2_hat @ Q`` for a (d, b) block or a d-vector: one pass over the data."""
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        if Q.ndim == 1:
            return self.matmat(Q[:, None])[:, 0]
        if self.stats is None:
            data_term = self._first_products(Q)
        else:
            data_term = self._pass(_matmat_pass, Q=Q, N=float(self.stats.n_docs), kappa=self.stats.kappa)
        st = self.stats
        assert st is not None  # _first_products sets it
        data_term -= (st.v2 / st.n_docs)[:, None] * Q
        data_term -= st.kappa * np.outer(st.S, st.S @ Q)
        return data_term

    __matmul__ = matmat

    def _first_products(self, Q: np.ndarray) -> np.ndarray:
        acc = self._pass(_first_pass, Q=Q)
        N = acc["n_docs"]
        # the counts of this pass, which map_reduce made without the stream seeing its chunks
        self.stream.log = StreamLog(int(N + acc["n_short"]), int(acc["n_tokens"]), int(acc["n_empty"]),
                                    self.stream.log.out_of_vocabulary_tokens)
        if N == 0:
            raise ValueError(f"all {acc['n_short']} documents have fewer than {MIN_DOC_LENGTH} tokens; the "
                             "third-order moment needs documents with at least 3 tokens")
        if N < 3:
            raise ValueError(f"the U-statistics of M3 need at least 3 documents with >= 3 tokens, got {N}")
        a, _, _ = lda_coefficients(self.alpha0)
        kappa = a / (N * (N - 1.0))
        self.stats = SimpleNamespace(n_docs=N, n_short=acc["n_short"], S=acc["S"], v2=acc["v2"], v3=acc["v3"],
                                     kappa=kappa)
        b = Q.shape[1]
        return acc["XsXQ"][:, :b] / N + kappa * acc["XsXQ"][:, b:]


def streaming_whitened_m3(operator: StreamingM2Operator, W: np.ndarray) -> np.ndarray:
    """``M3_hat(W, W, W)`` in one pass, :func:`topicdp.spectral.moments.whitened_m3`'s expansion: the document sums from the pass, the
    word sums (``v2``, ``v3``) from the first M2 pass' statistics.
    """
    st = operator.stats
    if st is None:
        raise ValueError("the M2 operator has made no pass yet: whiten first")
    W = np.asarray(W, dtype=np.float64)
    N = float(st.n_docs)
    acc = operator._pass(_tensor_pass, W=W, N=N, alpha0=operator.alpha0)
    _, b, c = lda_coefficients(operator.alpha0)
    bp, cp = b / (N * (N - 1.0)), c / (N * (N - 1.0) * (N - 2.0))
    return _finish_m3(acc, W, st.v2, st.v3, N, bp, cp)


class StreamingSpectralLDA(SpectralLDA):
    """:class:`topicdp.spectral.SpectralLDA` fitted in passes over a stream, locally or on a Dask cluster.

    Same parameters (``**params``), attributes and result as ``SpectralLDA``, plus ``client`` (a
    ``dask.distributed.Client``: one task per shard) and ``n_passes_``. A small ``max_iter`` (4-8) makes the
    eigen-solver a fixed-pass randomized range finder, whose accuracy ``eigen_converged_`` reports.
    """

    def __init__(self, n_topics: int, alpha0: float, random_state=None, *, client=None, **params):
        # the other parameters and their defaults are SpectralLDA's own, so the two cannot drift apart
        super().__init__(n_topics, alpha0, random_state, **params)
        self.client = client

    def fit(self, X, y=None) -> "StreamingSpectralLDA":
        """Fit on a :class:`~topicdp.streaming.StreamingCorpus` (or a ``Corpus`` / count matrix, streamed
        from memory)."""
        stream = _as_stream(X)
        k, a0 = check_model_params(self.n_topics, self.alpha0, stream.n_words)
        check_option(self.simplex, "simplex", SIMPLEX_METHODS)
        check_int(self.n_restarts, "n_restarts", low=1)
        check_int(self.max_iter, "max_iter", low=1)
        rng = check_random_state(self.random_state)
        from topicdp.streaming import share

        t0 = time.perf_counter()
        op = StreamingM2Operator(stream, a0, client=self.client, reader=share(self.client, stream.reader))
        warn = self.max_iter >= 50  # a deliberately short (randomized) budget is not a convergence failure
        wh = whiten(op.matmat, stream.n_words, k, rng=rng, tol=self.tol, max_iter=self.max_iter, warn=warn)
        t1 = time.perf_counter()
        T = streaming_whitened_m3(op, wh.W)
        t2 = time.perf_counter()
        dec = power_method(T, rng=rng, n_restarts=self.n_restarts)
        topics, alpha, n_bad = recover_topics(dec.values, dec.vectors, wh.B, a0, self.simplex)
        t3 = time.perf_counter()
        # empty documents (dropped by the readers) also have fewer than 3 tokens, as prepare_corpus counts them
        assert op.stats is not None  # set by the first pass
        n_short = op.stats.n_short + stream.log.empty_documents_dropped
        self._set_fitted(op.stats.n_docs, n_short, wh, T, dec.values, topics,
                         alpha, n_bad)
        self.n_passes_ = op.n_passes
        self.eigen_converged_ = wh.converged
        self.timings_ = {"whiten": t1 - t0, "tensor": t2 - t1, "decompose": t3 - t2, "total": t3 - t0}
        return self


def _as_stream(X):
    from topicdp.corpus import is_corpus

    if isinstance(X, StreamingCorpus):
        return X
    if is_corpus(X) or sp.issparse(X) or isinstance(X, np.ndarray):
        return stream_from_corpus(X)
    raise TypeError(f"X must be a StreamingCorpus, a Corpus or a count matrix, got {type(X).__name__}")


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


def stream_from_corpus(corpus, *, vocabulary: Sequence[str] | None = None, chunk_size: int = 10_000,
                       n_shards: int = 1) -> StreamingCorpus:
    """An in-memory ``Corpus`` (or a count matrix with ``vocabulary``) seen as a stream of ``n_shards`` row ranges."""
    from topicdp.corpus import is_corpus

    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    if is_corpus(corpus):
        X, vocabulary = corpus.X, corpus.vocabulary
        users = [corpus.user_ids[u] for u in corpus.doc_users]
    else:
        X = sp.csr_matrix(corpus)
        vocabulary = [str(i) for i in range(X.shape[1])] if vocabulary is None else vocabulary
        users = list(range(X.shape[0]))
    n_shards = check_int(n_shards, "n_shards", low=1, high=max(1, X.shape[0]))
    bounds = np.linspace(0, X.shape[0], n_shards + 1).round().astype(int)
    shards = [Shard((int(a), int(b)), i) for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]
    return StreamingCorpus(MemoryReader(X, users, chunk_size=chunk_size), shards, vocabulary)
