"""Cost of the secure samplers relative to numpy's floating-point samplers, for a 100 x 5000 matrix.

    OPENBLAS_NUM_THREADS=1 python benchmarks/speed/bench_secure_noise.py [--repeats 9] [--rows 100] [--cols 5000]

Each repeat times every contender once, in an interleaved order (so load drift hits all alike); the table
shows medians and the ratio to ``numpy.random.Generator.standard_normal``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from topicdp.mechanisms.secure_noise import discrete_gaussian, secure_gaussian, secure_laplace


def contenders(W: np.ndarray, sigma: float, sensitivity: float) -> dict:
    rng = np.random.default_rng(0)
    # the integer scale secure_gaussian uses for this matrix, for the raw sampler rows
    s = secure_gaussian(W[:1, :1], sigma, sensitivity=sensitivity, n_changed=W.size, random_state=0).scale_units
    return {
        "numpy standard_normal": lambda: rng.standard_normal(W.shape),
        "naive Gaussian release W + sigma*N": lambda: W + sigma * rng.standard_normal(W.shape),
        f"discrete_gaussian(s={s}), OS randomness": lambda: discrete_gaussian(s, W.shape),
        f"discrete_gaussian(s={s}), seeded PCG64": lambda: discrete_gaussian(s, W.shape, random_state=rng),
        "secure_gaussian release (grid + OS randomness)": lambda: secure_gaussian(W, sigma, sensitivity=sensitivity),
        "numpy laplace": lambda: rng.laplace(0.0, sigma, W.shape),
        "secure_laplace release (grid + OS randomness)": lambda: secure_laplace(W, sigma, sensitivity=sensitivity),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--cols", type=int, default=5000)
    args = parser.parse_args(argv)
    W = np.random.default_rng(1).dirichlet(np.ones(args.cols), size=args.rows)  # a topic-word matrix
    sensitivity = 1.0
    sigma = 3.73 * sensitivity  # about the analytic sigma for (1, 1e-5)-DP
    runs = contenders(W, sigma, sensitivity)
    times = {name: [] for name in runs}
    for fn in runs.values():  # warm-up
        fn()
    for _ in range(args.repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["numpy standard_normal"])
    print(f"matrix {args.rows} x {args.cols} ({W.size} entries), {args.repeats} interleaved repeats, medians")
    print(f"{'contender':<50} {'median ms':>10} {'ratio':>8} {'Msamples/s':>11}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<50} {1e3 * med:>10.2f} {med / base:>8.1f} {W.size / med / 1e6:>11.2f}")


if __name__ == "__main__":
    main()
