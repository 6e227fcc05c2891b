"""Time the dp-vem E-step and whole fits against one gensim / scikit-learn LDA pass (not a test).

On ``synthetic_lda(n_docs, n_words, K, random_state=seed)`` (documents of about 100 tokens), in one process:

* one E-step pass (:func:`topicdp.variational.unit_statistic` at document level, random topics) with the E-step
  as it was before (``tests/estep_reference.py``) and with the numpy and numba engines of
  :mod:`topicdp.inference.estep` (Blei, Ng & Jordan 2003 Eqs. 6-7; Hoffman, Blei & Bach 2010 Alg. 2);
* whole dp-vem fits (epsilon = 3, delta = 1e-6, document level): 5 passes from a random start, and 2 passes
  from a public start (topics fitted without noise on a separate public corpus from the same topics);
* ONE gensim ``LdaModel`` pass (``passes=1``, default ``chunksize``) and scikit-learn's
  ``LatentDirichletAllocation(max_iter=1, learning_method="batch")`` on the same counts.

Every timed item runs ``--repeats`` times, interleaved (A, B, C, ..., A, B, C, ...); medians are reported,
with the 1-minute load average before each round (the script waits, up to ``--max-wait`` s, for it to fall
below ``--max-load``). Recovery is the mean L1 distance to the true topics after Hungarian matching
(:func:`topicdp.metrics.recovery.recovery_error`). Once, untimed in the table's sense: the old E-step's
whole 5-pass fit (its recovery and time), and the inner iterations per pass with and without warm-starting
each document's gamma from its previous pass.

Run (from the repository root)::

    PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/speed/bench_estep.py \\
        --out docs/results/bench_estep.md

(numba, the optional ``fast`` extra, must be importable for the numba rows; they are skipped otherwise.)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # the old E-step, kept verbatim for comparison

import estep_reference as reference  # noqa: E402

from topicdp.datasets import synthetic_lda  # noqa: E402
from topicdp.inference import estep  # noqa: E402
from topicdp.metrics.recovery import recovery_error  # noqa: E402
from topicdp.variational import DPVariationalEM, unit_statistic, unit_weights  # noqa: E402
from topicdp.forecast import public_init

EPSILON, DELTA = 3.0, 1e-6


def old_pass(X, weights, beta, alpha, *, chunk=4096, max_iter=50, tol=1e-3):
    """unit_statistic as it was: the old batch_e_step on chunks of 4096 documents."""
    total = np.zeros(beta.shape)
    for start in range(0, X.shape[0], chunk):
        rows = slice(start, start + chunk)
        total += reference.batch_e_step(X[rows], beta, alpha, max_iter=max_iter, tol=tol, row_weights=weights[rows])[1]
    return total


def with_engine(engine, fn):
    """Run ``fn`` with TOPICDP_ESTEP_ENGINE set (the fit's E-step engine)."""
    before = os.environ.get("TOPICDP_ESTEP_ENGINE")
    os.environ["TOPICDP_ESTEP_ENGINE"] = engine
    try:
        return fn()
    finally:
        if before is None:
            del os.environ["TOPICDP_ESTEP_ENGINE"]
        else:
            os.environ["TOPICDP_ESTEP_ENGINE"] = before


def dp_vem(X, K, *, n_iterations, init=None, seed=0):
    model = DPVariationalEM(K, epsilon=EPSILON, delta=DELTA, unit="document", n_iterations=n_iterations, init=init,
                             random_state=seed)
    return model.fit(X).topic_word_


def dp_vem_old(X, K, *, n_iterations, seed=0):
    """The same fit with the old E-step (the fit loop of DPVariationalEM, E-step swapped)."""
    import topicdp.variational as variational

    saved = variational.batch_e_step
    variational.batch_e_step = lambda *a, engine=None, **kw: reference.batch_e_step(*a, **kw)
    try:
        return dp_vem(X, K, n_iterations=n_iterations, seed=seed)
    finally:
        variational.batch_e_step = saved


def gensim_pass(X, K, seed=0):
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel

    model = LdaModel(Sparse2Corpus(X, documents_columns=False), num_topics=K,
                     id2word={j: str(j) for j in range(X.shape[1])}, passes=1, random_state=seed)
    return model.get_topics()


def sklearn_pass(X, K, seed=0):
    from sklearn.decomposition import LatentDirichletAllocation

    lda = LatentDirichletAllocation(K, max_iter=1, learning_method="batch", random_state=seed).fit(X)
    return lda.components_ / lda.components_.sum(axis=1, keepdims=True)


def warm_start_iterations(X, weights, K, alpha, eta, sigma, *, n_iterations, seed, warm, engine):
    """The dp-vem loop (random start, same noise draws) with the E-step's inner iterations counted per pass."""
    rng = np.random.default_rng(seed)
    lam = eta + rng.gamma(1.0, 1.0, size=(K, X.shape[1]))
    gamma, per_pass, seconds = None, [], 0.0
    for _ in range(n_iterations):
        beta = lam / lam.sum(axis=1, keepdims=True)
        start = time.perf_counter()
        gamma, n_iter = estep._document_gamma(X, beta, alpha, max_iter=50, tol=1e-3, gamma0=gamma if warm else None,
                                              engine=engine)
        # statistics from this gamma: batch_e_step started at it, with no further update (max_iter=0)
        S = estep.batch_e_step(X, beta, alpha, max_iter=0, tol=np.inf, row_weights=weights, gamma0=gamma,
                               engine=engine)[1]
        seconds += time.perf_counter() - start
        per_pass.append(float(n_iter.mean()))
        S = S + rng.normal(0.0, sigma, size=S.shape)
        lam = eta + np.maximum(S - 2.0 * sigma, 0.0)
    return per_pass, seconds, recovery_error(lam / lam.sum(axis=1, keepdims=True), TRUTH)


def wait_for_quiet(max_load, max_wait):
    waited = 0
    while os.getloadavg()[0] >= max_load and waited < max_wait:
        time.sleep(10)
        waited += 10
    return os.getloadavg()[0], waited


TRUTH: np.ndarray


def main(argv=None):
    global TRUTH
    import warnings

    # the same corpus is fitted many times on purpose (a benchmark, not a release)
    warnings.filterwarnings("ignore", message="DPVariationalEM.fit: these documents overlap")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-docs", type=int, default=40_000)
    parser.add_argument("--n-words", type=int, default=2_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--max-wait", type=int, default=300)
    parser.add_argument("--skip-sklearn", action="store_true", help="scikit-learn's batch pass is the slowest item")
    parser.add_argument("--skip-old-fit", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    args = parser.parse_args(argv)

    K = args.k
    data = synthetic_lda(args.n_docs, args.n_words, K, random_state=args.seed)
    TRUTH = data.topic_word
    X = sp.csr_matrix(data.X, dtype=np.float64)
    weights = unit_weights(X, np.arange(X.shape[0]))
    alpha = eta = 1.0 / K
    rng = np.random.default_rng(args.seed)
    lam0 = eta + rng.gamma(1.0, 1.0, size=(K, X.shape[1]))
    beta0 = lam0 / lam0.sum(axis=1, keepdims=True)
    public = synthetic_lda(2_000, args.n_words, K, topic_word=TRUTH, random_state=args.seed + 1)
    init = public_init(public.X, K, unit="document")
    engines = ["numpy"] + (["numba"] if estep._numba_kernels() is not None else [])
    if "numba" in engines:  # compile (or load the cache) outside the timings
        estep.batch_e_step(X[:10], beta0, alpha, engine="numba")

    items = {"E-step pass, old": lambda: old_pass(X, weights, beta0, alpha)}
    for engine in engines:
        items[f"E-step pass, {engine}"] = (lambda e=engine: unit_statistic(X, weights, beta0, alpha, engine=e))
    for engine in engines:
        items[f"dp-vem fit, 5 passes, random start, {engine}"] = (
            lambda e=engine: with_engine(e, lambda: dp_vem(X, K, n_iterations=5, seed=args.seed)))
        items[f"dp-vem fit, 2 passes, public start, {engine}"] = (
            lambda e=engine: with_engine(e, lambda: dp_vem(X, K, n_iterations=2, init=init, seed=args.seed)))
    items["gensim LdaModel, 1 pass"] = lambda: gensim_pass(X, K, args.seed)
    if not args.skip_sklearn:
        items["sklearn LDA batch, max_iter=1"] = lambda: sklearn_pass(X, K, args.seed)

    times = {name: [] for name in items}
    recovery = {}
    loads = []
    for r in range(args.repeats):
        load, waited = wait_for_quiet(args.max_load, args.max_wait)
        loads.append(load)
        print(f"round {r + 1}/{args.repeats}: load average {load:.2f} (waited {waited} s)", flush=True)
        for name, fn in items.items():
            start = time.perf_counter()
            out = fn()
            times[name].append(time.perf_counter() - start)
            if out.shape == TRUTH.shape and not name.startswith("E-step"):
                recovery[name] = recovery_error(out, TRUTH)
            print(f"  {name}: {times[name][-1]:.2f} s", flush=True)
    loads.append(os.getloadavg()[0])
    median = {name: float(np.median(t)) for name, t in times.items()}
    gensim = median["gensim LdaModel, 1 pass"]

    once = []
    from topicdp.rdp import calibrate_gaussian

    sigma = calibrate_gaussian(EPSILON, DELTA, 1.0, method="analytic", count=5)
    engine = engines[-1]
    for warm in (False, True):
        per_pass, seconds, rec = warm_start_iterations(X, weights, K, alpha, eta, sigma, n_iterations=5,
                                                       seed=args.seed, warm=warm, engine=engine)
        once.append((f"5 passes, {'warm' if warm else 'cold'} start of gamma ({engine})", seconds, rec,
                     " / ".join(f"{v:.1f}" for v in per_pass)))
        print(once[-1], flush=True)
    if not args.skip_old_fit:
        start = time.perf_counter()
        rec = recovery_error(dp_vem_old(X, K, n_iterations=5, seed=args.seed), TRUTH)
        once.append(("dp-vem fit, 5 passes, random start, old E-step", time.perf_counter() - start, rec, ""))
        print(once[-1], flush=True)

    lines = [
        f"# E-step and dp-vem fit against one gensim pass ({args.n_docs:,} documents, V = {args.n_words:,}, "
        f"K = {K})",
        "",
        f"`synthetic_lda({args.n_docs}, {args.n_words}, {K}, random_state={args.seed})`, "
        f"{X.nnz:,} nonzeros, {X.sum() / X.shape[0]:.1f} tokens per document; dp-vem at epsilon = {EPSILON}, "
        f"delta = {DELTA}, document level; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
        f"one process, serial kernels.",
        f"Medians of {args.repeats} interleaved rounds; 1-minute load average before each round: "
        f"{', '.join(f'{v:.2f}' for v in loads[:-1])} (after: {loads[-1]:.2f}; 2 cores, shared).",
        "",
        "| item | median s | / gensim pass | recovery (mean L1) | all runs (s) |",
        "|---|---:|---:|---:|---|",
    ]
    for name, t in times.items():
        rec = f"{recovery[name]:.3f}" if name in recovery else ""
        lines.append(f"| {name} | {median[name]:.2f} | {median[name] / gensim:.2f} | {rec} | "
                     f"{', '.join(f'{v:.1f}' for v in t)} |")
    lines += ["", "Once (not repeated):", "", "| run | E-step s | recovery (mean L1) | mean inner iterations per pass |",
              "|---|---:|---:|---|"]
    lines += [f"| {name} | {s:.2f} | {rec:.3f} | {iters} |" for name, s, rec, iters in once]
    lines += ["", "Rerun:", "", "```",
              "PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/speed/bench_estep.py "
              "--out docs/results/bench_estep.md", "```", ""]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
