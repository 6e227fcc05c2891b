"""Which public start brings the stable form of a wrapped gensim LdaModel closest to the user's own fits (noiseless).

The split and the user's model are ``wrap_your_model.py``'s: blogs split by a hash of the user id, P's 2,000 most
frequent words, the private side bounded to 20 posts per user, ``LdaModel(num_topics=10, random_state=s)`` with
gensim's defaults as the user's own fits (seeds 0-2). Each candidate stable form is fitted once, without noise, on
the private side and compared with those fits by matched top-10 overlap:

* starts: the toolkit's VariationalLDA on P (``public_init``) or the user's model as given (seed 0) fitted on P;
* schedules: batch with 2 passes (the stable form), batch with 5, and the user's own online schedule from the start
  (online learning is not a stable form; listed to show that the schedule does not set the basin).

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/wrap_starts.py          # about 8 minutes on one core

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402

import utility.wrap_your_model as wym  # noqa: E402

SCHEDULES = {
    "batch, 2 passes (the stable form)": dict(learning="batch", document_start="constant"),
    "batch, 5 passes": dict(learning="batch", document_start="constant", passes=5),
    "online, 1 pass (the user's schedule)": dict(learning="online", document_start="constant"),
}


def main() -> int:
    path = wym.DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    from topicdp import Corpus
    from topicdp.adapters.gensim import GensimLDA
    from topicdp.metrics.readability import topic_overlap
    from topicdp.forecast import public_init

    parts = wym.split(path, 1.0)
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o700)  # private texts
        wym.write(parts["private"], Path(scratch) / "private.jsonl.gz")
        wym.write(parts["public"], Path(scratch) / "public.jsonl.gz")
        P = Corpus.from_jsonl(Path(scratch) / "public.jsonl.gz", max_features=2000)
        corpus = Corpus.from_jsonl(Path(scratch) / "private.jsonl.gz", vocabulary=P.vocabulary).bound(
            max_docs_per_user=20, random_state=0)
    owns = [wym.topics_of(wym.users_model(corpus, "gensim", seed)) for seed in range(3)]
    print("the user's fit (seed 0) against seeds 1, 2:", [round(float(topic_overlap(owns[0], o)), 2) for o in owns[1:]])
    starts = {"VariationalLDA on P": public_init(P, 10, unit="user", random_state=0),
              "the user's model (seed 0) on P": wym.topics_of(wym.users_model(P, "gensim", 0))}
    for start_name, start in starts.items():
        for schedule, params in SCHEDULES.items():
            began = time.perf_counter()
            W = GensimLDA(10, 0, init=start, **params).fit(corpus).topic_word_
            overlaps = [float(topic_overlap(W, own)) for own in owns]
            print(f"{start_name:32s} {schedule:38s} against seeds 0, 1, 2: {[round(x, 2) for x in overlaps]} "
                  f"(median {np.median(overlaps):.2f}; {time.perf_counter() - began:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
