"""``topicdp compare``: the comparison harness from the command line."""

from __future__ import annotations

import sys

from .._files import add_overwrite_argument


def add_arguments(p) -> None:
    p.add_argument("corpus", nargs="?", default="embedded",
                   help="'embedded' (default) or a JSON Lines file (.jsonl[.gz]) with user and text fields")
    p.add_argument("--out", required=True, help="output directory (CSV, PNG plots, table.md); reruns resume (an "
                   "existing directory that holds no results.csv needs --overwrite)")
    p.add_argument("--quick", action="store_true", help="a small grid (minutes), as the tests use")
    p.add_argument("--no-spectral", action="store_true", help="skip the synthetic spectral-vs-DP-VI panel")
    p.add_argument("--no-table", action="store_true", help="skip the coherence/perplexity table")
    p.add_argument("--max-docs-per-user", type=int, default=20,
                   help="contribution bound of a real corpus (default 20: keeps the 2h fits of the full grid in budget)")
    p.add_argument("--max-features", type=int, default=2000)
    p.add_argument("--n-jobs", type=int, default=2)
    add_overwrite_argument(p)


def populate(p) -> None:
    """The ``compare`` sub-command's arguments and functions (``topicdp.cli`` calls it when compare is used)."""
    add_arguments(p)
    p.set_defaults(func=run, check=check_arguments)


def register(sub) -> None:
    populate(sub.add_parser("compare", help="compare mechanisms on one corpus: CSV, plots and a table"))


def load_split(path: str, max_docs_per_user: int, max_features: int, quick: bool):
    """Training corpus (bounded), held-out corpus and held-out token lists; every 5th user is held out."""
    from ..corpus import Corpus, embedded_texts, read_jsonl_records, tokenize

    if path == "embedded":
        texts = embedded_texts()
        users: list = list(range(len(texts)))
        name = "lee"
    else:
        records = list(read_jsonl_records(path))
        texts, users = [t for t, _ in records], [u for _, u in records]
        name = path.rsplit("/", 1)[-1].split(".")[0]
    order = {u: i for i, u in enumerate(dict.fromkeys(users))}
    held = [order[u] % 5 == 4 for u in users]
    train_texts = [t for t, h in zip(texts, held) if not h]
    train_users = [u for u, h in zip(users, held) if not h]
    if quick and path == "embedded":
        train_texts, train_users = train_texts[:120], train_users[:120]
    corpus = Corpus.from_texts(train_texts, train_users, min_df=2 if path == "embedded" else 5, max_df=0.5,
                               max_features=max_features)
    if path != "embedded":
        # a fixed seed keeps resumed runs on one corpus; bounding is per user, so any data-independent seed keeps DP
        corpus = corpus.bound(max_docs_per_user=max_docs_per_user, max_tokens_per_doc=500, random_state=0)
    held_texts = [t for t, h in zip(texts, held) if h]
    held_users = [u for u, h in zip(users, held) if h]
    heldout = Corpus.from_texts(held_texts, held_users, vocabulary=corpus.vocabulary)
    return corpus, heldout, tokenize(held_texts, vocabulary=corpus.vocabulary), name


def check_arguments(args) -> None:
    """Every argument of ``compare``, before the corpus is read."""
    from .._extras import require
    from .._files import check_output_directory
    from .._validation import check_int, check_n_jobs
    from ..pipeline.request import check_corpus_path

    require("matplotlib", extra="plots", purpose="compare's plots")  # before minutes of computing, not after
    check_corpus_path(args.corpus)
    check_output_directory(args.out, "--out", {"the corpus": args.corpus}, resumes="results.csv",
                           overwrite=args.overwrite)
    if args.max_docs_per_user < 1:
        raise ValueError(f"--max-docs-per-user must be an integer >= 1, got {args.max_docs_per_user}")
    check_int(args.max_features, "--max-features", low=1)
    check_n_jobs(args.n_jobs, "--n-jobs")


def run(args) -> int:
    from .compare import CompareGrid, compare

    corpus, heldout, held_tokens, name = load_split(args.corpus, args.max_docs_per_user, args.max_features, args.quick)
    grid = CompareGrid.quick() if args.quick else CompareGrid.full()
    grid.n_jobs = args.n_jobs
    args.written = [f"--out (the finished tasks, in {args.out}/results.csv: a rerun resumes)"]
    print(f"corpus {name}: {corpus} (held out: {heldout.n_docs} documents)", file=sys.stderr)
    result = compare(corpus, args.out, grid=grid, corpus_name=name, heldout=None if args.no_table else heldout,
                     heldout_texts=held_tokens, spectral=not args.no_spectral)
    print(f"results: {result['csv']}")
    print(f"plots:   {len(result['plots'])} PNG files in {args.out}")
    print(f"time:    {result['seconds']:.0f} s")
    return 0
