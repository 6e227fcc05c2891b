"""How well the readability forecasts predict the measured overlap of dp-vem releases.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/forecast_validation.py [--data ../shared/data] \
        [--out docs/results/forecast_validation.md]

For each corpus, unit, start and epsilon of ``benchmarks/utility/utility_real.py`` (same split: 80% of users private,
the held-out 20% halved into the public reference and the evaluation users; the non-private top-2,000
vocabulary), two forecasts made from public quantities only are set against the measured matched top-10 overlap
with non-private gensim LDA (median of the seeds in ``docs/results/utility_<corpus>/results.jsonl``):

* closed form: :func:`topicdp.forecast.forecast` (Dirichlet(0.15) signal, or the public start's topics)
  times 0.55, the agreement of two non-private gensim fits on blog text -- what the tables' forecast column shows;
* simulation: :func:`topicdp.forecast.forecast_on_reference`, dp-vem run on the public reference at the
  private signal-to-noise ratio (median of 3 draws), against gensim LDA on the same reference.

The criterion: within a factor of 2 wherever either value is above 0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402

from topicdp.variational import DPVariationalEM  # noqa: E402
from topicdp.forecast import forecast_on_reference, public_init
from utility.utility_real import AGREEMENT, DELTA, K, load  # noqa: E402

from _data import SHARED  # noqa: E402

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
CORPORA = {"enron_sent": "utility_enron", "blogs": "utility_blogs"}


def measured(corpus: str) -> dict:
    """(unit, start, epsilon) -> (median measured overlap, median closed-form forecast x AGREEMENT)."""
    groups: dict = {}
    for line in (RESULTS / CORPORA[corpus] / "results.jsonl").open():
        r = json.loads(line)
        if r.get("mechanism") == "dp-vem" and r.get("vocabulary") == "nonprivate" and "overlap" in r:
            groups.setdefault((r["unit"], r.get("init", "random"), r["epsilon"]), []).append(
                (r["overlap"], AGREEMENT * r["forecast"]["expected_overlap"]))
    return {key: tuple(float(np.median(v)) for v in zip(*rows)) for key, rows in groups.items()}


def within_two(forecast: float, value: float) -> str:
    if max(forecast, value) <= 0.1:
        return "n/a (both <= 0.1)"
    ratio = forecast / value if value > 0 else float("inf")
    return f"{ratio:.2f} {'yes' if 0.5 <= ratio <= 2.0 else 'NO'}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(SHARED))
    p.add_argument("--out", default=str(RESULTS / "forecast_validation.md"))
    args = p.parse_args(argv)
    data = Path(args.data)
    rows = []
    for corpus in CORPORA:
        if not (data / corpus).exists():
            print(f"skipped {corpus}: {data / corpus} not found")
            continue
        train, _, public, _ = load(corpus, data, "nonprivate", None, "user")
        print(f"{corpus}: private {train}; public reference {public}", flush=True)
        truth = measured(corpus)
        for unit in ("document", "user"):
            n_units = train.n_users if unit == "user" else train.n_docs
            init = public_init(public, K, unit=unit)
            for start in ("public", "random"):
                for eps in (1.0, 3.0, 10.0):
                    if (unit, start, eps) not in truth:
                        continue
                    model = DPVariationalEM(K, epsilon=eps, delta=DELTA, unit=unit,
                                             n_iterations=2 if start == "public" else 5,
                                             init=init if start == "public" else None)
                    t0 = time.perf_counter()
                    simulated = forecast_on_reference(model, public, n_units).expected_overlap
                    overlap, closed = truth[(unit, start, eps)]
                    rows.append((corpus, unit, start, eps, overlap, closed, simulated, time.perf_counter() - t0))
                    print(rows[-1], flush=True)
    lines = ["# Readability forecasts against measured dp-vem releases", "",
             "Command: `OPENBLAS_NUM_THREADS=1 python benchmarks/utility/forecast_validation.py` (docstring: what each "
             "column is). Measured: median matched top-10 overlap with non-private gensim LDA over the seeds of "
             "`utility_<corpus>/results.jsonl`. Ratio = forecast / measured; the criterion is a factor of 2 wherever "
             "either is above 0.1.", "",
             "| corpus | unit | start | eps | measured | closed form x 0.55 | ratio | simulation on the reference | "
             "ratio | s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for corpus, unit, start, eps, overlap, closed, simulated, seconds in rows:
        lines.append(f"| {corpus} | {unit} | {start} | {eps:g} | {overlap:.2f} | {closed:.2f} | "
                     f"{within_two(closed, overlap)} | {simulated:.2f} | {within_two(simulated, overlap)} | "
                     f"{seconds:.0f} |")
    misses = {name: sum("NO" in within_two(f, r[4]) for r in rows for f in (r[5 if name == "closed" else 6],))
              for name in ("closed", "simulation")}
    lines += ["", f"Misses (outside 2x where either > 0.1): closed form {misses['closed']} of {len(rows)}, "
              f"simulation {misses['simulation']} of {len(rows)}."]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
