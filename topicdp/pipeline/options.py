"""The one translation of ``topicdp privatize``'s flags and of :func:`release`'s parameters (``topicdp.release``, the
estimators of :mod:`topicdp.estimators`) into a :class:`~topicdp.pipeline.ReleaseRequest`, with the same names and
defaults (:data:`topicdp._names.RELEASE_DEFAULTS`), so a release asked for either way is the same request."""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from .._files import check_input_file, check_paths
from .._names import RELEASE_DEFAULTS
from .._progress import say
from ..corpus import WEB_ARTEFACTS, Corpus
from ..datasets import themed_vocabulary
from ..private_release import PrivateRelease
from ..rdp.ledger_file import LedgerOptions
from ..vocabulary import load_vocabulary
from .request import CorpusSource, ReleaseRequest, VocabularyPolicy
from .run import release as run_request

__all__ = ["release", "request_from_options", "stop_words_of"]


def stop_words_of(option: str | Iterable[str] | None) -> tuple[str, ...]:
    """More words to drop: none, ``"web"`` (:data:`topicdp.corpus.WEB_ARTEFACTS`), a word list file, or the words."""
    if option is None or option == "web":
        return () if option is None else WEB_ARTEFACTS
    if isinstance(option, (str, os.PathLike)):
        check_input_file(os.fspath(option), "stop_words")
        return load_vocabulary(os.fspath(option))
    return tuple(option)


def _vocabulary_policy(vocabulary, corpus, reference, guarantee: str, stop_words: tuple[str, ...], *,
                       vocabulary_epsilon, vocabulary_delta, max_features, min_df, max_df) -> VocabularyPolicy:
    """The columns' policy: a public list, a Corpus' or the themed corpus' own, P's words, the texts', or DP."""
    if isinstance(vocabulary, VocabularyPolicy):
        return vocabulary
    dp_asked = vocabulary_epsilon is not None or vocabulary_delta is not None
    if isinstance(corpus, Corpus):  # its own columns: public where the caller gave them, refused where built from texts
        if vocabulary is not None or dp_asked:
            raise ValueError("vocabulary: a topicdp.Corpus is released on its own columns; give the public words "
                             "when building it (Corpus.from_jsonl(..., vocabulary=words)), or pass the texts (a file "
                             "or DataFrame) for a DP selection")
        if corpus.vocabulary_source != "public":
            raise ValueError("vocabulary: this Corpus' words were built from its own private texts, which DP does "
                             "not cover; build it on a public word list (vocabulary=words), or pass the texts (a file "
                             "or DataFrame) so that the release selects its words under DP")
        return VocabularyPolicy.public(corpus.vocabulary)  # stated by the data owner, who gave the list
    if vocabulary is not None:
        if dp_asked:
            raise ValueError("vocabulary (a public list) and vocabulary_epsilon/vocabulary_delta (a DP selection) "
                             "exclude each other")
        if isinstance(vocabulary, (str, os.PathLike)):
            check_input_file(os.fspath(vocabulary), "vocabulary")
            vocabulary = load_vocabulary(os.fspath(vocabulary))
        return VocabularyPolicy.public([w for w in vocabulary if w not in stop_words])
    name = corpus if isinstance(corpus, str) else None  # a DataFrame is compared with no name
    if name == "themed":
        return VocabularyPolicy.public(themed_vocabulary())
    if reference not in (None, "embedded") and not dp_asked:
        return VocabularyPolicy.from_reference(min_df, max_df, max_features)
    if guarantee == "random-dp" or (name == "embedded" and not dp_asked):
        return VocabularyPolicy.from_texts(min_df, max_df, max_features)
    return VocabularyPolicy.dp(vocabulary_epsilon, vocabulary_delta, max_features)


#: :func:`release`'s parameters that make the :class:`CorpusSource`, and those that make the :class:`VocabularyPolicy`
SOURCE_OPTIONS = ("text_field", "user_field", "user_fraction", "max_docs_per_user", "max_tokens_per_doc",
                  "max_tokens_per_user", "query")
VOCABULARY_OPTIONS = ("vocabulary_epsilon", "vocabulary_delta", "max_features", "min_df", "max_df")


def request_from_options(corpus, *, vocabulary, reference: str | None, guarantee: str, stop_words,
                         ledger: "str | LedgerOptions | None", out: str | None, **options) -> ReleaseRequest:
    """The :class:`ReleaseRequest` the options describe, validated (nothing of the corpus is read).

    Every parameter is :func:`release`'s, all given (``vocabulary`` and ``stop_words`` may also be the words); those
    of :data:`SOURCE_OPTIONS` and :data:`VOCABULARY_OPTIONS` make the source and the vocabulary policy, the rest are
    the request's fields. ``out`` is the file the ledger lists for the release.
    """
    stop_words = stop_words_of(stop_words)
    if isinstance(corpus, str) and corpus == "themed" and guarantee == "random-dp":  # the demo's agnostic road
        corpus, reference = "embedded", reference or "embedded"
    if reference not in (None, "embedded"):
        check_input_file(reference, "reference")
    policy = _vocabulary_policy(vocabulary, corpus, reference, guarantee, stop_words,
                                **{name: options.pop(name) for name in VOCABULARY_OPTIONS})
    source = CorpusSource(corpus, stop_words=stop_words, **{name: options.pop(name) for name in SOURCE_OPTIONS})
    if ledger is not None and not isinstance(ledger, LedgerOptions):
        ledger = LedgerOptions(ledger, out)
    return ReleaseRequest(source, policy, ledger=ledger, guarantee=guarantee, reference=reference, **options)


def _path(value) -> str | None:
    return os.fspath(value) if isinstance(value, (str, os.PathLike)) else None


def release(corpus, *, n_topics: int = RELEASE_DEFAULTS.n_topics, epsilon: float = RELEASE_DEFAULTS.epsilon,
              delta: float = RELEASE_DEFAULTS.delta, unit: str = RELEASE_DEFAULTS.unit, vocabulary=None,
              reference: str | None = None, n_units: int | None = None, guarantee: str = "dp",
              mechanism: str | None = None, ledger: "str | LedgerOptions | None" = None, release_anyway: bool = False,
              seed: int | None = None, out: str | None = None, overwrite: bool = False,
              text_field: str = RELEASE_DEFAULTS.text_field, user_field: str = RELEASE_DEFAULTS.user_field,
              query: str | None = None, user_fraction: float | None = None, max_docs_per_user: int | None = None,
              max_tokens_per_doc: int | None = None, max_tokens_per_user: int | None = None, stop_words=None,
              max_features: int = RELEASE_DEFAULTS.max_features, min_df: int = RELEASE_DEFAULTS.min_df,
              max_df: float = RELEASE_DEFAULTS.max_df, vocabulary_epsilon: float | None = None,
              vocabulary_delta: float | None = None, n_jobs: int = RELEASE_DEFAULTS.n_jobs,
              scheduler: str | None = None, work_dir: str | None = None, agnostic: Any = None,
              keep_nonprivate: bool = False, echo: Callable[[str], None] | None = None) -> "PrivateRelease":
    """Release the topics of a corpus under DP as ``topicdp privatize`` does: plan, count, refuse or release.

    Builds the request the command builds from the same options (:func:`request_from_options`) and runs
    :func:`topicdp.pipeline.release`: a DP count of the units (unless ``n_units`` is stated), the vocabulary, the
    readability forecast of every mechanism, and a refusal *before the topics' budget is spent* when it says the
    topics would be noise or common words. Each step is charged to ``ledger`` before its noise is drawn; every
    decision reads public facts and DP outputs only.

    Parameters
    ----------
    corpus : str, DataFrame or Corpus
        Whatever :class:`~topicdp.pipeline.CorpusSource` accepts: a JSON Lines, Parquet or CSV file (or a directory
        or glob of them), a database URL read through ``query``, a DataFrame, ``"embedded"`` or ``"themed"``, or a
        :class:`topicdp.Corpus` built on a public word list.
    vocabulary : str, path, sequence of str or VocabularyPolicy, optional
        A public word list (a file, one word per line, or the words), at no privacy cost. Default: the reference's
        words when a reference is given, else a DP selection from the private texts.
    guarantee : {"dp", "random-dp"}, default="dp"
        ``"random-dp"`` is TopicDP over ``agnostic``'s model with a sampled sensitivity (NOT DP).
    out : str, optional
        Write the release's published part here (checked before anything is read; ``overwrite`` to replace it).
    text_field, user_field, query, user_fraction, max_docs_per_user, max_tokens_per_doc, max_tokens_per_user
        The corpus' fields and per-unit preprocessing (:class:`~topicdp.pipeline.CorpusSource`).
    stop_words : str or sequence of str, optional
        More words to drop: ``"web"``, a word list file, or the words.
    max_features, min_df, max_df, vocabulary_epsilon, vocabulary_delta
        The vocabulary's size, the document-frequency limits of one built from texts, a DP selection's budget.
    epsilon, delta, n_topics, unit, n_units, reference, mechanism, seed, ledger
        As :class:`~topicdp.pipeline.ReleaseRequest`'s fields of the same names: ``epsilon`` and ``delta`` are the
        *total* budget; ``n_units`` states the number of units public (replace-one neighbours, no count spent).
    release_anyway, n_jobs, scheduler, work_dir, agnostic, keep_nonprivate
        As the request's fields of the same names too.
    echo : callable, optional
        Receives each line ``topicdp privatize`` prints; default INFO on the ``topicdp`` logger (also to stderr when
        no handler shows them, :mod:`topicdp._progress`).

    Raises
    ------
    ValueError, TypeError
        A parameter out of its range, named with the range, before anything is read.
    topicdp.pipeline.ReleaseRefused
        Where the forecast says noise (unless ``release_anyway``) or a stated ``n_units`` is not the corpus', with
        the figures and what was already spent.
    topicdp.BudgetExceededError
        Where ``ledger`` has not enough budget left, before the corpus is read.

    Examples
    --------
    The 300 documents of the embedded corpus cannot carry three readable topics at epsilon = 3: the plan counts
    the documents under DP, forecasts noise and refuses before the topics' budget is spent.

    >>> import topicdp
    >>> from topicdp.pipeline import ReleaseRefused
    >>> try:
    ...     topicdp.release("embedded", n_topics=3, epsilon=3.0, unit="document", echo=lambda line: None)
    ... except ReleaseRefused as refused:
    ...     print(refused.spent)
    ('the unit count (epsilon=0.15, delta=5e-08)',)

    Forced, the same request releases the noise it forecast (seeded here, so the report marks it so):

    >>> forced = topicdp.release("embedded", n_topics=3, epsilon=3.0, unit="document", release_anyway=True,
    ...                          seed=0, echo=lambda line: None)
    >>> forced.report.unit, forced.topic_word.shape[0]
    ('document', 3)
    """
    options = {name: value for name, value in locals().items() if name not in ("overwrite", "echo")}
    check_paths({"out": _path(out)}, {"the corpus": _path(corpus), "reference": _path(reference),
                                      "vocabulary": _path(vocabulary), "stop_words": _path(stop_words),
                                      "ledger": _path(getattr(ledger, "path", ledger))},
                overwrite=overwrite, overwrite_flag="overwrite=True")
    request = request_from_options(**options)
    result = run_request(request, echo=echo or say).release
    if out is not None:
        result.save(out, overwrite=overwrite)
    return result
