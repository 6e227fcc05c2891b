"""DPSpectralMoments calibrates on, and publishes, the stated number of units n only (``n_units``), counted before any
filtering: a unit replaced by an empty, too-short or out-of-vocabulary one stays in n with zero statistics.

The command-line checks follow ``test_neighbour_contract``: ``topicdp privatize`` on two neighbouring corpora with
the same flags and noise seed must exit, print and publish alike apart from DP outputs (and post-processing).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp import Corpus
from topicdp.cli import main
from topicdp.datasets import synthetic_lda
from topicdp.report import NOISED_STATUSES
from topicdp.private_release import published_paths, status_of
from topicdp.spectral import DPSpectralMoments
from topicdp.spectral.moments import M2Operator, prepare_corpus, whitened_m3
from topicdp.spectral.sensitivity import delta_m2, delta_m3

# neighbouring corpora are released with the same seed to compare them: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


WORDS = [f"w{a}{b}" for a in "abcdefghij" for b in "abcdefghijklmnopqrst"]  # 200 public words
REPLACEMENTS = {"out-of-vocabulary": "zzqa zzqb zzqc zzqd zzqe zzqf", "two tokens": "waa wab", "empty": ""}


def _documents(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """(user, text) records: n documents of 25 words from one of two word blocks (topics), 4 per user."""
    rng = np.random.default_rng(seed)
    return [(f"u{d // 4:04d}", " ".join(rng.choice(WORDS[:100] if rng.random() < 0.5 else WORDS[100:], size=25)))
            for d in range(n)]


def _release(tmp_path, records, flags, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in records))
    out = tmp_path / "release.json"
    out.unlink(missing_ok=True)
    code = main(["privatize", str(corpus), "--seed", "3", "--out", str(out), *map(str, flags)])
    captured = capsys.readouterr()
    printed = [line for line in captured.out.splitlines() if not line.startswith("wall time")]
    if any(line.startswith("top words of the release") for line in printed):  # released top words: DP outputs
        printed = printed[:next(i for i, line in enumerate(printed) if line.startswith("top words of the release"))]
    messages = [line for line in captured.err.splitlines() if not re.search(r"elapsed|done in \S+|\.\.\.$", line)]
    return code, printed, messages, json.loads(out.read_text()) if out.exists() else None


def _non_dp_fields(published) -> dict:
    statuses = {"format": "public", "top_words": "post-processing", **published["report"]["published"]}
    paths = {p: v for p, v in published_paths(published).items() if v not in (None, {}, [])}
    assert not [p for p in paths if status_of(p, statuses) is None], "published without a status"
    return {p: v for p, v in paths.items() if not status_of(p, statuses).startswith(NOISED_STATUSES)}


@pytest.fixture
def words_file(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("\n".join(WORDS) + "\n")
    return path


@pytest.mark.parametrize("replacement", sorted(REPLACEMENTS))
def test_document_level_replacement_by_an_unusable_document_decides_and_publishes_alike(replacement, tmp_path,
                                                                                        capsys, words_file):
    """Document 0 replaced by out-of-vocabulary words, by 2 tokens, or by an empty text: with N = 60 stated, the
    release (configuration 1, which has no Table-3 precondition, so both neighbours release) prints and publishes
    the same N, Delta2, Delta3 and sigmas."""
    records = _documents(60)
    neighbour = [(records[0][0], REPLACEMENTS[replacement])] + records[1:]
    flags = ["--mechanism", "spectral-config-1", "--unit", "document", "--vocabulary", words_file, "--topics", "2",
             "--n-units", 60, "--release-anyway", "--epsilon", "50"]
    a = _release(tmp_path, records, flags, capsys)
    b = _release(tmp_path, neighbour, flags, capsys)
    # exit status 3: the utility check (M2 noise against the released gap) fails for both, and both release
    assert a[0] == b[0] and a[3] is not None and b[3] is not None, (a[2], b[2])
    assert a[1] == b[1] and a[2] == b[2]
    fa, fb = _non_dp_fields(a[3]), _non_dp_fields(b[3])
    assert fa == fb
    details = a[3]["report"]["details"]
    assert details["n_documents"] == 60 and "n_short_documents" not in details
    assert details["Delta2"] == delta_m2(60, 1.0, norm="fro") and details["Delta3"] == delta_m3(60, 1.0, norm="fro")
    assert a[3]["report"]["sigma"] == b[3]["report"]["sigma"]
    assert "used" not in json.dumps(a[3]["report"]["checks"])  # no count of usable documents is published


def _neighbours(X: sp.csr_matrix):
    """X with document 0 replaced by an empty row (out of vocabulary), by 2 tokens, and by 3 tokens."""
    out = {}
    for name, row in (("empty", np.zeros(X.shape[1])), ("two tokens", np.eye(X.shape[1])[0] * 2),
                      ("usable", np.eye(X.shape[1])[1] * 3)):
        Y = X.tolil(copy=True)
        Y[0] = row
        out[name] = sp.csr_matrix(Y)
    return out


@pytest.mark.parametrize("unit", ["document", "user"])
def test_neighbours_calibrate_and_report_alike(unit):
    """The same seed, corpora differing in one unit (emptied, shortened): every published field but the DP
    outputs is equal; the private counts differ, in the diagnostics only."""
    X = sp.csr_matrix(synthetic_lda(600, 30, 3, alpha0=1.0, random_state=0).X)
    users = np.arange(600) if unit == "document" else np.arange(600) // 3  # user 0 owns documents 0-2
    n = 600 if unit == "document" else 200
    runs = {}
    for name, Y in {"original": X, **_neighbours(X)}.items():
        if unit == "user" and name != "original":  # user 0's three documents all made unusable
            Y = Y.tolil()
            Y[1], Y[2] = Y[0].toarray().ravel(), Y[0].toarray().ravel()
            Y = sp.csr_matrix(Y)
        m = DPSpectralMoments(3, 1.0, 1, epsilon=50.0, delta=1e-6, random_state=0, unit=unit, n_units=n)
        runs[name] = m.fit(Y, users=None if unit == "document" else users)
    reports = {name: m.report_.to_dict() for name, m in runs.items()}
    a = reports["original"]
    for name, r in reports.items():
        assert r["details"] == {**a["details"], **{k: r["details"][k] for k in r["details"] if k.startswith("released")}}
        assert (r["sigma"], r["sensitivity"], r["composition"]) == (a["sigma"], a["sensitivity"], a["composition"])
        assert [c["name"] for c in r["checks"]] == [c["name"] for c in a["checks"]]
        assert r["published"] == a["published"] and r["notes"] == a["notes"]
    key = "n_documents" if unit == "document" else "n_users"
    assert a["details"][key] == n and math.isclose(a["details"]["Delta2"], delta_m2(n, 1.0, norm="fro"))
    assert "stated" in a["published"][f"report.details.{key}"]
    assert runs["original"].release_.diagnostics["n_zero_units"] == 0
    assert runs["empty"].release_.diagnostics["n_zero_units"] == 1 and runs["empty"].n_units_ == n


def test_the_count_is_taken_as_public_when_not_stated_and_says_so():
    X = synthetic_lda(300, 30, 3, alpha0=1.0, random_state=0).X
    X = sp.lil_matrix(X)
    X[0] = 0  # an empty document still counts in N
    m = DPSpectralMoments(3, 1.0, 1, epsilon=50.0, delta=1e-6, random_state=0, unit="document").fit(sp.csr_matrix(X))
    rep = m.report_
    assert rep.details["n_documents"] == 300 == m.n_units_ and m.n_used_units_ == 299
    assert rep.published["report.details.n_documents"].startswith("public: taken as public")
    assert any("taken as public" in note for note in rep.notes)
    assert any(c.name.startswith("number of documents") and "taken as public" in c.detail for c in rep.checks)
    assert m.release_.diagnostics["n_documents_used"] == 299


def test_n_units_is_validated_and_checked_against_the_corpus():
    X = synthetic_lda(300, 30, 3, alpha0=1.0, random_state=0).X
    with pytest.raises(ValueError, match=r"n_units must be an integer in \[3, inf\], got 2"):
        DPSpectralMoments(3, unit="document", n_units=2).fit(X)
    with pytest.raises(TypeError, match="n_units must be an integer"):
        DPSpectralMoments(3, unit="document", n_units=300.0).fit(X)
    with pytest.raises(ValueError, match="n_units=301 .* 301 documents"):
        DPSpectralMoments(3, unit="document", n_units=301).fit(X)
    with pytest.raises(ValueError, match="n_units=99 .* 99 users"):
        DPSpectralMoments(3, n_units=99).fit(X, users=np.arange(300) // 3)


def test_a_corpus_counts_the_units_it_dropped_as_empty():
    """A topicdp.Corpus drops documents that are empty on its vocabulary (and users left without any); its log
    counts them, and they are units of the data as given: n includes them, as the pipeline's census does."""
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS[:20], size=8)) for _ in range(30)] + ["zzz yyy xxx"] * 3
    users = [f"u{i // 3}" for i in range(33)]  # u10 owns only the three out-of-vocabulary documents
    corpus = Corpus.from_texts(texts, users, vocabulary=WORDS[:20])
    assert corpus.n_users == 10 and corpus.log.users_without_documents == 1
    m = DPSpectralMoments(2, 1.0, 1, epsilon=50.0, delta=1e-6, random_state=0, unit="user", n_units=11, strict=False).fit(corpus)
    assert m.report_.details["n_users"] == 11 and m.release_.diagnostics["n_zero_units"] == 1
    with pytest.raises(ValueError, match="n_units=10 .* 10 users"):
        DPSpectralMoments(2, unit="user", n_units=10).fit(corpus)
    doc = DPSpectralMoments(2, 1.0, 1, epsilon=50.0, delta=1e-6, random_state=0, unit="document", n_units=33, strict=False).fit(corpus)
    assert doc.report_.details["n_documents"] == 33


def test_units_without_usable_documents_give_zero_moments():
    """No usable unit at all: the moments are zero (nothing to refuse on), normalised by the stated n."""
    X = np.array([[0, 0, 0, 0], [1, 1, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0]])
    for users in (None, np.array([0, 1, 1, 2])):
        c = prepare_corpus(X, users=users, n_units=4 if users is None else 3)
        assert c.n_used == 0 and np.all(M2Operator(c, 1.0).dense() == 0)
        assert np.all(whitened_m3(c, 1.0, np.eye(4)) == 0)
    with pytest.raises(ValueError, match="n_units must be at least the number of documents"):
        prepare_corpus(X, n_units=3)
