"""A corpus read shard by shard: the same release as in memory, the user-level input contract, the reduction
order shared with Dask, and the request's refusals before anything is read."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

from topicdp.pipeline import CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, group_by_user, release
from topicdp.streaming.executor import tree_sum

from corpora import WORDS, three_block_texts
from facts import assert_facts


def _records(n_users=240, docs=3, seed=0):
    return [{"user": u, "text": text} for u, _, text in three_block_texts(n_users, docs, size=25, seed=seed)]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The same records as one file and as three shards (users kept whole, the last shard gzip'd)."""
    root = tmp_path_factory.mktemp("sharded")
    records = _records()
    single = _write(root / "all.jsonl", records)
    shards = root / "shards"
    shards.mkdir()
    cut = [0, 240, 480, len(records)]  # 3 documents per user: cuts at multiples of 3 keep users whole
    for i in range(3):
        part = records[cut[i]:cut[i + 1]]
        if i == 2:
            with gzip.open(shards / f"part-{i}.jsonl.gz", "wt") as f:
                f.writelines(json.dumps(r) + "\n" for r in part)
        else:
            _write(shards / f"part-{i}.jsonl", part)
    return single, str(shards), records


def _request(path, unit="user", vocabulary=None, **kwargs):
    return ReleaseRequest(CorpusSource(path, max_docs_per_user=2 if unit == "user" else None),
                          vocabulary or VocabularyPolicy.dp(max_features=100), epsilon=8.0, delta=1e-5, unit=unit,
                          n_topics=3, release_anyway=True, seed=0, **kwargs)


@pytest.mark.parametrize("unit", ["user", "document"])
def test_sharded_release_equals_the_in_memory_release(corpus, unit):
    """Same seed: the same DP count, DP vocabulary, bounded documents and noise, so the same topics (to
    rounding: the shards' statistics are added in another order) and the same printed plan."""
    single, shards, _ = corpus
    lines_a: list = []
    lines_b: list = []
    a = release(_request(single, unit), echo=lines_a.append)
    b = release(_request(shards, unit), echo=lines_b.append)
    assert a.release.vocabulary == b.release.vocabulary and len(a.release.vocabulary) > 10
    np.testing.assert_allclose(b.release.topic_word, a.release.topic_word, rtol=0, atol=1e-12)
    # the same plan, but that a sharded corpus has one candidate (dp-vem, whose passes are sums over shards)
    others = ("  forecast gaussian-global", "  forecast laplace")
    kept = [line for line in lines_a if not line.startswith(others)]
    differ = [(x, y) for x, y in zip(kept, lines_b) if x != y]
    assert len(kept) == len(lines_b) and len(differ) == 1, differ  # one line: why dp-vem is chosen
    assert "largest forecast top-10 overlap" in differ[0][0]
    assert_facts(differ[0][1], "sharded", "sums over shards")
    assert a.release.report.composition == b.release.report.composition
    da, db = a.release.diagnostics["corpus"], b.release.diagnostics["corpus"]
    assert db["n_shards"] == 3
    for key in ("n_records", "n_docs", "n_users", "n_tokens"):
        assert da[key] == db[key], key
    assert da["construction"]["documents_cut_by_max_docs_per_user"] == \
        db["construction"].get("documents_cut_by_max_docs_per_user", 0)


def test_a_user_in_two_shards_is_refused_before_anything_is_spent(tmp_path):
    records = _records(30)
    shards = tmp_path / "shards"
    shards.mkdir()
    _write(shards / "a.jsonl", records[:46])  # user u15's three documents straddle the cut (45..47)
    _write(shards / "b.jsonl", records[46:])
    public = VocabularyPolicy.public(WORDS)
    with pytest.raises(ValueError, match="some users have documents in more than one shard"):
        release(_request(str(shards), vocabulary=public), echo=lambda line: None)
    # at the document level there is no per-user statistic: the same shards are a corpus
    release(_request(str(shards), unit="document", vocabulary=public), echo=lambda line: None)


def test_group_by_user_meets_the_contract_and_keeps_every_record(tmp_path, corpus):
    _, _, records = corpus
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _write(mixed / "a.jsonl", records[0::2])  # every user split across the two files
    _write(mixed / "b.jsonl", records[1::2])
    with pytest.raises(ValueError, match="more than one shard"):
        release(_request(str(mixed)), echo=lambda line: None)
    parts = group_by_user(sorted(str(p) for p in mixed.iterdir()), tmp_path / "grouped", 4)
    seen: dict = {}
    rows = []
    for i, part in enumerate(parts):
        with gzip.open(part, "rt") as f:
            for line in f:
                record = json.loads(line)
                rows.append(record)
                assert seen.setdefault(record["user"], i) == i  # each user in one shard
    key = lambda r: (r["user"], r["text"])  # noqa: E731
    assert sorted(rows, key=key) == sorted(records, key=key)
    release(_request(str(tmp_path / "grouped")), echo=lambda line: None)


def test_tree_sum_adds_in_the_dask_reduction_order():
    """Symbolic sums (string concatenation is not associative as text): the local pass adds exactly as the
    level-by-level pairing on the cluster, for every number of shards up to 70."""
    class Term:
        def __init__(self, text):
            self.text = text

        def __add__(self, other):
            return Term(f"({self.text}+{other.text})")

    def dask_order(items):
        level = list(items)
        while len(level) > 1:
            nxt = [level[i] + level[i + 1] for i in range(0, len(level) - 1, 2)]
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        return level[0]

    for n in range(1, 71):
        terms = [Term(str(i)) for i in range(n)]
        assert tree_sum(iter(terms)).text == dask_order(terms).text


def test_sharded_requests_refused_before_reading(corpus, tmp_path):
    single, shards, _ = corpus
    with pytest.raises(ValueError, match="reads the corpus in memory"):
        _request(shards, mechanism="laplace")
    with pytest.raises(ValueError, match="random-dp road"):
        ReleaseRequest(CorpusSource(shards), VocabularyPolicy.public(WORDS), guarantee="random-dp",
                       reference=single)
    with pytest.raises(ValueError, match="a single file is read in memory"):
        _request(single, scheduler="local:2")
    with pytest.raises(ValueError, match="N >= 1 workers"):
        _request(shards, scheduler="local:0")
    with pytest.raises(ValueError, match="not covered by DP"):
        ReleaseRequest(CorpusSource(shards), VocabularyPolicy.from_texts(), guarantee="dp")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no .jsonl or .jsonl.gz file"):
        CorpusSource(str(empty))
    with pytest.raises(FileNotFoundError, match="no file matches"):
        CorpusSource(str(tmp_path / "nothing-*.jsonl"))


def test_a_shard_without_any_word_of_the_vocabulary_is_skipped(tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    _write(shards / "a.jsonl", _records(60))
    _write(shards / "b.jsonl", [{"user": "x", "text": "nothing here matches"}])
    result = release(_request(str(shards), vocabulary=VocabularyPolicy.public(WORDS)), echo=lambda line: None)
    assert result.release.diagnostics["corpus"]["construction"]["empty_documents_dropped"] == 1


@pytest.mark.cluster
def test_sharded_release_on_a_local_cluster_equals_the_local_one(corpus):
    """Two worker processes: the same partial sums added in the same order, so bit-identical topics."""
    pytest.importorskip("dask.distributed")
    _, shards, _ = corpus
    here = release(_request(shards), echo=lambda line: None).release
    there = release(_request(shards, scheduler="local:2"), echo=lambda line: None).release
    assert np.array_equal(here.topic_word, there.topic_word)
    assert os.path.isdir(shards)


def test_refusal_on_a_sharded_corpus_states_what_was_spent(corpus):
    _, shards, _ = corpus
    request = ReleaseRequest(CorpusSource(shards), VocabularyPolicy.dp(max_features=100), epsilon=0.05, delta=1e-9,
                             unit="user", n_topics=3, seed=0)
    with pytest.raises(ReleaseRefused, match="the topics' budget was not spent"):
        release(request, echo=lambda line: None)
