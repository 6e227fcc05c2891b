"""The ``topicdp`` command: ``privatize``, ``demo`` (and the subcommands other modules register)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# the 2h fits are parallelised across processes; BLAS threads inside them would only contend
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


def _add_privacy_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="gensim-lda", help="model (see topicdp.adapters.MODELS); default gensim-lda")
    p.add_argument("--topics", type=int, default=10, help="number of topics K (default 10)")
    p.add_argument("--epsilon", type=float, default=3.0, help="epsilon > 0 (default 3)")
    p.add_argument("--delta", type=float, default=1e-4, help="delta in (0, 1) (default 1e-4)")
    p.add_argument("--gamma", type=float, default=0.1, help="random-DP confidence in (0, 0.5) (default 0.1)")
    p.add_argument("--unit", choices=("user", "document"), default="user", help="privacy unit (default user)")
    p.add_argument("--calibration", choices=("auto", "analytic", "rdp", "paper"), default="auto")
    p.add_argument("--n-jobs", type=int, default=2, help="parallel model fits (default 2)")
    p.add_argument("--seed", type=int, default=None, help="noise seed (testing only: the release is marked seeded)")
    p.add_argument("--sampler-seed", type=int, default=0, help="seed of the neighbour-pair draws (default 0)")
    p.add_argument("--model-seed", type=int, default=0, help="seed of the model (default 0)")
    p.add_argument("--cache-dir", default=None, help="cache sampled sensitivities here")
    p.add_argument("--n-pairs", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--insecure-testing", action="store_true", help=argparse.SUPPRESS)


def _add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("corpus", help="JSON Lines file (.jsonl or .jsonl.gz) with user and text fields, or 'embedded'")
    p.add_argument("--text-field", default="text")
    p.add_argument("--user-field", default="user")
    p.add_argument("--max-features", type=int, default=5000, help="vocabulary size limit (default 5000)")
    p.add_argument("--min-df", type=int, default=5, help="minimum document frequency of a word (default 5)")
    p.add_argument("--max-df", type=float, default=0.5, help="drop words in more than this share of documents (default 0.5)")
    p.add_argument("--max-docs-per-user", type=int, default=None)
    p.add_argument("--max-tokens-per-doc", type=int, default=None)
    p.add_argument("--users", type=int, default=None, help="use only the first N users of the file (a documented subset)")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="public word list (one word per line, '#' comments): the columns, at no privacy cost; "
                        "--min-df/--max-df/--max-features are then not used")
    p.add_argument("--vocabulary-epsilon", type=float, default=None,
                   help="select the vocabulary from the texts under DP at --unit with this epsilon "
                        "(at most --max-features words; --min-df/--max-df are then not used)")
    p.add_argument("--vocabulary-delta", type=float, default=None, help="delta of the DP vocabulary selection")


def load_corpus(args):
    """The corpus of ``args``; with a DP-selected vocabulary, ``args.vocabulary_selection`` holds its
    :class:`topicdp.vocabulary.DPVocabulary`, whose budget the release must compose (else None)."""
    from .corpus import Corpus, embedded_corpus

    words = _public_or_checked_vocabulary(args)  # before the corpus is read: errors come early
    args.vocabulary_selection = None
    if words is not None or getattr(args, "vocabulary_epsilon", None) is not None:
        corpus = _corpus_with_vocabulary(args, words)
    elif args.corpus == "embedded":
        corpus = embedded_corpus()
    else:
        users = None
        if args.users is not None:
            users = _first_users(args.corpus, args.user_field, args.users)
        corpus = Corpus.from_jsonl(
            args.corpus,
            text_field=args.text_field,
            user_field=args.user_field,
            users=users,
            min_df=args.min_df,
            max_df=args.max_df,
            max_features=args.max_features,
        )
    if args.max_docs_per_user or args.max_tokens_per_doc:
        corpus = corpus.bound(args.max_docs_per_user, args.max_tokens_per_doc)
    return corpus


def _public_or_checked_vocabulary(args):
    from ._validation import check_delta, check_epsilon
    from .vocabulary import load_vocabulary

    path, eps, delta = (getattr(args, a, None) for a in ("vocabulary", "vocabulary_epsilon", "vocabulary_delta"))
    if path is not None and eps is not None:
        raise ValueError("--vocabulary (a public list) and --vocabulary-epsilon (a DP selection) exclude each other")
    if (eps is None) != (delta is None):
        raise ValueError("--vocabulary-epsilon and --vocabulary-delta must be given together")
    if eps is not None:
        check_epsilon(eps, "--vocabulary-epsilon")
        check_delta(delta, "--vocabulary-delta")
    return None if path is None else load_vocabulary(path)


def _corpus_with_vocabulary(args, words):
    import numpy as np

    from .corpus import Corpus, embedded_texts, read_jsonl_records
    from .vocabulary import select_vocabulary

    if args.corpus == "embedded":
        texts = embedded_texts()
        owners = list(range(len(texts)))  # one user per document, as embedded_corpus()
    else:
        users = None if args.users is None else _first_users(args.corpus, args.user_field, args.users)
        records = list(read_jsonl_records(args.corpus, args.text_field, args.user_field, users))
        texts, owners = [t for t, _ in records], [u for _, u in records]
    if words is None:
        seed = getattr(args, "seed", None)  # a stream of its own, never the release's noise
        args.vocabulary_selection = select_vocabulary(
            texts, owners, epsilon=args.vocabulary_epsilon, delta=args.vocabulary_delta,
            unit=getattr(args, "unit", "user"), max_features=args.max_features,
            random_state=None if seed is None else np.random.SeedSequence([seed, 1]))
        words = args.vocabulary_selection.words
        if not words:
            raise ValueError(f"no word passed the DP vocabulary threshold at --vocabulary-epsilon "
                             f"{args.vocabulary_epsilon:g}: too few {getattr(args, 'unit', 'user')}s for this budget "
                             "(raise the budget, or give a public --vocabulary)")
    return Corpus.from_texts(texts, owners, vocabulary=words)


def _first_users(path, user_field: str, n: int) -> list:
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    seen: dict = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                seen.setdefault(json.loads(line)[user_field], None)
                if len(seen) >= n:
                    break
    return list(seen)


def _make_privatizer(args):
    from .agnostic import TopicDP

    return TopicDP(
        args.epsilon,
        args.delta,
        args.gamma,
        unit=args.unit,
        calibration=args.calibration,
        n_jobs=args.n_jobs,
        random_state=args.seed,
        sampler_random_state=args.sampler_seed,
        n_pairs=args.n_pairs,
        insecure_testing=args.insecure_testing,
        cache_dir=args.cache_dir,
        progress=sys.stderr.isatty() or bool(os.environ.get("TOPICDP_PROGRESS")),
    )


def format_topics(topics, title: str) -> str:
    lines = [title]
    for i, topic in enumerate(topics):
        lines.append(f"  {i:>2}  " + " ".join(w for w, _ in topic))
    return "\n".join(lines)


def cmd_privatize(args) -> int:
    from .adapters import make_model

    corpus = load_corpus(args)
    print(f"corpus: {corpus}")
    for line in corpus.log.lines():
        print(f"  {line}")
    model = make_model(args.model, args.topics, args.model_seed)
    start = time.perf_counter()
    release = _make_privatizer(args).privatize(model, corpus, keep_nonprivate=args.show_nonprivate)
    elapsed = time.perf_counter() - start
    if args.show_nonprivate:
        from .metrics import l1_distance, rmse

        print(format_topics(release.nonprivate_top_words(args.top), "top words before noise (NOT PRIVATE):"))
        print(f"noise: L1 (mean row L2, TopicDP's convention) {l1_distance(release.noisy, release.nonprivate, convention='topicdp'):.4g}, "
              f"RMSE {rmse(release.noisy, release.nonprivate):.4g}, largest non-private entry {release.nonprivate.max():.4g}")
    print(format_topics(release.top_words(args.top), "top words of the release:"))
    print("\nprivacy report:\n" + release.report.summary())
    print(f"\nwall time {elapsed:.1f} s")
    if args.out:
        release.save(args.out)
        print(f"release written to {args.out}")
    return 0


def cmd_demo(args) -> int:
    """The whole agnostic road on the embedded corpus (gensim's Lee news corpus, one document per user)."""
    args.corpus = "embedded"
    args.max_docs_per_user = args.max_tokens_per_doc = None
    args.show_nonprivate = True
    args.top = 8
    print("topicdp demo: gensim LDA on the embedded Lee news corpus (300 documents, one per user),")
    print(f"released with TopicDP at epsilon={args.epsilon:g}, delta={args.delta:g}, gamma={args.gamma:g}\n")
    return cmd_privatize(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topicdp", description="Differentially private topic models.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("privatize", help="fit a topic model and release it with TopicDP")
    _add_corpus_arguments(p)
    _add_privacy_arguments(p)
    p.add_argument("--out", default=None, help="write the release (JSON) here")
    p.add_argument("--top", type=int, default=10, help="top words shown per topic")
    p.add_argument("--show-nonprivate", action="store_true", help="also print the non-private top words")
    p.set_defaults(func=cmd_privatize)

    p = sub.add_parser("demo", help="run the agnostic road on the embedded corpus")
    _add_privacy_arguments(p)
    p.add_argument("--out", default=None)
    p.set_defaults(func=cmd_demo)

    from .audit.cli import register as register_audit
    from .experiments.cli import register as register_compare

    register_compare(sub)
    register_audit(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"topicdp: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
