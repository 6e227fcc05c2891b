"""The compare case: dp-vem, gaussian-global and dpsvi at epsilon 3 (document level) on a few hundred bloggers, each
scored privately on the held-out users, beside the exact values of the owner's diagnostics (one measure).

The private corpus is the first ``--bloggers`` bloggers of blogs (file order), the public reference bloggers 2,000 to
3,500; both are written to ``--work`` (not the repository). Run (about 3 minutes)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/private_interval_compare_case.py --work /tmp/compare_case

Skips (exit 0, with a message) where the data set is absent.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS  # noqa: E402


def main() -> int:
    from topicdp.experiments.compare import CompareSettings, compare

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="a scratch folder for the corpus files and the outputs")
    ap.add_argument("--bloggers", type=int, default=764)
    ap.add_argument("--blogs", type=Path, default=BLOGS)
    args = ap.parse_args()
    if not args.blogs.exists():
        print(f"skipped: {args.blogs} is absent")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    users: dict = collections.OrderedDict()
    with gzip.open(args.blogs, "rt") as fh:
        for line in fh:
            users.setdefault(json.loads(line)["user"], []).append(line)
    keys = list(users)
    for name, chosen in (("private", keys[:args.bloggers]), ("reference", keys[2000:3500])):
        with gzip.open(args.work / f"{name}.jsonl.gz", "wt") as fh:
            for k in chosen:
                fh.writelines(users[k])
    settings = CompareSettings(unit="document", epsilons=(3.0,), n_topics=10, random_dp=False, simulate=False,
                               ceiling=False, seed=0, roads=("dp-vem", "gaussian-global", "dpsvi"))
    out = args.work / "out"
    compare(str(args.work / "private.jsonl.gz"), out, settings, reference=str(args.work / "reference.jsonl.gz"))
    exact = {d["road"]: d for d in map(json.loads, (out / "diagnostics.jsonl").read_text().splitlines())}
    for row in map(json.loads, (out / "results.jsonl").read_text().splitlines()):
        e = row.get("evaluation")
        if e:
            print(f"{row['road']}: exact NPMI {exact[row['road']]['npmi']:+.3f}, private {e['mean_npmi']:+.3f} "
                  f"{e['mean_npmi_interval']}; exact contrast {exact[row['road']]['contrast']:+.3f}, private "
                  f"{e['mean_contrast']:+.3f} {e['mean_contrast_interval']}; refused: {e['interval_refused']}")
    print((out / "diagnostics.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
