"""``topicdp compare --quick`` on 1,200 bloggers: its wall time, its table's last line, and the owner's exact scores.

Two samples: A from blogs, B from blogs-more (disjoint bloggers). Each holds 1,200 private bloggers and a disjoint
1,200-blogger public reference P, cut by a hash of the user id (the bloggers sorted by SHA-256 of ``salt \\0 id``:
the first 1,200 private, the next 1,200 P). The command runs as a user types it (a subprocess, timed); then the
published rows are set beside the owner's exact scores of the same lists on the held-out bloggers
(``diagnostics.jsonl``, not for publication) to say whether the recommendation names the DP road that measured best.

Run (about 5 minutes a sample on 2 quiet cores)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/compare_quick.py --work /tmp/quick --samples A B

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data
from _data import BLOGS, BLOGS_MORE, ROOT, available  # noqa: E402

SAMPLES = {"A": (BLOGS, "quick-a"), "B": (BLOGS_MORE, "quick-b")}
N = 1200


def cut(source: Path, salt: str, private: Path, public: Path) -> None:
    """The first N bloggers by hash private, the next N public."""
    posts: dict = {}
    with gzip.open(source, "rt", encoding="utf-8") as fh:
        for line in fh:
            posts.setdefault(json.loads(line)["user"], []).append(line)
    order = sorted(posts, key=lambda u: hashlib.sha256(f"{salt}\0{u}".encode()).hexdigest())
    for path, users in ((private, order[:N]), (public, order[N:2 * N])):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            for u in users:
                fh.writelines(posts[u])


def run(work: Path, name: str) -> dict:
    source, salt = SAMPLES[name]
    private, public, out = work / f"{name}_private.jsonl.gz", work / f"{name}_public.jsonl.gz", work / f"run{name}"
    if not private.exists():
        cut(source, salt, private, public)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "topicdp.cli", "compare", str(private), "--reference", str(public), "--quick",
            "--out", str(out), "--overwrite"]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"sample {name}: compare failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return {"sample": name, "seconds": seconds, **best(out)}


def best(out: Path) -> dict:
    """The published last line, and the best released DP and random-DP rows by the owner's exact contrast."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line]
    exact = {(e["unit"], e["road"], e["epsilon"]): e
             for e in map(json.loads, (out / "diagnostics.jsonl").read_text().splitlines())}
    scored = []
    for r in rows:
        key = (r["unit"], r["road"], r["epsilon"])
        if key in exact and r["status"] == "released" and not r.get("forced"):
            x = exact[key]
            scored.append({"unit": r["unit"], "road": r["road"], "exact_contrast": round(x["contrast"], 4),
                           "exact_npmi": round(x["npmi"], 4), "forecast": r.get("forecast"),
                           "evaluated": "evaluation" in r,
                           "interval_refused": bool((r.get("evaluation") or {}).get("interval_refused"))})
    dp = [s for s in scored if not s["road"].startswith("random-dp")]
    pick = lambda rs: max(rs, key=lambda s: s["exact_contrast"]) if rs else None  # noqa: E731
    return {"recommendation": (out / "table.md").read_text().splitlines()[-1], "released": scored,
            "best_dp": pick(dp), "best_dp_user": pick([s for s in dp if s["unit"] == "user"]),
            "best_overall": pick(scored)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="directory for the samples and runs (not the repository)")
    p.add_argument("--samples", nargs="+", default=["A", "B"], choices=sorted(SAMPLES))
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    args = p.parse_args(argv)
    if not available(BLOGS, BLOGS_MORE):
        print("skipped: ../shared/data/blogs or blogs-more is absent")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    results = [run(args.work, name) for name in args.samples]
    for r in results:
        print(f"sample {r['sample']}: {r['seconds'] / 60:.1f} min; best DP by exact contrast {r['best_dp']}; "
              f"best overall {r['best_overall']}\n  {r['recommendation']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
