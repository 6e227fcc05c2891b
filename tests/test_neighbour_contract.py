"""The neighbour contract, at the level a user calls: ``topicdp privatize`` on neighbouring corpora decides
alike and publishes alike, apart from DP outputs.

Two corpora that differ in one privacy unit (added, removed, or its texts replaced by words outside the
vocabulary) are released with the same flags and the same noise seed. The DP outputs the plan reads (the
Gaussian count of the units, and a DP vocabulary where one is selected) are *pinned* to the same values
for both: conditioning on them is how "decisions read only public facts and DP outputs" becomes testable.
Then everything else must be identical: the exit status, the refusal message, every printed line but the
released top words and the wall time, and every published field whose status is not DP or post-processing.

Written against the old command line (which counted the units in the private file, re-counted them after
filtering the vocabulary, calibrated document-level releases with a per-user cap for one document, and
published counts taken after filtering), the tests of the threshold, the published counts and the cap fail.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from topicdp.cli import main
from topicdp.release import published_paths, status_of

WORDS = [f"w{a}{b}" for a in "abcdefghij" for b in "abcdefghijklmnopqrst"]  # 200 public words
OOV = "zzqa zzqb zzqc zzqd zzqe zzqf"  # outside the public word list
PINNED_COUNT = 321.0  # the DP count both neighbours release


def _corpus(n_units: int, unit: str, seed: int = 0) -> list[tuple[str, str]]:
    """(user, text) records: two word blocks (topics); ``n_units`` users (user level, 3 documents each) or
    documents (document level, 4 per user)."""
    rng = np.random.default_rng(seed)
    per_user = 3 if unit == "user" else 4
    n_docs = n_units * per_user if unit == "user" else n_units
    records = []
    for d in range(n_docs):
        block = WORDS[:100] if rng.random() < 0.5 else WORDS[100:]
        records.append((f"u{d // per_user:04d}", " ".join(rng.choice(block, size=25))))
    return records


def _neighbour(records, kind: str, unit: str):
    """``records`` with its last unit removed, one unit added, or the first unit's texts made out-of-vocabulary."""
    first = records[0][0]
    if kind == "remove":
        last = records[-1][0]
        return records[:-1] if unit == "document" else [r for r in records if r[0] != last]
    if kind == "add":
        extra = [("u9999", " ".join(WORDS[:25]))] * (1 if unit == "document" else 3)
        return records + extra
    if unit == "document":
        return [(records[0][0], OOV)] + records[1:]
    return [(u, OOV if u == first else t) for u, t in records]


def _write(path, records):
    path.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in records))
    return path


@pytest.fixture
def words_file(tmp_path):
    return _write_words(tmp_path / "words.txt", WORDS)


def _write_words(path, words):
    path.write_text("\n".join(words) + "\n")
    return path


@pytest.fixture
def pinned(monkeypatch):
    """Condition on the DP count: both neighbours release PINNED_COUNT (where the pipeline draws one)."""
    monkeypatch.setattr("topicdp.pipeline.run.gaussian_count", lambda n, sigma, rng: PINNED_COUNT, raising=False)


def _release(tmp_path, name, records, flags, capsys):
    """Run privatize on ``records``; both neighbours use the same paths (they are printed), one after the other."""
    corpus = _write(tmp_path / "corpus.jsonl", records)
    out = tmp_path / "release.json"
    out.unlink(missing_ok=True)
    code = main(["privatize", str(corpus), "--seed", "3", "--out", str(out), *map(str, flags)])
    captured = capsys.readouterr()
    published = json.loads(out.read_text()) if out.exists() else None
    return code, _printed(captured.out), captured.err, published


def _printed(out: str) -> list[str]:
    """The printed lines without the released top words (DP outputs) and the wall time."""
    lines, skipping = [], False
    for line in out.splitlines():
        if line.startswith("top words of the release"):
            skipping = True
        elif skipping and not line.strip():
            skipping = False
        elif not skipping and not line.startswith("wall time"):
            lines.append(line)
    return lines


def _messages(err: str) -> list[str]:
    """stderr without the progress lines (elapsed times and ETAs: timings, not decisions)."""
    return [line for line in err.splitlines() if not re.search(r"elapsed|done in \S+|\.\.\.$", line)]


def _non_dp_fields(published) -> dict:
    if published is None:
        return {}
    statuses = {"format": "public", "top_words": "post-processing", **published["report"]["published"]}
    paths = {p: v for p, v in published_paths(published).items() if v not in (None, {}, [])}
    unlisted = [p for p in paths if status_of(p, statuses) is None]
    assert not unlisted, f"published without a status: {unlisted}"
    return {p: v for p, v in paths.items() if not status_of(p, statuses).startswith(("DP", "post-processing"))}


def _assert_alike(a, b):
    code_a, printed_a, err_a, pub_a = a
    code_b, printed_b, err_b, pub_b = b
    assert code_a == code_b, (err_a, err_b)
    assert _messages(err_a) == _messages(err_b)
    assert printed_a == printed_b
    fa, fb = _non_dp_fields(pub_a), _non_dp_fields(pub_b)
    assert fa.keys() == fb.keys()
    assert {p: (fa[p], fb[p]) for p in fa if fa[p] != fb[p]} == {}


ADD_REMOVE = {  # mechanism -> the flags of a cheap run at each unit it supports
    "dp-vem": [],
    "gaussian-global": ["--model", "sklearn-nmf"],
    "laplace": ["--model", "sklearn-nmf"],
    "dpsvi": [],
}


@pytest.mark.parametrize("mechanism, unit", [(m, u) for m in ADD_REMOVE for u in ("user", "document")
                                             if not (m == "dpsvi" and u == "user")])
@pytest.mark.parametrize("kind", ["add", "remove", "replace"])
def test_add_remove_releases_decide_and_publish_alike(mechanism, unit, kind, tmp_path, capsys, words_file, pinned):
    records = _corpus(60, unit)
    flags = ["--mechanism", mechanism, "--unit", unit, "--vocabulary", words_file, "--topics", "2",
             "--epsilon", "2", "--release-anyway", *ADD_REMOVE[mechanism]]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, kind, unit), flags, capsys)
    assert a[0] == 0, a[2]
    _assert_alike(a, b)
    assert a[3]["report"]["neighbours"] == "add-remove"


@pytest.mark.parametrize("mechanism", ["dp-vem", "gaussian-global", "laplace"])
@pytest.mark.parametrize("unit", ["user", "document"])
def test_stated_count_releases_decide_and_publish_alike_on_replacement(mechanism, unit, tmp_path, capsys,
                                                                      words_file):
    """With the number of units stated public, neighbours replace one unit: here by out-of-vocabulary texts,
    which the old command line counted away after filtering (and published the smaller count)."""
    records = _corpus(60, unit)
    flags = ["--mechanism", mechanism, "--unit", unit, "--vocabulary", words_file, "--topics", "2",
             "--n-units", 60, "--release-anyway", *ADD_REMOVE.get(mechanism, [])]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, "replace", unit), flags, capsys)
    assert a[0] == 0, a[2]
    _assert_alike(a, b)
    assert a[3]["report"]["neighbours"] == "replace-one"


@pytest.mark.xfail(strict=True, reason="spectral-config-N calibrates on U counted after filtering (users owning a "
                   "document with >= 3 in-vocabulary tokens): a unit whose texts are replaced by out-of-vocabulary "
                   "words changes sigma and the published U. Its moments would need the stated U with empty units "
                   "as zero contributions, and sensitivities re-derived for them.")
def test_spectral_on_a_replacement_by_out_of_vocabulary_texts(tmp_path, capsys, words_file):
    records = _corpus(60, "user")
    flags = ["--mechanism", "spectral-config-2", "--vocabulary", words_file, "--topics", "2", "--n-units", 60,
             "--release-anyway", "--epsilon", "50"]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, "replace", "user"), flags, capsys)
    _assert_alike(a, b)


def _noise_threshold(epsilon: float, n_words: int, n_topics: int) -> int:
    """The smallest number of users at which the plan's forecast for dp-vem is not noise (by bisection)."""
    from topicdp.plan import forecast_mechanism

    def noise(n: int) -> bool:
        return forecast_mechanism("dp-vem", epsilon=epsilon, delta=1e-6, unit="user", n_units=n, n_topics=n_topics,
                                  n_words=n_words).verdict == "noise"

    lo, hi = 2, 4096
    assert noise(lo) and not noise(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if noise(mid) else (lo, mid)
    return hi


def test_the_noise_refusal_does_not_move_with_one_user(tmp_path, capsys, words_file, pinned):
    """Around the refusal's threshold in the number of users: one user more or less must not flip it."""
    n = _noise_threshold(1.0, len(WORDS), 2)
    assert 5 < n < 400, n  # a threshold the test can build a corpus around
    records = _corpus(n, "user", seed=1)
    flags = ["--vocabulary", words_file, "--topics", "2", "--epsilon", "1"]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, "remove", "user"), flags, capsys)
    _assert_alike(a, b)


def test_published_counts_do_not_move_with_out_of_vocabulary_texts(tmp_path, capsys, words_file, pinned):
    """gaussian-global used to publish the number of users counted after filtering as 'public (stated)'."""
    records = _corpus(40, "user")
    flags = ["--mechanism", "gaussian-global", "--model", "sklearn-nmf", "--vocabulary", words_file, "--topics", "2",
             "--release-anyway"]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, "replace", "user"), flags, capsys)
    assert a[0] == 0 and "n_users" not in json.dumps(a[3]["report"]["details"])
    _assert_alike(a, b)


@pytest.mark.parametrize("flag, message", [("--max-docs-per-user", "per-user document cap"),
                                           ("--max-tokens-per-user", "per-user token cap")])
def test_document_level_with_a_per_user_cap_is_refused_before_reading(flag, message, tmp_path, capsys, words_file):
    """Adding one document re-draws its owner's kept subset (of documents, or of tokens): a replacement, not the
    one-document change that document-level calibration covers."""
    records = _corpus(60, "document")
    code, _, err, published = _release(tmp_path, "a", records, ["--unit", "document", flag, 2,
                                                                "--vocabulary", words_file, "--topics", "2"], capsys)
    assert code == 2 and message in err and published is None


@pytest.mark.parametrize("mechanism", ["dp-vem", "gaussian-global"])
@pytest.mark.parametrize("kind", ["add", "remove", "replace"])
def test_a_per_user_token_bound_decides_and_publishes_alike(mechanism, kind, tmp_path, capsys, words_file, pinned):
    """The token bound cuts every user here (3 documents of 25 tokens each, bound 25), and what it cut is
    counted on private data: neither may reach a decision or the published file, only the bound itself."""
    records = _corpus(60, "user")
    flags = ["--mechanism", mechanism, "--unit", "user", "--vocabulary", words_file, "--topics", "2",
             "--epsilon", "2", "--release-anyway", "--max-tokens-per-user", "25", *ADD_REMOVE[mechanism]]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, kind, "user"), flags, capsys)
    assert a[0] == 0, a[2]
    _assert_alike(a, b)


def test_a_dp_vocabulary_run_decides_and_publishes_alike(tmp_path, capsys, monkeypatch, pinned):
    """The default road (DP vocabulary, then the plan's choice), with both DP outputs pinned: the count and the
    words the selection keeps."""
    monkeypatch.setattr("topicdp.vocabulary._select", lambda totals, sigma, tau, max_features, rng: tuple(WORDS))
    records = _corpus(80, "user")
    flags = ["--topics", "2", "--epsilon", "2", "--max-features", "300"]
    a = _release(tmp_path, "a", records, flags, capsys)
    for kind in ("add", "remove", "replace"):
        _assert_alike(a, _release(tmp_path, "b", _neighbour(records, kind, "user"), flags, capsys))
    assert a[3] is None or a[3]["report"]["published"]["vocabulary"].startswith("DP")


@pytest.mark.parametrize("unit", ["user", "document"])
@pytest.mark.parametrize("kind", ["add", "remove", "replace"])
def test_sharded_releases_decide_and_publish_alike(unit, kind, tmp_path, capsys, words_file, pinned):
    """A directory of shards (each user in one shard, as the sharded road requires): the passes run shard by
    shard, and neighbours still print and publish the same."""
    flags = ["--unit", unit, "--vocabulary", words_file, "--topics", "2", "--epsilon", "2", "--release-anyway"]

    def run(records):
        shards = tmp_path / "shards"
        shards.mkdir(exist_ok=True)
        for i in range(3):
            _write(shards / f"part-{i}.jsonl", [(u, t) for u, t in records if int(u[1:]) % 3 == i])
        out = tmp_path / "release.json"
        out.unlink(missing_ok=True)
        code = main(["privatize", str(shards), "--seed", "3", "--out", str(out), *map(str, flags)])
        captured = capsys.readouterr()
        return code, _printed(captured.out), captured.err, json.loads(out.read_text()) if out.exists() else None

    records = _corpus(60, unit)
    a = run(records)
    b = run(_neighbour(records, kind, unit))
    assert a[0] == 0, a[2]
    _assert_alike(a, b)
    assert "sharded corpus" in "\n".join(a[1])
