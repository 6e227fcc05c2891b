"""``topicdp --help`` is fast because building the parser loads no numerical library, and privatize's help
lists every model, mechanism and guarantee from the one place they are named (topicdp/_names.py)."""

import argparse
import subprocess
import sys

import pytest

from topicdp import _names
from topicdp.cli import build_parser, main

HEAVY = ("numpy", "scipy", "gensim", "sklearn", "matplotlib", "dask")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules loaded by ``code`` in a fresh interpreter (this process has them all loaded)."""
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stderr.split()


def test_building_the_parser_imports_no_numerical_library():
    assert _loaded_after("import topicdp.cli\ntopicdp.cli.build_parser()") == []


@pytest.mark.parametrize("argv", [["--help"], ["privatize", "--help"], ["demo", "--help"]])
def test_help_imports_no_numerical_library(argv):
    code = f"import topicdp.cli\ntry:\n    topicdp.cli.main({argv!r})\nexcept SystemExit:\n    pass"
    assert _loaded_after(code) == []


def test_import_topicdp_is_lazy_and_its_names_still_resolve():
    assert _loaded_after("import topicdp") == []
    import topicdp

    assert topicdp.TopicDP.__name__ == "TopicDP" and topicdp.SpectralDP.__name__ == "SpectralDP"
    assert set(topicdp.__all__) <= set(dir(topicdp))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        topicdp.nope


def test_privatize_help_lists_every_model_and_mechanism_with_its_guarantee(capsys):
    with pytest.raises(SystemExit):
        main(["privatize", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse and textwrap wrap lines
    for name, line in {**_names.MODEL_SUMMARIES, **_names.MECHANISM_SUMMARIES,
                       **_names.GUARANTEE_SUMMARIES, **_names.SENSITIVITY_SUMMARIES}.items():
        assert f"{name} {' '.join(line.split())}" in out, name
    assert "NOT DP" in out


def test_the_names_are_those_the_library_implements():
    from topicdp.adapters import MODELS, make_model
    from topicdp.pipeline import MECHANISMS

    assert MODELS is _names.MODELS and tuple(MECHANISMS) == _names.RIGOROUS_MECHANISMS
    assert all(mechanism.name == name for name, mechanism in MECHANISMS.items())
    assert set(_names.FORECAST_MECHANISMS) <= set(_names.RIGOROUS_MECHANISMS)
    for name in _names.FORECAST_MECHANISMS:  # the rule's candidates each have a closed-form forecast
        assert MECHANISMS[name].forecast(epsilon=1.0, delta=1e-6, unit="user", neighbours="add-remove", n_units=100,
                                         n_topics=2, n_words=50).overlap_with_lda is not None
    for name in MODELS:  # each name builds the adapter that calls itself by that name
        assert make_model(name, 2).name == name


def test_top_level_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("privatize", "demo", "compare", "audit"):
        assert command in out


def test_lazy_sub_commands_parse_and_show_their_help(capsys):
    parser = build_parser()
    args = parser.parse_args(["audit", "--trials", "10", "--topics", "3", "--seed", "4"])
    assert args.n_trials == 10 and args.n_topics == 3 and args.seed == 4
    assert parser.parse_args(["audit", "--n-topics", "7"]).n_topics == 7  # the old spelling, hidden
    assert parser.parse_args(["compare", "--out", "x"]).func.__name__ == "run"
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    out = capsys.readouterr().out
    assert "--topics" in out and "--n-topics" not in out and "noise seed" in " ".join(out.split())


def test_topics_and_seed_mean_the_same_in_every_command():
    parser = build_parser()
    for command, extra in (("privatize", ["embedded"]), ("demo", []), ("audit", [])):
        args = parser.parse_args([command, *extra, "--topics", "4", "--seed", "9"])
        topics = args.topics if command != "audit" else args.n_topics
        assert (topics, args.seed) == (4, 9), command
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("privatize", "demo", "audit"):
        help_ = " ".join(sub.choices[command].format_help().split())
        assert "noise seed" in help_, command
