"""Releases of the README's commands and of the demo, with fixed seeds: one line per release with the SHA-256 of its
topic-word matrix and of its published JSON, so that two versions of the package can be compared bit for bit.

Each release is one ``topicdp`` command run in a fresh process against the package in ``--code DIR`` (a checkout,
put first on ``PYTHONPATH``; the default is the checkout this script sits in), with ``--seed 1`` (the noise),
the default sampler and model seeds, and ``--n-jobs 1`` (one core). A line reads::

    NAME  matrix=SHA256  json=SHA256            (a release)
    NAME  exit=N  LAST LINE OF STDERR            (no release file: a refusal or an error)

``matrix`` hashes the released topic-word matrix as C-ordered float64 bytes (``topic_word`` of the published JSON:
its floats are written with ``repr``, so they read back to the very doubles released). ``json`` hashes the
published JSON with volatile fields removed: keys with a word (between underscores) ``time``, ``seconds``,
``elapsed``, ``duration``, ``date``, ``created``, ``version`` or ``path``, and the scratch directory replaced by
``<tmp>`` in every string; dumped with sorted keys. (At 068ce5e and f52fbb2 the published JSON holds none of these:
the removal guards against a version that adds one.)

Corpora: the demo's own (``topicdp demo``: the generated themed corpus on its public word list; ``--guarantee
random-dp``: the Lee texts), ``embedded`` (the built-in Lee news texts, one document per user; for ``--reference`` and
``--vocabulary`` its 300 texts are cut in two by a hash of the user id: the public half is the reference and
gives the word list, the private half is released) and, when ``../shared/data/blogs`` exists, ``blogs``
(bloggers cut by a hash of their id into a public reference, about 400 users, a private file of about 600,
released with ``--user-fraction 0.5``: about 300 users, and a second private file of about 200 users whose number
is stated with ``--n-units``). The word lists are built by scikit-learn's
``CountVectorizer`` on the public part, not by the package, so the inputs are the same whatever ``--code`` is.

Every command carries ``--release-anyway`` where the plan could refuse (a refusal publishes nothing to compare;
the published JSON still records the plan's verdict). ``topicdp compare --quick`` is left out: the README gives it
4.8 minutes for 1,200 bloggers on 2 cores, more than this whole run may take.

Run (4 to 6 minutes on one core of a shared machine)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/refactors/release_identity.py                      # this checkout
    OPENBLAS_NUM_THREADS=1 python benchmarks/refactors/release_identity.py --code ../base       # another one
    ... --only embedded        # the embedded corpus only (about 1 minute)
    ... --only embedded --release demo-random-dp --keep DIR   # one release, its files kept in DIR
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from _data import BLOGS, available, nearest, records, user_share  # noqa: E402

SALT = "release_identity"
VOLATILE = re.compile(r"(^|_)(time|times|seconds|elapsed|duration|date|created|version|path)($|_)", re.I)
RUNNER = "import sys; from topicdp.cli import main; sys.exit(main())"


def _write_jsonl(path: Path, rows) -> int:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        n = 0
        for row in rows:
            fh.write(json.dumps(row) + "\n")
            n += 1
    return n


def _word_list(path: Path, texts, *, min_df: int, max_features: int) -> int:
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(min_df=min_df, max_df=0.5, max_features=max_features, stop_words="english",
                          token_pattern=r"(?u)\b[a-z][a-z]+\b", lowercase=True)
    vec.fit(texts)
    words = sorted(vec.vocabulary_)
    path.write_text("".join(w + "\n" for w in words), encoding="utf-8")
    return len(words)


def prepare_embedded(tmp: Path) -> dict:
    """The embedded texts (gensim's ``lee_background.cor``, read here, not by the package) cut into halves."""
    from gensim.test.utils import datapath

    with open(datapath("lee_background.cor"), encoding="latin-1") as fh:
        texts = [line.strip() for line in fh if line.strip()]
    rows = [{"user": f"lee{i:03d}", "text": t} for i, t in enumerate(texts)]
    public = [r for r in rows if user_share(r["user"], SALT) >= 0.5]
    private = [r for r in rows if user_share(r["user"], SALT) < 0.5]
    files = {"public": tmp / "lee_public.jsonl.gz", "private": tmp / "lee_private.jsonl.gz",
             "words": tmp / "lee_words.txt"}
    _write_jsonl(files["public"], public)
    _write_jsonl(files["private"], private)
    n_words = _word_list(files["words"], [r["text"] for r in public], min_df=2, max_features=2000)
    print(f"# embedded: {len(private)} private texts, {len(public)} public, {n_words} public words", flush=True)
    return {k: str(v) for k, v in files.items()} | {"n_private": len(private)}


def prepare_blogs(tmp: Path) -> dict:
    """Bloggers by a hash of their id: [0, 0.15) private (released with --user-fraction 0.5), [0.15, 0.2) a second
    private file whose number of users is stated (--n-units), [0.5, 0.6) public."""
    path = nearest(BLOGS)
    files = {"public": tmp / "blogs_public.jsonl.gz", "private": tmp / "blogs_private.jsonl.gz",
             "counted": tmp / "blogs_counted.jsonl.gz", "words": tmp / "blogs_words.txt"}
    parts: dict[str, list] = {"public": [], "private": [], "counted": []}
    for r in records(path):
        share = user_share(r["user"], SALT)
        part = "private" if share < 0.15 else "counted" if share < 0.2 else "public" if 0.5 <= share < 0.6 else None
        if part is not None:
            parts[part].append({"user": r["user"], "text": r["text"]})
    for part, rows in parts.items():
        _write_jsonl(files[part], rows)
    n_words = _word_list(files["words"], [r["text"] for r in parts["public"]], min_df=5, max_features=2000)
    users = {part: len({r["user"] for r in rows}) for part, rows in parts.items()}
    print(f"# blogs: {users['private']} private users ({len(parts['private'])} posts; --user-fraction 0.5 keeps "
          f"about half), {users['counted']} counted users, {users['public']} public users, {n_words} public words",
          flush=True)
    return {k: str(v) for k, v in files.items()} | {"n_counted": users["counted"]}


def releases(corpus: str, f: dict) -> list[tuple[str, list[str]]]:
    """(name, arguments of ``topicdp``) of every release on ``corpus``; ``f`` holds its input files."""
    anyway = ["--release-anyway"]
    if corpus == "embedded":
        priv, pub, words = f["private"], f["public"], f["words"]
        n = str(f["n_private"])
        return [
            ("demo", ["demo"]),
            ("demo-document", ["demo", "--unit", "document"]),
            ("demo-random-dp", ["demo", "--guarantee", "random-dp", "--gamma", "0.1", "--sizing", "exchangeable",
                                *anyway]),
            ("embedded-user", ["privatize", "embedded", "--topics", "10", "--epsilon", "3", *anyway]),
            ("embedded-document", ["privatize", "embedded", "--unit", "document", "--epsilon", "3", *anyway]),
            ("lee-vocabulary", ["privatize", priv, "--vocabulary", words, "--epsilon", "3", *anyway]),
            ("lee-vocabulary-document", ["privatize", priv, "--vocabulary", words, "--unit", "document", *anyway]),
            ("lee-reference", ["privatize", priv, "--reference", pub, "--epsilon", "3", *anyway]),
            ("lee-n-units", ["privatize", priv, "--vocabulary", words, "--n-units", n, *anyway]),
            ("lee-spectral-1", ["privatize", priv, "--vocabulary", words, "--mechanism", "spectral-config-1",
                                "--n-units", n, "--unit", "document", "--epsilon", "10", *anyway]),
            ("lee-wrap-sklearn-lda", ["privatize", priv, "--guarantee", "random-dp", "--model", "sklearn-lda",
                                      "--reference", pub, "--gamma", "0.2", "--sizing", "exchangeable", *anyway]),
        ]
    priv, pub, words = f["private"], f["public"], f["words"]
    sub = ["--user-fraction", "0.5"]
    return [
        ("blogs-dp-vocabulary", ["privatize", priv, *sub, "--max-docs-per-user", "20", "--topics", "10",
                                 "--epsilon", "3", *anyway]),
        ("blogs-dp-vocabulary-document", ["privatize", priv, *sub, "--max-tokens-per-doc", "200", "--unit",
                                          "document", "--epsilon", "3", *anyway]),
        ("blogs-reference", ["privatize", priv, *sub, "--max-docs-per-user", "20", "--reference", pub,
                             "--topics", "10", "--epsilon", "3", *anyway]),
        ("blogs-vocabulary-document", ["privatize", priv, *sub, "--max-tokens-per-doc", "200", "--vocabulary",
                                       words, "--unit", "document", "--epsilon", "3", *anyway]),
        ("blogs-n-units", ["privatize", f["counted"], "--max-docs-per-user", "20", "--vocabulary", words,
                           "--n-units", str(f["n_counted"]), "--epsilon", "3", *anyway]),
        ("blogs-n-units-spectral-2", ["privatize", f["counted"], "--max-docs-per-user", "20", "--vocabulary",
                                      words, "--n-units", str(f["n_counted"]), "--mechanism", "spectral-config-2",
                                      "--epsilon", "10", *anyway]),
    ]


def _clean(value, tmp: str):
    if isinstance(value, dict):
        return {k: _clean(v, tmp) for k, v in value.items() if not VOLATILE.search(str(k))}
    if isinstance(value, list):
        return [_clean(v, tmp) for v in value]
    if isinstance(value, str):
        return value.replace(tmp, "<tmp>")
    return value


def digests(path: Path, tmp: str) -> tuple[str, str]:
    """SHA-256 of the topic-word matrix (float64 bytes) and of the published JSON without its volatile fields."""
    import numpy as np

    data = json.loads(path.read_text(encoding="utf-8"))
    matrix = np.ascontiguousarray(np.asarray(data["topic_word"], dtype=np.float64))
    published = json.dumps(_clean(data, tmp), sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(matrix.tobytes()).hexdigest(), hashlib.sha256(published.encode()).hexdigest()


def run(name: str, args: list[str], code: Path, tmp: Path) -> str:
    out = tmp / f"{name}.json"
    env = dict(os.environ, PYTHONPATH=str(code), OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               TOPICDP_PROGRESS="0", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-c", RUNNER, *args, "--seed", "1", "--n-jobs", "1", "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    print(f"#   {name}: {seconds:.1f} s", file=sys.stderr, flush=True)
    if out.exists():
        matrix, published = digests(out, str(tmp))
        return f"{name:28s} matrix={matrix}  json={published}"
    last = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or [""])[-1]
    return f"{name:28s} exit={proc.returncode}  {last.replace(str(tmp), '<tmp>')[:160]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=REPO,
                        help="a checkout whose topicdp package runs the commands (default: this one)")
    parser.add_argument("--only", choices=("embedded", "blogs"), default=None)
    parser.add_argument("--release", action="append", default=None, metavar="NAME",
                        help="run only this release (repeat for more; the names of the output's lines)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="a new directory to keep the inputs and releases in (default: a temporary one)")
    args = parser.parse_args(argv)
    code = args.code.resolve()
    if not (code / "topicdp" / "__init__.py").exists():
        parser.error(f"--code {args.code}: no topicdp package there")
    head = subprocess.run(["git", "-C", str(code), "log", "-1", "--format=%h", "--", "topicdp"],
                          capture_output=True, text=True)  # the last commit that changed the package
    print(f"# code: topicdp/ as of {head.stdout.strip() or '(not a git checkout)'}")
    corpora = ["embedded", "blogs"] if args.only is None else [args.only]
    if args.keep is not None:
        args.keep.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="release_identity_") as tmp_name:
        tmp = Path(tmp_name) if args.keep is None else args.keep.resolve()
        for corpus in corpora:
            if corpus == "blogs" and not available(nearest(BLOGS)):
                print("# blogs: skipped (../shared/data/blogs/blogs.jsonl.gz is absent)")
                continue
            files = prepare_embedded(tmp) if corpus == "embedded" else prepare_blogs(tmp)
            for name, cmd in releases(corpus, files):
                if args.release is not None and name not in args.release:
                    continue
                print(run(name, cmd, code, tmp), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
