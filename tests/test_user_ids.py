"""One person, one user id: in memory, in every shard, and in every hash of an id.

A number with an integral value is one id whatever its spelling (``7``, ``7.0``, ``7e0``); a string is never a
number. Before, ``7`` and ``7.0`` were one user in memory (Python's equality) and two in sharded input (their
hashes differed), so that person passed the one-shard check, counted twice and was selected twice by
``user_fraction``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from topicdp.corpus import Corpus, _id_key, canonical_user_id, read_jsonl_records
from topicdp.pipeline import CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, release
from topicdp.corpus import user_selected
from topicdp.pipeline.sources import user_key
from facts import raises_facts

WORDS = [f"w{a}{b}" for a in "abc" for b in "abcdefghij"]


@pytest.mark.parametrize("same", [(7, 7.0), (7, np.int64(7)), (7.0, np.float32(7.0)), (1, True), (0, -0.0),
                                  (10 ** 20, 1e20)])
def test_ids_python_counts_equal_have_one_encoding(same):
    a, b = same
    assert a == b and canonical_user_id(a) == canonical_user_id(b)
    assert _id_key(a) == _id_key(b) and user_key(a) == user_key(b)
    assert user_selected(a, 0.5) == user_selected(b, 0.5)


@pytest.mark.parametrize("different", [("7", 7), (7.5, 7), ("7.0", 7.0), ("a", "A")])
def test_ids_python_counts_different_stay_apart(different):
    a, b = different
    assert a != b and _id_key(a) != _id_key(b)


def test_the_reader_gives_the_canonical_id(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [{"user": 7, "text": "a"}, {"user": 7.0, "text": "b"}, {"user": 7e0, "text": "c"}, {"user": "7", "text": "d"},
            {"user": 7.5, "text": "e"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    users = [u for _, u in read_jsonl_records(path, "text", "user")]
    assert users == [7, 7, 7, "7", 7.5] and [type(u) for u in users] == [int, int, int, str, float]


@pytest.mark.parametrize("bad", ["1e400", "-1e400"])
def test_an_infinite_id_is_refused_with_its_line(tmp_path, bad):
    path = tmp_path / "c.jsonl"
    path.write_text('{"user": 1, "text": "a"}\n{"user": %s, "text": "b"}\n' % bad)
    with raises_facts(TypeError, "c.jsonl:2", "'user'", "(user_field)", "string", "finite", ordered=True):
        list(read_jsonl_records(path, "text", "user"))


def _text(rng) -> str:
    return " ".join(rng.choice(WORDS, size=20))


def test_one_person_in_two_spellings_is_one_user_in_memory_and_across_shards(tmp_path):
    rng = np.random.default_rng(0)
    records = [{"user": u, "text": _text(rng)} for u in range(30) for _ in range(2)]
    records.append({"user": 7.0, "text": _text(rng)})  # user 7 again, spelled as a float
    single = tmp_path / "all.jsonl"
    single.write_text("".join(json.dumps(r) + "\n" for r in records))
    corpus = Corpus.from_texts([r["text"] for r in records], [u for _, u in read_jsonl_records(single, "text", "user")],
                               vocabulary=WORDS)
    assert corpus.n_users == 30
    # in shards: user 7's documents in one shard and its float spelling in another break the one-shard contract,
    # which is now seen (before, the two spellings hashed apart and the person counted twice)
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:-1]))
    (shards / "b.jsonl").write_text(json.dumps(records[-1]) + "\n")
    request = ReleaseRequest(CorpusSource(str(shards)), VocabularyPolicy.public(WORDS), n_topics=2, epsilon=3.0,
                             release_anyway=True, seed=0)
    with pytest.raises(ReleaseRefused, match="more than one shard") as caught:
        release(request, echo=lambda line: None)
    assert "no budget was spent" in str(caught.value)
