import gzip
import json

import numpy as np

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
        "privatize", str(path), "--model", "sklearn-nmf", "--topics", "3", "--epsilon", "3", "--delta", "1e-4",
        "--gamma", "0.1", "--min-df", "1", "--max-df", "1.0", "--n-jobs", "1", "--n-pairs", "4", "--insecure-testing", "--private-oracle", "--out", str(out),
    ])
    assert code == 0
    report = json.loads(out.read_text())["report"]
    for key in ("epsilon", "delta", "gamma", "sensitivity", "sigma", "guarantee", "unit"):
        assert key in report
    assert report["epsilon"] == 3 and report["unit"] == "user" and report["guarantee"] == "none"
    printed = capsys.readouterr().out
    assert "top words of the release" in printed and "privacy report" in printed


def test_bad_input_exits_with_a_message(tmp_path, capsys):
    code = main(["privatize", "embedded", "--epsilon", "-1", "--private-oracle"])
    assert code == 2 and "epsilon" in capsys.readouterr().err
