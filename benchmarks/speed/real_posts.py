"""The whole ``topicdp privatize`` of real blog posts (document level, a fixed 2,000-word list) against one gensim
pass over the same counts, repeats interleaved (A B B A ...), medians and their ratio::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 nice -n 10 python benchmarks/speed/real_posts.py \
        [--corpus blogs|blogs-more] [--repeats 3] [--word-list FILE]

Each side runs in its own subprocess with BLAS threads pinned. ``privatize`` is timed whole (start-up, reading,
tokenising, planning, dp-vem, writing: ``--epsilon 3 --delta 1e-6 --topics 10 --seed 0``, its default
``--n-jobs``); gensim's ``LdaModel`` (K = 10, one pass, its default chunksize 2000, as ``bench_scale.py speed``)
is timed over its fit only, the counts built before its clock starts. The word list, unless given, is the 2,000
most frequent tokens of the blogs corpus's public-reference quarter of users (``reference_word_list.py``), kept
in the temporary folder. The load average (``os.getloadavg``) is printed with every run: the machine is shared,
so the ratio within one interleaved pairing is what counts. Skips (exit 0) where the corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS, BLOGS_MORE, nearest  # noqa: E402

GENSIM_CHILD = """
import json, sys, time
from gensim.models import LdaModel
from topicdp.corpus import Corpus, read_jsonl_records
texts = [t for t, _ in read_jsonl_records(sys.argv[1])]
words = open(sys.argv[2]).read().split()
X = Corpus.from_texts(texts, vocabulary=words).X.tocsr()
bow = [list(zip(X.indices[a:b].tolist(), X.data[a:b].tolist())) for a, b in zip(X.indptr[:-1], X.indptr[1:])]
start = time.perf_counter()
LdaModel(bow, num_topics=10, id2word=dict(enumerate(words)), passes=1, random_state=0)
print(json.dumps({"fit": time.perf_counter() - start, "n_docs": len(bow)}))
"""


def word_list(path: Path | None) -> Path:
    """The given list, or the blogs reference quarter's 2,000 most frequent tokens (made once)."""
    if path is not None:
        return path
    out = Path(tempfile.gettempdir()) / "topicdp-real-posts-words-2000.txt"
    if not out.exists():
        from utility.reference_word_list import most_frequent

        from topicdp.corpus import read_jsonl_records
        from topicdp.pipeline import user_selected

        texts = [t for t, u in read_jsonl_records(nearest(BLOGS))
                 if user_selected(u, 0.75) and not user_selected(u, 0.5)]
        out.write_text("\n".join(most_frequent(texts, 2000)) + "\n")
    return out


def timed(args: list[str]) -> tuple[float, str]:
    """(wall seconds, stdout) of one command in a subprocess with BLAS threads pinned."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
    return wall, proc.stdout


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("blogs", "blogs-more"), default="blogs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--word-list", type=Path, default=None)
    a = ap.parse_args(argv)
    corpus = nearest(BLOGS if a.corpus == "blogs" else BLOGS_MORE)
    if not corpus.exists():
        print(f"skipped: {corpus} is absent")
        return 0
    words = word_list(a.word_list)
    out = tempfile.mktemp(suffix=".json")
    ours = [sys.executable, "-m", "topicdp.cli", "privatize", str(corpus), "--unit", "document", "--vocabulary",
            str(words), "--epsilon", "3", "--delta", "1e-6", "--topics", "10", "--seed", "0", "--out", out,
            "--overwrite"]
    theirs = [sys.executable, "-c", GENSIM_CHILD, str(corpus), str(words)]
    print(f"{a.corpus}: {corpus}; word list {words}; load before {load()}; {os.cpu_count()} cores", flush=True)
    times: dict[str, list[float]] = {"privatize": [], "gensim": []}
    n_docs = None
    for r in range(a.repeats):
        for which in (("privatize", "gensim") if r % 2 == 0 else ("gensim", "privatize")):
            if which == "privatize":
                wall, _ = timed(ours)
            else:
                _, printed = timed(theirs)
                result = json.loads(printed.strip().splitlines()[-1])
                wall, n_docs = result["fit"], result["n_docs"]
            times[which].append(wall)
            print(f"round {r + 1}: {which} {wall:.1f} s (load {load()})", flush=True)
    m_ours, m_theirs = statistics.median(times["privatize"]), statistics.median(times["gensim"])
    print(f"\n| {n_docs:,} posts | median s | runs (s) |\n|---|---:|---|")
    for name, label in (("privatize", "topicdp privatize (whole command)"),
                        ("gensim", "gensim LdaModel, one pass (fit only)")):
        print(f"| {label} | {statistics.median(times[name]):.1f} | {', '.join(f'{t:.1f}' for t in times[name])} |")
    print(f"\nprivatize / one gensim pass: {m_ours / m_theirs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
