"""The files a release writes are part of the guarantee: outputs never share a path with each other or an input,
nothing is overwritten unasked, writes are atomic, the owner's diagnostics are 0600, and a sharded run's private
scratch is removed on SIGTERM and Ctrl-C, and by the next run after a SIGKILL.

The fault cases run as in benchmarks/privacy/fault_cases.py (docs/results/fault_cases.md): real ``topicdp``
subprocesses and real signals, each bounded by a timeout. The helpers of topicdp/_files.py are tested directly
below them.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.privacy import fault_cases
from topicdp import _files
from topicdp._files import (Terminated, atomic_path, atomic_write, check_paths, remove_stale_scratch,
                            scratch_directory, unwinding_signals)



@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    # the big corpus is sized so that its passes last a few seconds (a signal lands mid-pass); the wide word
    # list makes a release file of about 0.6 MB, long enough to write that a kill lands mid-write
    return fault_cases.make_workspace(tmp_path_factory.mktemp("fault-cases"), n_big_users=8000, n_wide=2500)


def _check(row) -> None:
    assert row.ok, f"{row.case}: {row.now}\n{row.command}"


# -- the fault cases, as subprocesses ---------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    "case_out_is_diagnostics", "case_out_is_corpus", "case_out_into_shards", "case_out_is_html",
    "case_plot_is_diagnostics", "case_diagnostics_is_vocabulary", "case_html_is_reference", "case_symlinked_out",
    "case_demo_out_is_plot", "case_audit_plot_is_corpus", "case_compare_out_is_corpus",
    "case_existing_without_overwrite",
])
def test_a_clashing_or_existing_output_is_refused_before_reading(ws, case):
    _check(getattr(fault_cases, case)(ws))


def test_overwrite_replaces_atomically_and_keeps_the_diagnostics_private(ws):
    _check(fault_cases.case_existing_with_overwrite(ws))


@pytest.mark.parametrize("case", ["case_sigterm_mid_pass", "case_sigint_mid_pass", "case_sigterm_in_dpvem",
                                  "case_sighup_in_dpvem"])
def test_sigterm_sighup_and_ctrl_c_mid_pass_remove_the_scratch_and_publish_nothing(ws, case):
    _check(getattr(fault_cases, case)(ws))


def test_sigkill_mid_pass_leaves_private_scratch_that_the_next_run_removes(ws):
    _check(fault_cases.case_sigkill_mid_pass_then_rerun(ws, shards=1))


_WRITER = """
import sys
from topicdp._files import atomic_write
atomic_write(sys.argv[1], "x" * 64_000_000, overwrite=sys.argv[2] == "1")
"""


@pytest.mark.parametrize("earlier", [False, True])
def test_kill_9_mid_write_leaves_nothing_or_the_earlier_file(tmp_path, earlier):
    """A child process writes 64 MB through atomic_write and is killed once its temporary holds data: the path
    holds nothing, or the earlier file, never a part (the command-line version is the slow test below)."""
    path = tmp_path / "release.json"
    if earlier:
        path.write_text('{"earlier": true}')
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path), "1"])
    try:
        def writing():
            return any(p.name.startswith(".release.json.tmp-") and p.stat().st_size > 0 for p in tmp_path.iterdir())

        assert fault_cases._wait_for(writing, proc, timeout=60, poll=0.001), "the writer finished first"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert (path.read_text() == '{"earlier": true}') if earlier else not path.exists()
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".release.json.tmp-")]
    assert len(left) == 1 and 0 < left[0].stat().st_size < 64_000_000 and fault_cases.mode(left[0]) == "0o600"
    atomic_write(path, "{}")  # the next write to the path removes what the killed one left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.json"]


@pytest.mark.slow
def test_kill_9_while_the_command_writes_the_release(ws):
    _check(fault_cases.case_sigkill_mid_write(ws, attempts=2))


@pytest.mark.parametrize("overwrite", [False, True])
def test_two_runs_at_once_on_one_out_leave_one_complete_release(ws, overwrite):
    _check(fault_cases._two_at_once(ws, overwrite=overwrite, wide=False))


def test_refusals_happen_before_anything_is_read(tmp_path, monkeypatch, capsys):
    """The file checks come before the request is built (which reads --vocabulary) and before the corpus."""
    import topicdp.cli as cli

    def never(*args, **kwargs):
        raise AssertionError("read before the file checks")

    monkeypatch.setattr(cli, "build_request", never)
    words = tmp_path / "words.txt"
    words.write_text("alpha\nbeta\n")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"user": 1, "text": "alpha beta"}\n')
    for argv, names in (
        (["--out", str(words), "--vocabulary", str(words)], ("--out", "--vocabulary")),
        (["--out", "r.json", "--diagnostics", "r.json"], ("--out", "--diagnostics")),
        (["--out", str(words)], ("--out", "--overwrite")),
    ):
        assert cli.main(["privatize", str(corpus), *argv]) == 2
        err = capsys.readouterr().err
        assert all(n in err for n in names) and "Traceback" not in err


def test_overwrite_is_in_every_writing_commands_help():
    from topicdp.cli import build_parser

    parser = build_parser()
    for command in ("privatize", "demo", "compare", "audit"):
        args = parser.parse_args([command, *(["x.jsonl"] if command == "privatize" else []),
                                  *(["--out", "d"] if command == "compare" else []), "--overwrite"])
        assert args.overwrite is True


def test_compare_resumes_its_own_directory_and_refuses_another_without_overwrite(tmp_path):
    from topicdp._files import check_output_directory

    out = tmp_path / "out"
    check_output_directory(str(out), "--out", resumes="results.csv")  # a new directory
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="--out: .* holds no earlier run to resume .* --overwrite"):
        check_output_directory(str(out), "--out", resumes="results.csv")
    check_output_directory(str(out), "--out", resumes="results.csv", overwrite=True)
    (out / "results.csv").write_text("panel\n")
    check_output_directory(str(out), "--out", resumes="results.csv")  # a comparison: resumed
    corpus = out / "corpus.jsonl"
    corpus.write_text("{}\n")
    with pytest.raises(ValueError, match="--out holds the corpus"):
        check_output_directory(str(out), "--out", {"the corpus": str(corpus)}, resumes="results.csv")


# -- the helpers ------------------------------------------------------------------------------------------

def test_check_paths_sees_hard_links_globs_and_shard_directories(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("{}\n")
    hard = tmp_path / "hard.json"
    os.link(corpus, hard)
    with pytest.raises(ValueError, match="--out is the same file as the corpus"):
        check_paths({"--out": str(hard)}, {"the corpus": str(corpus)}, overwrite=True)
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text("{}\n")
    with pytest.raises(ValueError, match="would be read as a shard of the corpus"):
        check_paths({"--diagnostics": str(shards / "owner.jsonl.gz")}, {"the corpus": str(shards)})
    check_paths({"--out": str(shards / "release.json")}, {"the corpus": str(shards)})  # not read as a shard
    with pytest.raises(ValueError, match="is a shard of the corpus"):
        check_paths({"--out": str(shards / "a.jsonl")}, {"the corpus": str(shards / "*.jsonl")}, overwrite=True)
    with pytest.raises(ValueError, match="would be read as a shard"):
        check_paths({"--out": str(shards / "b.jsonl")}, {"the corpus": str(shards / "*.jsonl")})
    check_paths({"--out": str(tmp_path / "r.json")}, {"the corpus": "embedded", "--reference": None})
    with pytest.raises(ValueError, match="cannot write a file"):
        check_paths({"--out": str(tmp_path / "missing" / "r.json")})


def test_atomic_write_modes_and_overwrite(tmp_path):
    path = tmp_path / "f.json"
    atomic_write(path, "one")
    assert path.read_text() == "one"
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_files._umask()
    atomic_write(path, "two", private=True)  # replaced, and now the owner's only
    assert path.read_text() == "two" and stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError, match="not replaced"):
        atomic_write(path, "three", overwrite=False)
    assert path.read_text() == "two" and os.listdir(tmp_path) == ["f.json"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "f.json"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(path) as tmp:
            Path(tmp).write_text("half")
            raise KeyboardInterrupt
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["f.json"]
    with atomic_path(tmp_path / "p.png") as tmp:
        assert tmp.endswith(".png")  # matplotlib picks the format from the suffix
        Path(tmp).write_bytes(b"png")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporaries_and_scratch_of_dead_processes_only_are_removed(tmp_path):
    machine = _files._owner_tag().partition("-")[0]
    dead, alive = _dead_pid(), os.getppid()
    stale = tmp_path / f".r.json.tmp-{machine}-{dead}-abc.json"
    live = tmp_path / f".r.json.tmp-{machine}-{alive}-abc.json"
    elsewhere = tmp_path / f".r.json.tmp-00000000-{dead}-abc.json"  # another machine's, on a shared disk
    for p in (stale, live, elsewhere):
        p.write_text("x")
    atomic_write(tmp_path / "r.json", "{}")
    assert not stale.exists() and live.exists() and elsewhere.exists()

    prefix = "topicdp-counts-"
    gone = tmp_path / f"{prefix}{machine}-{dead}-xyz"
    running = tmp_path / f"{prefix}{machine}-{alive}-xyz"
    other = tmp_path / f"{prefix}ffffffff-{dead}-xyz"
    unrelated = tmp_path / f"{prefix}old-style"
    for d in (gone, running, other, unrelated):
        d.mkdir()
        (d / "counts-000000.npz").write_bytes(b"private")
    link = tmp_path / f"{prefix}{machine}-{dead}-link"
    link.symlink_to(running)
    assert remove_stale_scratch(prefix, str(tmp_path)) == [str(gone)]
    assert running.exists() and other.exists() and unrelated.exists() and link.is_symlink()
    scratch = scratch_directory(prefix, str(tmp_path))
    try:
        assert Path(scratch.name).name.startswith(f"{prefix}{machine}-{os.getpid()}-")
        assert stat.S_IMODE(os.stat(scratch.name).st_mode) == 0o700
    finally:
        scratch.cleanup()


def test_sigterm_inside_the_block_unwinds_like_ctrl_c():
    previous = signal.getsignal(signal.SIGTERM)
    unwound = []
    with pytest.raises(KeyboardInterrupt) as info:
        with unwinding_signals():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(10_000_000):  # the handler runs between bytecodes, long before this ends
                    pass
            finally:
                unwound.append(True)
    assert isinstance(info.value, Terminated) and _files.interrupt_status(info.value) == 143 and unwound
    assert signal.getsignal(signal.SIGTERM) == previous


def test_python_api_writes_atomically_and_overwrites_unless_told_not_to(tmp_path):
    from topicdp import CallableModel, TopicDP, embedded_corpus

    corpus = embedded_corpus()
    topics = np.random.default_rng(0).dirichlet(np.ones(corpus.n_words), size=3)
    model = CallableModel(lambda c: topics, n_topics=3, name="fixed")
    release = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(corpus).release_
    path, owner = tmp_path / "r.json", tmp_path / "owner.json"
    release.save(path)
    release.save(path)  # scikit-learn-like: the Python API replaces
    with pytest.raises(FileExistsError):
        release.save(path, overwrite=False)
    release.save_diagnostics(owner)
    assert stat.S_IMODE(owner.stat().st_mode) == 0o600
    assert json.loads(owner.read_text())["format"].startswith("topicdp.diagnostics")
    assert sorted(os.listdir(tmp_path)) == ["owner.json", "r.json"]
