"""No exact private statistic in an error message, a log line or a printed line, on any road or refusal.

A corpus is built whose private statistics are distinctive numbers (173 users, 523 documents, 12,347 in-vocabulary
tokens) and whose user ids carry a distinctive marker. Releases that succeed and releases that stop (each
refusal of the plan, a stated count that is wrong, a spectral precondition, the random-DP forecast, a user
split across shards, an error inside a mechanism) run through the command line with the ``topicdp`` logger at
DEBUG; every exception message, log record, and printed line is searched for those values. Only a count the
owner stated is public: runs that state 173 users are searched for the other values.
"""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pytest

from faults import failing_row
from topicdp.cli import main

WORDS = [f"w{a}{b}" for a in "abcdef" for b in "abcdefghij"]  # three blocks of twenty words
N_USERS, N_DOCS, N_TOKENS = 173, 523, 12_347
MARKER = "qqprivateid"  # in every user id


def _records() -> list[dict]:
    """173 users, 523 documents (3 each, and 4 for four users), 12,347 in-vocabulary tokens (plus words
    outside the list, which add nothing)."""
    rng = np.random.default_rng(0)
    owners = [u for u in range(N_USERS) for _ in range(3)] + [0, 1, 2, 3]
    lengths = np.full(N_DOCS, N_TOKENS // N_DOCS)
    lengths[: N_TOKENS - lengths.sum()] += 1
    records = []
    for owner, length in zip(owners, lengths):
        block = rng.integers(3)
        words = list(rng.choice(WORDS[20 * block:20 * block + 20], size=length)) + ["zzunknown"]
        records.append({"user": f"{MARKER}{owner:03d}", "text": " ".join(words)})
    return records


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    records = _records()
    assert len({r["user"] for r in records}) == N_USERS and len(records) == N_DOCS
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    words = root / "words.txt"
    words.write_text("\n".join(WORDS) + "\n")
    reference = root / "reference.jsonl"
    rng = np.random.default_rng(9)
    reference.write_text("".join(json.dumps({"user": f"r{i}", "text": " ".join(rng.choice(WORDS, 30))}) + "\n"
                                 for i in range(40)))
    shards = root / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:260]))
    (shards / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[260:]))  # one user straddles
    return {"corpus": str(corpus), "words": str(words), "reference": str(reference), "shards": str(shards)}


def _patterns(stated: bool) -> list[re.Pattern]:
    numbers = ([] if stated else [N_USERS]) + [N_DOCS, N_TOKENS]
    forms = [str(n) for n in numbers] + [f"{N_TOKENS:,}"]
    return [re.compile(rf"(?<![\d.]){re.escape(f)}(?![\d])") for f in forms] + [re.compile(MARKER)]


#: (name, arguments after the corpus, whether 173 users is stated, the exit status expected)
RUNS = [
    ("dp-vem release", ["--epsilon", "3"], False, 0),
    ("gaussian-global release", ["--mechanism", "gaussian-global", "--model", "sklearn-nmf", "--release-anyway"],
     False, 0),
    ("laplace at the document level", ["--mechanism", "laplace", "--model", "sklearn-nmf", "--unit", "document",
                                       "--release-anyway"], False, 0),
    ("dpsvi release", ["--mechanism", "dpsvi", "--unit", "document", "--release-anyway"], False, 0),
    ("the forecast refuses", ["--epsilon", "0.05"], False, 2),
    ("too few DP words", ["--epsilon", "0.05", "--vocabulary", None], False, 2),
    ("a wrong stated count", ["--n-units", "174"], False, 2),
    ("spectral precondition", ["--mechanism", "spectral-config-3", "--n-units", str(N_USERS), "--release-anyway"],
     True, 2),
    ("spectral release", ["--mechanism", "spectral-config-1", "--n-units", str(N_USERS), "--release-anyway",
                          "--epsilon", "20"], True, None),
    ("random-DP forecast", ["--guarantee", "random-dp", "--model", "gensim-lda", "--reference", "REFERENCE",
                            "--epsilon", "0.01", "--gamma", "0.5"], False, 2),
]


@pytest.mark.parametrize("name, args, stated, status", RUNS, ids=[r[0] for r in RUNS])
def test_no_private_value_reaches_a_message_or_a_log_line(name, args, stated, status, files, tmp_path, capsys,
                                                          caplog):
    args = ["--vocabulary", files["words"], "--topics", "3", "--seed", "1", *args]
    if None in args:  # a DP vocabulary instead of the list
        at = args.index(None)
        args = [a for i, a in enumerate(args) if i not in (0, 1, at - 1, at)]
    args = [files["reference"] if a == "REFERENCE" else a for a in args]
    caplog.set_level(logging.DEBUG, logger="topicdp")
    code = main(["privatize", files["corpus"], "--out", str(tmp_path / "release.json"), *args])
    captured = capsys.readouterr()
    assert status is None or code == status, captured.err
    seen = "\n".join([captured.out, captured.err, *(r.getMessage() for r in caplog.records)])
    published = (tmp_path / "release.json").read_text() if (tmp_path / "release.json").exists() else ""
    for pattern in _patterns(stated):
        assert not pattern.search(seen), (pattern.pattern, pattern.search(seen).group(0),
                                          seen[max(0, pattern.search(seen).start() - 200):][:400])
        assert not pattern.search(published), pattern.pattern


def test_a_user_split_across_shards_is_refused_without_counting_them(files, capsys, caplog):
    caplog.set_level(logging.DEBUG, logger="topicdp")
    code = main(["privatize", files["shards"], "--vocabulary", files["words"], "--topics", "3"])
    err = capsys.readouterr().err
    assert code == 2 and "some users have documents in more than one shard" in err
    for pattern in _patterns(False):
        assert not pattern.search(err + "\n".join(r.getMessage() for r in caplog.records)), pattern.pattern


def test_an_error_inside_a_mechanism_carries_no_private_value(files, capsys, caplog, monkeypatch):
    """A failure the library did not foresee is reported with what was spent; its message is the exception's own
    text, so a producer that put a private count in one would show here."""
    import topicdp.pipeline.run as run_module

    row = run_module.MECHANISMS["dp-vem"]

    def broken(ledger, n_units):
        raise RuntimeError(f"the solver failed after {n_units} units")  # n_units: the DP count, public

    monkeypatch.setitem(run_module.MECHANISMS, "dp-vem", failing_row(row, broken))
    caplog.set_level(logging.DEBUG, logger="topicdp")
    code = main(["privatize", files["corpus"], "--vocabulary", files["words"], "--topics", "3", "--seed", "1",
                 "--release-anyway"])
    err = capsys.readouterr().err
    assert code == 2 and "the solver failed" in err and "the unit count (epsilon=" in err
    for pattern in _patterns(False):
        assert not pattern.search(err + "\n".join(r.getMessage() for r in caplog.records)), pattern.pattern


def test_the_planted_values_are_the_corpus_private_statistics(files, tmp_path, capsys):
    """The control: the owner's diagnostics file holds the planted values, so the searches above look for figures
    a leak would show."""
    diagnostics = tmp_path / "diagnostics.json"
    assert main(["privatize", files["corpus"], "--vocabulary", files["words"], "--topics", "3", "--seed", "1",
                 "--diagnostics", str(diagnostics)]) == 0
    capsys.readouterr()
    text = diagnostics.read_text()
    for pattern in _patterns(False)[:3]:
        assert pattern.search(text), pattern.pattern
