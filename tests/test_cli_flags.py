"""``privatize --sensitivity`` and ``--secure-noise`` end to end on the embedded corpus, and the refusals of
contradictory flags before any work."""

import json
import math

import pytest

from topicdp.cli import main

#: a cheap TopicDP configuration on the embedded Lee corpus (300 documents, one per user)
CHEAP = ["privatize", "embedded", "--model", "sklearn-nmf", "--topics", "2", "--n-jobs", "1", "--seed", "0"]
SAMPLED = ["--private-oracle", "--n-pairs", "4", "--insecure-testing"]


def _report(tmp_path, *flags) -> dict:
    out = tmp_path / "release.json"
    assert main([*CHEAP, *flags, "--out", str(out)]) == 0
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
    (["--secure-noise", "--guarantee", "random-dp", "--calibration", "analytic"], "--calibration"),
])
def test_contradictions_are_refused_before_work(capsys, never_read, flags, message):
    assert main([*CHEAP, *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("given, expected", [
    ({}, (0.6, 5e-7)),
    ({"vocabulary_epsilon": 1.0}, (1.0, 5e-7)),   # used to crash: None >= float
    ({"vocabulary_delta": 1e-7}, (0.6, 1e-7)),
    ({"vocabulary_epsilon": 1.0, "vocabulary_delta": 1e-7}, (1.0, 1e-7)),
])
def test_each_vocabulary_budget_default_stands_on_its_own(given, expected):
    """--epsilon 3 --delta 1e-6: the words get 20% of epsilon and half of delta unless told otherwise, each part
    on its own; the topics get the rest."""
    import argparse

    from topicdp.cli import _split_vocabulary_budget

    args = argparse.Namespace(**{"vocabulary": None, "corpus": "c.jsonl", "epsilon": 3.0, "delta": 1e-6,
                                 "vocabulary_epsilon": None, "vocabulary_delta": None, **given})
    _split_vocabulary_budget(args)
    assert (args.vocabulary_epsilon, args.vocabulary_delta) == pytest.approx(expected)
    assert (args.topics_epsilon, args.topics_delta) == pytest.approx((3.0 - expected[0], 1e-6 - expected[1]))


@pytest.mark.parametrize("mechanism", ["spectral-config-1", "dpsvi"])
def test_a_mechanism_that_cannot_compose_a_dp_vocabulary_needs_a_public_one(mechanism, tmp_path, capsys, never_read):
    """Its report would state only the topics' epsilon and call the DP-selected words NOT COVERED."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"user": "u", "text": "some words"}) + "\n")
    assert main(["privatize", str(corpus), "--mechanism", mechanism, "--unit", "document"]) == 2
    assert "give a public word list with --vocabulary" in capsys.readouterr().err
