"""``topicdp.release`` is ``topicdp privatize`` from Python: the same request, the same plan and refusal before
the topics' budget is spent, the same release when forced, and its parameters checked before anything is read."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import topicdp
from topicdp._argparse import cli_words
from topicdp._names import RELEASE_DEFAULTS
from topicdp.cli import build_parser, check_arguments, main
from topicdp.pipeline import ReleaseRefused

from corpora import WORDS, write_three_block_files


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """400 users x 3 documents over a public word list: at epsilon 0.05 per user the plan refuses the topics."""
    return write_three_block_files(tmp_path_factory.mktemp("privatize"))


def _options(files) -> dict:
    return dict(n_topics=3, epsilon=0.05, vocabulary=str(files / "words.txt"), seed=0)


def _argv(files, *extra) -> list[str]:
    return ["privatize", str(files / "corpus.jsonl"), "--topics", "3", "--epsilon", "0.05", "--vocabulary",
            str(files / "words.txt"), "--seed", "0", *extra]


def test_the_request_is_the_commands(files):
    args = build_parser().parse_args(_argv(files, "--max-docs-per-user", "2"))
    check_arguments(args)
    from topicdp.pipeline.options import request_from_options

    options = {name: None for name in ("reference", "n_units", "mechanism", "ledger", "out", "query", "user_fraction",
                                       "max_tokens_per_doc", "max_tokens_per_user", "stop_words", "vocabulary_epsilon",
                                       "vocabulary_delta", "scheduler", "work_dir")}
    defaults = RELEASE_DEFAULTS
    made = request_from_options(str(files / "corpus.jsonl"), **{**options, **_options(files)}, unit=defaults.unit,
                                delta=defaults.delta, guarantee="dp", release_anyway=False, max_docs_per_user=2,
                                text_field=defaults.text_field, user_field=defaults.user_field,
                                max_features=defaults.max_features, min_df=defaults.min_df, max_df=defaults.max_df,
                                n_jobs=defaults.n_jobs, agnostic=args.request.agnostic, keep_nonprivate=False)
    assert made == args.request


def test_a_refusal_carries_the_figures_of_the_commands_error_line(files, capsys):
    with pytest.raises(ReleaseRefused) as caught:
        topicdp.release(str(files / "corpus.jsonl"), **_options(files), echo=lambda line: None)
    refused = caught.value
    assert refused.spent and refused.spent[0].startswith("the unit count (epsilon=")
    assert "the topics' budget was not spent" in str(refused)
    capsys.readouterr()
    assert main(_argv(files)) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == f"topicdp: error: {cli_words(str(refused))}"


def test_a_forced_release_is_the_commands_release_bit_for_bit(files, tmp_path, capsys):
    lines: list[str] = []
    ours = topicdp.release(str(files / "corpus.jsonl"), **_options(files), release_anyway=True,
                           out=str(tmp_path / "python.json"), echo=lines.append)
    assert main(_argv(files, "--release-anyway", "--out", str(tmp_path / "command.json"))) == 0
    printed = capsys.readouterr().out
    # the plan the command prints (the time a proposal's search took is the one figure that may differ)
    untimed = lambda text: re.sub(r"in \d+(\.\d+)? s\)", "in _ s)", text)  # noqa: E731
    assert lines and all(untimed(cli_words(line)) in untimed(printed) for line in lines)
    python, command = (json.loads((tmp_path / name).read_text()) for name in ("python.json", "command.json"))
    assert np.array_equal(np.asarray(python["topic_word"]), np.asarray(command["topic_word"]))
    assert np.array_equal(ours.topic_word, np.asarray(command["topic_word"]))
    assert python == command  # the published file whole: topics, vocabulary, report (it holds no path or date)
    assert python["vocabulary"] == command["vocabulary"] == WORDS


@pytest.mark.parametrize("kwargs, message", [
    ({"n_topics": 0}, "n_topics"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"delta": 1.5}, "delta"),
    ({"unit": "team"}, "unit"),
    ({"max_docs_per_user": 0}, "max_docs_per_user must be an integer >= 1"),
    ({"user_fraction": 1.5}, "user_fraction"),
    ({"seed": -1}, "seed"),
    ({"mechanism": "magic"}, "mechanism"),
    ({"vocabulary": "no-such-words.txt"}, "vocabulary: no such file"),
    ({"out": "no-such-directory/release.json"}, "out: cannot write"),
])
def test_bad_parameters_are_refused_by_name_before_anything_is_read(files, kwargs, message, monkeypatch):
    import topicdp.pipeline.options as options

    def never(*args, **kwargs):
        raise AssertionError("the release ran")

    monkeypatch.setattr(options, "run_request", never)
    with pytest.raises((ValueError, TypeError, FileNotFoundError), match=message):
        topicdp.release(str(files / "corpus.jsonl"), **{**_options(files), **kwargs})


def test_an_existing_out_is_refused_unless_overwrite(files, tmp_path, monkeypatch):
    import topicdp.pipeline.options as options

    monkeypatch.setattr(options, "run_request", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(ValueError, match=r"overwrite=True"):
        topicdp.release(str(files / "corpus.jsonl"), **_options(files), out=str(tmp_path / "r.json"))


def test_exported_at_the_top_level():
    assert "release" in topicdp.__all__ and topicdp.release.__module__ == "topicdp.pipeline.options"
    assert "privatize" not in topicdp.__all__ and callable(topicdp.release)  # one name; not the data module


def _ledger_records(path) -> list:
    from topicdp.rdp import PrivacyLedger

    return [(r["type"], r.get("status"), r["entries"]) for r in PrivacyLedger.open(path).file.state().records]


def test_a_refused_run_is_charged_to_the_ledger_as_the_commands(files, tmp_path, capsys):
    from topicdp.rdp import PrivacyLedger

    paths = [str(tmp_path / f"{name}.ledger") for name in ("python", "command")]
    for path in paths:
        PrivacyLedger.open(path, budget=(3.0, 1e-5), unit="user", neighbours="add-remove")
    with pytest.raises(ReleaseRefused):
        topicdp.release(str(files / "corpus.jsonl"), **_options(files), ledger=paths[0], echo=lambda line: None)
    assert main(_argv(files, "--ledger", paths[1])) == 2
    ours = _ledger_records(paths[0])
    assert ours == _ledger_records(paths[1])
    assert ours[-1][:2] == ("completed", "stopped: refused") and [e["name"] for e in ours[-1][2]] == ["unit count"]


def test_a_dataframe_releases_as_its_file(files):
    """The corpus as a pandas DataFrame (the README's "a pandas or polars DataFrame"): the same request as the file's,
    the same release bit for bit (same seed); the report names no path for it."""
    pd = pytest.importorskip("pandas")
    frame = pd.read_json(files / "corpus.jsonl", lines=True, dtype={"user": object})
    options = dict(n_topics=3, epsilon=3.0, unit="document", vocabulary=str(files / "words.txt"), seed=0,
                   n_jobs=1, echo=lambda line: None)
    from_file = topicdp.release(str(files / "corpus.jsonl"), **options)
    from_frame = topicdp.release(frame, **options)
    np.testing.assert_array_equal(from_frame.topic_word, from_file.topic_word)
    assert from_frame.report.headline() == from_file.report.headline()
