import gzip
import json
import re

import numpy as np
import pytest

from topicdp.cli import main


def test_privatize_writes_a_release_with_the_report_fields(tmp_path, capsys):
    rng = np.random.default_rng(0)
    words = ["market", "energy", "price", "trade", "contract", "meeting", "schedule", "office", "budget", "report"]
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for i in range(60):
            text = " ".join(rng.choice(words, size=30))
            fh.write(json.dumps({"user": f"u{i % 12}", "text": text}) + "\n")
    out = tmp_path / "release.json"
    code = main([
        "privatize", "--guarantee", "random-dp", str(path), "--model", "sklearn-nmf", "--topics", "3", "--epsilon", "3", "--delta", "1e-4",
        "--gamma", "0.1", "--min-df", "1", "--max-df", "1.0", "--n-jobs", "1", "--n-pairs", "4", "--insecure-testing", "--private-oracle", "--out", str(out),
    ])
    assert code == 3  # too few pairs (--n-pairs 4 --insecure-testing): a failed run-time check, in the exit status
    report = json.loads(out.read_text())["report"]
    for key in ("epsilon", "delta", "gamma", "sensitivity", "sigma", "guarantee", "unit"):
        assert key in report
    assert report["epsilon"] == 3 and report["unit"] == "user" and report["guarantee"] == "none"
    printed = capsys.readouterr().out
    assert "top words of the release" in printed and "privacy report" in printed


def test_bad_input_exits_with_a_message(tmp_path, capsys):
    code = main(["privatize", "--guarantee", "random-dp", "embedded", "--epsilon", "-1", "--private-oracle"])
    assert code == 2 and "epsilon" in capsys.readouterr().err


def test_default_guarantee_is_dp_and_refuses_a_release_forecast_to_be_noise(tmp_path, capsys):
    """--guarantee dp (default) plans from public quantities and a DP count first; on 40 users at epsilon 0.1
    no word can pass the DP vocabulary, and with a public word list the forecast says noise: nothing is
    released unless --release-anyway (which cannot override an impossible vocabulary)."""
    import json

    rng = np.random.default_rng(0)
    words = [f"zq{a}{b}{c}" for a in "abcdefgh" for b in "abcdefgh" for c in "abcd"]  # 256 words: chance overlap 0.04
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps({"user": f"u{i % 40}", "text": " ".join(rng.choice(words, 30))}) + "\n"
                            for i in range(120)))
    out = tmp_path / "release.json"
    for anyway in ([], ["--release-anyway"]):
        code = main(["privatize", str(path), "--epsilon", "0.1", "--out", str(out), "--seed", "0", *anyway])
        captured = capsys.readouterr()
        assert code == 2 and "fewer than the 10 topics" in captured.err and not out.exists()
        # told truthfully what ran: the DP count, and the selection only where the count let it run
        spent = (r"only the unit count \(epsilon=0.005, delta=5e-08\) and the vocabulary \(epsilon=\S+, delta=\S+\) "
                 r"spent their budgets" if "DP vocabulary kept" in captured.out
                 else r"only the unit count \(epsilon=0.005, delta=5e-08\) spent its budget")
        assert re.search(spent, captured.err) and "the topics' budget was not spent" in captured.err
    vocabulary = tmp_path / "words.txt"
    vocabulary.write_text("\n".join(words) + "\n")
    code = main(["privatize", str(path), "--vocabulary", str(vocabulary), "--epsilon", "0.1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and "noise" in captured.err and not out.exists() and "plan: dp-vem" in captured.out
    code = main(["privatize", str(path), "--vocabulary", str(vocabulary), "--epsilon", "0.1", "--out", str(out),
                 "--release-anyway", "--seed", "0"])
    report = json.loads(out.read_text())["report"]
    assert code == 0 and report["mechanism"] == "dp-vem" and report["guarantee"] == "approx-DP"
    assert report["published"]["vocabulary"].startswith("public")


def test_default_dp_release_selects_its_vocabulary_under_dp_within_the_total_budget(tmp_path, capsys):
    """No public --vocabulary: the words are selected under DP out of the stated total (epsilon, delta)."""
    import json

    rng = np.random.default_rng(1)
    words = [f"zq{a}{b}{c}" for a in "abcdefgh" for b in "abcdefgh" for c in "abcd"]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"user": f"u{i % 3000}", "text": " ".join(rng.choice(words[:40], 20))}) + "\n"
                            for i in range(3000)))
    out = tmp_path / "release.json"
    code = main(["privatize", str(path), "--epsilon", "3", "--delta", "1e-6", "--out", str(out), "--seed", "0",
                 "--release-anyway", "--topics", "3"])
    assert code == 0, capsys.readouterr().err
    report = json.loads(out.read_text())["report"]
    assert report["published"]["vocabulary"].startswith("DP")
    assert report["epsilon"] == pytest.approx(3.0) and report["delta"] == pytest.approx(1e-6)


def test_demo_releases_readable_topics_of_the_generated_corpus(capsys):
    """The demo's release at epsilon=3 overlaps the generating topics well above chance (10 K / V = 0.5 would be
    the overlap of ten random top-10 lists over 197 words only if they were matched perfectly; random lists
    give about 0.05-0.1 after matching). EM from a random start merges some topics, so we ask for >= 0.3."""
    import re

    assert main(["demo", "--seed", "0"]) == 0
    text = capsys.readouterr().out
    overlap = float(re.search(r"matched top-10 overlap with the generating topics: ([0-9.]+)", text).group(1))
    assert overlap >= 0.3


def test_the_random_dp_demo_ends_with_status_0_when_it_shows_the_refusal(capsys):
    """The documented agnostic demo stops at the forecast on 150 users: that is what it shows, so it ends 0 and
    says so, instead of 'topicdp: error' and status 2 (9 pairs: the exchangeable sizing keeps it fast)."""
    assert main(["demo", "--guarantee", "random-dp", "--sizing", "exchangeable"]) == 0
    captured = capsys.readouterr()
    assert "the demo ends with a refusal, as expected at this size" in captured.out
    assert "error" not in captured.err and "nothing was released and no budget was spent" in captured.out


def test_each_interface_names_its_own_spelling(tmp_path, capsys):
    """The library's refusal says release_anyway=True; the command line prints --release-anyway (and no Python name)."""
    from topicdp._argparse import cli_words
    from topicdp.pipeline import CorpusSource, ReleaseRefused, ReleaseRequest, VocabularyPolicy, release

    rng = np.random.default_rng(0)
    words = [f"w{a}{b}" for a in "abc" for b in "abcdefghij"]
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps({"user": f"u{i % 30}", "text": " ".join(rng.choice(words, 20))}) + "\n"
                            for i in range(60)))
    with pytest.raises(ReleaseRefused) as caught:
        release(ReleaseRequest(CorpusSource(str(path)), VocabularyPolicy.public(words), epsilon=0.1, n_topics=3,
                               n_units=30), echo=lambda line: None)  # a stated count: the decision is not random
    assert "release_anyway=True" in str(caught.value) and "--release-anyway" not in str(caught.value)
    vocabulary = tmp_path / "words.txt"
    vocabulary.write_text("\n".join(words) + "\n")
    assert main(["privatize", str(path), "--vocabulary", str(vocabulary), "--topics", "3", "--epsilon", "0.1",
                 "--n-units", "30"]) == 2
    captured = capsys.readouterr()
    assert "--release-anyway" in captured.err and "release_anyway" not in captured.err + captured.out
    # each Python spelling in the command line's (one phrase, one parameter), the words around them as they were
    assert cli_words("give (vocabulary=VocabularyPolicy.public(words)); or") == "give (--vocabulary FILE); or"
    assert cli_words("state it (n_units=N)") == "state it (--n-units N)"
    assert cli_words("max_docs_per_user must be >= 1 for each_user") == "--max-docs-per-user must be >= 1 for each_user"
