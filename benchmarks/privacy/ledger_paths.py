"""Every way to reach one ledger, through the ``topicdp`` command (docs/results/ledger_paths.md).

Each scenario starts a fresh document-level ledger of (3, 1e-5) under add/remove neighbours and makes its runs with
``topicdp privatize`` (a generated dated corpus: the themed corpus, 300 users x 4 documents, each with a ``date``
and a ``posted`` field in April to June 2004; its public 197-word list; dp-vem, K = 5, ``--release-anyway`` so that
a run is stopped by the ledger or not at all). For each it prints what happened and two totals:

* the ledger's own (``topicdp ledger show`` through the real path), and
* an independent one: dp-accounting's PLD accountant over every entry of every run in the file (the completed
  entries of a run, or its last planned ones where it never completed) that one document could be in, maximised
  over every document the corpus could hold (a date and a posted month each in April to June; a single release
  reads every document, a period's release those of its period by its date field). This reads the raw JSON of
  the file and the scenario's own list of what each command released: nothing of the ledger's composition code.

Usage: ``python benchmarks/privacy/ledger_paths.py [--out docs/results/ledger_paths.md]`` (about two minutes); the code
before a change: ``PYTHONPATH=WORKTREE python benchmarks/privacy/ledger_paths.py`` with WORKTREE a checkout of it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

TOPICDP = [sys.executable, "-u", "-m", "topicdp.cli"]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
BUDGET = (3.0, 1e-5)
MONTHS = ("2004-04", "2004-05", "2004-06")
QUARTER = {"2004-04": "2004Q2", "2004-05": "2004Q2", "2004-06": "2004Q2"}


def write_corpus(directory: str) -> tuple[str, str]:
    """The dated corpus and its public word list; a document's ``posted`` month is the one after its ``date``."""
    from topicdp.datasets import themed_corpus, themed_vocabulary

    corpus, _ = themed_corpus(n_users=300, docs_per_user=4)
    vocabulary, X = list(corpus.vocabulary), corpus.X.tocsr()
    path = os.path.join(directory, "dated.jsonl")
    with open(path, "w") as fh:
        for i in range(X.shape[0]):
            row = X.getrow(i)
            text = " ".join(vocabulary[j] for j, n in zip(row.indices, row.data) for _ in range(int(n)))
            fh.write(json.dumps({"user": int(corpus.doc_users[i]), "date": f"{MONTHS[i % 3]}-0{1 + i % 9}",
                                 "posted": f"{MONTHS[(i + 1) % 3]}-01", "text": text}) + "\n")
    words = os.path.join(directory, "words.txt")
    with open(words, "w") as fh:
        fh.write("\n".join(themed_vocabulary()) + "\n")
    return path, words


@dataclass
class Command:
    """One ``topicdp privatize`` call and what it releases: ``None`` (a single release: every document) or a
    series (its date field, period kind, and labels, one run each, in order)."""

    ledger: str
    epsilon: float
    series: tuple[str, str, tuple[str, ...]] | None = None
    corpus: str = ""
    outcome: str = ""
    out: str = ""
    mechanism: str | None = "dp-vem"
    extra: list = field(default_factory=list)

    def argv(self, words: str) -> list:
        cmd = [*TOPICDP, "privatize", self.corpus, "--unit", "document", "--topics", "5", "--vocabulary", words,
               "--epsilon", str(self.epsilon), "--delta", "1e-6", "--release-anyway", "--n-jobs", "1",
               "--ledger", self.ledger, "--out", self.out, *self.extra]
        if self.mechanism is not None:
            cmd += ["--mechanism", self.mechanism]
        if self.series is not None:
            date_field, kind, labels = self.series
            cmd += ["--period", kind, "--periods", f"{labels[0]}:{labels[-1]}", "--date-field", date_field]
        return cmd


def run(command: Command, words: str, directory: str, *, wait: bool = True):
    command.out = tempfile.mkdtemp(dir=directory) + "/release.json"
    proc = subprocess.Popen(command.argv(words), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=ENV, cwd=directory)
    if not wait:
        return proc
    text, _ = proc.communicate()
    command.outcome = summarise(command, proc.returncode, text)
    return proc


def summarise(command: Command, code: int, text: str) -> str:
    """What a user saw: the exit code, the release files written, the periods refused, the last error line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    stem = command.out[: -len(".json")]
    written = [p for p in [command.out] + [f"{stem}.{label}.json" for label in (command.series or ("", "", ()))[2]]
               if os.path.exists(p)]
    refused = [ln for ln in lines if ln.startswith("period ") and " refused" in ln]
    errors = [ln for ln in lines if ln.startswith("topicdp: error")]
    said = f"exit {code}: {len(written)} release(s) written"
    if refused:
        said += f", {len(refused)} period(s) refused ({refused[0][:100]})"
    if errors:
        said += f"; {errors[-1][len('topicdp: error: '):][:120]}"
    return said


# -- the independent account --------------------------------------------------------------------------------------

def file_runs(path: str) -> list[tuple[str, list]]:
    """The runs of a ledger file in order of first appearance: each run's output file (its id where it wrote none)
    and its effective entries (the completed ones, or the last planned ones where it never completed), raw JSON."""
    runs: dict[str, dict] = {}
    with open(path) as fh:
        for line in fh:
            record = json.loads(line)
            if record.get("type") in ("planned", "completed"):
                run = runs.setdefault(record["run"], {"output": record.get("output") or record["run"]})
                run[record["type"]] = record["entries"]
    return [(r["output"], r.get("completed", r.get("planned", []))) for r in runs.values()]


def pld_of(entry: dict):
    from dp_accounting import pld

    p = pld.privacy_loss_distribution
    kind = entry["kind"]
    if kind == "gaussian":
        if entry["sensitivity"] == 0:
            return None
        one = p.from_gaussian_mechanism(entry["sigma"] / entry["sensitivity"], value_discretization_interval=1e-4)
        return one.self_compose(int(entry.get("count", 1))) if entry.get("count", 1) > 1 else one
    if kind == "laplace":
        return p.from_laplace_mechanism(entry["scale"] / entry["sensitivity"], value_discretization_interval=1e-4)
    if kind in ("approx", "pure"):
        from dp_accounting.pld import common

        return p.from_privacy_parameters(common.DifferentialPrivacyParameters(entry["epsilon"],
                                                                              entry.get("delta", 0.0)))
    raise ValueError(f"no independent PLD for entry kind {kind!r}")


def independent_total(names: list[str], commands: list[Command]) -> float:
    """The worst document's epsilon at the budget's delta (dp-accounting PLD), over every document the corpus
    could hold (a date and a posted month each in April to June, or none usable), of everything the scenario released
    or may have drawn: each release file's own composition (its report), and for a run that wrote none (killed,
    stopped after its count, a series' count of its undated records) its entries in any file the scenario's ledger
    ``names`` lead to (every distinct file, so that a forked copy is counted too)."""
    by_output: dict[str, list] = {}
    files = {os.stat(name).st_ino: name for name in names if os.path.exists(name)}
    for name in files.values():
        for output, entries in file_runs(name):
            by_output[output] = entries
    for command in commands:
        stem = command.out[: -len(".json")]
        for path in [command.out] + [f"{stem}.{label}.json" for label in (command.series or ("", "", ()))[2]]:
            if os.path.exists(path):
                with open(path) as fh:
                    by_output[path] = json.load(fh)["report"]["composition"]

    def scope(output: str, entries: list) -> tuple[str, str, str | None] | None:
        undated = [e for e in entries if e.get("partition") == "no usable date"]
        if undated:  # a series' DP count of its records without a usable date: those documents only
            return json.loads(undated[0]["partitioning"])["date_field"], "count", None
        for command in commands:
            if command.series is not None and output.startswith(command.out[: -len(".json")] + "."):
                date_field, kind, _ = command.series
                return date_field, kind, output[len(command.out) - len(".json") + 1: -len(".json")]
        return None  # a single release: it read every document

    runs = [(scope(output, entries), entries) for output, entries in by_output.items()]
    worst = 0.0
    for date, posted in itertools.product(MONTHS + (None,), MONTHS + (None,)):  # None: no usable date
        months = {"date": date, "posted": posted}
        composed = None
        for part, entries in runs:
            if part is not None:
                date_field, kind, label = part
                month = months[date_field]
                if kind == "count" and month is None:
                    pass
                elif month is None or kind == "count" or (month if kind == "month" else QUARTER[month]) != label:
                    continue
            for entry in entries:
                if entry.get("gamma") is not None:
                    continue
                one = pld_of(entry)
                if one is not None:
                    composed = one if composed is None else composed.compose(one)
        if composed is not None:
            worst = max(worst, composed.get_epsilon_for_delta(BUDGET[1]))
    return worst


def ledger_says(path: str) -> str:
    """``topicdp ledger show``'s spent and remaining lines, or the first words of its refusal."""
    proc = subprocess.run([*TOPICDP, "ledger", "show", path], capture_output=True, text=True, env=ENV)
    if proc.returncode != 0:
        return "refused to open: " + proc.stderr.strip().splitlines()[-1].split(": ", 2)[-1][:90]
    lines = [ln.strip() for ln in proc.stdout.splitlines()]
    spent = next((ln.split()[1] for ln in lines if ln.startswith("spent")), "?")
    left = next((ln.split()[1] for ln in lines if ln.startswith("remaining")), "?")
    return f"spent {spent}, {left} left"


# -- the scenarios ------------------------------------------------------------------------------------------------

def create(path: str) -> None:
    subprocess.run([*TOPICDP, "ledger", "create", path, "--epsilon", str(BUDGET[0]), "--delta", str(BUDGET[1]),
                    "--unit", "document", "--neighbours", "add-remove"], check=True, capture_output=True, env=ENV)


def scenarios(directory: str, corpus: str, words: str) -> list[tuple[str, str, list[Command], str]]:
    rows = []

    def fresh(name: str) -> str:
        path = os.path.join(directory, name)
        create(path)
        return path

    def sequential(title: str, real: str, commands: list[Command]) -> None:
        for c in commands:
            c.corpus = c.corpus or corpus
            run(c, words, directory)
        rows.append((title, real, commands, ""))

    real = fresh("symlink.ledger")
    os.symlink(real, os.path.join(directory, "symlink.link"))
    sequential("a symbolic link, then the real path", real,
               [Command(os.path.join(directory, "symlink.link"), 2.5), Command(real, 2.5)])

    real = fresh("hard.ledger")
    os.link(real, os.path.join(directory, "hard.link"))
    sequential("a hard link, then the real path", real,
               [Command(os.path.join(directory, "hard.link"), 2.5), Command(real, 2.5)])

    real = fresh("copy.ledger")
    first = Command(real, 2.5, corpus=corpus)
    run(first, words, directory)
    shutil.copyfile(real, os.path.join(directory, "copy.nohead"))
    second = Command(os.path.join(directory, "copy.nohead"), 2.5, corpus=corpus)
    run(second, words, directory)
    rows.append(("a copy without its head", real, [first, second], "the copy's own total: "
                 + ledger_says(os.path.join(directory, "copy.nohead"))))

    real = fresh("cut.ledger")
    commands = [Command(real, 1.2, corpus=corpus) for _ in range(3)]
    for c in commands:
        run(c, words, directory)
    with open(real) as fh:
        lines = fh.readlines()
    with open(real, "w") as fh:  # cut at a line boundary after the first run, head removed
        fh.writelines(lines[:3])
    os.remove(real + ".head")
    after = Command(real, 2.5, corpus=corpus)
    run(after, words, directory)
    rows.append(("three runs, the file cut to one at a line boundary and its head removed", real,
                 commands + [after], ""))

    real = fresh("twonames.ledger")
    os.symlink(real, os.path.join(directory, "twonames.link"))
    both = [Command(real, 2.5, corpus=corpus), Command(os.path.join(directory, "twonames.link"), 2.5, corpus=corpus)]
    procs = [run(c, words, directory, wait=False) for c in both]
    for c, proc in zip(both, procs):
        text, _ = proc.communicate()
        c.outcome = summarise(c, proc.returncode, text)
    rows.append(("two names at once (the real path and a link, started together)", real, both, ""))

    real = fresh("kinds.ledger")
    sequential("a monthly series, then a quarterly series of the same documents", real,
               [Command(real, 2.5, series=("date", "month", MONTHS)),
                Command(real, 2.5, series=("date", "quarter", ("2004Q2",)))])

    real = fresh("fields.ledger")
    sequential("a monthly series by date, then one by another date field", real,
               [Command(real, 2.5, series=("date", "month", MONTHS)),
                Command(real, 2.5, series=("posted", "month", MONTHS))])

    real = fresh("files.ledger")
    other = os.path.join(directory, "dated-copy.jsonl")
    shutil.copyfile(corpus, other)
    sequential("a monthly series, then the same series of another file with the same documents", real,
               [Command(real, 2.5, series=("date", "month", MONTHS)),
                Command(real, 2.5, series=("date", "month", MONTHS), corpus=other)])
    return rows


def kills(directory: str, corpus: str, words: str) -> list[tuple[str, str, list[Command], str]]:
    """``kill -9`` of a run of 2.5 (the plan choosing its mechanism, so that its count and its topics are planned in
    lines of their own) as soon as its k-th line reaches the ledger (k = 1, 2, 3), then a run of 2.5."""
    rows = []
    for k in range(1, 4):
        real = os.path.join(directory, f"kill{k}.ledger")
        create(real)
        with open(real) as fh:
            base = len(fh.readlines())
        killed = Command(real, 2.5, corpus=corpus, mechanism=None)  # the plan chooses: count, then topics
        proc = run(killed, words, directory, wait=False)
        deadline = time.time() + 120
        while proc.poll() is None and time.time() < deadline:
            with open(real) as fh:
                if len(fh.readlines()) >= base + k:
                    proc.send_signal(signal.SIGKILL)
                    break
            time.sleep(0.005)
        proc.communicate()
        killed.outcome = f"killed after its line {k}" if proc.returncode == -signal.SIGKILL else "ran to its end"
        after = Command(real, 2.5, corpus=corpus)
        run(after, words, directory)
        rows.append((f"kill -9 once the run's line {k} is written, then another run", real, [killed, after], ""))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="write the table (Markdown) here")
    args = parser.parse_args(argv)
    out = None if args.out is None else os.path.abspath(args.out)
    directory = tempfile.mkdtemp(prefix="ledger-paths-")
    os.chdir(directory)  # every command runs here: the package it imports is the one on PYTHONPATH, if any
    corpus, words = write_corpus(directory)
    table = ["| way to reach the ledger | what happened | the ledger says | independent total (PLD) | within 3? |",
             "|---|---|---|---|---|"]
    for title, real, commands, note in scenarios(directory, corpus, words) + kills(directory, corpus, words):
        total = independent_total([real] + [c.ledger for c in commands], commands)
        happened = "; ".join(f"{i + 1}. {c.outcome}" for i, c in enumerate(commands))
        says = ledger_says(real) + (f" ({note})" if note else "")
        happened, says = happened.replace(directory + "/", ""), says.replace(directory + "/", "")
        row = f"| {title} | {happened} | {says} | {total:.4f} | {'yes' if total <= BUDGET[0] + 1e-9 else 'NO'} |"
        print(row, flush=True)
        table.append(row)
    shutil.rmtree(directory, ignore_errors=True)
    if out:
        with open(out, "w") as fh:
            fh.write("\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
