"""``privatize --sensitivity`` and ``--secure-noise`` end to end on the embedded corpus, and the refusals of
contradictory flags before any work."""

import json
import math

import pytest

from facts import assert_facts
from topicdp.cli import main

#: a cheap TopicDP configuration on the embedded Lee corpus (300 documents, one per user)
CHEAP = ["privatize", "embedded", "--model", "sklearn-nmf", "--topics", "2", "--n-jobs", "1", "--seed", "0"]
SAMPLED = ["--private-oracle", "--n-pairs", "4", "--insecure-testing"]


def _report(tmp_path, *flags) -> dict:
    """The report of a release; too few pairs (--insecure-testing) fail a run-time check: exit status 3."""
    out = tmp_path / "release.json"
    assert main([*CHEAP, *flags, "--out", str(out)]) == (3 if "--insecure-testing" in flags else 0)
    return json.loads(out.read_text())["report"]


@pytest.fixture
def never_read(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("the corpus was read before the arguments were checked")

    for target in ("topicdp.corpus.read_jsonl_records", "topicdp.corpus.embedded_corpus",
                   "topicdp.corpus.embedded_texts"):
        monkeypatch.setattr(target, boom)


def test_sensitivity_global_is_gaussian_global_dp(tmp_path, capsys):
    report = _report(tmp_path, "--sensitivity", "global", "--release-anyway")
    assert report["guarantee"] == "approx-DP"
    assert report["sensitivity"] == pytest.approx(math.sqrt(2 * 2))  # sqrt(2K), K = 2
    assert "plan: gaussian-global (named by the caller)" in capsys.readouterr().out


def test_a_named_mechanism_without_a_forecast_says_nothing_checks_it(tmp_path, capsys):
    """DP-SVI has no readability forecast: the plan says its release is not checked (the others name a verdict)."""
    report = _report(tmp_path, "--mechanism", "dpsvi", "--unit", "document")
    assert report["mechanism"] == "dpsvi"
    plan = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("plan: dpsvi"))
    assert_facts(plan, "named by the caller", "no readability forecast", "nothing checks")


def test_sensitivity_sampled_is_the_random_dp_road(tmp_path):
    report = _report(tmp_path, "--sensitivity", "sampled", *SAMPLED)
    assert report["sensitivity_method"].startswith("sampled")
    assert report["guarantee"] == "none"  # the private oracle: sigma leaks, so no guarantee is claimed


@pytest.mark.parametrize("road", [["--sensitivity", "global", "--release-anyway"], ["--guarantee", "random-dp", *SAMPLED]])
def test_secure_noise_on_both_roads(tmp_path, road):
    report = _report(tmp_path, *road, "--secure-noise")
    info = report["details"]["secure_noise"]
    assert report["calibration"].startswith("rdp")  # the discrete Gaussian inherits the RDP curve only
    assert info["sampler"].startswith("exact discrete Gaussian")
    # the scale used is a whole number of grid steps of at least the calibrated sigma (rounded up)
    assert info["noise_scale"] == pytest.approx(info["scale_units"] * info["grid"])
    assert info["calibrated_sigma"] <= info["noise_scale"] == report["sigma"]


@pytest.mark.parametrize("flags, message", [
    (["--sensitivity", "sampled", "--guarantee", "dp"], "--sensitivity sampled"),
    (["--sensitivity", "sampled", "--mechanism", "laplace"], "--sensitivity sampled"),
    (["--sensitivity", "global", "--guarantee", "random-dp"], "--sensitivity global"),
    (["--sensitivity", "global", "--mechanism", "dp-vem"], "--sensitivity global"),
    (["--guarantee", "random-dp", "--mechanism", "laplace"], "--mechanism"),
    (["--secure-noise"], "--secure-noise"),
    (["--secure-noise", "--mechanism", "laplace"], "--secure-noise"),
    (["--secure-noise", "--guarantee", "random-dp", "--calibration", "analytic"], "calibration 'auto' or 'rdp'"),
])
def test_contradictions_are_refused_before_work(capsys, never_read, flags, message):
    assert main([*CHEAP, *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("given, expected", [
    ({}, (0.6, 5e-7)),
    ({"epsilon": 1.0}, (1.0, 5e-7)),   # used to crash: None >= float
    ({"delta": 1e-7}, (0.6, 1e-7)),
    ({"epsilon": 1.0, "delta": 1e-7}, (1.0, 1e-7)),
])
@pytest.mark.parametrize("stated", [True, False])
def test_each_vocabulary_budget_default_stands_on_its_own(given, expected, stated, tmp_path):
    """--epsilon 3 --delta 1e-6: the words get 20% of epsilon and half of delta unless told otherwise, each part
    on its own; without a stated unit count 5% of each goes to a DP count; the topics get the rest."""
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy, split_budget

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("")
    request = ReleaseRequest(CorpusSource(str(corpus)), VocabularyPolicy.dp(**given), epsilon=3.0, delta=1e-6,
                             n_units=100 if stated else None)
    split = split_budget(request)
    assert (split.vocabulary.epsilon, split.vocabulary.delta) == pytest.approx(expected)
    count = (0.0, 0.0) if stated else (0.15, 5e-8)
    assert split.count is None if stated else (split.count.epsilon, split.count.delta) == pytest.approx(count)
    assert (split.topics.epsilon, split.topics.delta) == pytest.approx(
        (3.0 - expected[0] - count[0], 1e-6 - expected[1] - count[1]))


@pytest.mark.parametrize("flags, message", [
    (["--mechanism", "spectral-config-1"], "state it (--n-units N"),       # replace-one with U public only
    (["--mechanism", "dpsvi", "--unit", "user"], "dpsvi protects documents only"),
    (["--mechanism", "dpsvi", "--unit", "document", "--n-units", "5"], "add/remove neighbours"),
    (["--unit", "document", "--max-docs-per-user", "3"], "per-user document cap"),
    (["--topics", "3", "--vocabulary", "WORDS"], "at most the number of words of the public vocabulary (2)"),
])
def test_what_the_neighbour_relation_cannot_cover_is_refused_before_reading(flags, message, tmp_path, capsys,
                                                                           never_read):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"user": "u", "text": "some words"}) + "\n")
    words = tmp_path / "words.txt"
    words.write_text("alpha\nbeta\n")
    assert main(["privatize", str(corpus), *[str(words) if f == "WORDS" else f for f in flags]]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
