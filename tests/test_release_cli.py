"""End to end: the file a default ``topicdp privatize`` writes holds no field derived from the private data
except through a DP mechanism.

Two private corpora differ in one user (replace-one, the CLI's default unit): in the second, user u0 owns
two documents of other words instead of five. Both are released with the same public reference P, the same
sampler seed and the same fixed noise seed. Every published field whose status is not "DP" or
"post-processing" must then be byte-identical, and the fields that differ must be exactly DP outputs and
their post-processing.

The vocabulary is the one published quantity the default CLI release does not cover yet (it is built from
the private texts; a public or DP-selected vocabulary is a separate change): the corpora are built so that
every word of the closed word list occurs in both, and the test checks that the release says NOT COVERED
for the vocabulary and for nothing else.
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import json

import numpy as np
import pytest

import topicdp.forecast as forecast_module
from topicdp.cli import main
from topicdp.report import NOISED_STATUSES
from topicdp.private_release import SCHEMA, published_paths, status_of, unlisted_paths, validate
from facts import assert_facts

# neighbouring and repeated releases of one file are what these tests compare: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


WORDS = ["market", "energy", "price", "trade", "contract", "meeting", "schedule", "office", "budget", "report"]


def _write(path, records) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for user, text in records:
            fh.write(json.dumps({"user": user, "text": text}) + "\n")


def _records(rng, users, docs_per_user=5):
    return [(u, " ".join(rng.choice(WORDS, size=30))) for u in users for _ in range(docs_per_user)]


def _release(tmp_path, name, records, reference, extra=()):
    corpus = tmp_path / f"{name}.jsonl.gz"
    _write(corpus, records)
    out, diag = tmp_path / f"{name}.json", tmp_path / f"{name}.diag.json"
    code = main(["privatize", "--guarantee", "random-dp", str(corpus), "--model", "sklearn-nmf", "--topics", "2", "--min-df", "1",
                 "--max-df", "1.0", "--gamma", "0.3", "--n-jobs", "1", "--seed", "5", "--reference", str(reference),
                 "--out", str(out), "--diagnostics", str(diag), *extra])
    assert code == 0
    return json.loads(out.read_text()), json.loads(diag.read_text())


@pytest.mark.filterwarnings("ignore:Maximum number of iterations:sklearn.exceptions.ConvergenceWarning")  # NMF's cap
def test_default_release_file_has_no_private_field_outside_dp(tmp_path, capsys):
    rng = np.random.default_rng(0)
    reference = tmp_path / "reference.jsonl.gz"
    _write(reference, _records(rng, [f"r{i}" for i in range(12)]))
    others = _records(rng, [f"u{i}" for i in range(1, 12)])
    a_records = _records(rng, ["u0"]) + others
    b_records = [("u0", "budget budget budget office office report"), ("u0", "budget office report office")] + others
    a, a_diag = _release(tmp_path, "a", a_records, reference)
    b, _ = _release(tmp_path, "b", b_records, reference)
    statuses = {"format": "public", "top_words": "post-processing", **a["report"]["published"]}

    validate(a, SCHEMA)
    assert unlisted_paths(a, statuses) == []
    assert a["report"]["guarantee"] == "random-DP" and a["report"]["sampling_distribution"]["kind"] == "public-reference"
    fa, fb = published_paths(a), published_paths(b)
    assert fa.keys() == fb.keys()
    differing = {p for p in fa if fa[p] != fb[p]}
    not_dp = {p: status_of(p, statuses) for p in differing
              if not status_of(p, statuses).startswith(NOISED_STATUSES)}
    assert not_dp == {}
    assert {"noisy", "topic_word"} <= differing
    # covered by default: with a public reference and no word list the columns are P's words (public, free);
    # before, they were built from the private texts and marked NOT COVERED
    uncovered = {p for p, s in statuses.items() if s.startswith("NOT COVERED")}
    assert uncovered == set() and statuses["vocabulary"].startswith("public: a public word list built from the "
                                                                    "public reference P")
    assert fa["vocabulary"] == fb["vocabulary"]  # P's words: the same for every private corpus

    # what the old file leaked is now only in the owner's diagnostics
    text = json.dumps(a)
    assert a_diag["diagnostics"]["corpus"]["fingerprint"] not in text
    assert "n_docs" not in a["report"]["details"]["corpus"] and "construction" not in text
    assert "deltas_quantiles" not in text and "deltas_quantiles" in json.dumps(a_diag)
    printed = capsys.readouterr().out
    assert "published part only" in printed and "do not publish" in printed


def test_sampled_road_without_p_stops_before_reading_the_corpus(tmp_path, capsys):
    unreadable = tmp_path / "not-json.jsonl"
    unreadable.write_text("this line is not JSON\n")  # reading it would fail with a different message
    assert main(["privatize", "--guarantee", "random-dp", str(unreadable), "--epsilon", "1"]) == 2
    err = capsys.readouterr().err
    assert "--reference" in err and "--private-oracle" in err and "not-json" not in err


def test_private_oracle_release_says_what_leaks(tmp_path):
    rng = np.random.default_rng(1)
    corpus = tmp_path / "c.jsonl.gz"
    _write(corpus, _records(rng, [f"u{i}" for i in range(12)]))
    out = tmp_path / "r.json"
    assert main(["privatize", "--guarantee", "random-dp", str(corpus), "--model", "sklearn-nmf", "--topics", "2", "--min-df", "1", "--max-df", "1.0",
                 "--gamma", "0.3", "--n-jobs", "1", "--private-oracle", "--out", str(out)]) == 0
    report = json.loads(out.read_text())["report"]
    assert report["sampling_distribution"]["kind"] == "private-resample"
    assert report["published"]["report.sigma"].startswith("NOT COVERED")
    assert any("PRIVATE ORACLE" in n for n in report["notes"])


def test_default_dp_release_file_is_dp_end_to_end(tmp_path, capsys):
    """The default ``topicdp privatize`` (--guarantee dp): vocabulary selected under DP, topics by dp-vem.

    Two corpora differ in one user; with the same noise seed every published field that differs must be a
    DP output or its post-processing, and no field may be NOT COVERED -- the vocabulary included.
    """
    rng = np.random.default_rng(3)
    others = _records(rng, [f"u{i}" for i in range(1, 400)], docs_per_user=2)
    a_records = _records(rng, ["u0"], docs_per_user=2) + others
    b_records = [("u0", "budget budget office")] + others
    outs = []
    for name, records in (("a", a_records), ("b", b_records)):
        corpus = tmp_path / f"{name}.jsonl.gz"
        _write(corpus, records)
        out = tmp_path / f"{name}.json"
        code = main(["privatize", str(corpus), "--topics", "2", "--epsilon", "8", "--seed", "5", "--out", str(out),
                     "--release-anyway"])
        assert code == 0, capsys.readouterr().err
        outs.append(json.loads(out.read_text()))
    a, b = outs
    statuses = {"format": "public", "top_words": "post-processing", **a["report"]["published"]}
    validate(a, SCHEMA)
    assert unlisted_paths(a, statuses) == []
    assert a["report"]["guarantee"] == "approx-DP" and a["report"]["mechanism"] == "dp-vem"
    assert a["report"]["epsilon"] == 8.0  # the total: vocabulary selection + topics
    assert [p for p, s in statuses.items() if s.startswith("NOT COVERED")] == []
    assert statuses["vocabulary"].startswith("DP")
    fa, fb = published_paths(a), published_paths(b)
    differing = {p for p in set(fa) | set(fb) if fa.get(p) != fb.get(p)}
    assert {p for p in differing if not status_of(p, statuses).startswith(NOISED_STATUSES)} == set()


def test_dp_privatize_reads_the_corpus_once_and_forecasts_the_dp_vocabulary_first(tmp_path, capsys, monkeypatch):
    import topicdp.corpus as corpus_module

    rng = np.random.default_rng(2)
    private, reference = tmp_path / "private.jsonl.gz", tmp_path / "reference.jsonl.gz"
    _write(private, _records(rng, [f"u{i}" for i in range(60)]))
    _write(reference, _records(rng, [f"r{i}" for i in range(20)]))
    reads = []
    real = corpus_module.read_jsonl_records
    monkeypatch.setattr(corpus_module, "read_jsonl_records", lambda path, *a, **k: reads.append(str(path)) or real(path, *a, **k))
    args = ["privatize", str(private), "--topics", "2", "--min-df", "1", "--max-df", "1.0", "--seed", "1",
            "--mechanism", "dp-vem", "--reference", str(reference), "--n-units", "60"]
    # the default split (20% of epsilon = 0.6 for the words) cannot select from 60 users: refused before any
    # DP step, with the advice
    # (a DP selection asked for by its budget: with a reference and no word list the default is P's own words)
    assert main([*args, "--epsilon", "3", "--vocabulary-epsilon", "0.6"]) == 2
    out, err = capsys.readouterr()
    assert "vocabulary under DP (epsilon=0.6" in out and "more than the about 60 users the plan counts" in out
    # 60 users are too few even with a public word list: the advice says so, with how many a release needs
    assert "forecast to keep about 0 words" in err and "too few users" in err and "needs about" in err
    assert "public word list (--vocabulary FILE)" not in err
    assert "no budget was spent" in err and "corpus read" not in out
    reads.clear()
    assert main([*args, "--epsilon", "20", "--delta", "1e-2", "--vocabulary-epsilon", "10",
                 "--vocabulary-delta", "1e-3", "--release-anyway"]) == 0
    out = capsys.readouterr().out
    assert reads.count(str(private)) == 1 and reads.count(str(reference)) == 1  # each file read once
    vocabulary_line = out.index("vocabulary under DP (epsilon=10")
    assert "expected size, from the public reference scaled to 60 users" in out
    assert vocabulary_line < out.index("plan:") < out.index("corpus read")


def _topical_records(rng, users, words, n_topics, docs_per_user=5):
    """Each document draws 30 words from one of ``n_topics`` disjoint word blocks (none: uniform over all words)."""
    block = len(words) // max(n_topics, 1)
    out = []
    for u in users:
        for _ in range(docs_per_user):
            k = rng.integers(n_topics) if n_topics else None
            pool = words if k is None else words[k * block:(k + 1) * block]
            out.append((u, " ".join(rng.choice(pool, size=30))))
    return out


def test_dp_vem_with_a_reference_is_simulated_there_before_the_topics_budget_is_spent(tmp_path, capsys, monkeypatch):
    """With --reference, dp-vem is first run on the public reference at the private signal-to-noise ratio
    (topicdp.forecast.forecast_on_reference); a release it forecasts to be noise is refused before the private
    topics are touched, and nothing is written."""
    import topicdp.variational as variational

    words = ["".join(t) for t in itertools.product("abcdefghij", repeat=3)][:200]  # tokens are letter runs
    (tmp_path / "vocabulary.txt").write_text("\n".join(words) + "\n")
    rng = np.random.default_rng(7)
    private, reference = tmp_path / "private.jsonl.gz", tmp_path / "reference.jsonl.gz"
    _write(private, _topical_records(rng, [f"u{i}" for i in range(150)], words, 4))
    _write(reference, _topical_records(rng, [f"r{i}" for i in range(40)], words, 4))
    args = ["privatize", str(private), "--topics", "4", "--epsilon", "30", "--seed", "1", "--mechanism", "dp-vem",
            "--vocabulary", str(tmp_path / "vocabulary.txt"), "--reference", str(reference)]
    assert main([*args, "--out", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    simulated = out.index("simulated on the public reference")
    assert out.index("plan: dp-vem") < simulated < out.index("top words of the release")
    assert "readability forecast: readable" in out[simulated:]
    fits = []
    real = forecast_module.forecast_on_reference
    monkeypatch.setattr(forecast_module, "forecast_on_reference",
                        lambda *a, **k: dataclasses.replace(real(*a, **k), verdict="noise"))
    real_fit = variational.DPVariationalEM.fit
    monkeypatch.setattr(variational.DPVariationalEM, "fit",
                        lambda self, corpus, *a, **k: fits.append(corpus) or real_fit(self, corpus, *a, **k))
    assert main([*args, "--out", str(tmp_path / "b.json")]) == 2
    assert_facts(capsys.readouterr().err, "simulation on the public reference", "noise", ordered=True)
    assert not (tmp_path / "b.json").exists()
    assert fits and all(c.n_users <= 40 for c in fits)  # only the public reference was fitted, never the 150 users


@pytest.mark.parametrize("mechanism", ["spectral-config-1", "dpsvi"])
def test_a_public_word_list_is_reported_as_public_by_every_mechanism(mechanism, tmp_path, capsys):
    """privatize passes where the words came from to every producer (it used to reach dp-vem and TopicDP only)."""
    words = ["".join(t) for t in itertools.product("abcdefghij", repeat=3)][:200]
    (tmp_path / "vocabulary.txt").write_text("\n".join(words) + "\n")
    private = tmp_path / "private.jsonl.gz"
    _write(private, _topical_records(np.random.default_rng(3), [f"u{i}" for i in range(150)], words, 4))
    out = tmp_path / "release.json"
    code = main(["privatize", str(private), "--topics", "4", "--epsilon", "50", "--unit", "document", "--seed", "1",
                 "--mechanism", mechanism, "--vocabulary", str(tmp_path / "vocabulary.txt"), "--out", str(out),
                 "--release-anyway", *(["--n-units", "750"] if mechanism.startswith("spectral") else [])])
    # the spectral release may fail its utility check at this size (exit status 3), not its privacy
    assert code == (3 if mechanism.startswith("spectral") else 0), capsys.readouterr().err
    report = json.loads(out.read_text())["report"]
    assert report["mechanism"] == mechanism  # one name per mechanism: the command line's
    assert report["published"]["vocabulary"].startswith("public")


def test_a_reference_without_a_word_list_gives_its_own_words_on_the_dp_road(tmp_path, capsys, monkeypatch):
    """Covered by default: the DP road with a public reference and no word list takes P's words (public, free): no
    vocabulary budget is spent and the published vocabulary is P's, whatever the private texts hold. P is read
    once, by the release (its words come from that one reading)."""
    import topicdp.corpus as corpus_module

    reads = []
    real = corpus_module.read_jsonl_records
    monkeypatch.setattr(corpus_module, "read_jsonl_records",
                        lambda path, *a, **k: reads.append(str(path)) or real(path, *a, **k))
    rng = np.random.default_rng(3)
    reference, private = tmp_path / "p.jsonl.gz", tmp_path / "private.jsonl.gz"
    _write(reference, _records(rng, [f"r{i}" for i in range(40)]))
    _write(private, _records(rng, [f"u{i}" for i in range(60)]) + [("u0", "zebra zebra zebra zebra")])
    out = tmp_path / "r.json"
    assert main(["privatize", str(private), "--reference", str(reference), "--topics", "2", "--min-df", "1",
                 "--max-df", "1.0", "--n-units", "60", "--release-anyway", "--seed", "0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    published = json.loads(out.read_text())
    assert "budget for the vocabulary" not in printed and "vocabulary: a public list of" in printed
    assert published["report"]["published"]["vocabulary"].startswith("public: a public word list built from the "
                                                                     "public reference P")
    assert "zebra" not in published["vocabulary"] and set(published["vocabulary"]) <= set(WORDS)
    assert reads.count(str(reference)) == 1 and reads.count(str(private)) == 1
