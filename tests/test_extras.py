"""A missing optional dependency is reported before any work, with the exact install command."""

import sys

import pytest

from topicdp._extras import MissingExtraError, install_command, require
from topicdp.cli import main

PLOTS = 'pip install "topicdp[plots]"'
CLUSTER = 'pip install "topicdp[cluster]"'


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib cannot be imported (a None entry in sys.modules makes ``import`` raise ImportError)."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.fixture
def never_read(monkeypatch):
    """Fail the test if a corpus is read or a model is fitted: the refusal must come first."""
    def boom(*args, **kwargs):
        raise AssertionError("work started before the missing extra was reported")

    for target in ("topicdp.corpus.read_jsonl_records", "topicdp.corpus.embedded_corpus",
                   "topicdp.corpus.embedded_texts", "topicdp.datasets.themed_corpus"):
        monkeypatch.setattr(target, boom)


def test_require_names_the_module_and_the_install_command(no_matplotlib):
    with pytest.raises(MissingExtraError) as error:
        require("matplotlib", extra="plots", purpose="--plot")
    assert PLOTS in str(error.value) and "matplotlib" in str(error.value) and "--plot" in str(error.value)
    assert isinstance(error.value, ImportError) and error.value.name == "matplotlib"
    assert install_command("cluster") == CLUSTER


def test_require_passes_for_an_installed_module_and_refuses_an_unknown_extra():
    require("matplotlib", extra="plots")
    with pytest.raises(ValueError, match="extra must be one of"):
        require("matplotlib", extra="plot")


def test_a_missing_submodule_is_reported(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(MissingExtraError, match=r'topicdp\[cluster\]'):
        require("dask.distributed", extra="cluster")


@pytest.mark.parametrize("argv", [
    ["privatize", "embedded", "--guarantee", "random-dp", "--private-oracle", "--plot", "{tmp}/r.png"],
    ["privatize", "embedded", "--plot", "{tmp}/r.png"],
    ["demo", "--plot", "{tmp}/r.png"],
    ["compare", "embedded", "--out", "{tmp}"],
    ["audit", "--trials", "10", "--plot", "{tmp}/a.png"],
])
def test_commands_refuse_before_any_work(tmp_path, capsys, no_matplotlib, never_read, argv):
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    captured = capsys.readouterr()
    assert PLOTS in captured.err and "Traceback" not in captured.err
    assert captured.out == ""  # not a line of work (plan, corpus, forecast) was printed
    assert list(tmp_path.iterdir()) == []


def test_library_plots_refuse_with_the_command(no_matplotlib):
    from topicdp.experiments.plots import plot_all
    from topicdp.plots import plot_release

    with pytest.raises(MissingExtraError, match=r'topicdp\[plots\]'):
        plot_all([], ".")
    with pytest.raises(MissingExtraError, match=r'topicdp\[plots\]'):
        plot_release(None)  # refused before the release is looked at


def test_dask_client_refuses_with_the_command(monkeypatch):
    from topicdp.streaming.executor import dask_client

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(MissingExtraError, match=r'topicdp\[cluster\]'):
        with dask_client():
            pass
