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
from topicdp.pipeline import MECHANISMS
from topicdp.report import NOISED_STATUSES
from topicdp.private_release import published_paths, status_of

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


#: what a replaced unit's texts become: words outside the vocabulary, a text too short for the spectral
#: estimators (2 tokens; they need 3), and an empty text
REPLACEMENTS = {"replace-oov": OOV, "replace-short": "wab wac", "replace-empty": ""}
#: the neighbours of each relation: add/remove neighbours also differ by a unit added or removed
KINDS = {"add-remove": ("add", "remove", *REPLACEMENTS), "replace-one": tuple(REPLACEMENTS)}


def _neighbour(records, kind: str, unit: str):
    """``records`` with its last unit removed, one unit added, or the first unit's texts replaced (out of the
    vocabulary by default, or as :data:`REPLACEMENTS` says)."""
    first = records[0][0]
    if kind == "remove":
        last = records[-1][0]
        return records[:-1] if unit == "document" else [r for r in records if r[0] != last]
    if kind == "add":
        extra = [("u9999", " ".join(WORDS[:25]))] * (1 if unit == "document" else 3)
        return records + extra
    text = REPLACEMENTS.get(kind, OOV)
    if unit == "document":
        return [(records[0][0], text)] + records[1:]
    return [(u, text if u == first else t) for u, t in records]


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
    return code, _printed(captured.out, published), captured.err, published


#: the report's printed lines that show one published field: (label at the line's start, the field)
PRINTED_FIELDS = (("sensitivity ", "report.sensitivity"), ("sigma ", "report.sigma"),
                  ("  FAILED ", "report.checks"))


def _printed(out: str, published=None) -> list[str]:
    """The printed lines without the released top words (DP outputs) and the wall time; the figures of a line
    that shows a DP or post-processing field of the report (e.g. a sensitivity given the released M2) masked."""
    statuses = published["report"]["published"] if published else {}
    masked = [label for label, field in PRINTED_FIELDS if statuses.get(field, "").startswith(NOISED_STATUSES)]
    lines, skipping = [], False
    for line in out.splitlines():
        if line.startswith("top words of the release"):
            skipping = True
        elif skipping and not line.strip():
            skipping = False
        elif not skipping and not line.startswith("wall time"):
            lines.append(re.sub(r"\d[\d.e+-]*", "#", line) if line.startswith(tuple(masked)) else line)
    return lines


def _messages(err: str) -> list[str]:
    """stderr without the progress lines (elapsed times and ETAs: timings, not decisions)."""
    return [line for line in err.splitlines() if not re.search(r"elapsed|done in \S+|\.\.\.$", line)]


def _untimed(printed: list[str]) -> list[str]:
    """Printed lines with their wall-clock seconds masked ("in 0.1 s"): a time, not a decision."""
    return [re.sub(r"\bin \d+(\.\d+)? s\b", "in _ s", line) for line in printed]


def _non_dp_fields(published) -> dict:
    if published is None:
        return {}
    statuses = {"format": "public", "top_words": "post-processing", **published["report"]["published"]}
    paths = {p: v for p, v in published_paths(published).items() if v not in (None, {}, [])}
    unlisted = [p for p in paths if status_of(p, statuses) is None]
    assert not unlisted, f"published without a status: {unlisted}"
    return {p: v for p, v in paths.items() if not status_of(p, statuses).startswith(NOISED_STATUSES)}


def _assert_alike(a, b):
    code_a, printed_a, err_a, pub_a = a
    code_b, printed_b, err_b, pub_b = b
    assert code_a == code_b, (err_a, err_b)
    assert _messages(err_a) == _messages(err_b)
    assert _untimed(printed_a) == _untimed(printed_b)
    fa, fb = _non_dp_fields(pub_a), _non_dp_fields(pub_b)
    assert fa.keys() == fb.keys()
    assert {p: (fa[p], fb[p]) for p in fa if fa[p] != fb[p]} == {}


#: mechanism -> the flags of a cheap run (the agnostic road's global bounds need a model)
FLAGS = {"gaussian-global": ["--model", "sklearn-nmf"], "laplace": ["--model", "sklearn-nmf"]}
#: every (mechanism, unit, neighbour relation) the registry supports
SUPPORTED = [(m, u, r) for m in MECHANISMS for u in MECHANISMS[m].units for r in MECHANISMS[m].neighbours]
#: the spectral configurations' corpus: their preconditions on released quantities need concentrated topics
#: (two blocks of 5 words in a 20-word vocabulary), 200 units and epsilon 200 to release (1 and 2 do; 3 and 4
#: refuse on Procedure 1's private eigengap, alike on both neighbours, after part of their budget)
SPECTRAL_WORDS = WORDS[:10] + WORDS[100:110]


def _spectral_corpus(unit: str) -> list[tuple[str, str]]:
    rng = np.random.default_rng(0)
    per_user = 3 if unit == "user" else 4
    n_docs = 200 * per_user if unit == "user" else 200
    return [(f"u{d // per_user:04d}", " ".join(rng.choice(WORDS[:5] if rng.random() < 0.5 else WORDS[100:105], 25)))
            for d in range(n_docs)]


def _row(mechanism: str, unit: str, tmp_path, words_file) -> tuple[list, list]:
    """The corpus and the flags of one registry row's cheap release (forced; the count not stated)."""
    spectral = mechanism.startswith("spectral")
    records = _spectral_corpus(unit) if spectral else _corpus(60, unit)
    words = _write_words(tmp_path / "spectral.txt", SPECTRAL_WORDS) if spectral else words_file
    return records, ["--mechanism", mechanism, "--unit", unit, "--vocabulary", words, "--topics", "2",
                     "--epsilon", 200 if spectral else 2, "--release-anyway", *FLAGS.get(mechanism, [])]


def test_the_contract_covers_every_row_of_the_registry():
    assert {m for m, _, _ in SUPPORTED} == set(MECHANISMS) and len(SUPPORTED) == 3 * 2 * 2 + 4 * 2 + 1


@pytest.mark.parametrize("mechanism, unit, relation", SUPPORTED)
def test_every_mechanism_decides_and_publishes_alike_on_every_neighbour(mechanism, unit, relation, tmp_path, capsys,
                                                                        words_file, pinned):
    """Same flags and noise seed on both corpora; under add/remove the DP count is pinned, under replace-one the
    count is stated. Exit status, every printed line but the noisy top words, and every published field that is
    not DP or post-processing: identical, for a unit removed, added, or replaced by out-of-vocabulary, too short
    (2 tokens) or empty texts."""
    records, flags = _row(mechanism, unit, tmp_path, words_file)
    if relation == "replace-one":
        flags += ["--n-units", 200 if mechanism.startswith("spectral") else 60]
    a = _release(tmp_path, "a", records, flags, capsys)
    if mechanism in ("spectral-config-3", "spectral-config-4"):
        assert a[0] == 2 and "Procedure 1" in a[2] and "part of the topics' budget" in a[2], a[2]
    else:
        assert a[0] == 0, a[2]
        assert a[3]["report"]["neighbours"] == relation and a[3]["report"]["unit"] == unit
    for kind in KINDS[relation]:
        b = _release(tmp_path, "b", _neighbour(records, kind, unit), flags, capsys)
        try:
            _assert_alike(a, b)
        except AssertionError as exc:
            raise AssertionError(f"{kind}: {exc}") from exc


def _noise_threshold(epsilon: float, n_words: int, n_topics: int) -> int:
    """The smallest number of users at which the plan's forecast for dp-vem is not noise (by bisection)."""
    def noise(n: int) -> bool:
        return MECHANISMS["dp-vem"].forecast(epsilon=epsilon, delta=1e-6, unit="user", neighbours="add-remove",
                                             n_units=n, n_topics=n_topics, n_words=n_words).verdict == "noise"

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
             "--epsilon", "2", "--release-anyway", "--max-tokens-per-user", "25", *FLAGS.get(mechanism, [])]
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


def _public_fields(published) -> dict:
    """The published fields whose status is ``public``: chosen without looking at the data, so that no DP output
    (the count, the words a selection keeps) may move them either."""
    statuses = {"format": "public", "top_words": "post-processing", **published["report"]["published"]}
    paths = {p: v for p, v in published_paths(published).items() if v not in (None, {}, [])}
    return {p: v for p, v in paths.items() if status_of(p, statuses).split(":")[0] == "public"}


@pytest.mark.parametrize("mechanism, unit", [(m, u) for m, u, r in SUPPORTED if r == "add-remove"])
def test_a_field_called_public_does_not_move_with_the_dp_count(mechanism, unit, tmp_path, capsys, words_file):
    """Not pinned: under add/remove the neighbours' DP counts differ (the same noise on counts one apart, so the
    rounded counts differ), and whatever reads them may differ too; a field the report calls public must not (the
    mechanism the plan chose from the count, the plan's forecast: post-processing)."""
    records, flags = _row(mechanism, unit, tmp_path, words_file)
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, "remove", unit), flags, capsys)
    if a[3] is None or b[3] is None:  # configurations 3 and 4 refuse on a released quantity, both alike
        assert mechanism in ("spectral-config-3", "spectral-config-4") and a[0] == b[0] == 2
        return
    counts = [r[3]["report"]["details"]["plan"]["n_units"] for r in (a, b)]
    assert counts[0] == counts[1] + 1, counts  # the test compares releases whose DP outputs differ
    fa, fb = _public_fields(a[3]), _public_fields(b[3])
    assert fa.keys() == fb.keys()
    assert {p: (fa[p], fb[p]) for p in fa if fa[p] != fb[p]} == {}


@pytest.mark.parametrize("unit", ["user", "document"])
def test_on_the_default_road_a_field_called_public_does_not_move_with_the_dp_outputs(unit, tmp_path, capsys):
    """The plan's own choice over a DP count and a DP vocabulary, neither pinned: the fields called public stay."""
    records = _corpus(200, unit)  # epsilon 20: a DP vocabulary of more than two words at this size
    flags = ["--unit", unit, "--topics", "2", "--epsilon", "20", "--max-features", "300", "--release-anyway"]
    a = _release(tmp_path, "a", records, flags, capsys)
    b = _release(tmp_path, "b", _neighbour(records, "remove", unit), flags, capsys)
    assert a[0] == b[0] == 0, (a[2], b[2])
    counts = [r[3]["report"]["details"]["plan"]["n_units"] for r in (a, b)]
    assert counts[0] == counts[1] + 1, counts
    assert a[3]["report"]["published"]["report.mechanism"].startswith("post-processing")
    fa, fb = _public_fields(a[3]), _public_fields(b[3])
    assert fa.keys() == fb.keys()
    assert {p: (fa[p], fb[p]) for p in fa if fa[p] != fb[p]} == {}


@pytest.mark.parametrize("mechanism, unit, relation", SUPPORTED)
def test_a_field_called_public_does_not_move_with_the_dp_vocabulary(mechanism, unit, relation, tmp_path, capsys,
                                                                     monkeypatch, pinned):
    """One corpus, one seed, the count stated (replace-one) or its DP value pinned (add/remove), and two outcomes of
    the DP vocabulary selection (pinned: all the words of the corpus' list, or all but one): whatever reads the words
    may differ (the number of words, a noise norm that grows with it), but not a field the report calls public."""
    spectral = mechanism.startswith("spectral")
    records = _spectral_corpus(unit) if spectral else _corpus(60, unit)
    n_units = 200 if spectral else 60
    words = SPECTRAL_WORDS if spectral else WORDS
    # epsilon 200: a DP selection the plan forecasts to keep words at 60 units (the labels are tested, not utility)
    flags = ["--mechanism", mechanism, "--unit", unit, "--topics", "2", "--epsilon", 200, "--max-features",
             len(words), "--release-anyway", *FLAGS.get(mechanism, [])]
    if relation == "replace-one":
        flags += ["--n-units", n_units]
    runs = []
    for kept in (tuple(words), tuple(words[:-1])):
        monkeypatch.setattr("topicdp.vocabulary._select", lambda totals, sigma, tau, max_features, rng, kept=kept: kept)
        runs.append(_release(tmp_path, "a", records, flags, capsys))
    if runs[0][3] is None or runs[1][3] is None:  # configurations 3 and 4 refuse on a released quantity
        assert mechanism in ("spectral-config-3", "spectral-config-4") and runs[0][0] == runs[1][0] == 2
        return
    assert [len(r[3]["vocabulary"]) for r in runs] == [len(words), len(words) - 1]
    fa, fb = _public_fields(runs[0][3]), _public_fields(runs[1][3])
    assert fa.keys() == fb.keys()
    assert {p: (fa[p], fb[p]) for p in fa if fa[p] != fb[p]} == {}
