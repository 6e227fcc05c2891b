"""Stop words beyond scikit-learn's English list: dropped from the private texts, a public reference and a public word
list alike, in memory and shard by shard; ``--stop-words web`` ships the artefacts that lead blog topics."""

from __future__ import annotations

import json
from contextlib import closing

import numpy as np
import pytest

from topicdp.cli import main
from topicdp.corpus import WEB_ARTEFACTS, stop_word_list
from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy
from topicdp.pipeline.run import reference_corpus
from topicdp.pipeline.sources import open_source

WORDS = [f"w{a}{b}" for a in "abc" for b in "abcdefghij"]


def _texts(n_users: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [(f"u{u}", " ".join(rng.choice(WORDS, 20)) + " urllink nbsp don") for u in range(n_users) for _ in range(2)]


def _write(path, records):
    path.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in records))
    return str(path)


def test_the_list_extends_the_english_one():
    assert stop_word_list() == "english"
    extended = stop_word_list(("urllink",))
    assert "urllink" in extended and "the" in extended


@pytest.mark.parametrize("sharded", [False, True])
def test_stop_words_leave_the_private_corpus_and_the_reference(tmp_path, sharded):
    records = _texts(30)
    if sharded:
        (tmp_path / "shards").mkdir()
        path = _write(tmp_path / "shards" / "part-0.jsonl", records)
        path = str(tmp_path / "shards")
    else:
        path = _write(tmp_path / "c.jsonl", records)
    words = WORDS + ["urllink", "nbsp", "don"]
    for extra, kept in (((), True), (WEB_ARTEFACTS, False)):
        source = CorpusSource(path, stop_words=extra)
        request = ReleaseRequest(source, VocabularyPolicy.public(words), n_topics=2)
        with closing(open_source(request)) as reader:
            reader.census()
            corpus = reader.prepare(words)
            counts = _column_sums(corpus)
        assert (counts["urllink"] > 0) == kept and (counts["don"] > 0) == kept and counts["wab"] > 0
        ref = reference_corpus(([t for _, t in records], [u for u, _ in records]), words, source)
        ref_counts = dict(zip(ref.vocabulary, np.asarray(ref.X.sum(axis=0)).ravel()))
        assert (ref_counts["nbsp"] > 0) == kept


def _column_sums(corpus) -> dict:
    if hasattr(corpus, "X"):
        return dict(zip(corpus.vocabulary, np.asarray(corpus.X.sum(axis=0)).ravel()))
    totals = np.zeros(len(corpus.vocabulary))
    for chunk in corpus.iter_chunks():
        totals += np.asarray(chunk.X.sum(axis=0)).ravel()
    return dict(zip(corpus.vocabulary, totals))


def test_the_command_drops_web_artefacts_from_texts_and_a_public_list(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl", _texts(40))
    vocabulary = tmp_path / "words.txt"
    vocabulary.write_text("\n".join(WORDS + ["urllink", "nbsp"]) + "\n")
    for flags, kept in (([], True), (["--stop-words", "web"], False)):
        out = tmp_path / f"release{len(flags)}.json"
        assert main(["privatize", path, "--vocabulary", str(vocabulary), "--topics", "2", "--n-units", "40",
                     "--release-anyway", "--seed", "0", "--out", str(out), *flags]) == 0
        capsys.readouterr()
        assert ("urllink" in json.loads(out.read_text())["vocabulary"]) == kept
    stop = tmp_path / "stop.txt"
    stop.write_text("wab\nwac\n")
    out = tmp_path / "release-file.json"
    assert main(["privatize", path, "--vocabulary", str(vocabulary), "--topics", "2", "--n-units", "40",
                 "--release-anyway", "--seed", "0", "--out", str(out), "--stop-words", str(stop)]) == 0
    published = json.loads(out.read_text())["vocabulary"]
    assert "wab" not in published and "wad" in published and "urllink" in published


def test_a_bad_stop_word_file_is_refused_with_its_line(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl", _texts(5))
    stop = tmp_path / "stop.txt"
    stop.write_text("fine\nNot A Word\n")
    assert main(["privatize", path, "--topics", "2", "--stop-words", str(stop)]) == 2
    assert "stop.txt:2" in capsys.readouterr().err
