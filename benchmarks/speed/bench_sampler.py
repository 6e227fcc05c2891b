"""Sensitivity sampler cost: per-pair overhead, fit counts of both sizings, and (optionally) a real release.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/speed/bench_sampler.py [--pairs 40] [--repeats 3]
        [--blogs [--data-dir ../shared/data] [--sizings exchangeable,lambert-w] [--n-jobs 2]
         [--cache-dir DIR] [--out FILE.jsonl]]

1. Per-pair overhead. f is a CallableModel that sleeps 50 ms and returns a deterministic matrix (its
   corpus' smoothed word frequencies, K = 10 shifted copies), on a synthetic corpus of 1,000 users
   (10 documents of ~50 tokens each, 2,000 words). One fit time t is the median of direct calls to
   ``fit_topic_word`` on the corpus; the sampler then runs ``--pairs`` pairs on 1 and 2 workers (loky,
   after one warm-up run so that starting the worker processes is not counted; that cold start is printed
   separately). Printed: wall / (2h t / workers), the overhead ratio (target <= 1.1 at 2 workers
   on an idle machine), and the overhead per pair in ms.
2. Fit counts of Lambert-W and exchangeable sizing at gamma in {0.01, 0.05, 0.1, 0.2} (2h + 2 fits for a
   TopicDP release: f(D), the determinism check and the 2h pair fits).
3. ``--blogs``: wall times of a user-level TopicDP release (epsilon = 3, delta = 1e-6, gamma = 0.1) of
   gensim LDA (K = 10) on the blog corpus at ``--data-dir``/blogs (the utility tables' split: 80% of the
   users private, at most 20 posts each, 2,000 words; P = the public reference tenth), with each sizing,
   beside (2h + 2) x one fit / workers. Skips when the data is absent. About 2 h with Lambert-W sizing:
   run it on an idle machine. ``--cache-dir`` keeps the samples for ``utility_random_dp.py --model gensim-lda``.

Timings taken on a loaded machine are not for publication: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from topicdp import CallableModel, Corpus, TopicDP, make_model
from topicdp.datasets import synthetic_lda
from topicdp.samplers import PRIVATE_ORACLE, SIZINGS, SensitivitySampling, sample_sensitivity, sample_size

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
FIT_SLEEP = 0.05
N_TOPICS = 10


def sleepy_frequencies(corpus) -> np.ndarray:
    """50 ms of 'fitting', then K rows derived deterministically from the corpus' word counts."""
    time.sleep(FIT_SLEEP)
    freq = (np.asarray(corpus.X.sum(axis=0), dtype=float).ravel() + 1.0) / (corpus.n_tokens + corpus.n_words)
    return np.stack([np.roll(freq, k) for k in range(N_TOPICS)])


def synthetic_users(n_users: int = 1000, docs_per_user: int = 10, n_words: int = 2000) -> Corpus:
    X = synthetic_lda(n_users * docs_per_user, n_words, N_TOPICS, alpha0=1.0, mean_length=50, random_state=0).X
    users = np.arange(X.shape[0]) // docs_per_user
    return Corpus.from_matrix(X, [f"w{i}" for i in range(n_words)], users.tolist())


def overhead(args) -> None:
    corpus = synthetic_users()
    model = CallableModel(sleepy_frequencies, N_TOPICS, name="sleep-50ms")
    fit = statistics.median(_timed(lambda: model.fit_topic_word(corpus)) for _ in range(7))
    def sampling(seed, n_pairs=args.pairs):  # P resamples the corpus itself (the sampler's cost does not depend on P)
        return SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=n_pairs, insecure_testing=True, random_state=seed)

    cold = _timed(lambda: sample_sensitivity(model, corpus, sampling(999, n_pairs=2), n_jobs=2))
    walls = {1: [], 2: []}
    for rep in range(args.repeats):
        for n_jobs in ((1, 2) if rep % 2 == 0 else (2, 1)):  # interleaved, to share the machine's noise
            walls[n_jobs].append(_timed(lambda: sample_sensitivity(model, corpus, sampling(rep), n_jobs=n_jobs)))
    h = args.pairs
    build_cpu = _build_cpu(corpus)
    print(f"1. per-pair overhead: f sleeps {FIT_SLEEP * 1e3:.0f} ms; {corpus}, nnz {corpus.X.nnz}")
    print(f"   one fit t = {fit * 1e3:.1f} ms (median of 7); h = {h} pairs; {args.repeats} repeats (median)")
    print(f"   first 2-worker run (starts the worker processes, 2 pairs): {cold:.2f} s, not counted below")
    print("   workers  wall (s)  ideal 2h t / w (s)  ratio  overhead per pair (ms)")
    for n_jobs in (1, 2):
        wall = statistics.median(walls[n_jobs])
        ideal = 2 * h * fit / n_jobs
        per_pair = (wall - ideal) * n_jobs / h * 1e3
        print(f"   {n_jobs:>7}  {wall:8.2f}  {ideal:18.2f}  {wall / ideal:5.3f}  {per_pair:22.1f}")
    print("   CPU time to build one pair's two corpora (median of 20, independent of the machine's load):")
    print(f"   Corpus.subset_users {build_cpu['subset']:.1f} ms, index slicing {build_cpu['slicing']:.1f} ms "
          f"({100 * build_cpu['slicing'] / (2e3 * fit):.1f}% of two fits)")


def _build_cpu(corpus) -> dict:
    """CPU milliseconds per pair of building D and D': the old construction and the sampler's."""
    from topicdp.samplers import PrivateResample

    dist = PrivateResample(corpus, "user")
    builder = dist.pair_builder()
    rng = np.random.default_rng(0)
    draws = [dist.draw_indices(corpus.n_users, rng) for _ in range(20)]
    out = {}
    for name, build in (("subset", lambda d, dp: (dist.build(d), dist.build(dp))),
                        ("slicing", lambda d, dp: list(builder.pair(d, dp)))):
        times = []
        for d, dp in draws:
            start = time.process_time()
            build(d, dp)
            times.append(time.process_time() - start)
        out[name] = statistics.median(times) * 1e3
    return out


def sizing_table(gammas=(0.01, 0.05, 0.1, 0.2)) -> list[dict]:
    """Both sizings side by side: for each gamma, h and k of ``"lambert-w"`` and ``"exchangeable"`` (2h fits)."""
    rows = []
    for gamma in gammas:
        row = {"gamma": gamma}
        for sizing in SIZINGS:
            _, h, k = sample_size(gamma, sizing)
            row[f"{sizing} h"], row[f"{sizing} k"] = h, k
        rows.append(row)
    return rows


def fit_counts() -> None:
    print("\n2. model fits for one TopicDP release (2h + 2), by sizing")
    print("   gamma  lambert-w h  fits    exchangeable h  fits  ratio")
    for row in sizing_table((0.01, 0.05, 0.1, 0.2)):
        lw, ex = row["lambert-w h"], row["exchangeable h"]
        print(f"   {row['gamma']:<5g}  {lw:11d}  {2 * lw + 2:6d}  {ex:14d}  {2 * ex + 2:4d}  {(2 * lw + 2) / (2 * ex + 2):5.1f}x")


def blogs(args) -> None:
    """User-level TopicDP releases of gensim LDA on the blog corpus, public reference P, with each sizing."""
    import json

    from utility.utility_real import load  # the split of the utility tables: 80% private, 10% public reference

    print(f"\n3. TopicDP over gensim LDA (K={N_TOPICS}) on the blog corpus, user level, gamma = 0.1, "
          "P = public reference users")
    if not (Path(args.data_dir) / "blogs").exists():
        print(f"   skipped: {Path(args.data_dir) / 'blogs'} is absent")
        return
    t = time.perf_counter()
    train, _, public, _ = load("blogs", Path(args.data_dir), "nonprivate", None, "user")
    print(f"   private {train}; P: {public} (loaded in {time.perf_counter() - t:.0f} s)", flush=True)
    model = make_model("gensim-lda", N_TOPICS, 0)
    one_fit = _timed(lambda: model.fit_topic_word(train))
    print(f"   one fit t = {one_fit:.1f} s (alone, before the releases)")
    print("   sizing          h  fits  (2h + 2) t / w (s)  wall (s)  wall / that  median pair / 2 (s)  wall / that")
    for sizing in args.sizings.split(","):
        dp = TopicDP(model, epsilon=3.0, delta=1e-6, unit="user", n_jobs=args.n_jobs,
                     sampling=SensitivitySampling(public, 0.1, sizing, random_state=0, cache_dir=args.cache_dir))
        t = time.perf_counter()
        release = dp.fit(train).release_
        wall = time.perf_counter() - t
        sample = release.diagnostics["sensitivity_sample"]  # the full summary (the report keeps the public part)
        h, fits = sample["h"], 2 * sample["h"] + 2
        ideal = fits * one_fit / args.n_jobs  # f(D) and its determinism check run side by side, then the pairs
        in_run = sample["seconds_per_pair_median"] / 2  # one fit as the pairs saw it (same load as the wall)
        cached = " (sample from cache: not a timing)" if sample["from_cache"] else ""
        print(f"   {sizing:<12} {h:4d}  {fits:4d}  {ideal:18.0f}  {wall:8.0f}  {wall / ideal:11.2f}  "
              f"{in_run:19.1f}  {wall / (fits * in_run / args.n_jobs):11.2f}{cached}", flush=True)
        if args.out:
            row = {"sizing": sizing, "h": h, "fits": fits, "one_fit_seconds": one_fit, "wall_seconds": wall,
                   "ratio": wall / ideal, "pair_fit_seconds_median": in_run, "sensitivity": sample["sensitivity"],
                   "n_jobs": args.n_jobs, "load_average": os.getloadavg(), "from_cache": sample["from_cache"]}
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    print("   targets (idle machine): exchangeable wall < 300 s; Lambert-W wall / ((2h + 2) t / w) <= 1.15")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=40, help="pairs per overhead run (default 40)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--blogs", action="store_true", help="also time real releases on the blog corpus (~2 h)")
    ap.add_argument("--data-dir", default=str(DATA), help="folder holding blogs/blogs.jsonl.gz (default ../shared/data)")
    ap.add_argument("--sizings", default="exchangeable,lambert-w")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cache-dir", default=None, help="blogs: keep the sensitivity samples here (for the utility table)")
    ap.add_argument("--out", default=None, help="blogs: append one JSON line per release here")
    args = ap.parse_args(argv)
    if args.blogs:  # the releases' cost forecasts and progress lines, on stderr
        logger = logging.getLogger("topicdp")
        logger.addHandler(logging.StreamHandler())
        logger.setLevel(logging.INFO)
    if not args.skip_overhead:
        overhead(args)
    fit_counts()
    if args.blogs:
        blogs(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
