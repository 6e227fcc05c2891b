"""The ``topicdp`` command: ``privatize``, ``demo`` (and the subcommands other modules register)."""

from __future__ import annotations

import argparse
import os
import sys
import time

# the 2h fits are parallelised across processes; BLAS threads inside them would only contend
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")


# Building the parser imports only argparse and these tiny pure-Python modules (``topicdp --help`` stays fast,
# tests/test_cli_help.py checks that numpy is not loaded); heavy imports happen inside the commands.
from ._extras import MissingExtraError, require
from ._names import (FORECAST_MECHANISMS, GUARANTEE_SUMMARIES, MECHANISM_SUMMARIES, MODEL_SUMMARIES, MODELS, RIGOROUS_MECHANISMS,
                     SENSITIVITY_SUMMARIES, SENSITIVITIES)

MECHANISMS = RIGOROUS_MECHANISMS  # the name this module exported before topicdp._names


def _add_privacy_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--guarantee", choices=tuple(GUARANTEE_SUMMARIES), default=None,
                   help="dp (default): (epsilon, delta)-DP by the mechanism the forecast rule picks (topicdp.plan); "
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
    p.add_argument("--topics", type=int, default=10, help="number of topics K (default 10)")
    p.add_argument("--epsilon", type=float, default=3.0, help="epsilon > 0 (default 3)")
    p.add_argument("--delta", type=float, default=1e-6, help="delta in (0, 1) (default 1e-6)")
    p.add_argument("--gamma", type=float, default=0.1, help="random-DP confidence in (0, 0.5) (default 0.1)")
    p.add_argument("--unit", choices=("user", "document"), default="user", help="privacy unit (default user)")
    p.add_argument("--calibration", choices=("auto", "analytic", "rdp", "paper"), default="auto")
    p.add_argument("--n-jobs", type=int, default=2, help="parallel model fits (default 2)")
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
                        help="public reference corpus (same format): with --guarantee random-dp the sensitivity "
                             "sampler draws P from it (sigma is then public); with --guarantee dp and dp-vem the "
                             "release starts from topics fitted on it")
    p_dist.add_argument("--private-oracle", action="store_true",
                        help="let the sampler resample the private corpus itself (TopicDP's choice); sigma then "
                             "depends on the private data and the report says what that leaks")
    p.add_argument("--diagnostics", default=None, metavar="PATH",
                   help="write the owner's private diagnostics here (never publish this file)")
    p.add_argument("--plot", default=None, metavar="FILE.png",
                   help="draw the release: top words of each topic with their released probabilities "
                        "(needs matplotlib: pip install \"topicdp[plots]\")")
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
    p.add_argument("corpus", help="JSON Lines file (.jsonl or .jsonl.gz) with user and text fields, or 'embedded'")
    p.add_argument("--text-field", default="text")
    p.add_argument("--user-field", default="user")
    p.add_argument("--max-features", type=int, default=5000, help="vocabulary size limit (default 5000)")
    p.add_argument("--min-df", type=int, default=5, help="minimum document frequency of a word (default 5)")
    p.add_argument("--max-df", type=float, default=0.5, help="drop words in more than this share of documents (default 0.5)")
    p.add_argument("--max-docs-per-user", type=int, default=None, help="contribution bound (>= 1; default: none)")
    p.add_argument("--max-tokens-per-doc", type=int, default=None, help="contribution bound (>= 1; default: none)")
    p.add_argument("--users", type=int, default=None, help="use only the first N users of the file (a documented subset)")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="public word list (one word per line, '#' comments): the columns, at no privacy cost; "
                        "--min-df/--max-df/--max-features are then not used")
    p.add_argument("--vocabulary-epsilon", type=float, default=None,
                   help="select the vocabulary from the texts under DP at --unit with this epsilon "
                        "(at most --max-features words; --min-df/--max-df are then not used)")
    p.add_argument("--vocabulary-delta", type=float, default=None, help="delta of the DP vocabulary selection (default: half of --delta)")


def load_corpus(args):
    """The (bounded) corpus the arguments name; call :func:`check_arguments` first. With a DP-selected
    vocabulary, ``args.vocabulary_selection`` holds its :class:`topicdp.vocabulary.DPVocabulary`, whose budget
    the release must compose (else None)."""
    from .corpus import Corpus, embedded_corpus

    words = _public_or_checked_vocabulary(args)  # before the corpus is read: errors come early
    args.vocabulary_selection = None
    if words is not None or getattr(args, "vocabulary_epsilon", None) is not None:
        corpus = _corpus_with_vocabulary(args, words)
    elif args.corpus == "embedded":
        corpus = embedded_corpus()
    else:
        texts, owners = _records(args)
        corpus = Corpus.from_texts(texts, owners, min_df=args.min_df, max_df=args.max_df,
                                   max_features=args.max_features)
    if args.max_docs_per_user is not None or args.max_tokens_per_doc is not None:
        corpus = corpus.bound(args.max_docs_per_user, args.max_tokens_per_doc)
    return corpus


def _optional(value, check, *args, **kwargs):
    return None if value is None else check(value, *args, **kwargs)


def _public_or_checked_vocabulary(args):
    from ._validation import check_delta, check_epsilon
    from .vocabulary import load_vocabulary

    path, eps, delta = (getattr(args, a, None) for a in ("vocabulary", "vocabulary_epsilon", "vocabulary_delta"))
    if path is not None and eps is not None:
        raise ValueError("--vocabulary (a public list) and --vocabulary-epsilon (a DP selection) exclude each other")
    if eps is not None:
        check_epsilon(eps, "--vocabulary-epsilon")
    if delta is not None:
        check_delta(delta, "--vocabulary-delta")
    return None if path is None else load_vocabulary(path)


def _reference_records(args) -> tuple[list, list]:
    """The texts and users of the public ``--reference`` file, read once per command (the vocabulary forecast,
    the public start and the simulation all use them)."""
    cached = getattr(args, "_reference", None)
    if cached is None:
        from .corpus import read_jsonl_records

        records = list(read_jsonl_records(args.reference, args.text_field, args.user_field))
        cached = args._reference = ([t for t, _ in records], [u for _, u in records])
    return cached


def _records(args) -> tuple[list, list]:
    """The texts and users of the corpus file (its first ``--users`` users), read once per command: the plan
    counts the units and the release builds the corpus from the same records."""
    cached = getattr(args, "_records", None)
    if cached is None:
        from .corpus import read_jsonl_records

        texts: list[str] = []
        owners: list = []
        first: set = set()
        for text, user in read_jsonl_records(args.corpus, args.text_field, args.user_field):
            if args.users is not None and user not in first:  # as Corpus.from_jsonl(n_users=N)
                if len(first) == args.users:
                    continue
                first.add(user)
            texts.append(text)
            owners.append(user)
        if not texts:
            raise ValueError(f"{args.corpus}: no documents")
        cached = args._records = (texts, owners)
    return cached


def _corpus_with_vocabulary(args, words):
    import numpy as np

    from .corpus import Corpus, embedded_texts
    from .vocabulary import select_vocabulary

    if args.corpus == "embedded":
        texts = embedded_texts()
        owners = list(range(len(texts)))  # one user per document, as embedded_corpus()
    else:
        texts, owners = _records(args)
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




def check_corpus_path(path: str, flag: str = "corpus") -> None:
    """Refuse, before any work, a corpus argument that is neither 'embedded' nor a readable file."""
    if path == "embedded":
        return
    if not os.path.exists(path):
        raise FileNotFoundError(f"{flag}: no such file: {path}")
    if os.path.isdir(path):
        raise ValueError(f"{flag}: {path} is a directory; give a JSON Lines file (.jsonl or .jsonl.gz) or 'embedded'")
    if not os.access(path, os.R_OK):
        raise ValueError(f"{flag}: {path} is not readable")


def check_bounds(args) -> None:
    """--max-docs-per-user and --max-tokens-per-doc: leave a flag out for no bound; 0 is not 'no bound'."""
    bounds = {"--max-docs-per-user": args.max_docs_per_user, "--max-tokens-per-doc": args.max_tokens_per_doc}
    for flag, value in bounds.items():
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be an integer >= 1, got {value} (leave the flag out for no bound)")


def check_arguments(args) -> None:
    """Validate every argument of ``privatize`` / ``demo`` before the corpus is read or a model is fitted.

    The checks are the library's own (``topicdp._validation``, ``topicdp.adapters.MODELS``), with the flag
    names in the messages; they run in a few milliseconds, so a typo costs no reading time.
    """
    from ._validation import (check_delta, check_epsilon, check_gamma, check_int, check_n_jobs, check_option,
                              check_real)
    check_option(args.model, "--model", MODELS)
    _resolve_road(args)
    check_int(args.topics, "--topics", low=1)
    check_epsilon(args.epsilon, "--epsilon")
    check_delta(args.delta, "--delta")
    check_gamma(args.gamma, "--gamma")
    check_n_jobs(args.n_jobs, "--n-jobs")
    _optional(args.seed, check_int, "--seed", low=0)
    _optional(args.sampler_seed, check_int, "--sampler-seed", low=0)
    _optional(args.model_seed, check_int, "--model-seed", low=0)
    _optional(args.n_pairs, check_int, "--n-pairs", low=1)
    if args.cache_dir is not None and os.path.exists(args.cache_dir) and not os.path.isdir(args.cache_dir):
        raise ValueError(f"--cache-dir: {args.cache_dir} exists and is not a directory")
    _optional(getattr(args, "top", None), check_int, "--top", low=1)
    for flag in ("--out", "--plot", "--diagnostics"):
        check_output_path(getattr(args, flag[2:].replace("-", "_"), None), flag)
    if getattr(args, "plot", None) is not None:
        require("matplotlib", extra="plots", purpose="--plot")
    if hasattr(args, "corpus"):
        check_corpus_path(args.corpus)
        check_int(args.max_features, "--max-features", low=1)
        check_int(args.min_df, "--min-df", low=1)
        check_real(args.max_df, "--max-df", low=0.0, high=1.0, high_open=False)
        _optional(args.users, check_int, "--users", low=1)
        check_bounds(args)


def check_output_path(path: str | None, flag: str) -> None:
    """Refuse, before any work, an output path that cannot be a file (a directory, or in a missing directory)."""
    if path is None:
        return
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(parent):
        raise ValueError(f"{flag}: cannot write a file at {path} (a directory, or its directory does not exist)")


def _resolve_road(args) -> None:
    """Settle --guarantee, --mechanism and --sensitivity into one road, and check --secure-noise against it.

    ``--sensitivity`` is TopicDP's own vocabulary for the two roads: ``sampled`` is ``--guarantee random-dp``,
    ``global`` is ``--guarantee dp`` with ``--mechanism gaussian-global`` (or ``laplace``). A contradiction
    is refused rather than resolved silently.
    """
    guarantee, mechanism, sensitivity = args.guarantee, args.mechanism, getattr(args, "sensitivity", None)
    if sensitivity == "sampled":
        if guarantee == "dp" or mechanism is not None:
            raise ValueError("--sensitivity sampled is the random-dp road (TopicDP over --model, NOT DP): it "
                             "excludes --guarantee dp and --mechanism")
        guarantee = "random-dp"
    elif sensitivity == "global":
        if guarantee == "random-dp":
            raise ValueError("--sensitivity global gives (epsilon, delta)-DP, not random DP: drop --guarantee "
                             "random-dp (or use --sensitivity sampled)")
        if mechanism not in (None, "gaussian-global", "laplace"):
            raise ValueError(f"--sensitivity global is TopicDP's output perturbation (--mechanism gaussian-global "
                             f"or laplace), not --mechanism {mechanism}")
        guarantee, mechanism = "dp", mechanism or "gaussian-global"
    args.guarantee = guarantee or "dp"
    args.mechanism = mechanism
    if args.guarantee == "random-dp" and mechanism is not None:
        raise ValueError("--mechanism names a mechanism of --guarantee dp; --guarantee random-dp is TopicDP over "
                         "--model")
    if getattr(args, "secure_noise", False):
        if args.guarantee == "dp" and mechanism != "gaussian-global":
            raise ValueError("--secure-noise draws TopicDP's Gaussian noise: use it with --guarantee random-dp or "
                             "with --mechanism gaussian-global (--sensitivity global)")
        if args.calibration not in ("auto", "rdp"):
            raise ValueError("--secure-noise needs --calibration auto or rdp (the discrete Gaussian inherits the "
                             "continuous Gaussian's RDP curve, not its exact privacy profile)")


NO_P_MESSAGE = (
    "the sampled sensitivity needs a sampling distribution P that is not the private data by default: pass "
    "--reference PUBLIC.jsonl (a public corpus of the same kind; sigma is then public) or --private-oracle "
    "(resample the private corpus, as TopicDP did; sigma then leaks and the report says so)"
)


def _check_distribution(args) -> None:
    """Before any work: the sampled road has no default P (issue 10, item 8)."""
    if args.reference is None and not args.private_oracle:
        raise ValueError(NO_P_MESSAGE)


def load_reference(args, corpus):
    """The public reference corpus of ``--reference``, on the private corpus' vocabulary and bounds."""
    from .corpus import Corpus

    texts, users = _reference_records(args)
    if not texts:
        raise ValueError(f"{args.reference}: no documents")
    reference = Corpus.from_texts(texts, users, vocabulary=corpus.vocabulary)
    log = corpus.log
    if log.max_docs_per_user or log.max_tokens_per_doc:
        reference = reference.bound(log.max_docs_per_user, log.max_tokens_per_doc)
    return reference


def _make_privatizer(args, reference=None):
    from .agnostic import TopicDP

    return TopicDP(
        args.epsilon,
        args.delta,
        args.gamma,
        unit=args.unit,
        calibration=args.calibration,
        distribution=reference if reference is not None else ("private-oracle" if args.private_oracle else None),
        n_jobs=args.n_jobs,
        random_state=args.seed,
        sampler_random_state=args.sampler_seed,
        n_pairs=args.n_pairs,
        insecure_testing=args.insecure_testing,
        cache_dir=args.cache_dir,
        progress=True,  # a bar on a terminal, log lines with an ETA otherwise
        sizing=args.sizing,
        max_minutes=args.max_minutes,
        secure_noise=args.secure_noise,
    )


def format_topics(topics, title: str) -> str:
    lines = [title]
    for i, topic in enumerate(topics):
        lines.append(f"  {i:>2}  " + " ".join(w for w, _ in topic))
    return "\n".join(lines)


def cmd_privatize(args) -> int:
    if args.guarantee == "random-dp":
        _check_distribution(args)
        corpus = load_corpus(args)
        reference = load_reference(args, corpus) if args.reference else None
        return _release(args, corpus, reference)
    _refuse_uncomposed_vocabulary(args)
    _split_vocabulary_budget(args)
    n_units = _count_units(args)
    plan = _plan(args, n_units, _planned_words(args, n_units))  # before any DP mechanism runs
    return _release_dp(args, load_corpus(args), plan)


#: mechanisms whose reports cannot compose a DP-selected vocabulary's budget (they take a public word list)
NO_DP_VOCABULARY = ("spectral-config-", "dpsvi")


def _refuse_uncomposed_vocabulary(args) -> None:
    """Before any DP step: a mechanism that cannot compose a DP vocabulary into its report needs a public list,
    or its report would call the (DP) vocabulary NOT COVERED and state only the topics' epsilon."""
    mechanism = args.mechanism or ""
    if mechanism.startswith(NO_DP_VOCABULARY) and args.vocabulary is None and args.corpus != "embedded":
        raise ValueError(f"--mechanism {mechanism} does not compose a DP-selected vocabulary's budget into its report "
                         "yet: give a public word list with --vocabulary FILE (nothing was read or spent)")


#: share of --epsilon spent on selecting the vocabulary under DP when no public --vocabulary is given
VOCABULARY_SHARE = 0.2


def _split_vocabulary_budget(args) -> None:
    """--guarantee dp is DP end to end: without a public --vocabulary the words are selected under DP, and
    --epsilon/--delta are the *total* (vocabulary + topics, basic composition)."""
    if args.vocabulary is not None or args.corpus == "embedded":
        args.topics_epsilon, args.topics_delta = args.epsilon, args.delta
        return
    if args.vocabulary_epsilon is None:  # each default on its own: giving one of the two keeps the other's
        args.vocabulary_epsilon = VOCABULARY_SHARE * args.epsilon
    if args.vocabulary_delta is None:
        args.vocabulary_delta = args.delta / 2
    if args.vocabulary_epsilon >= args.epsilon or args.vocabulary_delta >= args.delta:
        raise ValueError(f"--vocabulary-epsilon/--vocabulary-delta ({args.vocabulary_epsilon:g}, "
                         f"{args.vocabulary_delta:g}) must be below the total --epsilon/--delta "
                         f"({args.epsilon:g}, {args.delta:g})")
    args.topics_epsilon, args.topics_delta = args.epsilon - args.vocabulary_epsilon, args.delta - args.vocabulary_delta


def _count_units(args) -> int:
    """The number of privacy units (stated public by the release), counted without selecting anything."""
    from .corpus import embedded_texts

    if args.corpus == "embedded":
        return len(embedded_texts())
    texts, owners = _records(args)
    return len(set(owners)) if args.unit == "user" else len(texts)


def _planned_words(args, n_units: int) -> int:
    """The vocabulary size the plan assumes: the public list's, or the DP selection's forecast (printed)."""
    if args.vocabulary is not None:
        from .vocabulary import load_vocabulary

        return len(load_vocabulary(args.vocabulary))
    if getattr(args, "vocabulary_epsilon", None) is None:
        return args.max_features
    from .vocabulary import forecast_vocabulary

    reference: dict = {}
    if args.reference is not None:  # public texts: the expected size, not only the units a word needs
        texts, users = _reference_records(args)
        reference = {"reference_texts": texts, "reference_users": users}
    fc = forecast_vocabulary(args.vocabulary_epsilon, args.vocabulary_delta, n_units, unit=args.unit,
                             max_features=args.max_features, **reference)
    print("\n".join(fc.lines()))
    if fc.expected_words is not None and fc.expected_words < 1 and not args.release_anyway:
        raise ValueError("the DP vocabulary is forecast to keep no word, so nothing was selected and no budget was "
                         "spent; give a public --vocabulary, a larger --vocabulary-epsilon, or pass --release-anyway")
    if fc.expected_words is None:
        return args.max_features
    if fc.expected_words < MIN_PLANNED_WORDS:  # below that the forecast's Dirichlet signal is not a meaningful model
        print(f"  the topic forecast below assumes {MIN_PLANNED_WORDS} words")
    return min(max(int(round(fc.expected_words)), MIN_PLANNED_WORDS), args.max_features)


#: the smallest vocabulary the topic forecast models (a Dirichlet signal over fewer words says little)
MIN_PLANNED_WORDS = 50


def _plan(args, n_units: int, n_words: int):
    """Forecast every rigorous mechanism from public quantities, print it, and refuse a noise release."""
    from .plan import plan_release

    plan = plan_release(guarantee="dp", mechanism=args.mechanism, epsilon=args.topics_epsilon,
                        delta=args.topics_delta, unit=args.unit, n_units=n_units, n_topics=args.topics,
                        n_words=n_words)
    print(f"{n_units} {args.unit}s (stated public), {n_words} words, K={args.topics}; "
          f"budget for the topics: epsilon={args.topics_epsilon:g}, delta={args.topics_delta:g}")
    print("\n".join(plan.lines()) + "\n")
    if plan.forecast is not None and plan.forecast.verdict == "noise" and not args.release_anyway:
        raise ValueError("the forecast says this release would be noise, so nothing was released and no budget "
                         "was spent; see the advice above, or pass --release-anyway")
    return plan


def _release_dp(args, corpus, plan, truth=None) -> int:
    """--guarantee dp: run the planned mechanism, print the topics and the report, write the files."""
    print(f"corpus: {corpus}")
    for line in corpus.log.lines():
        print(f"  {line}")
    selection = getattr(args, "vocabulary_selection", None)
    source = selection.to_dict() if selection is not None else ("public" if args.vocabulary or truth else "private-texts")
    if selection is not None and len(selection.words) < args.max_features / 2:
        # the selected vocabulary is a DP output: re-planning on its size spends nothing more
        print(f"note: the DP vocabulary kept {len(selection.words)} of the {args.max_features} words asked for: "
              f"too few {args.unit}s share each word at --vocabulary-epsilon {args.vocabulary_epsilon:g}. The topics "
              "will be drawn from common words; a public --vocabulary (or a larger vocabulary budget) avoids this.")
        if len(selection.words) >= MIN_PLANNED_WORDS:
            plan = _plan(args, corpus.n_users if args.unit == "user" else corpus.n_docs, len(selection.words))
    if plan.mechanism == "dp-vem" and getattr(args, "reference", None):
        _check_on_reference(args, corpus, corpus.n_users if args.unit == "user" else corpus.n_docs)
    start = time.perf_counter()
    release = rigorous_release(plan.mechanism, corpus, args, source)
    elapsed = time.perf_counter() - start
    print(format_topics(release.top_words(args.top), f"top words of the release ({plan.mechanism}):"))
    if truth is not None:
        from .metrics.readability import topic_overlap

        print(f"\nmatched top-10 overlap with {truth[0]}: {topic_overlap(release.topic_word, truth[1]):.2f} "
              "(0 = unrelated, 1 = identical)")
    print("\nprivacy report:\n" + release.report.summary())
    print(f"\nwall time {elapsed:.1f} s")
    _write(args, release)
    return 0


def _dp_vem_model(args, corpus):
    """The dp-vem run of ``privatize``: 2 iterations from topics fitted on the public ``--reference`` (computed
    once per command), else 5 from a random start."""
    from .variational import DPVariationalLDA, public_init

    init = None
    if getattr(args, "reference", None):
        if getattr(args, "_public_start", None) is None:
            reference = load_reference(args, corpus)
            args._public_start = (reference, public_init(reference, args.topics, unit=args.unit))
        init = args._public_start[1]
    return DPVariationalLDA(args.topics, epsilon=args.topics_epsilon, delta=args.topics_delta, unit=args.unit,
                            n_iterations=5 if init is None else 2, init=init, random_state=args.seed)


def _check_on_reference(args, corpus, n_units: int) -> None:
    """With a public --reference, forecast dp-vem by running it there at the private signal-to-noise ratio
    (topicdp.variational.forecast_on_reference), and refuse a release it forecasts to be noise -- before
    the topics' budget is touched. Sharper than the closed form, which cannot see the corpus' common words."""
    from .variational import forecast_on_reference

    model = _dp_vem_model(args, corpus)
    fc = forecast_on_reference(model, args._public_start[0], n_units, top_n=min(10, corpus.n_words - 1))
    print("simulated on the public reference:\n" + "\n".join("  " + line for line in fc.lines()) + "\n")
    if fc.verdict == "noise" and not args.release_anyway:
        raise ValueError("the simulation on the public reference says this release would be noise, so no topics "
                         "were released and their budget was not spent; see the advice above, or pass "
                         "--release-anyway")


def rigorous_release(mechanism: str, corpus, args, vocabulary_source="private-texts"):
    """The PrivateRelease of one rigorous mechanism, named as in topicdp.plan.RIGOROUS_MECHANISMS."""
    if mechanism == "dp-vem":
        model = _dp_vem_model(args, corpus)
        if model.init is not None:
            print(f"starting from topics fitted on the public reference {args.reference}")
        return model.fit(corpus, vocabulary_source=vocabulary_source).release_
    if mechanism in ("gaussian-global", "laplace"):
        from .adapters import make_model
        from .agnostic import TopicDP

        privatizer = TopicDP(args.topics_epsilon, args.topics_delta, unit=args.unit, sensitivity="global",
                             mechanism="gaussian" if mechanism == "gaussian-global" else "laplace",
                             calibration=args.calibration, secure_noise=getattr(args, "secure_noise", False),
                             random_state=args.seed)
        return privatizer.privatize(make_model(args.model, args.topics, args.model_seed), corpus,
                                    vocabulary_source=vocabulary_source,
                                    keep_nonprivate=getattr(args, "show_nonprivate", False))
    if mechanism.startswith("spectral-config-"):
        from .spectral import SpectralDP

        model = SpectralDP(n_topics=args.topics, alpha0=1.0, configuration=int(mechanism[-1]),
                           epsilon=args.topics_epsilon, delta=args.topics_delta, unit=args.unit,
                           random_state=args.seed)
        return model.fit(corpus, vocabulary_source=vocabulary_source).release_
    if mechanism == "dpsvi":
        from .baselines import DPSVI

        if args.unit != "document":
            raise ValueError("--mechanism dpsvi protects documents only: pass --unit document")
        return DPSVI(args.topics, epsilon=args.topics_epsilon, delta=args.topics_delta,
                     random_state=args.seed).fit(corpus, vocabulary_source=vocabulary_source).release_
    raise ValueError(f"unknown mechanism {mechanism!r}")


def _write(args, release) -> None:
    if args.out:
        release.save(args.out)
        print(f"release written to {args.out} (published part only: DP outputs and public parameters)")
    if args.diagnostics:
        release.save_diagnostics(args.diagnostics)
        print(f"private diagnostics written to {args.diagnostics} (for the data owner; do not publish)")
    if getattr(args, "plot", None):
        from .plots import plot_release

        nonprivate = args.show_nonprivate and release.nonprivate is not None
        plot_release(release, args.plot, n_words=args.top, show_nonprivate=nonprivate)
        if args.show_nonprivate and not nonprivate:
            print("note: this mechanism keeps no non-private matrix; the picture shows the release only")
        print(f"picture of the release written to {args.plot}"
              + (" (it shows NON-PRIVATE topics: for the data owner only, do not publish)" if nonprivate else ""))


def _release(args, corpus, reference) -> int:
    from .adapters import make_model

    print(f"corpus: {corpus}")
    for line in corpus.log.lines():
        print(f"  {line}")
    if reference is not None:
        print(f"public reference P: {reference}")
    model = make_model(args.model, args.topics, args.model_seed)
    start = time.perf_counter()
    release = _make_privatizer(args, reference).privatize(model, corpus, keep_nonprivate=args.show_nonprivate)
    elapsed = time.perf_counter() - start
    if args.show_nonprivate:
        from .metrics import l1_distance, rmse

        print(format_topics(release.nonprivate_top_words(args.top), "top words before noise (NOT PRIVATE):"))
        print(f"noise: L1 (mean row L2, TopicDP's convention) {l1_distance(release.noisy, release.nonprivate, convention='topicdp'):.4g}, "
              f"RMSE {rmse(release.noisy, release.nonprivate):.4g}, largest non-private entry {release.nonprivate.max():.4g}")
    print(format_topics(release.top_words(args.top), "top words of the release:"))
    print("\nprivacy report:\n" + release.report.summary())
    print(f"\nwall time {elapsed:.1f} s")
    _write(args, release)
    return 0


def cmd_demo(args) -> int:
    """A release that works, end to end, in well under a minute.

    ``--guarantee dp`` (default): a *generated* corpus with ten known, readable topics (2,000 users, 10,000
    documents; :func:`topicdp.datasets.themed_corpus`), released at user level by the mechanism the
    forecast rule picks, and compared with the topics that generated it. ``--guarantee random-dp``: TopicDP
    over gensim LDA on the embedded Lee news corpus (real text, 300 documents, one per user), the first 150
    documents playing the public reference P (or ``--private-oracle`` / ``--reference``).
    """
    args.max_docs_per_user = args.max_tokens_per_doc = None
    args.top = 8
    if args.guarantee == "dp":
        from .datasets import themed_corpus

        corpus, truth = themed_corpus()
        print("topicdp demo: a GENERATED corpus with ten known topics (2,000 users x 5 documents; not real text),")
        print(f"released under ({args.epsilon:g}, {args.delta:g})-DP at the {args.unit} level; its word list is public\n")
        args.vocabulary, args.topics_epsilon, args.topics_delta = None, args.epsilon, args.delta
        plan = _plan(args, corpus.n_users if args.unit == "user" else corpus.n_docs, corpus.n_words)
        return _release_dp(args, corpus, plan, truth=("the generating topics", truth))
    import numpy as np

    from .corpus import embedded_corpus

    _check_distribution(args)
    args.corpus = "embedded"
    args.show_nonprivate = True
    corpus, reference = embedded_corpus(), None
    if args.reference:
        reference = load_reference(args, corpus)
    elif not args.private_oracle:
        reference, corpus = corpus.subset_documents(np.arange(150)), corpus.subset_documents(np.arange(150, corpus.n_docs))
    print(f"topicdp demo: gensim LDA on the embedded Lee news corpus ({corpus.n_docs} documents, one per user"
          + (", the other 150 as the public reference P)," if reference is not None and not args.reference else "),"))
    print(f"released with TopicDP (random DP, not DP) at epsilon={args.epsilon:g}, delta={args.delta:g}, "
          f"gamma={args.gamma:g}\n")
    return _release(args, corpus, reference)


class _LazyParser(argparse.ArgumentParser):
    """A sub-command parser whose arguments are added on first use, by ``populate(parser)``.

    ``topicdp --help`` lists the sub-commands from their one-line help alone, so the modules that define
    the arguments of ``audit`` (dataclasses of the audit library, which imports numpy) load only when that
    sub-command is parsed or its own help is asked for.
    """

    def __init__(self, *args, populate=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._populate = populate

    def _ensure(self) -> None:
        if self._populate is not None:
            populate, self._populate = self._populate, None
            populate(self)

    def parse_known_args(self, args=None, namespace=None):
        self._ensure()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._ensure()
        return super().format_help()

    def format_usage(self) -> str:
        self._ensure()
        return super().format_usage()


def _populate_compare(p: argparse.ArgumentParser) -> None:
    from .experiments.cli import add_arguments, check_arguments, run

    add_arguments(p)
    p.set_defaults(func=run, check=check_arguments)


def _populate_audit(p: argparse.ArgumentParser) -> None:
    from .audit.cli import DESCRIPTION, add_audit_arguments, check_arguments, run_audit_cli

    p.description = DESCRIPTION
    add_audit_arguments(p)
    p.set_defaults(func=run_audit_cli, check=check_arguments)


def build_parser() -> argparse.ArgumentParser:
    """The ``topicdp`` parser. Building it imports no numerical library (tests/test_cli_help.py)."""
    parser = argparse.ArgumentParser(prog="topicdp", description="Differentially private topic models.",
                                     epilog="Each command's --help lists its options; privatize's lists the "
                                            "models, mechanisms and guarantees.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_LazyParser)
    catalogue = _catalogue()

    p = sub.add_parser("privatize", help="release topics of a corpus under DP (or random DP with TopicDP)",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=catalogue)
    _add_corpus_arguments(p)
    _add_privacy_arguments(p)
    p.add_argument("--out", default=None, help="write the release (JSON) here")
    p.add_argument("--top", type=int, default=10, help="top words shown per topic (and drawn by --plot)")
    p.set_defaults(func=cmd_privatize, check=check_arguments)

    p = sub.add_parser("demo", help="a private release of a generated corpus with known topics (about 20 s)",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=catalogue)
    _add_privacy_arguments(p)
    p.set_defaults(text_field="text", user_field="user")
    p.add_argument("--out", default=None, help="write the release (JSON) here")
    p.set_defaults(func=cmd_demo, check=check_arguments)

    sub.add_parser("compare", help="compare mechanisms on one corpus: CSV, plots and a table",
                   populate=_populate_compare)
    sub.add_parser("audit", help="empirically lower-bound the epsilon of a mechanism on a canary",
                   populate=_populate_audit)
    return parser


def _log_to_stderr() -> None:
    """Show the ``topicdp`` logger's INFO lines (cost forecast, progress) on stderr; no other logger."""
    import logging

    class StderrHandler(logging.StreamHandler):
        stream = property(lambda self: sys.stderr, lambda self, value: None)  # today's stderr, as logging.lastResort

    logger = logging.getLogger("topicdp")
    if not logger.handlers:
        handler = StderrHandler()
        handler.setFormatter(logging.Formatter("topicdp: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def main(argv=None) -> int:
    _log_to_stderr()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "check", None) is not None:
            args.check(args)  # every argument, before any reading or fitting
        return args.func(args)
    except (ValueError, TypeError, OSError, MissingExtraError) as exc:
        print(f"topicdp: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
