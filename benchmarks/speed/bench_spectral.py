"""Benchmark of the spectral backend against gensim, with peak memory, and config 1 at d = 20 000.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/speed/bench_spectral.py [--quick]``

Cells (N, d, k, alpha0), topics ~ Dirichlet(0.1), Poisson(100) lengths (``topicdp.datasets.synthetic_lda``):
  1: (10 000, 2 000, 10, 1)   vs gensim LdaModel (5 passes), same process, interleaved repeats
  2: (100 000, 5 000, 20, 1)  vs gensim LdaMulticore (2 workers, 5 passes), same process
  3: (100 000, 20 000, 50, 1)
  4: (1 000 000, 5 000, 20, 1)
  +  DPSpectralMoments configuration 1 at (100 000, 20 000, 20, 1), epsilon = 1, delta = 1e-6 (peak memory < 8 GB)

Time and recovery error are medians over interleaved repeats in one process per cell. Peak memory is
measured in a fresh subprocess per cell that loads the saved corpus and fits once: VmHWM of that
process (its peak resident set, including the corpus and the interpreter), next to the peak of a
process that only loads the corpus (the difference is what the fit adds). The corpus is loaded as a
float64 CSR matrix (int32 indices), the form the estimator computes with; an integer matrix would be
converted once, adding a copy of its data array.
``--quick`` shrinks every N by 10 (and the d = 20 000 cells' N by 10), one gensim repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from topicdp.datasets import synthetic_lda  # noqa: E402
from topicdp.metrics import recovery_error  # noqa: E402

CELLS = [
    {"name": "cell1", "N": 10_000, "d": 2_000, "k": 10, "alpha0": 1.0, "baseline": "LdaModel"},
    {"name": "cell2", "N": 100_000, "d": 5_000, "k": 20, "alpha0": 1.0, "baseline": "LdaMulticore"},
    {"name": "cell3", "N": 100_000, "d": 20_000, "k": 50, "alpha0": 1.0, "baseline": None},
    {"name": "cell4", "N": 1_000_000, "d": 5_000, "k": 20, "alpha0": 1.0, "baseline": None},
    {"name": "config1", "N": 100_000, "d": 20_000, "k": 20, "alpha0": 1.0, "baseline": None, "dp": 1},
]


def _save(path: Path, data) -> None:
    X = data.X.tocsr()
    np.savez(path, data=X.data.astype(np.int32), indices=X.indices, indptr=X.indptr, shape=X.shape,
             topic_word=data.topic_word, alpha=data.alpha)


def _load(path: Path):
    z = np.load(path)
    # float64 counts, the dtype the estimator computes with (an int matrix would be converted: one copy)
    X = sp.csr_matrix((z["data"].astype(np.float64), z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    return X, z["topic_word"], z["alpha"]


def _fit(cell: dict, X, seed: int):
    from topicdp.spectral import DPSpectralMoments, SpectralLDA

    if cell.get("dp"):
        return DPSpectralMoments(cell["k"], cell["alpha0"], cell["dp"], epsilon=1.0, delta=1e-6, unit="document", random_state=seed,
                          strict=False).fit(X)
    return SpectralLDA(cell["k"], cell["alpha0"], random_state=seed).fit(X)


def child(mode: str, cell: dict, path: str) -> None:
    """Run in a subprocess: load the corpus, optionally fit once, print peak RSS as JSON."""
    X, truth, _ = _load(Path(path))
    out = {}
    if mode == "fit":
        t = time.perf_counter()
        model = _fit(cell, X, 0)
        out["seconds"] = time.perf_counter() - t
        out["error"] = recovery_error(model.topic_word_, truth)
    out["peak_rss_mb"] = _peak_rss_mb()
    print(json.dumps(out))


def _peak_rss_mb() -> float:
    """Peak resident set of this process: VmHWM (Linux). ``ru_maxrss`` would also count the parent's
    resident set at fork time (Linux keeps the pre-exec high-water mark in ru_maxrss), so it is only the
    fallback."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _peak(mode: str, cell: dict, path: Path) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, __file__, "--child", mode, json.dumps(cell), str(path)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _gensim(kind: str, X, k: int, seed: int):
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel, LdaMulticore

    corpus = Sparse2Corpus(X, documents_columns=False)
    if kind == "LdaModel":
        model = LdaModel(corpus, num_topics=k, passes=5, random_state=seed)
    else:
        model = LdaMulticore(corpus, num_topics=k, passes=5, workers=2, random_state=seed)
    topics = model.get_topics()
    if topics.shape[1] < X.shape[1]:  # gensim sizes the vocabulary by the largest id seen
        topics = np.hstack([topics, np.zeros((k, X.shape[1] - topics.shape[1]))])
    return topics


def run_cell(cell: dict, repeats: int, gensim_repeats: int, tmp: Path) -> dict:
    t = time.perf_counter()
    data = synthetic_lda(cell["N"], cell["d"], cell["k"], alpha0=cell["alpha0"], random_state=1)
    gen_s = time.perf_counter() - t
    path = tmp / f"{cell['name']}.npz"
    _save(path, data)
    X = data.X.tocsr()
    spec_t, spec_e, base_t, base_e = [], [], [], []
    for rep in range(repeats):  # interleaved: spectral, baseline, spectral, baseline, ...
        t = time.perf_counter()
        model = _fit(cell, X, rep)
        spec_t.append(time.perf_counter() - t)
        spec_e.append(recovery_error(model.topic_word_, data.topic_word))
        if cell["baseline"] and rep < gensim_repeats:
            t = time.perf_counter()
            topics = _gensim(cell["baseline"], X, cell["k"], rep)
            base_t.append(time.perf_counter() - t)
            base_e.append(recovery_error(topics, data.topic_word))
        print(f"  {cell['name']} repeat {rep}: spectral {spec_t[-1]:.2f}s err {spec_e[-1]:.3f}"
              + (f" | {cell['baseline']} {base_t[-1]:.1f}s err {base_e[-1]:.3f}" if base_t and rep < gensim_repeats else ""),
              flush=True)
    load_only = _peak("load", cell, path)
    fitted = _peak("fit", cell, path)
    row = {**cell, "nnz": int(X.nnz), "generate_s": gen_s,
           "spectral_s": statistics.median(spec_t), "spectral_err": statistics.median(spec_e),
           "peak_rss_mb": fitted["peak_rss_mb"], "load_only_rss_mb": load_only["peak_rss_mb"],
           "subprocess_fit_s": fitted["seconds"]}
    if base_t:
        row.update({"baseline_s": statistics.median(base_t), "baseline_err": statistics.median(base_e),
                    "speedup": statistics.median(base_t) / statistics.median(spec_t)})
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--gensim-repeats", type=int, default=None)
    p.add_argument("--cells", default="cell1,cell2,cell3,cell4,config1")
    p.add_argument("--json", default=None, help="write the rows to this file")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child[0], json.loads(args.child[1]), args.child[2])
        return 0
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("note: run with OPENBLAS_NUM_THREADS=1 (shared 2-core machine)", file=sys.stderr)
    gensim_repeats = args.gensim_repeats if args.gensim_repeats is not None else (1 if args.quick else 2)
    wanted = args.cells.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cell in CELLS:
            if cell["name"] not in wanted:
                continue
            cell = dict(cell)
            if args.quick:
                cell["N"] //= 10
            print(f"{cell['name']}: N={cell['N']} d={cell['d']} k={cell['k']} alpha0={cell['alpha0']}"
                  + (f" (DPSpectralMoments config {cell['dp']}, eps=1, delta=1e-6)" if cell.get("dp") else ""), flush=True)
            rows.append(run_cell(cell, args.repeats, gensim_repeats, Path(tmp)))
    print()
    hdr = f"{'cell':8} {'N':>9} {'d':>6} {'k':>3} {'nnz':>10} {'time s':>8} {'error':>6} {'peakMB':>8} {'loadMB':>7} | {'baseline':12} {'time s':>7} {'error':>6} {'speedup':>7}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        base = (f"{r['baseline']:12} {r['baseline_s']:7.1f} {r['baseline_err']:6.3f} {r['speedup']:6.0f}x"
                if "baseline_s" in r else "")
        print(f"{r['name']:8} {r['N']:9d} {r['d']:6d} {r['k']:3d} {r['nnz']:10d} {r['spectral_s']:8.2f} "
              f"{r['spectral_err']:6.3f} {r['peak_rss_mb']:8.0f} {r['load_only_rss_mb']:7.0f} | {base}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
