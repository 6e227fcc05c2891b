"""The fault cases of the files a release writes, run for real: subprocesses of ``topicdp`` and real signals.

    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/fault_cases.py --out table.md   # the table of docs/results/fault_cases.md
    git archive 31860cb topicdp | tar -x -C /tmp/old && python benchmarks/privacy/fault_cases.py --code /tmp/old --only ...

Each case is a function ``case_*(ws) -> Row`` on a :class:`Workspace` (a generated corpus, one file and the same
records as shards); the measured row says what happened and ``ok`` whether it is what the design promises
(the published file, the owner's diagnostics and the inputs never share a path; nothing is overwritten unasked;
writes are atomic; private scratch is 0700 and removed on any exit the process can catch).
tests/test_output_files.py runs the same functions.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import itertools
import json
import os
import shutil
import signal
import stat
import string
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

WORDS = [f"w{a}{b}" for a in "abcdef" for b in "abcdefghij"]  # three blocks of twenty words
#: a small release: seeded (the report says so; never published), forced past the forecast
RELEASE = ["--topics", "3", "--epsilon", "8", "--delta", "1e-5", "--release-anyway", "--seed", "0"]
SCRATCH = "topicdp-counts-"
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")


@dataclass
class Row:
    case: str
    command: str
    now: str
    ok: bool
    status: int | None = None
    seconds: float = 0.0
    facts: dict = field(default_factory=dict)


@dataclass
class Workspace:
    root: Path
    corpus: Path  # one JSON Lines file (in memory)
    shards: Path  # the same records in 4 shards
    big: Path  # 16 shards, long enough passes to signal mid-pass
    words: Path  # a public word list
    wide: Path  # a public word list of 10 060 words: a release file of 2.4 MB (K = 10), to kill mid-write


def _write_records(path: Path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def make_workspace(root, n_users: int = 600, n_big_users: int = 8000, n_wide: int = 10_000) -> Workspace:
    """The corpora: ``n_users`` users x 3 documents of 25 words from one of three blocks of 20 words (the big
    one: ``n_big_users``); the wide word list adds ``n_wide`` words no document uses."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)

    def records(n, seed):
        rng = np.random.default_rng(seed)
        out = []
        for u in range(n):
            for _ in range(3):
                block = int(rng.integers(3))
                out.append({"user": f"u{u}", "text": " ".join(rng.choice(WORDS[20 * block:20 * block + 20], 25))})
        return out

    def shard(directory: Path, recs, n_shards):
        directory.mkdir(exist_ok=True)
        per = -(-len(recs) // (3 * n_shards)) * 3  # whole users per shard
        for i in range(n_shards):
            _write_records(directory / f"part-{i:03d}.jsonl", recs[i * per:(i + 1) * per])

    small = records(n_users, 0)
    _write_records(root / "corpus.jsonl", small)
    shard(root / "shards", small, 4)
    shard(root / "big", records(n_big_users, 1), 16)
    (root / "words.txt").write_text("\n".join(WORDS) + "\n")
    fillers = ["z" + "".join(t) for t in itertools.islice(itertools.product(string.ascii_lowercase, repeat=4), n_wide)]
    (root / "wide.txt").write_text("\n".join(WORDS + fillers) + "\n")
    return Workspace(root, root / "corpus.jsonl", root / "shards", root / "big", root / "words.txt",
                     root / "wide.txt")


# -- running the command ------------------------------------------------------------------------------------

def command(*args) -> list[str]:
    return [sys.executable, "-m", "topicdp.cli", *map(str, args)]


def shown(cmd: list[str], ws: Workspace) -> str:
    text = " ".join(cmd[3:]).replace(str(ws.root) + "/", "").replace(str(ws.root), ".")
    return "topicdp " + text.replace(" ".join(RELEASE), "$SMALL")


def run(cmd: list[str], cwd: Path, timeout: float = 300) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def is_release(path: Path) -> bool:
    """Whether ``path`` holds one complete published release (it loads and passes the schema)."""
    from topicdp.private_release import PrivateRelease

    try:
        PrivateRelease.load(path)
    except (ValueError, OSError, KeyError):
        return False
    return True


def scratch_dirs(where: Path) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(str(where / f"{SCRATCH}*")))


def temporaries(where: Path) -> list[Path]:
    return sorted(Path(p) for p in glob.glob(str(where / ".*.tmp-*")))


def mode(path: Path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


# -- the cases ----------------------------------------------------------------------------------------------

def _refusal(ws: Workspace, name: str, args: list, outputs: list[str], inputs: list[Path],
             expect: tuple[str, ...]) -> Row:
    """A command that must stop before reading: exit 2, a message naming ``expect``, no output created, the
    inputs unchanged."""
    before = {p: digest(p) for p in inputs}
    existing = {o for o in outputs if (ws.root / o).exists()}
    cmd = command(*args)
    status, out, err, seconds = run(cmd, ws.root)
    message = last_line(err).replace(str(ws.root) + "/", "")
    created = [o for o in outputs if (ws.root / o).exists() and o not in existing]
    unchanged = all(digest(p) == d for p, d in before.items())
    ok = (status == 2 and all(e in message for e in expect) and not created and unchanged and out == ""
          and "Traceback" not in err)
    now = (f"refused before reading (nothing printed on stdout): `{message}`; " +
           ("no file created" if not created else f"CREATED {created}") +
           ("; inputs unchanged" if unchanged else "; AN INPUT CHANGED"))
    return Row(name, shown(cmd, ws), now, ok, status, seconds)


def case_out_is_diagnostics(ws):
    return _refusal(ws, "--out = --diagnostics", ["privatize", ws.corpus, *RELEASE, "--out", "x.json",
                    "--diagnostics", "x.json"], ["x.json"], [ws.corpus], ("--out", "--diagnostics"))


def case_out_is_corpus(ws):
    return _refusal(ws, "--out = the corpus", ["privatize", ws.corpus, *RELEASE, "--out", ws.corpus, "--overwrite"],
                    [], [ws.corpus], ("--out", "the corpus"))


def case_out_into_shards(ws):
    return _refusal(ws, "--out would be a shard of the corpus directory",
                    ["privatize", ws.shards, *RELEASE, "--out", ws.shards / "release.jsonl"],
                    ["shards/release.jsonl"], [ws.shards / "part-000.jsonl"], ("--out", "shard", "the corpus"))


def case_out_is_html(ws):
    return _refusal(ws, "--out = --html", ["privatize", ws.corpus, *RELEASE, "--out", "r.json", "--html", "./r.json"],
                    ["r.json"], [ws.corpus], ("--out", "--html"))


def case_plot_is_diagnostics(ws):
    return _refusal(ws, "--plot = --diagnostics", ["privatize", ws.corpus, *RELEASE, "--plot", "p.png",
                    "--diagnostics", "p.png"], ["p.png"], [ws.corpus], ("--plot", "--diagnostics"))


def case_diagnostics_is_vocabulary(ws):
    return _refusal(ws, "--diagnostics = --vocabulary", ["privatize", ws.corpus, *RELEASE, "--vocabulary", ws.words,
                    "--diagnostics", ws.words, "--overwrite"], [], [ws.words], ("--diagnostics", "--vocabulary"))


def case_html_is_reference(ws):
    reference = ws.shards / "part-000.jsonl"
    return _refusal(ws, "--html = --reference (random-dp)",
                    ["privatize", ws.corpus, "--guarantee", "random-dp", "--reference", reference, "--html",
                     reference, "--overwrite"], [], [reference], ("--html", "--reference"))


def case_symlinked_out(ws):
    link = ws.root / "link.json"
    link.unlink(missing_ok=True)
    link.symlink_to(ws.corpus)
    row = _refusal(ws, "--out is a symbolic link to the corpus", ["privatize", ws.corpus, *RELEASE, "--out", link,
                   "--overwrite"], [], [ws.corpus], ("--out", "the corpus"))
    link.unlink()
    return row


def case_demo_out_is_plot(ws):
    return _refusal(ws, "demo: --out = --plot", ["demo", "--out", "d.png", "--plot", "d.png"], ["d.png"], [],
                    ("--out", "--plot"))


def case_audit_plot_is_corpus(ws):
    return _refusal(ws, "audit: --plot = --corpus", ["audit", "--corpus", ws.corpus, "--plot", ws.corpus,
                    "--overwrite"], [], [ws.corpus], ("--plot", "--corpus"))


def case_compare_out_is_corpus(ws):
    return _refusal(ws, "compare: --out = the corpus", ["compare", ws.corpus, "--out", ws.corpus], [], [ws.corpus],
                    ("--out", "the corpus"))


def case_existing_without_overwrite(ws):
    target = ws.root / "existing.json"
    target.write_text("an earlier file\n")
    row = _refusal(ws, "an existing --out without --overwrite", ["privatize", ws.corpus, *RELEASE, "--out", target],
                   [], [ws.corpus, target], ("--out", "--overwrite"))
    row.ok = row.ok and target.read_text() == "an earlier file\n"
    return row


def case_existing_with_overwrite(ws):
    out, diag = ws.root / "existing.json", ws.root / "owner.json"
    out.write_text("an earlier file\n")
    diag.write_text("an earlier file\n")
    diag.chmod(0o644)
    cmd = command("privatize", ws.corpus, *RELEASE, "--vocabulary", ws.words, "--out", out, "--diagnostics", diag,
                  "--overwrite")
    status, _, err, seconds = run(cmd, ws.root)
    complete = is_release(out)
    ok = status == 0 and complete and mode(diag) == "0o600" and not temporaries(ws.root)
    now = (f"exit {status}; --out replaced by a complete release (mode {mode(out)}), --diagnostics replaced "
           f"(mode {mode(diag)}, was 0o644); no temporary left")
    return Row("an existing --out and --diagnostics with --overwrite", shown(cmd, ws), now, ok, status, seconds)


def _wait_for(condition, proc: subprocess.Popen, timeout: float, poll: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(poll)
    return False


def _default_signals() -> None:
    """In the child, before exec: SIGINT, SIGTERM and SIGHUP at their defaults, as in a terminal. A run started in the
    background (``cmd &``, ``nohup``) inherits them ignored, and topicdp keeps a signal its parent ignored; the case
    is about the signal arriving, not about how this harness was launched."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _signal_mid_pass(ws: Workspace, sig: signal.Signals, work: Path, out: Path, shards: int = 1) -> tuple:
    """Start a sharded release; once ``shards`` count shards are written (1: the preparation pass over 16 text
    shards is under way; 16: it is done and dp-vem's passes over the count shards run), send ``sig``. Returns
    (status, stderr, the scratch at the signal, seconds, command)."""
    work.mkdir(exist_ok=True)
    out.unlink(missing_ok=True)
    cmd = command("privatize", ws.big, *RELEASE, "--work-dir", work, "--out", out, "--diagnostics",
                  out.with_suffix(".owner.json"))
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ws.root, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)
    try:
        reached = _wait_for(lambda: len(glob.glob(str(work / f"{SCRATCH}*" / "counts-*.npz"))) >= shards, proc, 120)
        seen = [(p.name, mode(p), len(list(p.iterdir())), sum(f.stat().st_size for f in p.iterdir()))
                for p in scratch_dirs(work)] if reached else []
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err, seen, time.perf_counter() - start, cmd


def _case_catchable(ws, sig: signal.Signals, expected: int, shards: int = 1) -> Row:
    work, out = ws.root / f"work-{sig.name}", ws.root / f"r-{sig.name}.json"
    status, err, seen, seconds, cmd = _signal_mid_pass(ws, sig, work, out, shards)
    left = scratch_dirs(work)
    line = last_line(err)
    ok = (status == expected and bool(seen) and not left and not out.exists()
          and not out.with_suffix(".owner.json").exists() and "Traceback" not in err
          and line.startswith("topicdp: interrupted") and not temporaries(ws.root))
    at_signal = f"{seen[0][2]} files, {seen[0][3] / 1e6:.2f} MB, mode {seen[0][1]}" if seen else "NO SCRATCH SEEN"
    now = (f"exit {status}; stderr ends `{line}`" + (" (no traceback)" if "Traceback" not in err else " TRACEBACK")
           + f"; scratch at the signal: {at_signal}; after: "
           + ("removed" if not left else f"LEFT {[p.name for p in left]}")
           + ("; no --out, no --diagnostics" if not out.exists() else "; --out WRITTEN"))
    when = PASSES[shards]
    return Row(f"{sig.name} {when}", shown(cmd, ws) + f"; kill -{sig.name[3:]} {WHEN[shards]}", now, ok, status,
               seconds)


#: where a signal lands: after the first count shard, or after all 16
PASSES = {1: "mid-pass (preparing the count shards)", 16: "mid-pass (dp-vem's passes over 16 count shards)"}
WHEN = {1: "once the first count shard exists", 16: "once all 16 count shards exist"}


def case_sigterm_mid_pass(ws):
    return _case_catchable(ws, signal.SIGTERM, 143)


def case_sigint_mid_pass(ws):
    return _case_catchable(ws, signal.SIGINT, 130)


def case_sigterm_in_dpvem(ws):
    return _case_catchable(ws, signal.SIGTERM, 143, shards=16)


def case_sigint_in_dpvem(ws):
    return _case_catchable(ws, signal.SIGINT, 130, shards=16)


def case_sighup_in_dpvem(ws):
    return _case_catchable(ws, signal.SIGHUP, 129, shards=16)


def case_sigkill_mid_pass_then_rerun(ws, shards: int = 16):
    work, out = ws.root / "work-KILL", ws.root / "r-KILL.json"
    status, _, seen, seconds, cmd = _signal_mid_pass(ws, signal.SIGKILL, work, out, shards)
    left = scratch_dirs(work)
    left_facts = [(p.name, mode(p), len(list(p.iterdir()))) for p in left]
    rerun = command("privatize", ws.shards, *RELEASE, "--work-dir", work, "--out", ws.root / "r-rerun.json",
                    "--overwrite")
    status2, _, err2, seconds2 = run(rerun, ws.root)
    after = scratch_dirs(work)
    removed_line = next((line for line in err2.splitlines() if "left by a killed run" in line), "")
    ok = (status == -signal.SIGKILL and bool(left) and all(m == "0o700" for _, m, _ in left_facts)
          and status2 == 0 and not after and bool(removed_line) and not out.exists())
    name, dir_mode, n_files = left_facts[0] if left_facts else ("-", "-", 0)
    size = seen[0][3] if seen else 0  # the scratch as it was at the kill
    now = (f"killed (status {status}): left {name} (mode {dir_mode}, {n_files} files, {size / 1e6:.1f} MB of "
           f"counts and user indices), no --out; the next run (exit {status2}) logged "
           f"`{removed_line.strip().replace(str(ws.root) + '/', '')}` and left no scratch directory")
    return Row(f"SIGKILL {PASSES[shards]}, then a second run", shown(cmd, ws) + f"; kill -KILL {WHEN[shards]}; then "
               + shown(rerun, ws), now, ok, status, seconds + seconds2)


def case_sigkill_mid_write(ws, attempts: int = 6) -> Row:
    """Kill -9 while the release file is written: a wide public vocabulary makes a release of 2.4 MB; the kill is
    sent as soon as this run's temporary beside --out appears (the first two attempts) or holds data (the
    others). Odd attempts replace an earlier release (--overwrite), even ones write a new path."""
    out, old = ws.root / "wide.json", ws.root / "earlier.json"
    status0, _, _, seconds = run(command("privatize", ws.corpus, *RELEASE, "--vocabulary", ws.words, "--out", old,
                                         "--overwrite"), ws.root)
    cmd = command("privatize", ws.corpus, "--topics", "10", "--epsilon", "8", "--delta", "1e-5", "--release-anyway",
                  "--seed", "0", "--vocabulary", ws.wide, "--out", out, "--overwrite")
    outcomes: list[tuple[str, str, list]] = []
    for attempt in range(attempts):
        replacing, with_data = attempt % 2 == 1, attempt >= 2
        if replacing:
            shutil.copyfile(old, out)
        else:
            out.unlink(missing_ok=True)
        before = set(temporaries(ws.root))

        def mine(with_data=with_data, before=before) -> bool:
            return any(t not in before and (not with_data or t.stat().st_size > 0) for t in temporaries(ws.root))

        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ws.root, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        caught = _wait_for(mine, proc, 180, poll=0.0005)
        proc.kill()
        proc.wait()
        seconds += time.perf_counter() - start
        left = [(t.stat().st_size, mode(t)) for t in temporaries(ws.root) if t not in before]
        if not out.exists():
            state = "absent"
        elif out.read_bytes() == old.read_bytes():
            state = "the earlier release, unchanged"
        else:
            state = "the new release, complete" if is_release(out) else "BROKEN"
        outcomes.append(("replacing" if replacing else "new path", state if caught else "missed: " + state, left))
    # the next write to the same path removes the temporaries the killed runs left
    rerun = command("privatize", ws.corpus, *RELEASE, "--vocabulary", ws.words, "--out", out, "--overwrite")
    status2, _, _, seconds2 = run(rerun, ws.root)
    expected = {"new path": "absent", "replacing": "the earlier release, unchanged"}
    ok = (status0 == 0 and all(state == expected[kind] for kind, state, _ in outcomes) and status2 == 0
          and is_release(out) and not temporaries(ws.root))
    sizes = sorted(size for _, _, left in outcomes for size, _ in left)
    modes = sorted({m for _, _, left in outcomes for _, m in left})
    by_kind = {kind: sorted({state for k, state, _ in outcomes if k == kind}) for kind in expected}
    now = (f"{attempts} kills while this run's temporary existed: a new --out was {' / '.join(by_kind['new path'])} "
           f"every time, a replaced one {' / '.join(by_kind['replacing'])}: never partial; the temporaries left "
           f"(hidden, beside --out) held {sizes} bytes, mode {modes}; the next write to that "
           f"path (exit {status2}) removed them and wrote a complete release")
    return Row("kill -9 while the release file is written", shown(cmd, ws) + "; kill -KILL when its "
               "`.wide.json.tmp-*` appears or holds data; then " + shown(rerun, ws), now, ok, None, seconds + seconds2)


def _two_at_once(ws, overwrite: bool, wide: bool = True) -> Row:
    """Two releases started together on one --out (epsilon 8 and 9, so the file says whose it is); ``wide``: of
    2.4 MB each (the wide word list), so that the two writes take long enough to overlap."""
    out = ws.root / ("both-overwrite.json" if overwrite else "both.json")
    out.unlink(missing_ok=True)
    cmds = [command("privatize", ws.corpus, "--topics", "10" if wide else "3", "--epsilon", epsilon, "--delta",
                    "1e-5", "--release-anyway", "--seed", "0", "--vocabulary", ws.wide if wide else ws.words,
                    "--out", out, *(["--overwrite"] if overwrite else [])) for epsilon in (8, 9)]
    start = time.perf_counter()
    procs = [subprocess.Popen(c, cwd=ws.root, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for c in cmds]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    seconds = time.perf_counter() - start
    statuses = sorted(s for s, _ in results)
    complete = is_release(out)
    winner = json.loads(out.read_text())["report"]["epsilon"] if complete else None  # which run wrote it
    refused = [last_line(e).replace(str(ws.root) + "/", "") for s, e in results if s != 0]
    size = out.stat().st_size if out.exists() else 0
    if overwrite:
        ok = statuses == [0, 0] and complete and winner in (8, 9)
        now = (f"exits {statuses}; --out is one complete release of {size} bytes (the epsilon={winner} run's: the "
               "last rename won), never a mix")
    else:
        ok = statuses == [0, 2] and complete and winner in (8, 9) and "--overwrite" in refused[0]
        now = (f"exits {statuses}: the first to finish wrote a complete release of {size} bytes (the "
               f"epsilon={winner} run's); the other was refused at the rename: `{refused[0] if refused else ''}`")
    ok = ok and not temporaries(ws.root)
    return Row(f"two runs at once on one --out, {'with' if overwrite else 'without'} --overwrite",
               "two at once: " + shown(cmds[0], ws).replace("--epsilon 8", "--epsilon 8|9"), now, ok, None, seconds)


def case_two_runs_without_overwrite(ws):
    return _two_at_once(ws, overwrite=False)


def case_two_runs_with_overwrite(ws):
    return _two_at_once(ws, overwrite=True)


CASES = [case_out_is_diagnostics, case_out_is_corpus, case_out_into_shards, case_out_is_html, case_plot_is_diagnostics,
         case_diagnostics_is_vocabulary, case_html_is_reference, case_symlinked_out, case_demo_out_is_plot,
         case_audit_plot_is_corpus, case_compare_out_is_corpus, case_existing_without_overwrite,
         case_existing_with_overwrite, case_sigkill_mid_write, case_sigterm_mid_pass, case_sigint_mid_pass,
         case_sigterm_in_dpvem, case_sigint_in_dpvem, case_sighup_in_dpvem, case_sigkill_mid_pass_then_rerun,
         case_two_runs_without_overwrite, case_two_runs_with_overwrite]


def table(rows: list[Row]) -> str:
    lines = ["| case | what happens now (measured) | as designed | command |", "|---|---|---|---|"]
    for r in rows:
        cell = r.now.replace("|", "\\|")
        shown_command = r.command.replace("|", "/").replace("`", "'")
        lines.append(f"| {r.case} | {cell} | {'yes' if r.ok else '**NO**'} | `{shown_command}` |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=None, help="workspace directory (default: a new temporary directory)")
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    ap.add_argument("--only", default=None, help="comma-separated case function names")
    ap.add_argument("--code", default=None, help="run the topicdp package found in this directory (PYTHONPATH), "
                    "e.g. an older tree from `git archive COMMIT topicdp`, to see what happened before")
    a = ap.parse_args(argv)
    if a.code:
        ENV["PYTHONPATH"] = a.code
    import tempfile

    ws = make_workspace(a.root or tempfile.mkdtemp(prefix="fault-cases-"))
    chosen = [c for c in CASES if a.only is None or c.__name__ in a.only.split(",")]
    rows = []
    for case in chosen:
        row = case(ws)
        rows.append(row)
        print(f"{'ok ' if row.ok else 'NO '} {row.case}: {row.now} ({row.seconds:.1f} s)", flush=True)
    text = table(rows)
    print("\n" + text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
