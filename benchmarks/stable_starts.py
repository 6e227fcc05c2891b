"""Does a public start make a wrapped model stable? Sampled sensitivity of each adapter from its default start and
from topics fitted on a public reference, and what TopicDP then releases.

The corpus's users are split by a hash of their id (:func:`topicdp.pipeline.user_selected`): one half is private,
the other public (the reference P, and the source of a public 2,000-word vocabulary: its most frequent words). For
each model and start, TopicDP samples the sensitivity over P (``--sizing``, default exchangeable: 9 pairs at
gamma = 0.1; random DP with respect to P, NOT DP), calibrates sigma at each epsilon, releases, and the release is
scored against a non-private gensim LDA of the private half (matched top-10 overlap) and on the public half's
documents (held-out NPMI and contrast; :func:`topicdp.metrics.readability`).

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/stable_starts.py --corpus enron_sent --out docs/results/stable_starts_enron.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
STARTS = {"vem": "init", "gensim-lda": "init", "sklearn-nmf": "init_topics"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="enron_sent", choices=("enron_sent", "blogs"))
    ap.add_argument("--models", default="gensim-lda,sklearn-nmf,vem")
    ap.add_argument("--sizing", default="exchangeable", choices=("exchangeable", "lambert-w"))
    ap.add_argument("--max-docs-per-user", type=int, default=20)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    path = DATA / args.corpus / f"{args.corpus}.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} is absent")
        return 0

    import numpy as np

    from topicdp import Corpus, TopicDP, make_model
    from topicdp.corpus import read_jsonl_records, tokenize
    from topicdp.metrics.readability import readability
    from topicdp.pipeline import user_selected
    from topicdp.topics import reference_lda
    from topicdp.variational import public_init

    K, cap = 10, args.max_docs_per_user
    records = list(read_jsonl_records(path))
    private = [(t, u) for t, u in records if user_selected(u, 0.5)]
    public = [(t, u) for t, u in records if not user_selected(u, 0.5)]
    counts = Counter(w for doc in tokenize([t for t, _ in public]) for w in doc)
    words = sorted(w for w, _ in counts.most_common(2000))  # public: from the public half only
    corpus = Corpus.from_texts([t for t, _ in private], [u for _, u in private], vocabulary=words).bound(cap, 500, 0)
    reference = Corpus.from_texts([t for t, _ in public], [u for _, u in public], vocabulary=words).bound(cap, 500, 0)
    lda = reference_lda(corpus, K)
    start = public_init(reference, K, unit="user")
    rows = []
    for name in args.models.split(","):
        for label, params in (("default start", {}), ("public start", {STARTS[name]: start})):
            model = make_model(name, K, 0, **params)
            t0 = time.perf_counter()
            privatizer = TopicDP(3.0, 1e-6, 0.1, unit="user", distribution=reference, n_jobs=2,
                                 sampler_random_state=0, sizing=args.sizing)
            sample = privatizer.sample_sensitivity(model, corpus)
            seconds = time.perf_counter() - t0
            for eps in (1.0, 3.0, 10.0):
                rel = TopicDP(eps, 1e-6, 0.1, unit="user", distribution=reference, sizing=args.sizing,
                              random_state=np.random.default_rng(int(eps))).privatize(
                    model, corpus, sensitivity_sample=sample)
                r = readability(rel.topic_word, rel.vocabulary, reference, reference=lda)
                base = readability(lda, rel.vocabulary, reference)
                rows.append((name, label, eps, sample.sensitivity, rel.report.sigma, r["npmi"] / base["npmi"],
                             r["npmi_contrast"] / base["npmi_contrast"], r["diversity"], r["overlap"], seconds))
                print(rows[-1], flush=True)
    lines = [f"# Stable starts on {args.corpus} ({args.sizing} sizing, user level, K = {K}, <= {cap} posts per user)",
             "", f"Private: {corpus.n_users} users; public P: {reference.n_users} users (a hash split); vocabulary: "
             "the public half's 2,000 most frequent words. Random DP with respect to P, NOT DP.", "",
             "| model | start | epsilon | Delta_s | sigma | NPMI x LDA | contrast x LDA | diversity | overlap | "
             "sampling s |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {m} | {s} | {e:g} | {d:.4g} | {sg:.4g} | {n:.2f} | {c:.2f} | {dv:.2f} | {o:.2f} | {t:.0f} |"
              for m, s, e, d, sg, n, c, dv, o, t in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
