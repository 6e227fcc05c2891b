"""Sensitivity sampler on a Dask LocalCluster: speed-up with 1 and 2 workers, against the local joblib path.

    OPENBLAS_NUM_THREADS=1 python benchmarks/speed/bench_cluster.py [--pairs 16] [--repeats 3] [--model gensim-lda]
                                                              [--ship-docs 20000]

In one process. Part 1, on the embedded corpus: the time of one model fit, then the sampler
(``insecure_testing`` with ``--pairs`` pairs = 2 x pairs fits) run as

* ``local n_jobs=1`` (serial) and ``local n_jobs=2`` (joblib's loky processes),
* ``dask 1 worker`` and ``dask 2 workers`` (LocalClusters of single-threaded worker processes, started
  once before timing; P scattered to the workers once per call),
* ``dask 2 workers, no scatter`` (joblib's Dask backend without ``scatter``: P pickled into every batch).

Part 2 (``--ship-docs``, 0 to skip) isolates the data movement: a synthetic corpus of that many
one-document users and a model that costs almost nothing, on 2 workers with and without the scatter.

Configurations are interleaved (the order rotates every repeat) so that all share the machine's noise;
medians over repeats. Every configuration must return the same Delta_i list (checked).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import pickle
import statistics
import time

import numpy as np

LOAD = os.getloadavg()


def _warm_up():
    import topicdp.adapters  # noqa: F401  (imports gensim / scikit-learn on the workers once)


def first_rows(corpus):
    """A nearly free 'model' (2 x V): what is left of a pair's cost is moving and subsetting the corpus."""
    return np.asarray(corpus.X[:2].toarray(), dtype=float) + 1.0


def time_configs(configs: dict, repeats: int) -> dict:
    """Median seconds per configuration, interleaved; asserts identical Delta_i lists."""
    times = {name: [] for name in configs}
    names = list(configs)
    for rep in range(repeats):
        deltas = {}
        for name in names[rep % len(names):] + names[: rep % len(names)]:  # rotate the order
            t = time.perf_counter()
            deltas[name] = configs[name](rep).deltas
            times[name].append(time.perf_counter() - t)
        first = next(iter(deltas.values()))
        assert all(d == first for d in deltas.values()), "configurations disagree on the Delta_i list"
    return {name: statistics.median(ts) for name, ts in times.items()}


def sampler_configs(model, corpus, clients, options) -> dict:
    import joblib

    from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling, sample_sensitivity
    from topicdp.samplers.cluster import sample_sensitivity_on_cluster

    def sampling(seed):  # P resamples the corpus itself (the sampler's cost does not depend on P)
        return SensitivitySampling(PRIVATE_ORACLE, 0.1, random_state=seed, **options)

    def local(n_jobs):
        return lambda seed: sample_sensitivity(model, corpus, sampling(seed), n_jobs=n_jobs)

    def on_cluster(n):
        return lambda seed: sample_sensitivity_on_cluster(model, corpus, sampling(seed), client=clients[n])

    def no_scatter(seed):
        with joblib.parallel_config(backend="dask", client=clients[2]):
            return sample_sensitivity(model, corpus, sampling(seed), n_jobs=-1)

    return {"local n_jobs=1": local(1), "local n_jobs=2": local(2), "dask 1 worker": on_cluster(1),
            "dask 2 workers": on_cluster(2), "dask 2 workers, no scatter": no_scatter}


def pickled_mib(corpus) -> float:
    from topicdp.samplers import PrivateResample

    return len(pickle.dumps(PrivateResample(corpus, "user"))) / 2**20


def part_speedup(args, clients) -> None:
    from topicdp import embedded_corpus, make_model

    corpus = embedded_corpus()
    model = make_model(args.model, args.topics, 0)
    fits = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        model.fit_topic_word(corpus)
        fits.append(time.perf_counter() - t)
    fit = statistics.median(fits)
    med = time_configs(sampler_configs(model, corpus, clients, dict(n_pairs=args.pairs, insecure_testing=True)),
                       args.repeats)
    print(f"\n[1] model {args.model} (k={args.topics}), corpus {corpus}, P pickles to {pickled_mib(corpus):.2f} MiB; "
          f"{args.pairs} pairs (= {2 * args.pairs} fits), {args.repeats} repeats, medians; one fit {fit:.3f} s")
    print(f"{'configuration':<30}{'seconds':>9}{'fits':>8}{'vs local n_jobs=1':>19}{'vs dask 1 worker':>18}")
    for name, t in med.items():
        print(f"{name:<30}{t:>9.2f}{t / fit:>8.1f}{med['local n_jobs=1'] / t:>18.2f}x"
              f"{med['dask 1 worker'] / t:>17.2f}x")


def part_shipping(args, clients) -> None:
    from topicdp.adapters import CallableModel
    from topicdp.corpus import Corpus
    from topicdp.datasets import synthetic_lda

    X = synthetic_lda(args.ship_docs, 5000, 10, random_state=0).X
    corpus = Corpus.from_matrix(X, [f"w{i}" for i in range(5000)])
    model = CallableModel(first_rows, 2, name="first-rows")
    configs = sampler_configs(model, corpus, clients, dict(n_pairs=args.pairs, insecure_testing=True))
    configs = {name: configs[name] for name in ("dask 2 workers", "dask 2 workers, no scatter")}
    med = time_configs(configs, args.repeats)
    print(f"\n[2] shipping: {corpus.n_docs:,} one-document users, P pickles to {pickled_mib(corpus):.1f} MiB, "
          f"a free model, {args.pairs} pairs, medians")
    for name, t in med.items():
        print(f"{name:<30}{t:>9.2f} s")
    print(f"no scatter / scatter = {med['dask 2 workers, no scatter'] / med['dask 2 workers']:.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default="gensim-lda")
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--ship-docs", type=int, default=20_000)
    args = ap.parse_args()

    from topicdp.streaming import dask_client

    logging.getLogger("distributed").setLevel(logging.ERROR)  # keep the tables readable
    with contextlib.ExitStack() as stack:
        clients, start_up = {}, {}
        for n in (1, 2):
            t = time.perf_counter()
            clients[n] = stack.enter_context(dask_client(n_workers=n, threads_per_worker=1, processes=True,
                                                         silence_logs=logging.ERROR))
            clients[n].run(_warm_up)
            start_up[n] = time.perf_counter() - t
        print(f"LocalCluster start-up (not timed below): 1 worker {start_up[1]:.1f} s, 2 workers {start_up[2]:.1f} s")
        part_speedup(args, clients)
        if args.ship_docs:
            part_shipping(args, clients)
    print(f"\nmachine: {os.cpu_count()} CPUs, load average at start {LOAD[0]:.1f}, at end {os.getloadavg()[0]:.1f} "
          "(other jobs share the CPUs: speed-ups are bounded by the idle ones)")
    print("all configurations returned the identical Delta_i list in every repeat")


if __name__ == "__main__":
    main()
