"""The ``topicdp`` command: parse the flags into a :class:`topicdp.pipeline.ReleaseRequest`, print the plan,
run it, write the files. It holds no policy: the budget split, the gates and the mechanisms are the
pipeline's (:mod:`topicdp.pipeline`)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

# the fits are parallelised across processes (or chosen threads); BLAS or numba threads inside would only contend
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")


# Building the parser imports only argparse and these tiny pure-Python modules (``topicdp --help`` stays fast,
# tests/test_cli_help.py checks that numpy is not loaded); heavy imports happen inside the commands.
from ._argparse import REQUEST_FLAGS, LazyParser, add_ledger_arguments, agnostic_option, cli_words, flag
from ._extras import MissingExtraError, require
from ._progress import shown_on_stderr
from ._files import add_overwrite_argument, check_file_flags, run_interruptible, wrote
from ._names import RELEASE_DEFAULTS as D
from ._names import (FORECAST_MECHANISMS, GUARANTEE_SUMMARIES, MECHANISM_SUMMARIES, MODEL_SUMMARIES, MODELS,
                     RIGOROUS_MECHANISMS, SENSITIVITIES, SENSITIVITY_SUMMARIES, UNITS)


def _add_privacy_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--guarantee", choices=tuple(GUARANTEE_SUMMARIES), default=None,
                   help="dp (default): (epsilon, delta)-DP by the mechanism the forecast rule picks (topicdp.pipeline); "
                        "random-dp: TopicDP over --model with a sampled sensitivity (NOT DP; needs --reference)")
    p.add_argument("--mechanism", choices=RIGOROUS_MECHANISMS, default=None, metavar="MECHANISM",
                   help="with --guarantee dp: use this mechanism instead of the rule's choice (listed below)")
    p.add_argument("--sensitivity", choices=SENSITIVITIES, default=None,
                   help="TopicDP's sensitivity: sampled (= --guarantee random-dp) or global (= --guarantee dp with "
                        "--mechanism gaussian-global, or laplace if named)")
    p.add_argument("--secure-noise", action="store_true",
                   help="TopicDP's Gaussian noise as an exact discrete Gaussian (Canonne, Kamath & Steinke 2020) "
                        "instead of floating-point sampling; random-dp or --mechanism gaussian-global; "
                        "--calibration auto or rdp")
    p.add_argument("--release-anyway", action="store_true",
                   help="release even when the forecast says the topics will be noise")
    p.add_argument("--model", default="gensim-lda", metavar="MODEL",
                   help="topic model of TopicDP (random-dp, gaussian-global, laplace; listed below); "
                        "default gensim-lda")
    p.add_argument("--topics", type=int, default=D.n_topics, help="number of topics K (default %(default)s)")
    p.add_argument("--epsilon", type=float, default=D.epsilon, help="epsilon > 0 (default %(default)g)")
    p.add_argument("--delta", type=float, default=D.delta, help="delta in (0, 1) (default %(default)g)")
    p.add_argument("--gamma", type=float, default=0.1, help="random-DP confidence in (0, 0.5) (default 0.1)")
    p.add_argument("--unit", choices=UNITS, default=D.unit, help="privacy unit (default %(default)s)")
    p.add_argument("--n-units", type=int, default=None, metavar="N",
                   help="state the number of units public: neighbours are then replace-one with N units (default: "
                        "private, add/remove neighbours, and the plan reads a DP count of the units)")
    p.add_argument("--calibration", choices=("auto", "analytic", "rdp", "paper"), default="auto")
    p.add_argument("--n-jobs", type=int, default=D.n_jobs,
                   help="parallel workers: dp-vem's E-step threads, the sampler's model fits (default %(default)s; "
                        "-1 every core)")
    p.add_argument("--seed", type=int, default=None,
                   help="noise seed (testing only: the release is marked seeded and must not be published)")
    p.add_argument("--sampler-seed", type=int, default=0, help="seed of the neighbour-pair draws (default 0)")
    p.add_argument("--model-seed", type=int, default=0, help="seed of the model (default 0)")
    p.add_argument("--cache-dir", default=None, help="cache sampled sensitivities here")
    p.add_argument("--sizing", choices=("lambert-w", "exchangeable"), default="lambert-w",
                   help="pairs for gamma: lambert-w (TopicDP Thm. 1, sample-conditional; 285 at gamma=0.1) or "
                   "exchangeable (marginal over the sample and the pair; 9 at gamma=0.1) (default lambert-w)")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="refuse to start sensitivity sampling forecast to take longer (from the first fit's time)")
    p_dist = p.add_mutually_exclusive_group()
    p_dist.add_argument("--reference", default=None, metavar="PUBLIC.jsonl",
                        help="public reference corpus (same format): random-dp draws P from it (sigma is then "
                             "public); dp-vem, and random-dp's vem, gensim-lda, sklearn-lda and sklearn-nmf, start from topics "
                             "fitted on it")
    p_dist.add_argument("--private-oracle", action="store_true",
                        help="let the sampler resample the private corpus itself (TopicDP's choice); sigma then "
                             "depends on the private data and the report says what that leaks")
    p.add_argument("--diagnostics", default=None, metavar="PATH",
                   help="write the owner's private diagnostics here (never publish this file)")
    p.add_argument("--plot", default=None, metavar="FILE.png",
                   help="draw the release: top words of each topic with their released probabilities "
                        "(needs matplotlib: pip install \"topicdp[plots]\")")
    p.add_argument("--html", default=None, metavar="FILE.html",
                   help="write an interactive view of the release (topic map, term bars with a relevance slider); "
                        "computed from the published part only, so it can be published with it")
    p.add_argument("--show-nonprivate", action="store_true",
                   help="also show the non-private top words (printed, and beside each topic in --plot) where the "
                        "mechanism keeps them (TopicDP's): for the data owner only, never publish")
    p.add_argument("--n-pairs", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--insecure-testing", action="store_true", help=argparse.SUPPRESS)


def _catalogue() -> str:
    """The models, mechanisms and guarantees, one entry each, for the ``--help`` of privatize and demo."""
    import textwrap

    width = max(map(len, [*MODELS, *RIGOROUS_MECHANISMS]))

    def table(rows: dict[str, str]) -> list[str]:
        return [textwrap.fill(line, 110, initial_indent=f"  {name:<{width}}  ", subsequent_indent=" " * (width + 4))
                for name, line in rows.items()]

    return "\n".join([
        "guarantees (--guarantee):", *table(GUARANTEE_SUMMARIES), "",
        f"mechanisms of --guarantee dp (--mechanism; by default the forecast picks among "
        f"{', '.join(FORECAST_MECHANISMS)}):", *table(MECHANISM_SUMMARIES), "",
        "sensitivity of TopicDP (--sensitivity):", *table(SENSITIVITY_SUMMARIES), "",
        "models (--model; the topic model TopicDP perturbs):", *table(MODEL_SUMMARIES),
    ])


def _add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help="a JSON Lines (.jsonl, .jsonl.gz), Parquet (.parquet) or CSV (.csv) file with user "
                   "and text fields; a database URL with --query (sqlite:///posts.db); 'embedded'; or a directory or "
                   "glob of such files, streamed shard by shard (each user's documents in one shard)")
    p.add_argument("--query", default=None, metavar="SQL",
                   help="with a database URL as the corpus: the query whose rows are the records, e.g. \"SELECT "
                        "author AS user, body AS text FROM posts ORDER BY id\" (needs pip install \"topicdp[sql]\")")
    p.add_argument("--scheduler", default=None, metavar="local:N|ADDRESS",
                   help="run a sharded corpus' passes on Dask: N local worker processes, or a scheduler's address")
    p.add_argument("--work-dir", default=None, help="where a sharded corpus' count shards go (default: a temp dir)")
    p.add_argument("--text-field", default=D.text_field, help="the records' text field (default %(default)s)")
    p.add_argument("--user-field", default=D.user_field, help="the records' user id field (default %(default)s)")
    p.add_argument("--max-features", type=int, default=D.max_features,
                   help="vocabulary size limit (default %(default)s)")
    p.add_argument("--min-df", type=int, default=D.min_df, help="with a vocabulary built from the texts (random-dp): "
                   "minimum document frequency of a word (default %(default)s)")
    p.add_argument("--max-df", type=float, default=D.max_df, help="with a vocabulary built from the texts (random-dp): "
                   "drop words in more than this share of documents (default %(default)s)")
    p.add_argument("--max-docs-per-user", type=int, default=None, help="contribution bound (>= 1; default: none)")
    p.add_argument("--max-tokens-per-doc", type=int, default=None, help="contribution bound (>= 1; default: none)")
    p.add_argument("--max-tokens-per-user", type=int, default=None,
                   help="contribution bound across a user's documents (>= 1; default: none; user level)")
    p.add_argument("--stop-words", default=None, metavar="FILE|web",
                   help="more words to drop from every text (one per line; 'web': markup and contraction artefacts "
                        "such as urllink, nbsp, don), from the reference and a --vocabulary list alike")
    p.add_argument("--user-fraction", type=float, default=None, metavar="P",
                   help="keep the users whose id hashes below P in (0, 1]: a per-user rule, so one user's presence "
                        "never changes another's")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="public word list (one word per line, '#' comments): the columns, at no privacy cost")
    p.add_argument("--vocabulary-epsilon", type=float, default=None,
                   help="epsilon of the DP vocabulary selection (default 20%% of --epsilon; at most --max-features words)")
    p.add_argument("--vocabulary-delta", type=float, default=None,
                   help="delta of the DP vocabulary selection (default half of --delta)")


def build_request(args):
    """The :class:`~topicdp.pipeline.ReleaseRequest` the flags describe (validated; nothing is read), made by the
    one translation of options into a request that :func:`topicdp.release` uses too."""
    from .pipeline import resolve_road
    from .pipeline.options import request_from_options

    guarantee, mechanism = resolve_road(args.guarantee, args.mechanism, args.sensitivity)
    return request_from_options(
        args.corpus, **{name: getattr(args, name, None) for name in REQUEST_FLAGS}, n_topics=args.topics,
        guarantee=guarantee, mechanism=mechanism, agnostic=agnostic_option(args), keep_nonprivate=args.show_nonprivate)


def check_arguments(args) -> None:
    """Every flag of ``privatize`` / ``demo`` before anything is read: files, extras, the request's validation."""
    check_file_flags(args, ("--out", "--diagnostics", "--html", "--plot"),
                     ("corpus", "--reference", "--vocabulary", "--stop-words", "--ledger"))
    if getattr(args, "plot", None) is not None:
        require("matplotlib", extra="plots", purpose="--plot")
    if args.scheduler is not None:
        require("dask.distributed", extra="cluster", purpose="--scheduler")
    if getattr(args, "period", None) is None:
        given = [f for f, v in (("--date-format", getattr(args, "date_format", None)),
                                ("--periods", getattr(args, "periods", None))) if v is not None]
        if given:  # they shape only a release over time: silently ignoring one would hide a typo'd command
            raise ValueError(f"{given[0]} applies only to a release over time: add --period month|quarter "
                             "(and --periods START:END), or leave it out")
    if getattr(args, "top", 10) < 1:
        raise ValueError(f"--top must be an integer >= 1, got {args.top}")
    if args.cache_dir is not None and os.path.exists(args.cache_dir) and not os.path.isdir(args.cache_dir):
        raise ValueError(f"--cache-dir: {args.cache_dir} exists and is not a directory")
    try:
        args.request = build_request(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:  # the library names its parameters; the user typed flags
        name, _, rest = cli_words(str(exc)).partition(" ")
        key = name.rstrip(":")  # "reference: no such file" names --reference
        raise type(exc)(f"{flag(key)}{name[len(key):]} {rest}") from None


def format_topics(topics, title: str) -> str:
    return "\n".join([title] + [f"  {i:>2}  " + " ".join(w for w, _ in topic) for i, topic in enumerate(topics)])


def cmd_privatize(args, truth=None) -> int:
    """Print the plan, run the request, print the topics and the report, write the files."""
    from .pipeline import release

    start = time.perf_counter()
    result = release(args.request, echo=lambda line: print(cli_words(line)))
    _show(args, result.release, time.perf_counter() - start, truth)
    failed = [c.name for c in result.release.report.checks if not c.passed]
    if failed:  # exit status 3: a run-time check of the release failed (its report says which)
        print(f"topicdp: the release's run-time checks failed: {', '.join(failed)} (see the report)", file=sys.stderr)
        return 3
    return 0


def _show(args, release, elapsed: float, truth=None) -> None:
    from .plots import plot_release  # neither loads matplotlib until it draws
    from .view import release_html

    nonprivate = args.show_nonprivate and release.nonprivate is not None
    if nonprivate:
        print(format_topics(release.nonprivate_top_words(args.top), "top words before noise (NOT PRIVATE):"))
    print(f"\nreleased: {release.report.headline().split(maxsplit=1)[1]}")  # the guarantee first, then the topics
    print(format_topics(release.top_words(args.top), f"top words of the release ({release.report.mechanism}):"))
    if truth is not None:
        from .metrics.readability import topic_overlap

        for name, topics in truth:
            print(f"\nmatched top-10 overlap with {name}: {topic_overlap(release.topic_word, topics):.2f} "
                  "(0 = unrelated, 1 = identical)")
    print("\nprivacy report:\n" + release.report.summary())
    print(f"\nwall time {elapsed:.1f} s")
    if args.out:  # each write is atomic (topicdp._files); the paths were checked before anything was read
        release.save(args.out, overwrite=args.overwrite)
        wrote(args, "--out", f"release written to {args.out} (published part only: DP outputs and public parameters)")
    if args.diagnostics:
        release.save_diagnostics(args.diagnostics, overwrite=args.overwrite)
        wrote(args, "--diagnostics", f"private diagnostics written to {args.diagnostics} (owner only; do not publish)")
    if args.html:
        release_html(release, args.html, overwrite=args.overwrite)
        wrote(args, "--html", f"interactive view written to {args.html} (published part only; open it in a browser)")
    if args.plot:
        plot_release(release, args.plot, n_words=args.top, show_nonprivate=nonprivate, overwrite=args.overwrite)
        wrote(args, "--plot", f"picture of the release written to {args.plot}" + (
            " (it shows NON-PRIVATE topics: for the data owner only, do not publish)" if nonprivate else ""))


def cmd_demo(args) -> int:
    """A release that works, end to end, in seconds: ``--guarantee dp`` on a generated corpus with ten known
    topics (:func:`topicdp.datasets.themed_corpus`), compared with them; ``--guarantee random-dp``: TopicDP over
    gensim LDA on the embedded Lee news corpus, its first 150 documents playing the public reference P."""
    from .datasets import themed_corpus
    from .topics import reference_lda

    args.top = 8
    if args.request.guarantee == "dp":
        print("topicdp demo: a GENERATED corpus with ten known topics (2,000 users x 5 documents; not real text),")
        print(f"released under ({args.epsilon:g}, {args.delta:g})-DP at the {args.unit} level; its word list is public\n")
        corpus, truth = themed_corpus()
        return cmd_privatize(args, truth=[("the generating topics", truth), (
            "a non-private gensim LDA of the same corpus (the forecast's scale; the forecast assumes real text, "
            "where dp-vem's and LDA's topics agree about 0.3 without noise: on ten well-separated generated topics "
            "they agree more)", reference_lda(corpus, 10))])
    from .pipeline import ReleaseRefused

    print("topicdp demo: gensim LDA on the embedded Lee news corpus (150 documents, one per user; the other 150 "
          f"as the public reference P),\nreleased with TopicDP (random DP, NOT DP) at epsilon={args.epsilon:g}, "
          f"delta={args.delta:g}, gamma={args.gamma:g}\n")
    try:
        return cmd_privatize(args)
    except ReleaseRefused as refused:  # what this demo shows at 150 users: the forecast refuses before the noise
        print(f"\nthe demo ends with a refusal, as expected at this size: {refused}")
        return 0


def _populate(module: str):  # the parser of a command in ``module``, imported only when that command is used
    return lambda p: importlib.import_module(module, __package__).populate(p)


def build_parser() -> argparse.ArgumentParser:
    """The ``topicdp`` parser. Building it imports no numerical library (tests/test_cli_help.py)."""
    from importlib.metadata import version

    parser = argparse.ArgumentParser(prog="topicdp", description="Differentially private topic models.",
                                     epilog="Each command's --help lists its options; privatize's lists the "
                                            "models, mechanisms and guarantees.")
    parser.add_argument("--version", action="version", version=f"topicdp {version('topicdp')}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=LazyParser)
    catalogue = _catalogue()
    for name, text in (("privatize", "release topics of a corpus under DP (or random DP with TopicDP)"),
                       ("demo", "a private release of a generated corpus with known topics (a few seconds)")):
        p = sub.add_parser(name, help=text, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=catalogue)
        if name == "privatize":
            _add_corpus_arguments(p)
            add_ledger_arguments(p)
        else:  # the demo's corpus is generated: the corpus flags' defaults, none of them offered
            corpus_flags = argparse.ArgumentParser(add_help=False)
            _add_corpus_arguments(corpus_flags)
            p.set_defaults(**vars(corpus_flags.parse_args(["themed"])))
        _add_privacy_arguments(p)
        p.add_argument("--out", default=None, help="write the release (JSON) here")
        add_overwrite_argument(p)
        p.add_argument("--top", type=int, default=10, help="top words shown per topic (and drawn by --plot)")
        p.set_defaults(func=cmd_privatize if name == "privatize" else cmd_demo, check=check_arguments)
    sub.add_parser("compare", help="compare every road on one corpus: a table of private scores",
                   populate=_populate(".compare_cli"))
    sub.add_parser("audit", help="empirically lower-bound the epsilon of a mechanism on a canary",
                   populate=_populate(".audit.cli"))
    sub.add_parser("ledger", help="create, show or reseal a persisted privacy ledger", populate=_populate(".rdp.ledger_cli"))
    sub.add_parser("evaluate", help="a release's NPMI and contrast on the private corpus, under DP (spends budget)",
                   populate=_populate(".evaluate_cli"))
    return parser


def main(argv=None) -> int:
    with shown_on_stderr():
        args = build_parser().parse_args(argv)
        try:  # every argument checked before any reading; Ctrl-C and SIGTERM unwind, then one line and 130/143
            return run_interruptible(args)
        except (ValueError, TypeError, OSError, MissingExtraError) as exc:
            print(f"topicdp: error: {cli_words(str(exc))}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
