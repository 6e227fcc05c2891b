"""What sets one user's effect on a wrapped model: the size of their counts, or what they repeat?

On the public half of the blog corpus (the reference P of ``stable_starts.py``: the same hash split, 2,000 words,
<= 20 posts of <= 500 tokens per user), gensim LDA's stable f from the public start (``public_init``) is fitted on
all users but a few, plus one more: a fixed user ``a`` (the median Euclidean norm of word counts), or a probe user
at a given percentile of that norm. ``||f(base + a) - f(base + probe)||_F`` is one neighbouring pair's distance,
the quantity whose largest value over the sampled pairs is Delta_s. The table prints it beside the probe's tokens,
the Euclidean norm of its word counts and its most repeated word, without and with
``Corpus.bound(max_word_count_per_user=c)``.

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/pair_distance_norms.py --clip 5 --n-jobs 2

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
PERCENTILES = (0.1, 0.5, 0.9, 0.99, 1.0)


def user_counts(corpus):
    """Users x words count matrix."""
    import numpy as np
    import scipy.sparse as sp

    owner = sp.csr_matrix((np.ones(corpus.n_docs), (corpus.doc_users, np.arange(corpus.n_docs))),
                          shape=(corpus.n_users, corpus.n_docs))
    return (owner @ corpus.X).tocsr()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clip", type=int, default=5, help="max_word_count_per_user of the bounded rows")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} is absent")
        return 0

    import numpy as np
    from joblib import Parallel, delayed

    from topicdp import Corpus, make_model
    from topicdp.corpus import read_jsonl_records, tokenize
    from topicdp.pipeline import user_selected
    from topicdp.variational import public_init

    public = [(t, u) for t, u in read_jsonl_records(path) if not user_selected(u, 0.5)]
    counts = Counter(w for doc in tokenize([t for t, _ in public]) for w in doc)
    words = sorted(w for w, _ in counts.most_common(2000))
    reference = Corpus.from_texts([t for t, _ in public], [u for _, u in public], vocabulary=words).bound(20, 500, 0)
    start = public_init(reference, 10, unit="user")
    model = make_model("gensim-lda", 10, 0, init=start)

    U = user_counts(reference)
    norms = np.sqrt(np.asarray(U.multiply(U).sum(axis=1)).ravel())
    order = np.argsort(norms, kind="stable")
    a = order[len(order) // 2]
    probes = [order[min(int(p * len(order)), len(order) - 1)] for p in PERCENTILES]
    probes = [u if u != a else order[len(order) // 2 + 1] for u in probes]
    base = np.setdiff1d(np.arange(reference.n_users), np.array([a, *probes]))

    print("| counts | probe's norm percentile | tokens | norm of word counts | most repeated word | pair distance |")
    print("|---|---:|---:|---:|---|---:|")
    for clip in (None, args.clip):
        corpus = reference if clip is None else reference.bound(random_state=0, max_word_count_per_user=clip)
        counts_now = user_counts(corpus)
        fits = Parallel(n_jobs=args.n_jobs)(delayed(model.fit_topic_word)(corpus.subset_users(np.append(base, u)))
                                            for u in [a, *probes])
        for p, u, W in zip(PERCENTILES, probes, fits[1:]):
            row = counts_now[u].toarray().ravel()
            top = int(np.argmax(row))
            label = "as written" if clip is None else f"<= {clip} of each word per user"
            print(f"| {label} | {p:g} | {row.sum():.0f} | {np.linalg.norm(row):.0f} | {corpus.vocabulary[top]} "
                  f"x {row[top]:.0f} | {np.linalg.norm(fits[0] - W):.5f} |", flush=True)
    a_row = U[a].toarray().ravel()
    print(f"\nuser a: {a_row.sum():.0f} tokens, norm {np.linalg.norm(a_row):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
