"""Utility of the spectral configurations: synthetic recovery, noise ratios old/new, and the blog corpus.

Three modes (``OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/utility/bench_spectral_utility.py MODE``):

``synthetic`` (default) -- recovery error vs epsilon for configurations 1-4 (the shape of DeCarolis et al.
    2020, Fig. 2). Synthetic LDA (topics ~ Dirichlet(0.1), Poisson(100) lengths), d = 100 words, k = 5 topics,
    alpha0 = 1, N in {10 000, 100 000} (``--quick``: 10 000 and eps in {1, 10, 100, 1000}); composite delta
    = 1e-7 as in Fig. 2; every configuration at its default budget split and default accounting; the
    median recovery error (mean L1 per topic after Hungarian matching) over ``--seeds`` noise draws.
    ``strict=False``: Table-3 preconditions are recorded, not raised; a configuration whose
    privacy-critical precondition fails counts as "fail". ``--root DIR`` imports topicdp from another
    checkout (e.g. the main one, for the numbers before a change); the same seeds are used.
``sigmas`` -- for each configuration and unit, the ratio old/new of every Gaussian noise scale at
    epsilon in {1, 3, 10}: old = the entry-wise l1 bounds used as L2 sensitivity, RDP composition, and at
    user level group privacy over m documents per user (document-level target epsilon/m); new = the
    Frobenius bounds, exact (GDP) composition for configurations 1-2, and per-user weighting with U users.
    Pure arithmetic, no data (but user level needs N and U: given as ``--docs``/``--users``).
``blogs`` -- ``../shared/data/blogs`` (80 % of users, every 5th held out as in ``topicdp compare``;
    2 000-word vocabulary; K = 10): document level (all posts) and user level (each user's first 20 posts,
    a per-user choice), the noise spectral norm of the released M2 against the k-th eigenvalue and the
    gap of the non-private M2 (old and new), and for configurations 1-2 at epsilon in {1, 3, 10} the
    matched top-10 overlap of the released topics with non-private gensim LDA and with non-private
    spectral LDA (``topicdp.metrics.readability.topic_overlap`` when present, else the same definition
    here). ``--public-heldout`` whitens with the held-out users' posts, standing in for a public
    reference corpus (they are not public: this measures what a public reference of that size would
    give). Skips cleanly when the data is absent.

Timings printed here are not for publication: rerun on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS, ROOT  # noqa: E402

EPSILONS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]


def _import_root(root: Path) -> None:
    sys.path.insert(0, str(root))


# -- synthetic -----------------------------------------------------------------------------------------

def sweep(N: int, d: int, k: int, alpha0: float, epsilons, seeds: int, delta: float, accounting) -> list:
    from topicdp.datasets import synthetic_lda
    from topicdp.metrics import recovery_error
    from topicdp.spectral import PreconditionError, DPSpectralMoments, SpectralLDA

    import topicdp

    print(f"topicdp from {Path(topicdp.__file__).parent}", flush=True)
    data = synthetic_lda(N, d, k, alpha0=alpha0, random_state=7)
    base = recovery_error(SpectralLDA(k, alpha0, random_state=0).fit(data.X).topic_word_, data.topic_word)
    extra = {} if accounting is None else {"accounting": accounting}
    rows = []
    for eps in epsilons:
        errs = {}
        for cfg in (1, 2, 3, 4):
            vals = []
            for s in range(seeds):
                try:
                    m = DPSpectralMoments(k, alpha0, cfg, epsilon=eps, delta=delta, unit="document", random_state=1000 + s, strict=False,
                                   **extra).fit(data.X)
                    vals.append(recovery_error(m.topic_word_, data.topic_word))
                except PreconditionError:
                    vals.append(float("inf"))
            errs[cfg] = statistics.median(vals)
        rows.append({"N": N, "epsilon": eps, "errors": errs, "nonprivate": base})
        print(f"N={N:>7} eps={eps:>6g} " + " ".join(
            f"c{c}={'fail' if not np.isfinite(e) else f'{e:.3f}':>6}" for c, e in errs.items())
            + f"  nonDP={base:.3f}", flush=True)
    return rows


# -- old/new noise scales --------------------------------------------------------------------------------

def _group_target(eps: float, delta: float, m: int) -> tuple[float, float]:
    """The old user-level route: document-level (eps/m, delta / sum_{j<m} e^{j eps/m}) (group privacy)."""
    e = eps / m
    return e, delta * math.exp(-float(np.logaddexp.reduce(e * np.arange(m))))


def sigma_table(n_docs: int, n_users: int, m: int, alpha0: float, delta: float) -> list:
    """Old/new sigma of every Gaussian edge. Edges whose sensitivity is Delta_T (e6) or proportional to it
    (e7, e9: Jennrich's bound is linear in Delta_T up to the Procedure-1 margin) scale with Delta3."""
    from topicdp.spectral.accounting import DEFAULT_SPLITS, SpectralBudget
    from topicdp.spectral.configurations import CONFIGURATIONS
    from topicdp.spectral.sensitivity import delta_m2, delta_m3

    rows = []
    for unit in ("document", "user"):
        n_old, n_new = n_docs, (n_docs if unit == "document" else n_users)
        for cfg in (1, 2, 3, 4):
            spec = CONFIGURATIONS[cfg]
            for eps in (1.0, 3.0, 10.0):
                e_old, d_old = (eps, delta) if unit == "document" else _group_target(eps, delta, m)
                old = SpectralBudget(e_old, d_old, dict(DEFAULT_SPLITS[cfg]), spec["gaussian"], spec["laplace"], "rdp")
                new = SpectralBudget(eps, delta, dict(DEFAULT_SPLITS[cfg]), spec["gaussian"], spec["laplace"], "auto")
                ratios = {}
                for g in spec["gaussian"]:
                    kind = "m2" if g in ("e4", "e8") else "m3"
                    s_old = old.gaussian_sigma(g, (delta_m2 if kind == "m2" else delta_m3)(n_old, alpha0, norm="l1"))
                    s_new = new.gaussian_sigma(g, (delta_m2 if kind == "m2" else delta_m3)(n_new, alpha0, norm="fro"))
                    ratios[g] = s_old / s_new
                rows.append({"unit": unit, "configuration": cfg, "epsilon": eps, "accounting": new.accounting,
                             "old_over_new": ratios})
                print(f"{unit:>8} config {cfg} eps={eps:>4g} ({new.accounting:>5}): "
                      + ", ".join(f"{g} {r:.3g}x" for g, r in ratios.items()), flush=True)
    return rows


# -- blogs -------------------------------------------------------------------------------------------------

def _overlap(topic_word, reference, top_n: int = 10) -> float:
    try:
        from topicdp.metrics.readability import topic_overlap
    except ImportError:  # same definition: Hungarian matching on top-n intersections, mean |A ∩ B| / n
        from scipy.optimize import linear_sum_assignment

        def topic_overlap(a, b, top_n=10):
            ta = np.argsort(-np.asarray(a), axis=1, kind="stable")[:, :top_n]
            tb = np.argsort(-np.asarray(b), axis=1, kind="stable")[:, :top_n]
            inter = np.array([[len(set(x) & set(y)) for y in tb] for x in ta])
            r, c = linear_sum_assignment(inter, maximize=True)
            return float(inter[r, c].mean() / top_n)
    return topic_overlap(topic_word, reference, top_n=top_n)


def load_blogs(path: Path, max_features: int, per_user: int, cache: Path | None = None):
    """Training corpus (80 % of users), its user-level cut, and the held-out users' posts (same vocabulary).

    ``cache``: a directory where the count matrices are kept between runs (never the texts).
    """
    import gzip

    import scipy.sparse as sp

    from topicdp.corpus import Corpus

    cached = None if cache is None else Path(cache) / f"blogs_{max_features}.npz"
    if cached is not None and cached.exists():
        z = np.load(cached, allow_pickle=False)
        vocab = [str(w) for w in z["vocabulary"]]
        corpus = Corpus.from_matrix(sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"])),
                                    vocab, users=z["users"])
        heldout = Corpus.from_matrix(sp.csr_matrix((z["h_data"], z["h_indices"], z["h_indptr"]),
                                                   shape=tuple(z["h_shape"])), vocab)
        return corpus, _first_posts(corpus, per_user), heldout
    rows = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8") if line.strip()]
    users = [r["user"] for r in rows]
    order = {u: i for i, u in enumerate(dict.fromkeys(users))}
    train = [r for r in rows if order[r["user"]] % 5 != 4]
    held = [r for r in rows if order[r["user"]] % 5 == 4]
    corpus = Corpus.from_texts([r["text"] for r in train], [r["user"] for r in train], min_df=5, max_df=0.5,
                               max_features=max_features)
    heldout = Corpus.from_texts([r["text"] for r in held], [r["user"] for r in held], vocabulary=corpus.vocabulary)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        X, H = corpus.X.tocsr(), heldout.X.tocsr()
        np.savez(cached, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, users=corpus.doc_users,
                 vocabulary=np.array(corpus.vocabulary), h_data=H.data, h_indices=H.indices, h_indptr=H.indptr,
                 h_shape=H.shape)
    return corpus, _first_posts(corpus, per_user), heldout


def _first_posts(corpus, per_user: int):
    """Each user's first ``per_user`` posts (depends on that user's records only)."""
    rank = np.zeros(corpus.n_docs, dtype=np.int64)
    seen: dict = {}
    for i, u in enumerate(corpus.doc_users):
        rank[i] = seen.get(u, 0)
        seen[u] = rank[i] + 1
    keep = np.flatnonzero(rank < per_user)
    return corpus.subset_documents(keep)


def _m2_spectrum(corpus, users, alpha0: float, k: int):
    from topicdp.spectral.moments import M2Operator, prepare_corpus
    from topicdp.spectral.whitening import top_eigenpairs

    c = prepare_corpus(corpus.X, users=users)
    pairs = top_eigenpairs(M2Operator(c, alpha0).matmat, c.n_words, k + 1, rng=np.random.default_rng(0),
                           tol=1e-8, n_converge=k + 1)
    return c, pairs.values


def blogs(path: Path, k: int, alpha0: float, delta: float, max_features: int, per_user: int, configs, epsilons,
          skip_lda: bool, cache: Path | None = None, public: bool = False, noise_table: bool = True) -> dict:
    from topicdp.adapters import make_model
    from topicdp.spectral import PreconditionError, DPSpectralMoments, SpectralLDA
    from topicdp.spectral.accounting import DEFAULT_SPLITS, SpectralBudget
    from topicdp.spectral.configurations import CONFIGURATIONS
    from topicdp.spectral.sensitivity import delta_m2

    t0 = time.perf_counter()
    doc_corpus, user_corpus, heldout = load_blogs(path, max_features, per_user, cache)
    print(f"loaded in {time.perf_counter() - t0:.0f}s: document level {doc_corpus.n_docs} posts, user level "
          f"{user_corpus.n_users} users / {user_corpus.n_docs} posts, V = {doc_corpus.n_words}", flush=True)
    out = {"k": k, "alpha0": alpha0, "delta": delta, "V": doc_corpus.n_words, "levels": {}}
    for unit, corpus in (("document", doc_corpus), ("user", user_corpus)):
        users = corpus.doc_users if unit == "user" else None
        prepared, lam = _m2_spectrum(corpus, users, alpha0, k)
        n_new = prepared.n_units
        n_docs = prepared.n_docs
        d = prepared.n_words
        lam_k, gap = float(lam[k - 1]), float(lam[k - 1] - lam[k])
        level = {"n_units": n_new, "lambda_k": lam_k, "gap": gap, "noise": [], "releases": []}
        print(f"\n{unit} level: n = {n_new}, lambda_k = {lam_k:.3g}, gap = {gap:.3g}", flush=True)
        for cfg in (configs if noise_table else ()):
            spec = CONFIGURATIONS[cfg]
            for eps in epsilons:
                if unit == "document":
                    e_old, d_old = eps, delta
                else:
                    m = int(np.bincount(corpus.doc_users).max())
                    e_old, d_old = _group_target(eps, delta, m)
                old = SpectralBudget(e_old, d_old, dict(DEFAULT_SPLITS[cfg]), spec["gaussian"], spec["laplace"], "rdp")
                new = SpectralBudget(eps, delta, dict(DEFAULT_SPLITS[cfg]), spec["gaussian"], spec["laplace"], "auto")
                m2_edges = [g for g in spec["gaussian"] if g in ("e4", "e8")]

                def combined(b, sens):  # config 1 combines its two M2 releases by inverse variance
                    return 1.0 / math.sqrt(sum(1.0 / b.gaussian_sigma(g, sens) ** 2 for g in m2_edges))

                s_old = combined(old, delta_m2(n_docs, alpha0, norm="l1"))
                s_new = combined(new, delta_m2(n_new, alpha0, norm="fro"))
                row = {"configuration": cfg, "epsilon": eps,
                       "noise_over_lambda_k": {"old": s_old * math.sqrt(2 * d) / lam_k,
                                               "new": s_new * math.sqrt(2 * d) / lam_k},
                       "noise_over_half_gap": {"old": 2 * s_old * math.sqrt(2 * d) / gap,
                                               "new": 2 * s_new * math.sqrt(2 * d) / gap}}
                level["noise"].append(row)
                print(f"  config {cfg} eps={eps:>4g}: ||E_M2||/lambda_k old {row['noise_over_lambda_k']['old']:.3g} "
                      f"new {row['noise_over_lambda_k']['new']:.3g}; ||E_M2||/(gap/2) old "
                      f"{row['noise_over_half_gap']['old']:.3g} new {row['noise_over_half_gap']['new']:.3g}", flush=True)
        # releases: overlap with the non-private references
        spectral_ref = SpectralLDA(k, alpha0, random_state=0).fit(prepared.X).topic_word_ if unit == "document" else None
        if unit == "user":  # the non-private reference of the user-level release is the user-weighted fit
            from topicdp.spectral.moments import M2Operator, whitened_m3
            from topicdp.spectral.recovery import recover_topics
            from topicdp.spectral.tensor import power_method
            from topicdp.spectral.whitening import whiten
            wh = whiten(M2Operator(prepared, alpha0).matmat, d, k, rng=np.random.default_rng(0))
            dec = power_method(whitened_m3(prepared, alpha0, wh.W), rng=np.random.default_rng(0))
            spectral_ref = recover_topics(dec.values, dec.vectors, wh.B, alpha0, "project")[0]
        lda_ref = None
        if not skip_lda:
            t1 = time.perf_counter()
            lda_ref = make_model("gensim-lda", k, 0).fit_topic_word(corpus)
            print(f"  gensim LDA reference in {time.perf_counter() - t1:.0f}s; spectral vs LDA overlap "
                  f"{_overlap(spectral_ref, lda_ref):.2f}", flush=True)
        level["spectral_vs_lda"] = None if lda_ref is None else _overlap(spectral_ref, lda_ref)
        for cfg in configs:
            for eps in epsilons:
                for pub in ((False, True) if public else (False,)):
                    t1 = time.perf_counter()
                    try:
                        est = DPSpectralMoments(k, alpha0, cfg, epsilon=eps, delta=delta, random_state=0, unit=unit, strict=False,
                                         public_whitening=heldout if pub else None).fit(corpus)
                    except PreconditionError as exc:
                        level["releases"].append({"configuration": cfg, "epsilon": eps, "failed": str(exc)})
                        print(f"  config {cfg} eps={eps:>4g}: refused ({exc})", flush=True)
                        continue
                    rel = {"configuration": cfg, "epsilon": eps, "whitening": est.report_.details["whitening"],
                           "overlap_spectral": _overlap(est.topic_word_, spectral_ref),
                           "overlap_lda": None if lda_ref is None else _overlap(est.topic_word_, lda_ref),
                           "failed_checks": [c.name for c in est.report_.checks if not c.passed]}
                    level["releases"].append(rel)
                    print(f"  config {cfg} eps={eps:>4g} W from {rel['whitening']:>23}: overlap with non-private "
                          f"spectral {rel['overlap_spectral']:.2f}"
                          + ("" if lda_ref is None else f", with gensim LDA {rel['overlap_lda']:.2f}")
                          + f" ({time.perf_counter() - t1:.0f}s)", flush=True)
        out["levels"][unit] = level
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", nargs="?", default="synthetic", choices=("synthetic", "sigmas", "blogs"))
    p.add_argument("--root", default=str(ROOT), help="checkout whose topicdp is imported (synthetic mode)")
    p.add_argument("--quick", action="store_true", help="synthetic: N = 10 000 only, 1 seed, fewer epsilons")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--words", type=int, default=100)
    p.add_argument("--topics", type=int, default=5)
    p.add_argument("--alpha0", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-7)
    p.add_argument("--accounting", default=None, help="synthetic: passed to DPSpectralMoments when given")
    p.add_argument("--docs", type=int, default=100_000, help="sigmas: N")
    p.add_argument("--users", type=int, default=5_000, help="sigmas: U")
    p.add_argument("--per-user", type=int, default=20, help="sigmas: m (old group privacy); blogs: posts kept per user")
    p.add_argument("--blogs", default=str(BLOGS))
    p.add_argument("--configs", default="1,2")
    p.add_argument("--epsilons", default="1,3,10")
    p.add_argument("--skip-lda", action="store_true", help="blogs: no gensim LDA reference")
    p.add_argument("--cache", default=None, help="blogs: directory for the count matrices between runs")
    p.add_argument("--public-heldout", action="store_true",
                   help="blogs: whiten with the held-out users' posts, standing in for a public reference corpus")
    p.add_argument("--no-noise-table", action="store_true", help="blogs: releases only")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    _import_root(Path(args.root))
    if args.mode == "synthetic":
        Ns = [10_000] if args.quick else [10_000, 100_000]
        eps = [1, 10, 100, 1000] if args.quick else EPSILONS
        seeds = 1 if args.quick else args.seeds
        out = [r for N in Ns for r in sweep(N, args.words, args.topics, args.alpha0, eps, seeds, args.delta,
                                             args.accounting)]
    elif args.mode == "sigmas":
        out = sigma_table(args.docs, args.users, args.per_user, args.alpha0, args.delta)
    else:
        path = Path(args.blogs)
        if not path.exists():
            print(f"skipped: {path} not found")
            return 0
        out = blogs(path, 10 if args.topics == 5 else args.topics, args.alpha0,
                    1e-6 if args.delta == 1e-7 else args.delta, 2000 if args.words == 100 else args.words,
                    args.per_user, [int(c) for c in args.configs.split(",")],
                    [float(e) for e in args.epsilons.split(",")], args.skip_lda, args.cache, args.public_heldout,
                    not args.no_noise_table)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
