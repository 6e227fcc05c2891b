"""argparse helpers of the ``topicdp`` command (pure Python: building the parser loads no numerical library)."""

from __future__ import annotations

import argparse


class LazyParser(argparse.ArgumentParser):
    """A sub-command parser whose arguments ``populate(parser)`` adds on first use: ``topicdp --help`` lists the
    sub-commands by their one-line help, and a module that defines arguments (``audit``'s imports numpy) loads only
    when its sub-command is parsed or its help asked for."""

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


#: the library's words for what a user passes, and the command line's (the library speaks Python; the command
#: translates every line it prints, so each interface names its own spelling)
CLI_PHRASES = {
    "release_anyway=True": "--release-anyway",
    "(text_field)": "(--text-field)",
    "(user_field)": "(--user-field)",
    "(date_field)": "(--date-field)",
    "n_units=N": "--n-units N",
    "vocabulary=VocabularyPolicy.public(words)": "--vocabulary FILE",
}
#: request parameters whose flag is not ``--`` + the name with dashes
_FLAG_NAMES = {"n_topics": "--topics", "keep_nonprivate": "--show-nonprivate"}
#: request parameters that are flags of ``privatize`` (snake_case; one-word names are left alone in prose)
_FLAGGED = ("model_seed", "sampler_seed", "n_pairs", "n_jobs", "max_minutes", "max_features", "min_df", "max_df",
            "max_docs_per_user", "max_tokens_per_doc", "max_tokens_per_user", "n_units", "user_fraction",
            "secure_noise", "private_oracle", "release_anyway", "vocabulary_epsilon", "vocabulary_delta", "work_dir",
            "n_topics", "keep_nonprivate", "stop_words")


#: the flags of ``privatize`` that :func:`topicdp.pipeline.options.request_from_options` takes under their own name
REQUEST_FLAGS = ("epsilon", "delta", "unit", "vocabulary", "reference", "n_units", "ledger", "out", "release_anyway",
                 "seed", "text_field", "user_field", "query", "user_fraction", "max_docs_per_user",
                 "max_tokens_per_doc", "max_tokens_per_user", "stop_words", "max_features", "min_df", "max_df",
                 "vocabulary_epsilon", "vocabulary_delta", "n_jobs", "scheduler", "work_dir")


def flag(name: str) -> str:
    """The flag that sets the request's parameter ``name`` (``name`` itself when it is not one)."""
    single = ("epsilon", "delta", "gamma", "model", "mechanism", "guarantee", "calibration", "sizing", "reference",
              "vocabulary", "seed", "scheduler", "query")
    if name in _FLAG_NAMES:
        return _FLAG_NAMES[name]
    return f"--{name.replace('_', '-')}" if name in _FLAGGED or name in single else name


def cli_words(text: str) -> str:
    """``text`` in the command line's words: the phrases of :data:`CLI_PHRASES`, then every snake_case request
    parameter as its flag, except inside a call of ``topicdp.release(...)`` (Python quoted as Python)."""
    import re

    # a call of topicdp.release (a refusal's proposal, from Python) is Python already: kept as it is
    parts = re.split(r"(topicdp\.release\([^)]*\))", text)
    for i in range(0, len(parts), 2):
        for python, cli in CLI_PHRASES.items():
            parts[i] = parts[i].replace(python, cli)
        parts[i] = re.sub(r"\b[a-z]+(?:_[a-z]+)+\b",
                          lambda m: flag(m.group()) if m.group() in _FLAGGED else m.group(), parts[i])
    return "".join(parts)


def add_ledger_arguments(p: argparse.ArgumentParser) -> None:
    """``privatize --ledger FILE`` (charge the release to a dataset's persisted privacy ledger), and the releases
    over time it enables: ``--period month|quarter --periods START:END [--date-field date]``."""
    p.add_argument("--ledger", default=None, metavar="FILE",
                   help="charge this release to the dataset's persisted privacy ledger FILE (topicdp ledger create): "
                        "its planned spend is checked against what is left and written there before the corpus is "
                        "read, or the run is refused with the figures")
    p.add_argument("--period", choices=("month", "quarter"), default=None, action=_OverTime,
                   help="release one topic model per period (needs --ledger and --periods): documents by the month "
                        "or quarter of their --date-field, topics matched across periods")
    p.add_argument("--periods", default=None, metavar="START:END",
                   help="the range of periods, stated (never read from the data): 2004-05:2004-08, 2000Q1:2002Q1")
    p.add_argument("--date-field", default="date", help="the records' ISO 8601 date field (default date)")
    p.add_argument("--date-format", default=None, type=_date_format, metavar="FORMAT",
                   help="how the dates are written, in strptime's directives (%%d,%%B,%%Y for 14,May,2004; month "
                        "names in English whatever the locale); default ISO 8601. A date that does not read under "
                        "it has no usable date")


def _date_format(text: str) -> str:
    """``--date-format``, checked as it is parsed (:func:`topicdp._dates.check_date_format`)."""
    from ._dates import check_date_format

    try:
        return check_date_format(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("date_format ", "", 1)) from None  # argparse names it


class _OverTime(argparse.Action):
    """``--period``: the command becomes a release per period (:func:`run_over_time`)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        namespace.func = run_over_time


def run_over_time(args: argparse.Namespace) -> int:
    """``topicdp privatize FILE --period P --periods START:END --ledger L``: one release per period."""
    from .pipeline.over_time import PeriodSpec, release_over_time, show_over_time

    if not args.periods:
        raise ValueError("--period needs --periods START:END (the range is stated, never read from the data)")
    start, _, end = args.periods.partition(":")
    spec = PeriodSpec(args.period, start, end or start, args.date_field, args.date_format)
    result = release_over_time(args.request, spec, echo=lambda line: print(cli_words(line)))
    show_over_time(result, top=args.top, out=args.out, plot=args.plot, html=args.html, overwrite=args.overwrite,
                   echo=lambda line: print(cli_words(line)))
    return 0


def agnostic_option(args: argparse.Namespace):
    """The request's TopicDP template from ``--model``, ``--model-seed``, the sampler's and the noise's flags."""
    from ._validation import check_int
    from .adapters import make_model
    from .agnostic import TopicDP
    from .samplers import PRIVATE_ORACLE, SensitivitySampling

    check_int(args.model_seed, "--model-seed", low=0)

    sampling = SensitivitySampling(PRIVATE_ORACLE if args.private_oracle else None, args.gamma, args.sizing,
                                   n_pairs=args.n_pairs, insecure_testing=args.insecure_testing,
                                   random_state=args.sampler_seed, cache_dir=args.cache_dir, progress=True,
                                   max_minutes=args.max_minutes)
    return TopicDP(make_model(args.model, args.topics, args.model_seed), sampling=sampling,
                   calibration=args.calibration, secure_noise=args.secure_noise)
