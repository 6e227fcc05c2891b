"""Where the private corpus is read from: one file, DataFrame or query in memory, or shards streamed pass by pass.

Both readers take their records from :func:`topicdp.corpus.read_source_records` and give the pipeline the same
steps, each used only through DP or handed to the road: ``census`` (the exact number of units), ``select_vocabulary``,
``prepare`` (the bounded corpus on the release's words) and ``diagnostics`` (for the owner's file only). *At the user
level every user's documents must be in one shard*, so per-user statistics are formed as in memory: the census checks
it (a 64-bit hash per user) before anything is spent, and :func:`group_by_user` rewrites files to meet it.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .._files import atomic_path, scratch_directory, shard_paths
from .._names import BOUND_PARAMETERS, Unit
from .._validation import check_int
from ..corpus import Corpus, _jsonl_opener, read_source_records, user_hash, user_selected
from ..datasets import themed_corpus
from ..streaming import StreamingCorpus, write_npz_shard
from ..streaming.corpus import expand_paths
from ..streaming.executor import map_reduce
from ..tables import file_format
from ..vocabulary import select_vocabulary, select_vocabulary_from_counts, unit_word_sets, word_set_counts
from .request import CorpusSource, ReleaseRefused, ReleaseRequest


def bounded(source: CorpusSource, corpus: "Corpus", random_state=None) -> "Corpus":
    """``corpus`` under ``source``'s contribution bounds (itself when there are none): each unit on its own
    (:meth:`topicdp.Corpus.bound`), so one unit's bounding never changes another's."""
    if all(getattr(source, name) is None for name in BOUND_PARAMETERS):
        return corpus
    return corpus.bound(source.max_docs_per_user, source.max_tokens_per_doc, random_state=random_state,
                        max_tokens_per_user=source.max_tokens_per_user)


# -- in memory ----------------------------------------------------------------------------------------

@dataclass
class Records:
    """The private corpus as read: one text and one owner per document (after the per-user rule)."""

    texts: list
    users: list
    corpus: "Corpus | None" = None  # a built-in corpus that comes as counts ('themed')


#: with ``reference="embedded"``, the first documents of the Lee corpus play the public reference P and the
#: rest the private corpus (the demo of the agnostic road)
EMBEDDED_PUBLIC_HALF = 150


def read_records(source: CorpusSource, reference: str | None = None) -> Records:
    """The private corpus' texts and owners (one user per document in the built-in Lee corpus), keeping the
    users that ``user_fraction`` selects."""
    if source.built_in and source.path == "themed":
        return Records([], [], corpus=themed_corpus()[0])
    if source.in_memory:  # a Corpus, tokenised by the caller: bounded by the release as a file's corpus is
        return Records([], [], corpus=source.path)
    if source.built_in and source.path == "embedded":
        from ..corpus import embedded_texts  # looked up when it is read

        first = EMBEDDED_PUBLIC_HALF if reference == "embedded" else 0
        return Records(*_selected([(t, u) for u, t in enumerate(embedded_texts())][first:], source))
    # every source (a file, a DataFrame, a query) through the one record reader: the same canonical ids.
    # No documents is not refused here: whether a corpus (a period of a series) is empty is private, so the
    # release counts, decides and fits it (an N=0 corpus, build_corpus) as it would a neighbour with one document
    return Records(*_selected(read_source_records(source.path, source.text_field, source.user_field,
                                                  query=source.query), source))


def _selected(pairs: Iterable[tuple[str, object]], source: CorpusSource) -> tuple[list, list]:
    """(texts, users) of the records whose users ``source.user_fraction`` keeps (all without it)."""
    if source.user_fraction is not None:
        pairs = ((t, u) for t, u in pairs if user_selected(u, source.user_fraction))
    pairs = list(pairs)
    return [t for t, _ in pairs], [u for _, u in pairs]


def build_corpus(records: Records, words, request: ReleaseRequest, bounding_seed=None) -> "Corpus":
    """The bounded corpus on the release's vocabulary (a public or DP-selected list, or built from the texts)."""
    if records.corpus is not None:
        corpus = records.corpus
    elif words is not None:  # no document left is an N=0 corpus: whether it is empty is private (read_records)
        corpus = Corpus.from_texts(records.texts, records.users, vocabulary=list(words),
                                   stop_words=request.source.tokenizer_stop_words, allow_empty=True,
                                   n_jobs=request.n_jobs)
    else:
        policy = request.vocabulary
        corpus = Corpus.from_texts(records.texts, records.users, min_df=policy.min_df, max_df=policy.max_df,
                                   max_features=policy.max_features, stop_words=request.source.tokenizer_stop_words)
    return bounded(request.source, corpus, bounding_seed)


def read_corpus(source, request: ReleaseRequest, say) -> tuple[int, "Corpus | None", ValueError | None]:
    """(the census of ``source``'s units, refused where it is not a stated count; the corpus prepared on public
    words, or None; a preparation's error held back, under a DP count, to be raised after the count is drawn, so the
    ledger records the count whatever the private data made of the preparation), in one visit to the reader."""
    n = source.census()
    if request.n_units is not None and n != request.n_units:
        # replace-one neighbours all have the stated count, so this refusal is the same for all of them
        raise ReleaseRefused(f"the corpus does not have the {request.n_units} {request.unit}s stated public "
                             "(n_units); state the right number, or leave it out (add/remove neighbours)")
    corpus, unusable = None, None
    if request.vocabulary.kind != "dp":
        try:
            corpus = prepare_corpus(source, request.vocabulary.words, request, say)
        except ValueError as exc:
            if request.n_units is not None:
                raise
            unusable = exc
    source.check_unchanged()
    return n, corpus, unusable


def prepare_corpus(source, words, request: ReleaseRequest, say) -> "Corpus":
    """The bounded corpus on ``words``, its bounds' seed drawn once per release (OS entropy unless seeded) and
    shared by every shard, so a sharded release bounds each user as an in-memory one does."""
    seed = np.random.SeedSequence() if request.seed is None else np.random.SeedSequence([request.seed, 3])
    corpus = source.prepare(words, seed)
    say(f"corpus read and prepared ({len(corpus.vocabulary)} words); its exact counts are private and go to the "
        "diagnostics only")
    return corpus


class InMemorySource:
    """One file, DataFrame or query (or a built-in corpus), read whole."""

    def __init__(self, request: ReleaseRequest, records: Records | None = None) -> None:
        self.request = request
        self.records = read_records(request.source, request.reference) if records is None else records
        self.corpus: "Corpus | None" = None

    @classmethod
    def of_records(cls, request: ReleaseRequest, records: Records) -> "InMemorySource":
        """A source over ``records`` the caller read, to release one corpus many times; with ``records.corpus`` (on
        the release's public words, unbounded) each :meth:`prepare` bounds it instead of tokenising again."""
        return cls(request, records)

    def census(self) -> int:
        records, unit = self.records, self.request.unit
        if records.corpus is not None:  # a built-in corpus: count what it dropped back in, as the file's census does
            corpus = records.corpus
            return (corpus.n_users + corpus.log.users_without_documents if unit == Unit.USER
                    else corpus.n_docs + corpus.log.empty_documents_dropped)
        return len(set(records.users)) if unit == Unit.USER else len(records.texts)

    def check_unchanged(self) -> None:
        """Nothing to check: the file was read whole before the first spend."""

    def select_vocabulary(self, **selection):
        return select_vocabulary(self.records.texts, self.records.users, unit=str(self.request.unit),
                                 stop_words=self.request.source.tokenizer_stop_words, n_jobs=self.request.n_jobs,
                                 **selection)

    def prepare(self, words, bounding_seed=None) -> "Corpus":
        self.corpus = build_corpus(self.records, words, self.request, bounding_seed)
        return self.corpus

    def diagnostics(self) -> dict:
        """Exact counts of the private corpus: for the data owner's diagnostics file only."""
        corpus, records = self.corpus, self.records
        assert corpus is not None
        return {"n_records": len(records.texts) if records.corpus is None else corpus.n_docs,
                "n_docs": corpus.n_docs, "n_users": corpus.n_users, "n_tokens": corpus.n_tokens,
                "construction": corpus.log.as_dict()}

    def close(self) -> None:
        pass


# -- sharded ------------------------------------------------------------------------------------------

@dataclass
class UserKeys:
    """64-bit hashes of the users of a group of shards, sorted; adding two groups checks that no user is in
    both (the input contract of sharded user-level releases)."""

    keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))

    def __add__(self, other: "UserKeys") -> "UserKeys":
        shared = np.intersect1d(self.keys, other.keys, assume_unique=True).size
        if shared:
            # how many straddle is a private count: the message says only that some do
            raise ValueError("some users have documents in more than one shard: a sharded user-level "
                             "release needs every user's documents in one shard (rewrite the files with "
                             "topicdp.pipeline.sources.group_by_user, or release at the document level)")
        return UserKeys(np.union1d(self.keys, other.keys))

    def __len__(self) -> int:
        return int(self.keys.size)


def user_key(user) -> int:
    """A stable 64-bit hash of a user id (:func:`topicdp.corpus.user_hash`): its shard and its key in :class:`UserKeys`."""
    return user_hash(user, b"topicdp.user_key")


def _shard_records(path: str, source: CorpusSource) -> tuple[list, list]:
    """(texts, users) of one text shard, as :func:`read_records` keeps them (``user_fraction``)."""
    return _selected(read_source_records(path, source.text_field, source.user_field), source)


def shard_census(path: str, *, source: CorpusSource, unit: str) -> dict:
    """One text shard's documents and users (hashes, at the user level)."""
    texts, users = _shard_records(path, source)
    return {"n_docs": len(texts),
            "users": UserKeys(np.unique(np.fromiter((user_key(u) for u in users), dtype=np.uint64,
                                                    count=len(users))))
            if unit == Unit.USER else UserKeys()}


def shard_word_sets(path: str, *, source: CorpusSource, unit: str, max_words_per_unit: int) -> dict:
    """The word-set counts of one text shard's units for a DP vocabulary (:func:`topicdp.vocabulary.word_set_counts`):
    a pass of its own, after the count, since the words per unit are chosen at the count (``plan.word_cap``)."""
    texts, users = _shard_records(path, source)
    sets = (unit_word_sets(texts, users, unit=unit, max_words_per_unit=max_words_per_unit,
                           stop_words=source.tokenizer_stop_words) if texts else {})
    return {"word_sets": word_set_counts(sets)}


def prepare_shard(path: str, *, index: int, source: CorpusSource, words: tuple, out_dir: str,
                  bounding_seed) -> Counter:
    """Tokenise one text shard on ``words``, bound it and write it as a count shard with each document's user;
    returns its exact counts (diagnostics; a ``Counter``, so shards with different keys add up)."""
    texts, users = _shard_records(path, source)
    counts = Counter(n_records=len(texts))
    if not texts:
        return counts
    try:
        corpus = Corpus.from_texts(texts, users, vocabulary=list(words), stop_words=source.tokenizer_stop_words)
    except ValueError as exc:  # every document of this shard is empty on the vocabulary
        if "empty" not in str(exc):
            raise
        counts["empty_documents_dropped"] = len(texts)
        return counts
    corpus = bounded(source, corpus, bounding_seed)
    write_npz_shard(Path(out_dir) / f"counts-{index:06d}.npz", corpus.X, corpus.doc_users)
    counts.update(n_docs=corpus.n_docs, n_users=corpus.n_users, n_tokens=corpus.n_tokens,
                  **{k: int(v) for k, v in corpus.log.as_dict().items() if k not in BOUND_PARAMETERS and v})
    return counts


#: the name of every count shards' scratch directory begins with this
SCRATCH_PREFIX = "topicdp-counts-"


class ShardedSource:
    """JSON Lines, Parquet or CSV shards read pass by pass (module docstring), locally or on a Dask ``client``."""

    def __init__(self, request: ReleaseRequest, client=None, work_dir: str | None = None) -> None:
        self.request, self.client = request, client
        self.paths = shard_paths(request.source.path)
        # private (0700), removed by close(); what a SIGKILL leaves the next run removes (_files.scratch_directory)
        self._own_dir = scratch_directory(SCRATCH_PREFIX, work_dir)
        self.work_dir = self._own_dir.name
        self._prepared: Counter = Counter()
        self._shards: dict = {}

    def census(self) -> int:
        request = self.request
        result = map_reduce(shard_census, self.paths, client=self.client, progress="reading the shards",
                            source=request.source, unit=str(request.unit))
        self._shards = _shard_states(self.paths)
        # no documents is not refused here either (read_records): prepare gives an N=0 corpus, decided as any other
        return len(result["users"]) if request.unit == Unit.USER else int(result["n_docs"])

    def check_unchanged(self) -> None:
        """Refuse, before the next spend, shards gone or rewritten since the census: the count and the plan
        were made on what the census read."""
        changed = [p for p, state in _shard_states(self.paths).items() if state != self._shards.get(p)]
        if changed:
            raise ValueError(f"{len(changed)} shard(s) changed or were removed since they were read (first: "
                             f"{changed[0]}): rerun on a corpus that stays in place until the release is written")

    def select_vocabulary(self, *, method: str, max_words_per_unit: int, **selection):
        """One round whatever ``method``: a pass over the shards gathers the word-set counts, not each unit's set
        (read only once the selection's budget is checked)."""

        def counts():
            return map_reduce(shard_word_sets, self.paths, client=self.client, progress="reading the word sets",
                              source=self.request.source, unit=str(self.request.unit),
                              max_words_per_unit=max_words_per_unit)["word_sets"]

        return select_vocabulary_from_counts(counts, unit=str(self.request.unit),
                                             max_words_per_unit=max_words_per_unit, **selection)

    def prepare(self, words, bounding_seed=None):
        if words is None:
            raise ValueError("a sharded corpus needs a public or DP vocabulary")
        self._prepared = map_reduce(_prepare_job, list(enumerate(self.paths)), client=self.client,
                                    progress="preparing the count shards", source=self.request.source,
                                    words=tuple(words), out_dir=self.work_dir, bounding_seed=bounding_seed)
        written = sorted(glob.glob(os.path.join(self.work_dir, "counts-*.npz")))
        if not written:  # no document with a word of the vocabulary: an N=0 corpus, as in memory (build_corpus)
            written = [str(write_npz_shard(Path(self.work_dir) / "counts-000000.npz",
                                           sp.csr_matrix((0, len(words)), dtype=np.int64), np.empty(0, np.int64)))]
        return StreamingCorpus.from_npz(written, vocabulary=list(words))

    def diagnostics(self) -> dict:
        """Exact counts of the private corpus, summed over the shards: for the owner's diagnostics file only."""
        counts = {k: int(v) for k, v in self._prepared.items()}
        totals = {k: counts.pop(k, 0) for k in ("n_records", "n_docs", "n_users", "n_tokens")}
        source = self.request.source
        return {"n_shards": len(self.paths), **totals,
                "construction": {**counts, **{k: getattr(source, k) for k in BOUND_PARAMETERS}}}

    def close(self) -> None:
        self._own_dir.cleanup()


def _shard_states(paths: Sequence[str]) -> dict:
    """Each shard's (size, modification time), or None where it is gone (:meth:`ShardedSource.check_unchanged`)."""
    states: dict = {}
    for p in paths:
        try:
            st = os.stat(p)
            states[p] = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            states[p] = None
    return states


def _prepare_job(job: tuple[int, str], **kwargs) -> Counter:
    index, path = job
    return prepare_shard(path, index=index, **kwargs)


def open_source(request: ReleaseRequest, client=None, work_dir: str | None = None):
    """The reader of the request's corpus: sharded for a directory or glob, else in memory."""
    if request.source.sharded:
        return ShardedSource(request, client, work_dir)
    return InMemorySource(request)


# -- input preparation ----------------------------------------------------------------------------------

def group_by_user(paths: Sequence[str] | str, out_dir: str | os.PathLike, n_shards: int, *,
                  user_field: str = "user", text_field: str = "text") -> list[Path]:
    """Rewrite JSON Lines, Parquet or CSV files into ``n_shards`` gzip JSON Lines shards in which every user's
    documents are in one shard (a record goes to shard ``hash(user id) mod n_shards``, of the canonical id): the
    input contract of sharded user-level releases. One pass; memory holds one record (a table: one batch) at a
    time. JSON Lines records are copied unchanged; a table's records are written with their two fields
    (``user_field``, ``text_field``), as :func:`topicdp.corpus.read_source_records` reads them. Input order is
    kept within a shard."""
    n_shards = check_int(n_shards, "n_shards", low=1)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    targets = [out / f"part-{i:05d}.jsonl.gz" for i in range(n_shards)]
    with contextlib.ExitStack() as stack:  # each shard put in place whole at the end (atomic_path), or not at all
        handles = [stack.enter_context(io.TextIOWrapper(gzip.GzipFile(
            t.name, "wb", fileobj=stack.enter_context(open(stack.enter_context(atomic_path(t)), "wb"))),
            encoding="utf-8")) for t in targets]
        for path in expand_paths([paths] if isinstance(paths, (str, os.PathLike)) else paths):
            if file_format(path) == "jsonl":  # each non-blank line copied as it is (gzip or not)
                with _jsonl_opener(path)(path, "rt", encoding="utf-8-sig") as f:
                    for lineno, line in enumerate(f, 1):
                        if not line.strip():
                            continue
                        record = json.loads(line)
                        if not isinstance(record, dict) or user_field not in record:
                            raise ValueError(f"{path}:{lineno}: a record without the user field {user_field!r}")
                        line = line if line.endswith("\n") else line + "\n"
                        handles[user_key(record[user_field]) % n_shards].write(line)
                continue
            for text, user in read_source_records(path, text_field, user_field):
                handles[user_key(user) % n_shards].write(json.dumps({user_field: user, text_field: text}) + "\n")
    return targets

