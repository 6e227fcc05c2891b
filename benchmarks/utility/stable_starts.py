"""Does a public start make a wrapped model stable? Sampled sensitivity of each adapter from its default start and
from topics fitted on a public reference, and what TopicDP then releases.

The corpus's users are split by a hash of their id (:func:`topicdp.pipeline.user_selected`): one half is private,
the other public (the reference P, and the source of a public 2,000-word vocabulary: its most frequent words). For
each model and start, TopicDP samples the sensitivity over P (``--sizing``, default exchangeable: 9 pairs at
gamma = 0.1; random DP with respect to P, NOT DP), calibrates sigma at each epsilon, releases, and the release is
scored against a non-private gensim LDA of the private half (matched top-10 overlap) and on the public half's
documents (held-out NPMI and contrast; :func:`topicdp.metrics.readability`).

Starts (``--starts``): ``default`` (each adapter's own start: random topics for gensim LDA, scikit-learn LDA and vem,
nndsvda for NMF); ``public`` (topics fitted on P by :func:`topicdp.forecast.public_init`; for gensim-lda and
sklearn-lda this is the *stable f*: batch variational Bayes with a fixed number of passes and a constant document
start, see :class:`topicdp.adapters.GensimLDA` and :class:`topicdp.adapters.SklearnLDA`); ``public-online``
(gensim-lda only: the public start with gensim's online learning and random document starts, as measured before the
stable configuration existed). With ``--out`` naming an existing table, its rows for configurations not run now are
kept. "fit s" is one fit on the private half; "sampling s" is the wall time of the 2h fits over P on ``--n-jobs``
workers.

Run::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/stable_starts.py --corpus blogs \
        --models gensim-lda,sklearn-lda --starts default,public --out docs/results/stable_starts_blogs.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
STARTS = {"vem": "init", "gensim-lda": "init", "sklearn-lda": "init", "sklearn-nmf": "init_topics"}
STABLE = ("gensim-lda", "sklearn-lda")  # the public start is the stable configuration (batch, constant doc start)
COLUMNS = ("model", "start", "epsilon", "Delta_s", "sigma", "NPMI x LDA", "contrast x LDA", "diversity", "overlap",
           "fit s", "sampling s")


def label(model: str, start: str, max_tokens_per_user: int | None = None, params: dict | None = None) -> str:
    bound = f", <= {max_tokens_per_user} tokens per user" if max_tokens_per_user else ""
    bound += "".join(f", {k}={v}" for k, v in (params or {}).items())
    if start == "default":
        return "default start" + bound
    if start == "public-online":
        return "public start, online (before)" + bound
    return ("public start, stable f (batch, constant doc start)" if model in STABLE else "public start") + bound


def halves(path: Path) -> tuple[list, list, list[str]]:
    """The corpus' (text, user) records split by a hash of the user id into the private half and the public half P,
    and P's 2,000 most frequent words (public: from P only), sorted. ``planted_theme.py`` reads the same split, so
    the Delta_s sampled here over P apply there."""
    from topicdp.corpus import read_jsonl_records, tokenize
    from topicdp.pipeline import user_selected

    records = list(read_jsonl_records(path))
    private = [(t, u) for t, u in records if user_selected(u, 0.5)]
    public = [(t, u) for t, u in records if not user_selected(u, 0.5)]
    counts = Counter(w for doc in tokenize([t for t, _ in public]) for w in doc)
    return private, public, sorted(w for w, _ in counts.most_common(2000))


def kept_rows(path: Path, run: set) -> list[list[str]]:
    """Rows of an existing table whose (model, start) this run does not redo; a missing column becomes "-"."""
    if not path.exists():
        return []
    lines = [ln for ln in path.read_text().splitlines() if ln.startswith("| ") and not ln.startswith("| model")]
    header = next((ln for ln in path.read_text().splitlines() if ln.startswith("| model")), "")
    names = [c.strip() for c in header.strip("|").split("|")]
    out = []
    for ln in lines:
        cells = dict(zip(names, (c.strip() for c in ln.strip("|").split("|"))))
        if cells.get("start") == "public start" and cells.get("model") == "gensim-lda":
            cells["start"] = "public start, online (before)"  # the rows measured before the stable configuration
        if (cells.get("model"), cells.get("start")) not in run:
            out.append([cells.get(c, "-") for c in COLUMNS])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="enron_sent", choices=("enron_sent", "blogs"))
    ap.add_argument("--models", default="gensim-lda,sklearn-nmf,vem")
    ap.add_argument("--sizing", default="exchangeable", choices=("exchangeable", "lambert-w"))
    ap.add_argument("--gamma", type=float, default=0.1, help="the sampler's gamma (Lambert-W: 285 pairs at 0.1, 61 at 0.2)")
    ap.add_argument("--starts", default="default,public", help="comma-separated: default, public, public-online")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--max-docs-per-user", type=int, default=20)
    ap.add_argument("--max-tokens-per-user", type=int, default=None,
                    help="bound each user's tokens (Corpus.bound) in the private half and in P before f; the "
                         "non-private baseline and the held-out scores keep the unbounded text")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a model parameter for the public start's fits (e.g. passes=3), repeatable; a Python literal")
    ap.add_argument("--draws", type=int, default=1,
                    help="noise draws per epsilon (the release's seeds: epsilon, then (epsilon, i)); a row gives each "
                         "score's median over them, and every draw is printed")
    ap.add_argument("--cache-dir", default=None, help="the sampler's cache: a rerun with the same options reuses the sample")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import ast

    extra = {k: ast.literal_eval(v) for k, v in (p.split("=", 1) for p in args.param)}
    path = DATA / args.corpus / f"{args.corpus}.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} is absent")
        return 0

    import numpy as np

    from topicdp import Corpus, RepeatedReleaseWarning, TopicDP, make_model
    from topicdp.adapters import TomotopyLDA
    from topicdp.samplers import SensitivitySampling
    from topicdp.metrics.readability import readability
    from topicdp.topics import reference_lda
    from topicdp.forecast import public_init

    # every release here is one measurement of utility at a given sigma; none is published
    warnings.simplefilter("ignore", RepeatedReleaseWarning)

    K, cap = 10, args.max_docs_per_user
    private, public, words = halves(path)
    corpus = Corpus.from_texts([t for t, _ in private], [u for _, u in private], vocabulary=words).bound(cap, 500, 0)
    reference = Corpus.from_texts([t for t, _ in public], [u for _, u in public], vocabulary=words).bound(cap, 500, 0)
    lda = reference_lda(corpus, K)
    start = public_init(reference, K, unit="user")
    held_out, T = reference, args.max_tokens_per_user
    if T is not None:  # the bound is part of f: both the private half and P's records go through it
        corpus = corpus.bound(random_state=0, max_tokens_per_user=T)
        reference = reference.bound(random_state=0, max_tokens_per_user=T)
    rows, run = [], set()
    for name in args.models.split(","):
        for which in args.starts.split(","):
            if which == "public-online" and name != "gensim-lda":
                continue
            params = {} if which == "default" else {STARTS[name]: start}
            if which == "public-online":
                params["learning"] = "online"
            shown = extra if which == "public" else {}
            model = (TomotopyLDA(K, 0, **params, **shown) if name == "tomotopy-lda"  # not in the registry
                     else make_model(name, K, 0, **params, **shown))
            lab = label(name, which, T, shown) + (f", median of {args.draws} noise draws" if args.draws > 1 else "")
            run.add((name, lab))
            t0 = time.perf_counter()
            W = model.fit_topic_word(corpus)
            fit_seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
            sampling = SensitivitySampling(reference, args.gamma, args.sizing, random_state=0, cache_dir=args.cache_dir)
            privatizer = TopicDP(model, epsilon=3.0, delta=1e-6, unit="user", sampling=sampling, n_jobs=args.n_jobs)
            sample = privatizer.sample_sensitivity(corpus)
            seconds = time.perf_counter() - t0
            print(name, which, "pair distances:", sample.summary()["deltas_quantiles"], "largest: pair",
                  int(np.argmax(sample.deltas)), "of the sampler's draws (seed 0)", flush=True)
            base = readability(lda, corpus.vocabulary, held_out)
            for eps in (1.0, 3.0, 10.0):
                scores = []
                for draw in range(args.draws):
                    rng = np.random.default_rng(int(eps) if draw == 0 else [int(eps), draw])
                    rel = TopicDP(model, epsilon=eps, delta=1e-6, unit="user", sampling=sampling, random_state=rng).fit(
                        corpus, sensitivity_sample=sample, topic_word=W).release_
                    r = readability(rel.topic_word, rel.vocabulary, held_out, reference=lda)
                    scores.append((r["npmi"] / base["npmi"], r["npmi_contrast"] / base["npmi_contrast"], r["diversity"],
                                   r["overlap"]))
                    print(f"  epsilon {eps:g} draw {draw}: NPMI x {scores[-1][0]:.3f}, contrast x {scores[-1][1]:.3f}, "
                          f"diversity {scores[-1][2]:.3f}, overlap {scores[-1][3]:.3f}", flush=True)
                row = (name, lab, eps, sample.sensitivity, rel.report.sigma,
                       *(float(v) for v in np.median(scores, axis=0)), fit_seconds, seconds)
                rows.append([f"{v:.4g}" if i in (3, 4) else f"{v:g}" if i == 2 else f"{v:.0f}" if i >= 9 else
                             f"{v:.2f}" if isinstance(v, float) else str(v) for i, v in enumerate(row)])
                print(rows[-1], flush=True)
    if args.out:
        rows += kept_rows(Path(args.out), run)
    order = {name: i for i, name in enumerate(("gensim-lda", "sklearn-lda", "sklearn-nmf", "vem"))}
    starts = ("default start", "public start, online (before)", "public start")
    rows.sort(key=lambda r: (order.get(r[0], 9), next(i for i, p in enumerate(starts) if r[1].startswith(p)),
                             float(r[2])))
    from topicdp.samplers.sizing import sample_size

    n_pairs = sample_size(args.gamma, args.sizing)[1]
    lines = [f"# Stable starts on {args.corpus} ({args.sizing} sizing at gamma = {args.gamma:g}, user level, K = {K}, <= {cap} posts per user)",
             "", f"Private: {corpus.n_users} users; public P: {reference.n_users} users (a hash split); vocabulary: "
             "the public half's 2,000 most frequent words. Random DP with respect to P, NOT DP.", "",
             "Starts: *default start* is each adapter's own (random topics for gensim LDA, scikit-learn LDA and vem; "
             "nndsvda for NMF; gensim online with random document starts). *public start* begins at topics fitted on P "
             "(`public_init`). For gensim-lda and sklearn-lda the public start is now the *stable f*: batch variational "
             "Bayes (gensim: one chunk, update_every=0, decay=0, a fixed number of passes, float64; scikit-learn: "
             "learning_method='batch', max_iter=10) with every document's gamma started at 1 instead of random draws in "
             "corpus order. *public start, online (before)* is gensim-lda's public start with online learning and random "
             "document starts, as measured before the stable configuration. fit s: one fit on the private half; "
             f"sampling s: the 2h = {2 * n_pairs} fits over P on {args.n_jobs} workers (wall time, on a machine shared with other jobs); "
             "\"-\": not recorded for that run.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
