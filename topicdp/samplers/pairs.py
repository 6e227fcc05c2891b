"""Neighbouring corpora by index slicing of one shared count matrix (the sampler's per-pair overhead).

The record -> rows index is computed once; D's rows are one fancy index of the reference matrix, D' reuses D's
first N - 1 records, and the corpora are shallow copies of the reference :class:`Corpus` with ``X``, ``doc_users``
and ``user_ids`` replaced (rows of a validated matrix, not re-validated), equal field by field to
:meth:`Corpus.subset_users` / :meth:`Corpus.subset_documents` of the same records, so sampled sensitivities are
bit-identical to the slow way. Process-based joblib workers memory-map the builder from one file (:class:`OnDisk`).
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from .._validation import check_option
from ..corpus import user_grouping

from .._names import UNITS  # noqa: E402


class PairBuilder:
    """The reference corpus (P's support) indexed by record (a user, or one document), building the corpora of
    neighbouring pairs."""

    def __init__(self, reference, unit: str = "user") -> None:
        self.unit = check_option(unit, "unit", UNITS)
        self.reference = reference
        if unit == "user":
            # the same grouping as Corpus.user_documents: documents of user u, in index order
            self.order, self.bounds = user_grouping(reference.doc_users, reference.n_users)
        else:
            self.order = np.arange(reference.n_docs, dtype=np.int64)
            self.bounds = np.arange(reference.n_docs + 1, dtype=np.int64)
            self.doc_users = reference.doc_users

    def get(self) -> "PairBuilder":
        return self

    # -- rows ---------------------------------------------------------------------------------------
    def _rows(self, records: np.ndarray) -> np.ndarray:
        """Document indices of ``records`` in order (each record's documents in index order)."""
        starts, stops = self.bounds[records], self.bounds[records + 1]
        lengths = stops - starts
        # positions into ``order``: for record j, starts[j] .. stops[j] - 1, concatenated
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        return self.order[offsets + np.arange(lengths.sum())]

    # -- corpora ------------------------------------------------------------------------------------
    def pair(self, rec_d: np.ndarray, rec_dp: np.ndarray):
        """Yield D, then D' (lazily: D' is built in D's memory once D's fit has returned).

        One fancy index gathers D's rows and the rows of D''s new last record; D' moves them over D's last record, so
        one allocation serves the pair, and D is valid only until D' is requested (the sampler's order).
        """
        docs_d = self._rows(rec_d)
        docs_new = self._rows(rec_dp[-1:])
        X = self.reference.X[np.concatenate([docs_d, docs_new])]
        n_d = docs_d.size
        D = self._corpus(rec_d, docs_d, _leading_rows(X, n_d))
        yield D
        # D' = D's first N - 1 records and the new one: shift the new record's rows over D's last record
        n_shared = n_d - int(self.bounds[rec_d[-1] + 1] - self.bounds[rec_d[-1]])
        start, stop, shared = X.indptr[n_d], X.indptr[-1], X.indptr[n_shared]
        X.data[shared: shared + stop - start] = X.data[start:stop]  # numpy copies overlapping slices safely
        X.indices[shared: shared + stop - start] = X.indices[start:stop]
        X.indptr[n_shared + 1: n_shared + 1 + docs_new.size] = X.indptr[n_d + 1:] - (start - shared)
        user_ids = None
        if self.unit == "user":  # D's first N - 1 user ids, then the new record's (a Python loop saved)
            new = int(rec_dp[-1])
            copies = int(np.count_nonzero(rec_dp[:-1] == new))
            user_ids = D.user_ids[:-1] + (self._user_id(new, copies),)
        yield self._corpus(rec_dp, np.concatenate([docs_d[:n_shared], docs_new]),
                           _leading_rows(X, n_shared + docs_new.size), user_ids)

    def build(self, records: np.ndarray):
        """The corpus of the given records (as ``Corpus.subset_users`` / ``subset_documents``)."""
        docs = self._rows(np.asarray(records, dtype=np.int64))
        return self._corpus(records, docs, self.reference.X[docs])

    def _user_id(self, record: int, copies: int):
        """The id of the ``copies``-th repeat of a record (as Corpus.subset_users numbers copies)."""
        uid = self.reference.user_ids[record]
        return uid if copies == 0 else (uid, copies)

    def _corpus(self, records: np.ndarray, docs: np.ndarray, X: sp.csr_matrix, user_ids: tuple | None = None):
        ref = self.reference
        if self.unit == "user":
            lengths = self.bounds[records + 1] - self.bounds[records]
            doc_users = np.repeat(np.arange(records.size, dtype=np.int64), lengths)
            if user_ids is None:
                user_ids = tuple(map(self._user_id, records.tolist(), _occurrences(records).tolist()))
        else:
            old = self.doc_users[docs]
            uniq, first = np.unique(old, return_index=True)
            uniq = uniq[np.argsort(first)]
            remap = np.full(ref.n_users, -1, dtype=np.int64)
            remap[uniq] = np.arange(uniq.size)
            doc_users = remap[old]
            user_ids = tuple(ref.user_ids[u] for u in uniq.tolist())
        # rows of a validated corpus are valid: a shallow copy keeps every other field (vocabulary, log,
        # and any field added later) and skips Corpus.__post_init__'s full re-validation of the counts
        corpus = copy.copy(ref)
        corpus.X, corpus.doc_users, corpus.user_ids = X, doc_users, user_ids
        return corpus


def _leading_rows(X: sp.csr_matrix, n_rows: int) -> sp.csr_matrix:
    """X's first ``n_rows`` rows, sharing its buffers."""
    nnz = X.indptr[n_rows]
    return sp.csr_matrix((X.data[:nnz], X.indices[:nnz], X.indptr[: n_rows + 1]), shape=(n_rows, X.shape[1]), copy=False)


def _occurrences(values: np.ndarray) -> np.ndarray:
    """For each position, how many times its value occurred before it (as Corpus.subset_users numbers copies)."""
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    group_start = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    sizes = np.diff(np.r_[group_start, ranked.size])
    out = np.empty(values.size, dtype=np.int64)
    out[order] = np.arange(values.size) - np.repeat(group_start, sizes)
    return out


# -- one copy per worker process -------------------------------------------------------------------

_LOADED: dict[str, PairBuilder] = {}


class OnDisk:
    """A :class:`PairBuilder` written once to a file: pickles as its path, loads memory-mapped once per process
    (joblib would otherwise hash every array each time a task is pickled)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def get(self) -> PairBuilder:
        builder = _LOADED.get(self.path)
        if builder is None:
            import joblib

            _LOADED.clear()  # one sampling run at a time per process: drop the previous run's maps
            builder = _LOADED[self.path] = joblib.load(self.path, mmap_mode="r")
        return builder


@contextmanager
def shared(builder: PairBuilder, n_jobs: int):
    """What the tasks carry: the builder itself (sequential, threads, a Dask cluster that scatters it) or an
    :class:`OnDisk` handle for joblib's process backends."""
    from joblib import effective_n_jobs

    if effective_n_jobs(n_jobs) == 1 or not _process_backend():
        yield builder
        return
    import joblib

    folder = tempfile.mkdtemp(prefix="topicdp-pairs-")
    try:
        path = os.path.join(folder, "builder.pkl")
        joblib.dump(builder, path)
        yield OnDisk(path)
    finally:
        _LOADED.pop(os.path.join(folder, "builder.pkl"), None)
        shutil.rmtree(folder, ignore_errors=True)


def _process_backend() -> bool:
    from joblib._parallel_backends import LokyBackend, MultiprocessingBackend
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    return isinstance(backend, (LokyBackend, MultiprocessingBackend))
