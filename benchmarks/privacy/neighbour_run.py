"""A neighbour run of ``topicdp privatize``: a generated corpus of 38 users and the same corpus minus one user,
released with the same flags and noise seed, printing what each decided and published.

The number of users is private (add/remove neighbours), so the plan reads a DP count: with the same seed the two
counts differ by exactly the one user, and the decisions (plan, forecast, refusal or release) follow from those
DP outputs only. Run::

    python benchmarks/privacy/neighbour_run.py --epsilon 3
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epsilon", default="3")
    ap.add_argument("--users", type=int, default=38)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    words = [f"zq{a}{b}{c}" for a in "abcdefgh" for b in "abcdefgh" for c in "abcd"]
    tmp = Path(tempfile.mkdtemp())
    (tmp / "words.txt").write_text("\n".join(words) + "\n")
    n = args.users
    rows = [(f"u{i % n:03d}", " ".join(rng.choice(words[(i % 4) * 64:(i % 4) * 64 + 64], 40))) for i in range(n * 4)]
    last = f"u{n - 1:03d}"
    for name, records in ((f"D ({n} users)", rows), (f"D' ({n - 1} users)", [r for r in rows if r[0] != last])):
        (tmp / "corpus.jsonl").write_text("".join(json.dumps({"user": u, "text": t}) + "\n" for u, t in records))
        out = tmp / "release.json"
        out.unlink(missing_ok=True)
        run = subprocess.run([sys.executable, "-m", "topicdp.cli", "privatize", str(tmp / "corpus.jsonl"),
                              "--vocabulary", str(tmp / "words.txt"), "--topics", "4", "--epsilon", args.epsilon,
                              "--seed", "7", "--out", str(out)], capture_output=True, text=True)
        print(f"== {name}: exit {run.returncode}")
        for line in run.stdout.splitlines():
            if line.startswith(("request", "plan:", "  forecast dp-vem")):
                print("  " + line)
        if run.returncode:
            print("  " + run.stderr.strip().splitlines()[-1])
        else:
            report = json.loads(out.read_text())["report"]
            print(f"  published: mechanism {report['mechanism']}, neighbours {report['neighbours']}, "
                  f"plan.n_units {report['details']['plan']['n_units']} "
                  f"({report['published']['report.details.plan.n_units'].split(':')[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
