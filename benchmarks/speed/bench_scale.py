"""The default road at scale: ``topicdp privatize`` against one gensim pass, its memory as the corpus grows,
and a million documents in memory, streamed and on a local Dask cluster.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/speed/bench_scale.py speed  [--docs 40000] [--repeats 3]
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/speed/bench_scale.py memory [--sizes 100000 400000]
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/speed/bench_scale.py million [--docs 1000000]

Every corpus is ``synthetic_lda`` text (V = 2,000 letter-only words ``zq...``, K = 10, about 100 tokens per
document; 4 documents per user, users kept whole in shards of ``--docs-per-shard`` documents), written as JSON
Lines under ``--data-dir`` (reused when present). Each measured command runs in its own subprocess; its wall
time is measured here and its peak RSS read from the kernel (``os.wait4``: the largest resident set of the
child and of the descendants it reaped, so for a Dask cluster the largest single process, not the sum).

* ``speed``: the whole ``topicdp privatize`` command (document level, the public word list, epsilon 3,
  5 dp-vem passes; reading, tokenising, planning and writing included) against one pass of gensim's
  ``LdaModel`` over the same counts (its fit only: the counts are built before the clock starts), repeats
  interleaved, medians and their ratio; and the mean L1 recovery of both against the generating topics.
* ``memory``: ``topicdp privatize DIR`` at the user level (DP vocabulary, 20 documents per user) on each size;
  peak RSS and its ratio to the smallest.
* ``million``: the same user-level release of ``--docs`` documents read in memory (one file), streamed (the
  directory) and streamed on a local Dask cluster of 2 workers; time, peak RSS, and whether the streamed and
  the Dask topics are identical (same seed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

K, V = 10, 2000
LETTERS = string.ascii_lowercase
WORDS = ["zq" + LETTERS[j // 676] + LETTERS[(j // 26) % 26] + LETTERS[j % 26] for j in range(V)]
DOCS_PER_USER = 4


def make_corpus(data_dir: Path, n_docs: int, docs_per_shard: int, seed: int = 0) -> Path:
    """``data_dir/docs-N/`` with shards of whole users, ``all.jsonl`` (the same records in one file), the word
    list and the generating topics; reused when complete."""
    import numpy as np

    from topicdp.datasets import synthetic_lda

    root = data_dir / f"docs-{n_docs}"
    if (root / "done").exists():
        return root
    (root / "shards").mkdir(parents=True, exist_ok=True)
    truth = synthetic_lda(1, V, K, random_state=seed)
    np.save(root / "topic_word.npy", truth.topic_word)
    (root / "words.txt").write_text("\n".join(WORDS) + "\n")
    with open(root / "all.jsonl", "w") as whole:
        for i, start in enumerate(range(0, n_docs, docs_per_shard)):
            n = min(docs_per_shard, n_docs - start)
            X = synthetic_lda(n, V, K, topic_word=truth.topic_word, alpha=truth.alpha, random_state=seed + 1 + i,
                              chunk_size=n).X.tocsr()
            lines = []
            for d in range(n):
                lo, hi = X.indptr[d], X.indptr[d + 1]
                text = " ".join(" ".join([WORDS[j]] * int(c)) for j, c in zip(X.indices[lo:hi], X.data[lo:hi]))
                lines.append(json.dumps({"user": f"u{(start + d) // DOCS_PER_USER}", "text": text}) + "\n")
            (root / "shards" / f"part-{i:05d}.jsonl").write_text("".join(lines))
            whole.writelines(lines)
    (root / "done").write_text("")
    return root


def run(args: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, stdout) of one command in a subprocess."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(args)}")
    return wall, usage.ru_maxrss * 1024, out


def privatize(corpus: str, out: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "topicdp.cli", "privatize", corpus, "--topics", str(K), "--epsilon", "3",
            "--delta", "1e-6", "--seed", "0", "--out", out, "--overwrite", *extra]  # speed rewrites one file


GENSIM_CHILD = """
import json, sys, time
import numpy as np, scipy.sparse as sp
from gensim.models import LdaModel
from topicdp.corpus import Corpus
from topicdp.metrics.recovery import recovery_error
root = sys.argv[1]
texts = [json.loads(line)["text"] for line in open(root + "/all.jsonl")]
words = open(root + "/words.txt").read().split()
X = Corpus.from_texts(texts, vocabulary=words).X.tocsr()
bow = [list(zip(X.indices[a:b].tolist(), X.data[a:b].tolist())) for a, b in zip(X.indptr[:-1], X.indptr[1:])]
start = time.perf_counter()
lda = LdaModel(bow, num_topics=10, id2word=dict(enumerate(words)), passes=1, random_state=0)
fit = time.perf_counter() - start
print(json.dumps({"fit": fit, "l1": recovery_error(lda.get_topics(), np.load(root + "/topic_word.npy"))}))
"""


def recovery(release_path: str, root: Path) -> float:
    import numpy as np

    from topicdp.metrics.recovery import recovery_error

    release = json.loads(Path(release_path).read_text())
    index = {w: j for j, w in enumerate(WORDS)}
    full = np.zeros((K, V))
    full[:, [index[w] for w in release["vocabulary"]]] = np.asarray(release["topic_word"])
    return recovery_error(full, np.load(root / "topic_word.npy"))


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def cmd_speed(a) -> None:
    root = make_corpus(Path(a.data_dir), a.docs, a.docs_per_shard)
    out = tempfile.mktemp(suffix=".json")
    ours, theirs, l1_ours, l1_theirs = [], [], [], []
    for r in range(a.repeats):
        for which in (("ours", "gensim") if r % 2 == 0 else ("gensim", "ours")):
            if which == "ours":
                wall, _, _ = run(privatize(str(root / "all.jsonl"), out, "--unit", "document", "--vocabulary",
                                           str(root / "words.txt"), "--n-jobs", str(a.n_jobs)))
                ours.append(wall)
                l1_ours.append(recovery(out, root))
            else:
                _, _, printed = run([sys.executable, "-c", GENSIM_CHILD, str(root)])
                result = json.loads(printed.strip().splitlines()[-1])
                theirs.append(result["fit"])
                l1_theirs.append(result["l1"])
        print(f"round {r + 1}: privatize {ours[-1]:.1f} s, gensim pass {theirs[-1]:.1f} s (load {load()})", flush=True)
    m_ours, m_theirs = statistics.median(ours), statistics.median(theirs)
    print(f"\n| {a.docs:,} documents | median s | runs (s) | mean L1 to the true topics |\n|---|---:|---|---:|")
    print(f"| topicdp privatize (whole command) | {m_ours:.1f} | {', '.join(f'{t:.1f}' for t in ours)} | "
          f"{statistics.median(l1_ours):.3f} |")
    print(f"| gensim LdaModel, one pass (fit only) | {m_theirs:.1f} | {', '.join(f'{t:.1f}' for t in theirs)} | "
          f"{statistics.median(l1_theirs):.3f} |")
    print(f"\nprivatize / one gensim pass: {m_ours / m_theirs:.2f}")


def cmd_memory(a) -> None:
    rows = []
    for n in a.sizes:
        root = make_corpus(Path(a.data_dir), n, a.docs_per_shard)
        wall, rss, _ = run(privatize(str(root / "shards"), tempfile.mktemp(suffix=".json"), "--unit", "user",
                                     "--max-docs-per-user", "20"))
        rows.append((n, wall, rss))
        print(f"{n:,} documents: {wall:.1f} s, peak RSS {rss / 2**20:.0f} MiB (load {load()})", flush=True)
    print("\n| documents | shards | wall s | peak RSS MiB | RSS / smallest |\n|---:|---:|---:|---:|---:|")
    for n, wall, rss in rows:
        print(f"| {n:,} | {-(-n // a.docs_per_shard)} | {wall:.1f} | {rss / 2**20:.0f} | {rss / rows[0][2]:.2f} |")


def cmd_million(a) -> None:
    import numpy as np

    root = make_corpus(Path(a.data_dir), a.docs, a.docs_per_shard)
    outs = {name: tempfile.mktemp(suffix=f"-{name}.json") for name in ("memory", "streamed", "dask")}
    runs = {"memory": (str(root / "all.jsonl"),), "streamed": (str(root / "shards"),),
            "dask": (str(root / "shards"), "--scheduler", "local:2")}
    rows = []
    for name, (corpus, *extra) in runs.items():
        wall, rss, _ = run(privatize(corpus, outs[name], "--unit", "user", "--max-docs-per-user", "20", *extra))
        rows.append((name, wall, rss, recovery(outs[name], root)))
        print(f"{name}: {wall:.1f} s, peak RSS {rss / 2**20:.0f} MiB (load {load()})", flush=True)
    topics = {name: np.asarray(json.loads(Path(path).read_text())["topic_word"]) for name, path in outs.items()}
    print(f"\n| {a.docs:,} documents, user level | wall s | peak RSS MiB | mean L1 |\n|---|---:|---:|---:|")
    for name, wall, rss, l1 in rows:
        print(f"| {name} | {wall:.1f} | {rss / 2**20:.0f} | {l1:.3f} |")
    print(f"\nDask topics identical to the streamed ones: {np.array_equal(topics['dask'], topics['streamed'])}; "
          f"largest difference streamed vs in memory: {np.abs(topics['streamed'] - topics['memory']).max():.2e}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("speed", "memory", "million"))
    parser.add_argument("--docs", type=int, default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 400_000])
    parser.add_argument("--docs-per-shard", type=int, default=25_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2, help="privatize's --n-jobs in 'speed' (default 2, its own)")
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "topicdp-bench-scale"))
    a = parser.parse_args(argv)
    a.docs = a.docs or {"speed": 40_000, "million": 1_000_000}.get(a.what)
    print(f"load average before: {load()}; {os.cpu_count()} cores\n", flush=True)
    {"speed": cmd_speed, "memory": cmd_memory, "million": cmd_million}[a.what](a)


if __name__ == "__main__":
    main()
