"""The persisted ledger measured through the ``topicdp`` command (docs/results/persisted_ledger.md).

Every run is ``topicdp privatize themed --vocabulary WORDS --epsilon E --delta 1e-6 --mechanism dp-vem --ledger L``
on the generated themed corpus (2,000 users x 5 documents, its public 197-word list written to a file), user
level, the number of users not stated (add/remove neighbours, a DP count) unless ``--n-units`` is shown.

1. a ledger of (3, 1e-5): a first run of 2.5 releases, a second is refused before reading the corpus;
2. two runs of 2.5 started together on a fresh ledger (``--races`` times): how many release;
3. three runs of 1.2 on a fresh ledger, then ``topicdp ledger show``;
4. ``kill -9`` at a uniform random time (up to 1.1 x the longest run of step 3) of ``--kills`` runs of 1.2 on a ledger of (1000, 1e-5): after each, the
   ledger is read (it must verify) and must count at least what the run's printed progress shows it drew;
5. a truncated, a shortened and an altered ledger are refused by ``topicdp ledger show``.

Usage: ``python benchmarks/privacy/persisted_ledger.py [--races 3] [--kills 20] [--seed 0] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOPICDP = [sys.executable, "-u", "-m", "topicdp.cli"]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


def privatize(ledger: str, words: str, eps: float, *extra: str, wait: bool = True):
    cmd = [*TOPICDP, "privatize", "themed", "--vocabulary", words, "--epsilon", str(eps), "--delta", "1e-6",
           "--mechanism", "dp-vem", "--n-jobs", "1", "--ledger", ledger, *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
    if not wait:
        return proc
    out, _ = proc.communicate()
    return proc.returncode, out


def create(ledger: str, eps: float = 3.0, neighbours: str = "add-remove") -> None:
    subprocess.run([*TOPICDP, "ledger", "create", ledger, "--epsilon", str(eps), "--delta", "1e-5", "--unit", "user",
                    "--neighbours", neighbours], check=True, env=ENV, capture_output=True)


def show(ledger: str) -> tuple[int, str]:
    done = subprocess.run([*TOPICDP, "ledger", "show", ledger], env=ENV, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def line(out: str, start: str) -> str:
    return next((x for x in out.splitlines() if x.startswith(start)), "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=3)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    from topicdp.datasets import themed_vocabulary
    from topicdp.rdp import PrivacyLedger

    work = tempfile.mkdtemp(prefix="persisted-ledger-")
    words = os.path.join(work, "words.txt")
    with open(words, "w") as fh:
        fh.write("\n".join(themed_vocabulary()))
    results: dict = {}

    # 1. first run releases, second refused before reading
    for label, neighbours, extra in (("count", "add-remove", ()), ("stated", "replace-one", ("--n-units", "2000"))):
        ledger = os.path.join(work, f"first-{label}.ledger")
        create(ledger, neighbours=neighbours)
        t0 = time.perf_counter()
        rc1, out1 = privatize(ledger, words, 2.5, *extra)
        t1 = time.perf_counter()
        rc2, out2 = privatize(ledger, words, 2.5, *extra)
        t2 = time.perf_counter()
        results[f"second_run_{label}"] = {
            "first_status": rc1, "first_total": line(out1, "dataset total"), "first_seconds": round(t1 - t0, 1),
            "second_status": rc2, "second_message": line(out2, "topicdp: error"), "second_seconds": round(t2 - t1, 1),
            "second_read_the_corpus": "corpus read" in out2}
        print(json.dumps(results[f"second_run_{label}"], indent=1))

    # 2. two at once on a fresh ledger
    races = []
    for r in range(args.races):
        ledger = os.path.join(work, f"race{r}.ledger")
        create(ledger)
        procs = [privatize(ledger, words, 2.5, wait=False) for _ in range(2)]
        codes = [p.wait() for p in procs]
        races.append({"statuses": codes, "released": codes.count(0), "runs_in_ledger": len(
            PrivacyLedger.open(ledger).file.summary(PrivacyLedger)["runs"])})
    results["races"] = races
    print(json.dumps(races))

    # 3. three runs of 1.2
    ledger = os.path.join(work, "three.ledger")
    create(ledger)
    three, seconds = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        three.append(privatize(ledger, words, 1.2)[0])
        seconds.append(time.perf_counter() - t0)
    results["three_runs"] = {"statuses": three, "seconds": [round(s, 1) for s in seconds], "show": show(ledger)[1]}
    print(results["three_runs"]["show"])

    # 4. kill -9 at random points
    rng = random.Random(args.seed)
    ledger = os.path.join(work, "kills.ledger")
    create(ledger, eps=1000.0)
    kills = []
    for k in range(args.kills):
        before = PrivacyLedger.open(ledger)
        n_before, eps_before = len(before.file.summary(PrivacyLedger)["runs"]), before.epsilon(1e-5, "exact")
        proc = privatize(ledger, words, 1.2, wait=False)
        delay = rng.uniform(0.2, 1.1 * max(seconds))  # anywhere from start-up to after the release
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        after = PrivacyLedger.open(ledger)  # must verify: a kill never leaves a torn file
        runs = after.file.summary(PrivacyLedger)["runs"]
        planned = "this run is planned" in out
        # what the printed progress shows was drawn: the DP count is drawn before the 'plan:' line, dp-vem's
        # releases before 'released:'; the plan itself was written before the 'ledger ...' line
        drawn = (["unit count", "dp-vem"] if "released:" in out else ["unit count"] if "\nplan: " in out else [])
        mine = runs[n_before] if len(runs) > n_before else None
        counted = []
        if mine is not None:
            state = after.file.state()
            rec = [r for r in state.records if r["run"] == mine["run"]][-1]
            counted = [e["name"] for e in rec["entries"]]
        ok = (not planned or mine is not None) and all(name in counted for name in drawn)
        kills.append({"delay": round(delay, 2), "status": proc.returncode, "planned_line": planned,
                      "drawn_by_output": drawn, "counted": counted, "run_status": mine and mine["status"],
                      "ledger_epsilon_before": round(eps_before, 4),
                      "ledger_epsilon_after": round(after.epsilon(1e-5, "exact"), 4), "ok": ok})
        print(json.dumps(kills[-1]))
    results["kills"] = {"runs": kills, "all_ok": all(k["ok"] for k in kills)}

    # 5. a file that cannot be trusted
    ledger = os.path.join(work, "three.ledger")
    with open(ledger, "rb") as fh:
        good = fh.read()
    tamper = {}
    for name, data in (("cut inside the last line", good[:-25]),
                       ("last line removed", b"".join(good.splitlines(keepends=True)[:-1])),
                       ("a count edited (7 -> 1 dp-vem releases)", good.replace(b'"count":7', b'"count":1', 1))):
        with open(ledger, "wb") as fh:
            fh.write(data)
        tamper[name] = show(ledger)
    with open(ledger, "wb") as fh:
        fh.write(good)
    tamper["restored"] = show(ledger)[0]
    results["tampered"] = tamper
    print(json.dumps(tamper, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
