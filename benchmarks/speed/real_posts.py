"""The whole ``topicdp privatize`` of real blog posts (document level, a fixed 2,000-word list) against one gensim
pass over the same counts, repeats interleaved (A B B A ...), medians and their ratio::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 nice -n 10 python benchmarks/speed/real_posts.py \
        [--corpus blogs|blogs-more] [--repeats 3] [--word-list FILE] [--before DIR]

Each side runs in its own subprocess with BLAS threads pinned. ``privatize`` is timed whole (start-up, reading,
tokenising, planning, dp-vem, writing: ``--epsilon 3 --delta 1e-6 --topics 10 --seed 0``, its default
``--n-jobs``); gensim's ``LdaModel`` (K = 10, one pass, its default chunksize 2000, as ``bench_scale.py speed``)
is timed over its fit only, the counts built before its clock starts. The word list, unless given, is the 2,000
most frequent tokens of the blogs corpus's public-reference quarter of users (``reference_word_list.py``), kept
in the temporary folder. The load average (``os.getloadavg``) is printed with every run: the machine is shared,
so the ratio within one interleaved pairing is what counts; CPU seconds (user + system, the command's and its
reaped workers'; gensim's fit only) are printed beside the wall times. ``--before DIR`` adds a third side to
each round: the same ``privatize`` run from another checkout (DIR, e.g. a worktree of main), so that before
and after are paired too. ``--user-level FILE`` times instead the owner's user-level release of FILE (JSON Lines
with a ``user`` field, e.g. the scale curve's 9,000-blogger file ``/tmp/scale_curve/scale-9000.jsonl``): the count
stated (``--n-units``), a DP vocabulary of at most 2,000 words, ``--epsilon 10``, dp-vem forced, in memory and on a
local two-worker Dask cluster (``--scheduler local:2``), against one gensim pass over the same posts on the owner's
ordinary 2,000-word vocabulary; the peak resident memory (the largest of the command's processes, ``ru_maxrss``)
beside each time. Skips (exit 0) where the corpus is absent.
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
start, cpu = time.perf_counter(), time.process_time()
LdaModel(bow, num_topics=10, id2word=dict(enumerate(words)), passes=1, random_state=0)
print(json.dumps({"fit": time.perf_counter() - start, "cpu": time.process_time() - cpu, "n_docs": len(bow)}))
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


def ordinary_words(path: Path) -> Path:
    """The owner's ordinary vocabulary of the posts in ``path`` (``decision_validation.ordinary_corpus``), one word per
    line in the temporary folder (made once)."""
    out = Path(tempfile.gettempdir()) / f"topicdp-ordinary-{path.stem}.txt"
    if not out.exists():
        from utility.decision_validation import ordinary_corpus

        from topicdp.corpus import read_jsonl_records

        out.write_text("\n".join(ordinary_corpus(list(read_jsonl_records(path))).vocabulary) + "\n")
    return out


def user_shards(path: Path, n_shards: int = 8) -> Path:
    """``path``'s lines in ``n_shards`` JSON Lines files, each user's posts in one (by a hash of the id), in the
    temporary folder (made once): the sharded corpus that is streamed or sent to a cluster."""
    import zlib

    folder = Path(tempfile.gettempdir()) / f"topicdp-shards-{path.stem}"
    if not folder.exists():
        folder.mkdir()
        files = [(folder / f"part-{i}.jsonl").open("w") for i in range(n_shards)]
        with path.open() as f:
            for line in f:
                user = str(json.loads(line)["user"])
                files[zlib.crc32(user.encode()) % n_shards].write(line)
        for f in files:
            f.close()
    return folder


def user_level_sides(path: Path, out: str) -> dict:
    """The user-level release of ``path`` in memory, streamed shard by shard and on a two-worker cluster, and
    gensim's pass (``--user-level``)."""
    from topicdp.corpus import read_jsonl_records

    n_units = len({u for _, u in read_jsonl_records(path)})
    options = ["--unit", "user", "--n-units", str(n_units), "--max-features", "2000", "--epsilon", "10", "--delta",
               "1e-6", "--topics", "10", "--seed", "0", "--mechanism", "dp-vem", "--release-anyway", "--out", out,
               "--overwrite"]
    command = [sys.executable, "-m", "topicdp.cli", "privatize"]
    shards = str(user_shards(path))
    here = Path(__file__).resolve().parents[2]
    return {"privatize": (command + [str(path)] + options, here),
            "privatize, shards streamed": (command + [shards] + options, here),
            "privatize, shards --scheduler local:2": (command + [shards] + options + ["--scheduler", "local:2"], here),
            "gensim": ([sys.executable, "-c", GENSIM_CHILD, str(path), str(ordinary_words(path))], here)}


def timed(args: list[str], cwd: Path) -> tuple[float, float, str, float]:
    """(wall seconds, CPU seconds, stdout, peak resident MB of the largest process) of one command in a subprocess
    with BLAS threads pinned, run in ``cwd`` with its ``topicdp`` first on the path."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.update(PYTHONPATH=str(cwd), PYTHONDONTWRITEBYTECODE="1")  # another checkout is only read
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=cwd)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)  # the child's usage, its reaped workers' included
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"failed: {' '.join(args)}\n{err.read()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, out, usage.ru_maxrss / 1024


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("blogs", "blogs-more"), default="blogs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--word-list", type=Path, default=None)
    ap.add_argument("--before", type=Path, default=None, help="another checkout whose privatize is timed too")
    ap.add_argument("--user-level", type=Path, default=None, help="a user-level file to release instead (docstring)")
    a = ap.parse_args(argv)
    corpus = a.user_level or nearest(BLOGS if a.corpus == "blogs" else BLOGS_MORE)
    if not corpus.exists():
        print(f"skipped: {corpus} is absent")
        return 0
    out = tempfile.mktemp(suffix=".json")
    if a.user_level is not None:
        sides = user_level_sides(corpus, out)
        if a.before is not None:  # the in-memory and streamed releases from the other checkout
            for name in ("privatize", "privatize, shards streamed"):
                sides[f"{name} (before)"] = (sides[name][0], a.before.resolve())
        print(f"user level: {corpus}; load before {load()}; {os.cpu_count()} cores", flush=True)
    else:
        words = word_list(a.word_list)
        ours = [sys.executable, "-m", "topicdp.cli", "privatize", str(corpus), "--unit", "document", "--vocabulary",
                str(words), "--epsilon", "3", "--delta", "1e-6", "--topics", "10", "--seed", "0", "--out", out,
                "--overwrite"]
        theirs = [sys.executable, "-c", GENSIM_CHILD, str(corpus), str(words)]
        here = Path(__file__).resolve().parents[2]
        sides = {"privatize": (ours, here), "gensim": (theirs, here)}
        if a.before is not None:
            sides["privatize (before)"] = (ours, a.before.resolve())
        print(f"{a.corpus}: {corpus}; word list {words}; load before {load()}; {os.cpu_count()} cores", flush=True)
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
    n_docs = 0
    for r in range(a.repeats):
        for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            args, cwd = sides[name]
            wall, cpu, printed, peak = timed(args, cwd)
            if name == "gensim":
                result = json.loads(printed.strip().splitlines()[-1])
                wall, cpu, n_docs = result["fit"], result["cpu"], result["n_docs"]
            times[name].append((wall, cpu, peak))
            print(f"round {r + 1}: {name} {wall:.1f} s, CPU {cpu:.1f} s, peak {peak:.0f} MB (load {load()})",
                  flush=True)
    median = {name: [statistics.median(t[i] for t in runs) for i in (0, 1, 2)] for name, runs in times.items()}
    print(f"\n| {n_docs:,} posts | median wall s | runs (s) | median CPU s | peak MB |\n|---|---:|---|---:|---:|")
    for name, runs in times.items():
        label = ("gensim LdaModel, one pass (fit only; peak: the whole child)" if name == "gensim"
                 else f"topicdp {name} (whole command)")
        print(f"| {label} | {median[name][0]:.1f} | {', '.join(f'{t[0]:.1f}' for t in runs)} | {median[name][1]:.1f} "
              f"| {median[name][2]:.0f} |")
    for name in sides:
        if name != "gensim":
            print(f"\n{name} / one gensim pass: wall {median[name][0] / median['gensim'][0]:.2f}, "
                  f"CPU {median[name][1] / median['gensim'][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
