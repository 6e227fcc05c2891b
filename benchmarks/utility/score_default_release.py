"""Is the default command's decision right? The release it refuses, forced, scored against the owner's own LDA.

The command is the README's, at the document level, on the bloggers a hash of the id puts in the first 30%
(``--user-fraction 0.3``; :func:`topicdp.pipeline.user_selected`)::

    topicdp privatize blogs.jsonl.gz --topics 10 --epsilon 3 --unit document --user-fraction 0.3 --seed S \\
        --release-anyway

run here through :func:`topicdp.pipeline.release` (the command's library path), for each noise seed. Its top-10
lists are scored (:func:`topicdp.metrics.readability.readability`, held-out NPMI and contrast relative to the LDA's,
diversity, matched overlap) on held-out bloggers (hash in the last 15%, disjoint from the private 30%) against the
non-private model the owner would fit without privacy: gensim LDA, 5 passes, on the same private posts with the
command's ordinary vocabulary (its defaults: the 5,000 most frequent words, min_df 5, max_df 0.5). The document-level
targets are NPMI >= 0.7x, contrast >= 0.5x, diversity >= 0.5, overlap >= 0.25 (:data:`topicdp.forecast.TARGETS`).

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/score_default_release.py --seeds 0 1 2

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

from _data import BLOGS  # noqa: E402
FRACTION, HELDOUT_FROM = 0.3, 0.85


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--heldout-docs", type=int, default=20000, help="held-out posts scored (the first, by hash)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if not BLOGS.exists():
        print(f"skipped: {BLOGS} is absent")
        return 0
    import numpy as np

    from utility.decision_validation import score_lists
    from topicdp.corpus import Corpus, read_jsonl_records
    from topicdp.forecast import TARGETS
    from topicdp.pipeline import CorpusSource, ReleaseRequest, release, user_selected
    from topicdp.topics import reference_lda

    records = list(read_jsonl_records(str(BLOGS), "text", "user"))
    private = [(t, u) for t, u in records if user_selected(u, FRACTION)]
    held = [(t, u) for t, u in records if not user_selected(u, HELDOUT_FROM)][:args.heldout_docs]
    print(f"private: {len(private)} posts; held out: {len(held)} posts", flush=True)

    t0 = time.perf_counter()
    ordinary = Corpus.from_texts([t for t, _ in private], [u for _, u in private], min_df=5, max_df=0.5,
                                 max_features=5000)
    W = reference_lda(ordinary, 10, passes=5)
    lda = [[ordinary.vocabulary[j] for j in np.argsort(-row, kind="stable")[:10]] for row in W]
    print(f"ordinary LDA ({len(ordinary.vocabulary)} words): {time.perf_counter() - t0:.0f} s", flush=True)

    rows = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        request = ReleaseRequest(CorpusSource(str(BLOGS), user_fraction=FRACTION), unit="document", n_topics=10,
                                 epsilon=3.0, seed=seed, release_anyway=True)
        lines: list[str] = []
        result = release(request, echo=lines.append)
        rel = result.release
        ours = [[word for word, _ in topic] for topic in rel.top_words(10)]
        words = sorted({w for lists in (ours, lda) for row in lists for w in row})
        heldout = Corpus.from_texts([t for t, _ in held], [u for _, u in held], vocabulary=words)
        score = score_lists(ours, lda, heldout)
        verdicts = [line for line in lines if line.startswith("re-planned") or line.startswith("plan:")]
        meets = all(score[k] >= v for k, v in vars(TARGETS["document"]).items())
        rows.append({"seed": seed, "words": len(rel.vocabulary), "verdicts": verdicts, "meets": meets,
                     "seconds": time.perf_counter() - t0, "topics": [" ".join(t) for t in ours],
                     **{k: float(v) for k, v in score.items()}})
        print(json.dumps(rows[-1]), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps({"lda": [" ".join(t) for t in lda], "releases": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
