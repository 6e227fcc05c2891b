"""How far noiseless fits agree with a non-private gensim LDA on real text: the ceiling of "overlap with LDA".

On the private half of a corpus (the hash split of ``benchmarks/utility/no_public_data.py``), with its 2,000 most
frequent words (a non-private choice: this is a measurement, not a release), document level or user level (<= 20 posts):
gensim LDA (:func:`topicdp.topics.reference_lda`), :class:`topicdp.variational.VariationalLDA` (dp-vem without
noise) with its default warm-up and without it (``warmup_iterations=0, n_iterations=5``: the road before the
warm-up), seeds 0 and 1 each; prints the matched top-10 overlap (:func:`topicdp.metrics.readability.topic_overlap`) of every pair. Run::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/noiseless_agreement.py --corpus blogs

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="blogs", choices=("blogs", "enron_sent"))
    ap.add_argument("--unit", default="document", choices=("document", "user"))
    args = ap.parse_args()
    path = DATA / args.corpus / f"{args.corpus}.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} is absent")
        return 0
    from topicdp import Corpus
    from topicdp.corpus import read_jsonl_records, tokenize
    from topicdp.metrics.readability import topic_overlap
    from topicdp.pipeline import user_selected
    from topicdp.topics import reference_lda
    from topicdp.variational import VariationalLDA

    warnings.simplefilter("ignore")  # noiseless fits of one corpus: no release, no ledger needed
    records = [(t, u) for t, u in read_jsonl_records(path) if user_selected(u, 0.5)]
    counts = Counter(w for doc in tokenize([t for t, _ in records]) for w in doc)
    corpus = Corpus.from_texts([t for t, _ in records], [u for _, u in records],
                               vocabulary=[w for w, _ in counts.most_common(2000)])
    if args.unit == "user":
        corpus = corpus.bound(20, None, random_state=0)
    start, fits = time.perf_counter(), {}
    for seed in (0, 1):
        fits[f"gensim {seed}"] = reference_lda(corpus, 10, random_state=seed)
        fits[f"warm-up {seed}"] = VariationalLDA(10, unit=args.unit, random_state=seed).fit(corpus).topic_word_
        fits[f"plain EM {seed}"] = VariationalLDA(10, unit=args.unit, n_iterations=5, warmup_iterations=0,
                                                  random_state=seed).fit(corpus).topic_word_
    names = list(fits)
    print(f"{args.corpus}, {args.unit} level, {time.perf_counter() - start:.0f} s\n")
    print("| | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
    for a in names:
        print(f"| {a} | " + " | ".join("" if a == b else f"{topic_overlap(fits[a], fits[b]):.2f}" for b in names) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
