"""Sensitivity sampler: parallel speed-up (2 workers vs 1) and cost as a multiple of one model fit.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_sampler.py [--pairs 24] [--repeats 3] [--model gensim-lda]

Runs in one process on the embedded corpus: one-fit time, then the sampler with n_jobs = 1 and 2,
interleaved, medians over repeats. The ideal cost of h pairs is 2h fits / n_jobs.
"""

import argparse
import statistics
import time

from topicdp import embedded_corpus, make_model
from topicdp.samplers import sample_sensitivity


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=24)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default="gensim-lda")
    args = ap.parse_args()
    corpus = embedded_corpus()
    model = make_model(args.model, 10, 0)
    fits, runs = [], {1: [], 2: []}
    for rep in range(args.repeats):
        t = time.perf_counter()
        model.fit_topic_word(corpus)
        fits.append(time.perf_counter() - t)
        for n_jobs in ((1, 2) if rep % 2 == 0 else (2, 1)):  # interleave to share the machine's noise
            t = time.perf_counter()
            sample_sensitivity(model, corpus, 0.1, n_pairs=args.pairs, insecure_testing=True, n_jobs=n_jobs,
                               random_state=rep)
            runs[n_jobs].append(time.perf_counter() - t)
    fit = statistics.median(fits)
    one, two = statistics.median(runs[1]), statistics.median(runs[2])
    print(f"model {args.model}, corpus {corpus}, {args.pairs} pairs (= {2 * args.pairs} fits), {args.repeats} repeats")
    print(f"one fit                 {fit:8.3f} s")
    print(f"sampler, 1 worker       {one:8.3f} s  = {one / fit:6.1f} fits  (ideal {2 * args.pairs})")
    print(f"sampler, 2 workers      {two:8.3f} s  = {two / fit:6.1f} fits  (ideal {args.pairs})")
    print(f"speed-up 2 vs 1 worker  {one / two:8.2f}x")
    h = 285
    print(f"full gamma=0.1 run (h={h}): ~{2 * h * fit / 60:.1f} min on 1 worker, ~{2 * h * fit * (one / two) ** -1 / 60:.1f} min on 2")


if __name__ == "__main__":
    main()
