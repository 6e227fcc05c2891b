"""Streaming spectral fit: peak memory on a 1,000,000-document corpus (d = 20,000, k = 20), vs in memory.

    OPENBLAS_NUM_THREADS=1 python benchmarks/speed/bench_streaming.py \
        [--n-docs 1000000] [--n-words 20000] [--n-topics 20] [--docs-per-shard 50000] \
        [--compare-docs 100000] [--dask-workers 2] [--max-iter 300] [--data-dir /tmp/topicdp-bench-streaming]

Steps, each in its own subprocess whose peak RSS is read from the kernel (``os.wait4``: the child's own
``rusage``, i.e. what ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` reports for a single child):

1. generate the synthetic LDA corpus to ``.npz`` CSR shards, chunk by chunk (reused when the shards of the
   same configuration exist; its first measurement is kept in the manifest);
2. the streaming fit (``StreamingSpectralLDA``, this directory's ``streaming_spectral.py``) on all documents --
   the figure that must stay under 4 GB;
3. on the first ``--compare-docs`` documents: the streaming fit, the in-memory ``SpectralLDA`` (all
   shards stacked in RAM), and the streaming fit on a Dask LocalCluster of ``--dask-workers`` processes;
   printed as ratios, with the largest difference between the streamed and in-memory topics.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

GB = 1024**3
MB = 1024**2


# -- children -------------------------------------------------------------------------------------


def child_generate(a) -> dict:
    """Shards of ``docs_per_shard`` documents drawn from one fixed LDA model (never all in memory)."""
    import numpy as np

    from topicdp.datasets import synthetic_lda
    from topicdp.streaming import write_npz_shard

    out = Path(a.data_dir)
    out.mkdir(parents=True, exist_ok=True)
    truth = synthetic_lda(1, a.n_words, a.n_topics, alpha0=a.alpha0, random_state=a.seed)
    np.save(out / "topic_word.npy", truth.topic_word)
    np.save(out / "alpha.npy", truth.alpha)
    shards, nnz, tokens = [], 0, 0
    for i, start in enumerate(range(0, a.n_docs, a.docs_per_shard)):
        n = min(a.docs_per_shard, a.n_docs - start)
        X = synthetic_lda(n, a.n_words, a.n_topics, topic_word=truth.topic_word, alpha=truth.alpha,
                          random_state=a.seed + 1 + i, chunk_size=n).X
        shards.append(write_npz_shard(out / f"shard-{i:05d}.npz", X).name)
        nnz, tokens = nnz + X.nnz, tokens + int(X.sum())
    return {"shards": shards, "nnz": nnz, "tokens": tokens,
            "bytes_on_disk": sum((out / s).stat().st_size for s in shards)}


def child_fit(a) -> dict:
    """One fit: ``streaming`` (locally or on Dask) or ``memory`` (SpectralLDA on the stacked shards)."""
    import numpy as np
    import scipy.sparse as sp

    from topicdp.metrics.recovery import recovery_error

    out = Path(a.data_dir)
    manifest = json.loads((out / "manifest.json").read_text())
    n_shards = -(-a.fit_docs // a.docs_per_shard)
    paths = [out / s for s in manifest["shards"][:n_shards]]
    vocabulary = [f"w{i}" for i in range(a.n_words)]
    t0 = time.perf_counter()
    if a.mode == "memory":
        from topicdp.spectral.estimator import SpectralLDA

        X = sp.vstack([sp.load_npz(p) for p in paths], format="csr")
        model = SpectralLDA(a.n_topics, a.alpha0, random_state=0, max_iter=a.max_iter).fit(X)
        passes = None
    else:
        from streaming_spectral import StreamingSpectralLDA  # beside this script, on sys.path
        from topicdp.streaming import StreamingCorpus

        stream = StreamingCorpus.from_npz(paths, vocabulary=vocabulary, chunk_size=a.chunk_size)
        if a.mode == "dask":
            from topicdp.streaming import dask_client

            with dask_client(n_workers=a.dask_workers, threads_per_worker=1, processes=True) as client:
                client.run(_warm_up)
                t0 = time.perf_counter()  # cluster start-up and imports on the workers are not part of the fit
                model = StreamingSpectralLDA(a.n_topics, a.alpha0, random_state=0, max_iter=a.max_iter,
                                             client=client).fit(stream)
        else:
            model = StreamingSpectralLDA(a.n_topics, a.alpha0, random_state=0, max_iter=a.max_iter).fit(stream)
        passes = model.n_passes_
    wall = time.perf_counter() - t0
    np.save(out / f"topics-{a.mode}-{a.fit_docs}.npy", model.topic_word_)
    truth = np.load(out / "topic_word.npy")
    return {"seconds": wall, "passes": passes, "n_documents": model.n_documents_,
            "recovery_l1": recovery_error(model.topic_word_, truth), "timings": model.timings_}


def _warm_up():
    import streaming_spectral  # noqa: F401  (imports on the workers, once)


# -- parent ---------------------------------------------------------------------------------------


def run_child(a, *extra) -> tuple[dict, float, int]:
    """Run this script as a child; return (its JSON result, wall seconds, peak RSS in bytes)."""
    args = [sys.executable, __file__, *extra] + [f"--{k.replace('_', '-')}={v}" for k, v in vars(a).items()
                                                 if k not in ("child", "mode", "fit_docs") and v is not None]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage (ru_maxrss in KiB on Linux)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"child {' '.join(extra)} failed with exit code {proc.returncode}")
    return json.loads(stdout.strip().splitlines()[-1]), wall, usage.ru_maxrss * 1024


def ensure_corpus(a) -> dict:
    path = Path(a.data_dir) / "manifest.json"
    config = {k: getattr(a, k) for k in ("n_docs", "n_words", "n_topics", "docs_per_shard", "alpha0", "seed")}
    if path.exists():
        manifest = json.loads(path.read_text())
        if manifest["config"] == config and all((Path(a.data_dir) / s).exists() for s in manifest["shards"]):
            manifest["cached"] = True
            return manifest
    print(f"generating {a.n_docs:,} documents to {a.data_dir} ...", flush=True)
    result, wall, rss = run_child(a, "--child=generate")
    manifest = {"config": config, **result, "generate_seconds": wall, "generate_peak_rss": rss, "cached": False}
    path.write_text(json.dumps(manifest))
    return manifest


def fit(a, mode: str, n_docs: int) -> dict:
    print(f"fit: {mode} on {n_docs:,} documents ...", flush=True)
    result, wall, rss = run_child(a, "--child=fit", f"--mode={mode}", f"--fit-docs={n_docs}")
    return {**result, "process_seconds": wall, "peak_rss": rss, "mode": mode, "docs": n_docs}


LOAD = os.getloadavg()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-docs", type=int, default=1_000_000)
    ap.add_argument("--n-words", type=int, default=20_000)
    ap.add_argument("--n-topics", type=int, default=20)
    ap.add_argument("--alpha0", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--docs-per-shard", type=int, default=50_000)
    ap.add_argument("--chunk-size", type=int, default=10_000)
    ap.add_argument("--compare-docs", type=int, default=100_000)
    ap.add_argument("--dask-workers", type=int, default=2, help="0: skip the Dask run")
    ap.add_argument("--max-iter", type=int, default=300, help="eigen-solver passes (small: randomized range finder)")
    ap.add_argument("--data-dir", default="/tmp/topicdp-bench-streaming")
    ap.add_argument("--child", choices=["generate", "fit"], help=argparse.SUPPRESS)
    ap.add_argument("--mode", choices=["streaming", "memory", "dask"], help=argparse.SUPPRESS)
    ap.add_argument("--fit-docs", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child_generate(a) if a.child == "generate" else child_fit(a)))
        return

    manifest = ensure_corpus(a)
    compare = min(a.compare_docs, a.n_docs)
    runs = [fit(a, "streaming", a.n_docs), fit(a, "streaming", compare), fit(a, "memory", compare)]
    if a.dask_workers:
        runs.append(fit(a, "dask", compare))
    report(a, manifest, runs, compare)


def report(a, manifest, runs, compare):
    import numpy as np

    gen = "(cached: measured when generated)" if manifest["cached"] else ""
    print(f"\ncorpus: {a.n_docs:,} docs, d={a.n_words:,}, k={a.n_topics}, {manifest['tokens']:,} tokens, "
          f"nnz={manifest['nnz']:,}, {len(manifest['shards'])} shards, "
          f"{manifest['bytes_on_disk'] / MB:,.0f} MB on disk")
    print(f"generation: {manifest['generate_seconds']:.1f} s, "
          f"peak RSS {manifest['generate_peak_rss'] / MB:,.0f} MB {gen}")
    print(f"machine: {os.cpu_count()} CPUs, load average at start {LOAD[0]:.1f}, at end {os.getloadavg()[0]:.1f} "
          "(other jobs share the CPUs: speed-ups are bounded by the idle ones)")
    print(f"\n{'fit':<22}{'docs':>11}{'seconds':>10}{'passes':>8}{'peak RSS MB':>13}{'recovery L1':>13}")
    for r in runs:
        label = r["mode"] + (f" ({a.dask_workers} workers)" if r["mode"] == "dask" else "")
        rss = f"{r['peak_rss'] / MB:,.0f}" if r["mode"] != "dask" else "(client)"
        print(f"{label:<22}{r['docs']:>11,}{r['seconds']:>10.1f}{r['passes'] or '-':>8}{rss:>13}"
              f"{r['recovery_l1']:>13.4f}")
    full = runs[0]
    verdict = "PASS" if full["peak_rss"] < 4 * GB else "FAIL"
    print(f"\npeak RSS of the streaming fit on {a.n_docs:,} documents: {full['peak_rss'] / GB:.3f} GB "
          f"(limit 4 GB: {verdict})")
    by = {r["mode"]: r for r in runs[1:]}
    if "memory" in by:
        s, m = by["streaming"], by["memory"]
        diff = np.abs(np.load(Path(a.data_dir) / f"topics-streaming-{compare}.npy")
                      - np.load(Path(a.data_dir) / f"topics-memory-{compare}.npy")).max()
        print(f"at {compare:,} docs: in-memory / streaming peak RSS = {m['peak_rss'] / s['peak_rss']:.2f}x, "
              f"streaming / in-memory time = {s['seconds'] / m['seconds']:.2f}x, "
              f"max |topics difference| = {diff:.1e}")
    if "dask" in by:
        print(f"at {compare:,} docs: local streaming / Dask ({a.dask_workers} workers) time = "
              f"{by['streaming']['seconds'] / by['dask']['seconds']:.2f}x")
    print(f"streaming fit time per document at {a.n_docs:,}: {full['seconds'] / a.n_docs * 1e6:.1f} us; "
          f"generation: {manifest['generate_seconds'] / a.n_docs * 1e6:.1f} us")


if __name__ == "__main__":
    main()
