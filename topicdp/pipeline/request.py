"""What a data owner asks for: a typed, frozen release request (corpus, vocabulary, total budget, unit, K,
mechanism, the agnostic road's options), validated before anything is read.

``n_units`` is the only count of the private data the pipeline reads as a fact, and only when the owner states it:
neighbours are then *replace-one* with exactly ``n_units`` units (a corpus with another number is no neighbour of
them, and is refused alike by all of them); otherwise neighbours are *add/remove* and the plan reads a Gaussian
count of the units, whose budget the report composes.
"""

from __future__ import annotations

import glob
import numbers
import os
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from sklearn.base import clone

from .._files import check_input_file, shard_paths
from .._names import RELEASE_DEFAULTS as D
from .._names import BOUND_PARAMETERS, GUARANTEES, RIGOROUS_MECHANISMS, Guarantee, Neighbours, Unit
from .._validation import (check_delta, check_epsilon, check_privacy_parameters, check_int, check_n_jobs, check_option,
                           check_real)
from .._extras import require
from ..corpus import Corpus, check_source_fields, stop_word_list
from ..rdp.ledger import Budget
from ..rdp.ledger_file import LedgerOptions
from ..tables import FieldError, describe, is_frame, is_sql_url, source_format

#: where a corpus can come from besides a JSON Lines file: data shipped with the library, public as a whole
BUILT_IN_CORPORA = {
    "embedded": "gensim's Lee news corpus (300 documents, one per user; public)",
    "themed": "a generated corpus with ten known topics (2,000 users x 5 documents; topicdp.datasets)",
}


def check_corpus_path(path: str, name: str = "corpus", *, sharded: bool = False) -> None:
    """Refuse a corpus path that is not a readable file or a built-in corpus' name (``sharded``: or a directory or
    glob of JSON Lines, Parquet or CSV files)."""
    if path in BUILT_IN_CORPORA:
        return
    if sharded and (os.path.isdir(path) or glob.has_magic(path)):
        for shard in shard_paths(path):
            check_corpus_path(shard, name)
        return
    check_input_file(path, name, "a JSON Lines, Parquet or CSV file or 'embedded'")
    if not os.access(path, os.R_OK):
        raise ValueError(f"{name}: {path} is not readable")


@dataclass(frozen=True)
class CorpusSource:
    """The private corpus and the per-unit preprocessing applied to it.

    Parameters
    ----------
    path : str, DataFrame or Corpus
        A JSON Lines (``.jsonl[.gz]``), Parquet or CSV (``.csv[.gz]``) file with a text and a user field, a pandas
        or polars DataFrame, a database URL read through ``query`` (``"sqlite:///posts.db"``), one of
        :data:`BUILT_IN_CORPORA`, a directory or glob of such files read shard by shard (at the user level every
        user's documents in one shard, :mod:`topicdp.pipeline.sources`), or a tokenised :class:`topicdp.Corpus`.
    user_fraction : float in (0, 1], optional
        Keep a user exactly when the stable hash of their id falls below it: a per-user rule, so adding or removing
        one user changes no other user's membership.
    max_docs_per_user, max_tokens_per_doc, max_tokens_per_user : int >= 1, optional
        Contribution bounds, applied to each user (document) on its own (:func:`topicdp.pipeline.sources.bounded`).
    stop_words : tuple of str, default ()
        Words dropped from every text besides scikit-learn's English stop words, alike from the private corpus and
        from a public reference (a per-token rule, e.g. :data:`topicdp.corpus.WEB_ARTEFACTS`).
    query : str, optional
        With a database URL: the SQL query whose rows are the records (the ``sql`` extra), e.g.
        ``"SELECT author AS user, body AS text FROM posts ORDER BY id"``.
    """

    path: Any
    text_field: str = D.text_field
    user_field: str = D.user_field
    user_fraction: float | None = None
    max_docs_per_user: int | None = None
    max_tokens_per_doc: int | None = None
    max_tokens_per_user: int | None = None
    stop_words: tuple[str, ...] = ()
    query: str | None = None

    def __post_init__(self) -> None:
        if not is_frame(self.path) and not self.in_memory and (not isinstance(self.path, str) or not self.path):
            raise TypeError("path must be a non-empty str (a file, directory, glob or database URL), a pandas or "
                            f"polars DataFrame or a topicdp.Corpus, got {type(self.path).__name__}")
        if self.in_memory and (self.user_fraction is not None or self.query is not None):
            raise ValueError("user_fraction and query select records while reading; a topicdp.Corpus is already read "
                             "(build it from the users you mean: Corpus.from_jsonl(..., users=...))")
        for name in ("text_field", "user_field"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise TypeError(f"{name} must be a non-empty field name, got {getattr(self, name)!r}")
        if is_sql_url(self.path):
            require("sqlalchemy", extra="sql", purpose="a database URL")
            if not isinstance(self.query, str) or not self.query.strip():
                raise ValueError(f"query: the database {self.label} is read through a SQL query that selects the "
                                 "text and user fields, e.g. \"SELECT author AS user, body AS text FROM posts\"")
        elif self.query is not None:
            raise ValueError(f"query: a query is run on a database URL (such as sqlite:///posts.db), not on "
                             f"{self.label}")
        if not self.built_in and not self.in_memory and not is_frame(self.path) and not is_sql_url(self.path):
            check_corpus_path(self.path, sharded=True)
            if any(source_format(p) in ("parquet", "csv") for p in self.files):
                require("pyarrow", extra="tables", purpose=f"reading {self.path}")
        if self.user_fraction is not None:
            check_real(self.user_fraction, "user_fraction", low=0.0, high=1.0, high_open=False)
        for name in BOUND_PARAMETERS:
            value = getattr(self, name)
            if value is not None and check_int(value, name) < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value} (None for no bound)")
        if isinstance(self.stop_words, str) or not all(isinstance(w, str) and w for w in self.stop_words):
            raise TypeError(f"stop_words must be a tuple of words, got {self.stop_words!r}")
        object.__setattr__(self, "stop_words", tuple(self.stop_words))

    def __repr__(self) -> str:
        """The fields, a DataFrame shown by its kind only (its rows are the private data)."""
        shown = [f"{f.name}=<{self.label}>" if f.name == "path" and (is_frame(self.path) or self.in_memory)
                 else f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)]
        return f"CorpusSource({', '.join(shown)})"

    @property
    def tokenizer_stop_words(self):
        """What the tokenizer drops: ``"english"``, or the English list with this source's words added."""
        return stop_word_list(self.stop_words)

    @property
    def in_memory(self) -> bool:
        """A :class:`topicdp.Corpus` given as it is (read: no file, no fields)."""
        return isinstance(self.path, Corpus)

    @property
    def built_in(self) -> bool:
        return isinstance(self.path, str) and self.path in BUILT_IN_CORPORA

    @property
    def sharded(self) -> bool:
        """A directory or glob pattern, read shard by shard."""
        return (isinstance(self.path, str) and not self.built_in and not is_sql_url(self.path)
                and (os.path.isdir(self.path) or glob.has_magic(self.path)))

    @property
    def format(self) -> str:
        """``"built-in"``, ``"corpus"``, or :func:`topicdp.tables.source_format` of the path (or of the first shard)."""
        if self.built_in or self.in_memory:
            return "built-in" if self.built_in else "corpus"
        return source_format(self.files[0] if self.sharded else self.path)

    @property
    def files(self) -> list[str]:
        """The files read: a sharded corpus' shards, another's one file, none for a DataFrame, database or built-in."""
        if self.built_in or self.in_memory or is_frame(self.path) or is_sql_url(self.path):
            return []
        return shard_paths(self.path) if self.sharded else [self.path]

    @property
    def label(self) -> str:
        """How messages and the ledger name the corpus: its path, a database URL without its password and the
        query, or the kind of DataFrame (never anything of its contents)."""
        return "a topicdp.Corpus" if self.in_memory else describe(self.path, self.query)

    def check_fields(self) -> None:
        """Refuse, before the corpus is read, a source (every shard) without the text or user field, naming the
        parameter, the fields it has and the nearest (:func:`topicdp.corpus.check_source_fields`: a schema, a query
        run without fetching a row, or a JSON Lines file's first record)."""
        if self.built_in or self.in_memory or self.__dict__.get("_fields_checked"):  # once per source (a request re-made keeps it)
            return
        for path in (self.files or [self.path]):
            check_source_fields(path, self.text_field, self.user_field, query=self.query)
        object.__setattr__(self, "_fields_checked", True)


@dataclass(frozen=True)
class VocabularyPolicy:
    """How the release's columns are obtained: :meth:`public` (a public word list, at no cost), :meth:`dp` (selected
    under DP, :func:`topicdp.vocabulary.select_vocabulary`), :meth:`from_texts` (document-frequency limits on the
    texts: covered only when they are public, else NOT COVERED) or :meth:`from_reference` (the same on the public
    reference, at no cost)."""

    kind: str = "dp"
    words: tuple[str, ...] | None = None
    epsilon: float | None = None
    delta: float | None = None
    max_features: int = D.max_features
    min_df: int = D.min_df
    max_df: float = D.max_df
    origin: str = "stated by the data owner"  # where a public list came from, as the report states it
    #: a DP selection's words per unit ``k``; None: from public facts at the decision's count
    #: (:func:`topicdp.pipeline.plan.word_cap`)
    max_words_per_unit: int | None = None

    def __post_init__(self) -> None:
        check_option(self.kind, "vocabulary kind", ("public", "dp", "texts", "reference"))
        check_int(self.max_features, "max_features", low=1)
        check_int(self.min_df, "min_df", low=1)
        check_real(self.max_df, "max_df", low=0.0, high=1.0, high_open=False)
        if self.kind == "public":
            if not self.words:
                raise ValueError("a public vocabulary needs at least one word")
            if len(set(self.words)) != len(self.words):
                raise ValueError("the public word list has duplicate words")
        elif self.words is not None:
            raise ValueError("words are given only for a public vocabulary (VocabularyPolicy.public)")
        if self.kind != "dp" and (self.epsilon is not None or self.delta is not None):
            raise ValueError("a vocabulary budget (epsilon, delta) applies to a DP selection only")
        if self.max_words_per_unit is not None:
            if self.kind != "dp":
                raise ValueError("max_words_per_unit applies to a DP selection only")
            check_int(self.max_words_per_unit, "max_words_per_unit", low=1)
        if self.epsilon is not None:
            check_epsilon(self.epsilon, "vocabulary_epsilon")
        if self.delta is not None:
            check_delta(self.delta, "vocabulary_delta")

    @classmethod
    def public(cls, words, origin: str = "stated by the data owner") -> "VocabularyPolicy":
        """A public word list (its ``origin`` is what the report says of it)."""
        words = tuple(str(w) for w in words)
        return cls(kind="public", words=words, max_features=max(len(words), 1), origin=origin)

    @classmethod
    def dp(cls, epsilon: float | None = None, delta: float | None = None, max_features: int = D.max_features,
           max_words_per_unit: int | None = None) -> "VocabularyPolicy":
        """A DP selection; ``epsilon``/``delta`` default to a share of the request's budget
        (:data:`topicdp.pipeline.plan.VOCABULARY_EPSILON_SHARE`, :data:`~topicdp.pipeline.plan.VOCABULARY_DELTA_SHARE`),
        ``max_words_per_unit`` to the cap public facts give (:func:`topicdp.vocabulary.words_per_unit`)."""
        return cls(kind="dp", epsilon=epsilon, delta=delta, max_features=max_features,
                   max_words_per_unit=max_words_per_unit)

    @classmethod
    def from_texts(cls, min_df: int = D.min_df, max_df: float = D.max_df, max_features: int = D.max_features) -> "VocabularyPolicy":
        return cls(kind="texts", min_df=min_df, max_df=max_df, max_features=max_features)

    @classmethod
    def from_reference(cls, min_df: int = D.min_df, max_df: float = D.max_df,
                       max_features: int = D.max_features) -> "VocabularyPolicy":
        """The public reference's words, built as :meth:`from_texts` builds the texts' (the release turns it into
        :meth:`public` once the reference is read)."""
        return cls(kind="reference", min_df=min_df, max_df=max_df, max_features=max_features)

    @property
    def n_words(self) -> int | None:
        """The number of columns when it is known before reading (a public list), else None."""
        return len(self.words) if self.words is not None else None


#: what the request decides for the agnostic road's TopicDP (its budget share, unit, neighbours, seed, workers)
DECIDED_BY_THE_REQUEST = ("epsilon", "delta", "unit", "neighbours", "mechanism", "sensitivity", "n_jobs",
                          "random_state")


def checked_template(template, n_topics: int):
    """The request's TopicDP template, checked: ``template`` as given, or TopicDP over gensim LDA (seed 0); what
    :data:`DECIDED_BY_THE_REQUEST` names must stay at TopicDP's defaults (the request decides it)."""
    from ..adapters import make_model
    from ..adapters.base import TopicModelSpec
    from ..agnostic import TopicDP
    from ..samplers import PRIVATE_ORACLE, SensitivitySampling

    if template is None:
        template = TopicDP(make_model("gensim-lda", n_topics, 0))
    if not isinstance(template, TopicDP):
        raise TypeError("agnostic must be a TopicDP (unfitted: the model and its sampling, calibration, secure_noise, "
                        f"keep_model), got {type(template).__name__}")
    given, defaults = template.get_params(deep=False), TopicDP(template.model).get_params(deep=False)
    decided = [k for k in DECIDED_BY_THE_REQUEST if given[k] is not defaults[k] and given[k] != defaults[k]]
    if decided:
        raise ValueError(f"agnostic sets {', '.join(decided)}: the request decides them (its epsilon and delta, unit, "
                         "neighbour relation, mechanism, n_jobs and seed); leave them at TopicDP's defaults")
    for name in ("n_topics", "n_components", "num_topics"):  # the toolkit's, scikit-learn's and gensim's names
        k = getattr(template.model, name, None)
        if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k != n_topics:
            raise ValueError(f"agnostic's model has {name}={k}, the request n_topics={n_topics}: make them equal")
    sampling = template.sampling or SensitivitySampling(random_state=0, progress=True)
    if not isinstance(sampling, SensitivitySampling):
        raise TypeError(f"agnostic.sampling must be a SensitivitySampling, got {type(sampling).__name__}")
    if sampling.distribution not in (None, PRIVATE_ORACLE):
        raise ValueError("agnostic.sampling.distribution must be None (P is the request's reference) or "
                         f"{PRIVATE_ORACLE!r} in a release request")
    checked = clone(template).set_params(sampling=None, sensitivity="global")
    checked._validate_params()  # its own checks (calibration, secure_noise) as on the global road: P comes later
    if isinstance(checked.model, TopicModelSpec):
        checked.model._validate_params()  # the model's parameters too, before anything is read
    return checked.set_params(sampling=sampling, sensitivity=defaults["sensitivity"])


def model_label(model) -> str:
    """A model's name in messages: its registry name, else its class."""
    return getattr(model, "name", None) or type(model).__name__


@dataclass(frozen=True)
class ReleaseRequest:
    """One release, as the data owner asks for it; every field is public.

    Parameters
    ----------
    epsilon, delta : float
        The *total* budget of everything the release spends on the private data (count, vocabulary, topics).
    n_units : int, optional
        The number of units, stated public: neighbours are then replace-one with that count (default: add/remove,
        the plan reading a DP count).
    mechanism : str, optional
        A mechanism of ``guarantee="dp"`` (:data:`topicdp.pipeline.MECHANISMS`); default: the plan's rule.
    reference : str, optional
        A public corpus file with the same fields: ``dp-vem``'s start and simulation, the vocabulary forecast, and
        P of the random-DP road.
    agnostic : TopicDP, optional
        The agnostic road's template (unfitted, :func:`checked_template`): the model and its ``sampling``,
        ``calibration``, ``secure_noise`` and ``keep_model``. Its P is ``reference``, or the private corpus itself
        on the explicit opt-in ``sampling.distribution="private-oracle"``.
    keep_nonprivate, release_anyway : bool
        Keep TopicDP's non-private topics in the owner's diagnostics; release even where the forecast says noise.
    seed : int, optional
        Seeds every noise draw (testing only: the report marks the release seeded).
    n_jobs : int, default=2
        Workers in this process (dp-vem's E-step threads, added in block order; the sampler's fits); -1: all cores.
    scheduler, work_dir : str, optional
        For a sharded corpus: ``"local:N"`` or a Dask scheduler's address (the ``cluster`` extra), and where the
        count shards are written (every worker must reach it).
    ledger : str or LedgerOptions, optional
        The dataset's persisted ledger, checked and written before the corpus is read (:mod:`topicdp.pipeline.charge`).
    """

    source: CorpusSource
    vocabulary: VocabularyPolicy = field(default_factory=VocabularyPolicy.dp)
    epsilon: float = D.epsilon
    delta: float = D.delta
    unit: Unit | str = D.unit
    n_units: int | None = None
    n_topics: int = D.n_topics
    guarantee: Guarantee | str = Guarantee.DP
    mechanism: str | None = None
    reference: str | None = None
    agnostic: Any = None
    keep_nonprivate: bool = False
    release_anyway: bool = False
    seed: int | None = None
    n_jobs: int = D.n_jobs
    scheduler: str | None = None
    work_dir: str | None = None
    ledger: LedgerOptions | str | None = None
    #: replace-one when the number of units is stated public, else add/remove; the random-dp road states
    #: replace-one (its sampler draws replace-one pairs from P and it decides nothing on a count)
    neighbours: Neighbours = field(init=False)

    def __post_init__(self) -> None:
        if self.ledger is not None:
            ledger = self.ledger if isinstance(self.ledger, LedgerOptions) else LedgerOptions(self.ledger)
            object.__setattr__(self, "ledger", ledger)
        for name, kind in (("source", CorpusSource), ("vocabulary", VocabularyPolicy)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}")
        object.__setattr__(self, "unit", check_privacy_parameters(self)["unit"])  # epsilon, delta, unit
        if self.n_units is not None:
            check_int(self.n_units, "n_units", low=1)
        check_int(self.n_topics, "n_topics", low=1)
        self.topicdp  # the agnostic template checked (and kept) before anything is read
        object.__setattr__(self, "guarantee", Guarantee(check_option(self.guarantee, "guarantee", GUARANTEES)))
        if self.mechanism is not None:
            check_option(self.mechanism, "mechanism", RIGOROUS_MECHANISMS)
            if self.guarantee == "random-dp":
                raise ValueError("mechanism names a mechanism of guarantee 'dp'; guarantee 'random-dp' is TopicDP "
                                 "over the request's agnostic model")
        if self.seed is not None:
            check_int(self.seed, "seed", low=0)
        check_n_jobs(self.n_jobs)
        stated = self.n_units is not None or self.guarantee == "random-dp"
        object.__setattr__(self, "neighbours", Neighbours.REPLACE_ONE if stated else Neighbours.ADD_REMOVE)
        self._check_combinations()
        # last, once every parameter is checked: the fields of the corpus and the reference (no document is read)
        self.source.check_fields()
        if self.reference not in (None, "embedded"):
            try:
                check_source_fields(self.reference, self.source.text_field, self.source.user_field)
            except FieldError as exc:
                raise FieldError(f"reference: {exc}", field=exc.field, parameter=exc.parameter, fields=exc.fields,
                                 suggestion=exc.suggestion) from None

    @cached_property
    def topicdp(self):
        """The TopicDP the agnostic roads clone: ``agnostic`` checked, or the default (gensim LDA of K topics, seed
        0, sampler seed 0); the field keeps what was given, so ``dataclasses.replace`` re-derives it."""
        return checked_template(self.agnostic, self.n_topics)

    @property
    def budget(self) -> Budget:
        """The total (epsilon, delta) of the release, as the ledger takes it."""
        return Budget(self.epsilon, self.delta)

    def _check_combinations(self) -> None:
        """Flag combinations that cannot give the stated guarantee, refused before anything is read."""
        if self.unit == Unit.DOCUMENT and self.source.max_docs_per_user is not None:
            raise ValueError(
                "a per-user document cap (max_docs_per_user) breaks document-level privacy: adding one document "
                "re-draws which of its owner's documents are kept, a change of up to two kept documents (a "
                "replacement) that a sensitivity of one document does not cover. Drop the cap, or protect users "
                "(unit 'user')")
        if self.unit == Unit.DOCUMENT and self.source.max_tokens_per_user is not None:
            raise ValueError(
                "a per-user token cap (max_tokens_per_user) breaks document-level privacy: adding one document "
                "re-draws which tokens of its owner's other documents are kept. Use max_tokens_per_doc, or protect "
                "users (unit 'user')")
        n_words = self.vocabulary.n_words
        if n_words is not None and self.n_topics > n_words:
            raise ValueError(f"n_topics ({self.n_topics}) must be at most the number of words of the public "
                             f"vocabulary ({n_words})")
        if self.n_topics > self.vocabulary.max_features:
            raise ValueError(f"n_topics ({self.n_topics}) must be at most max_features ({self.vocabulary.max_features}),"
                             " the most words the vocabulary can have")
        if self.vocabulary.kind == "texts" and self.guarantee == "dp" and not self.source.built_in:
            raise ValueError("a vocabulary built from the private texts is not covered by DP: give a public word "
                             "list (VocabularyPolicy.public) or select it under DP (VocabularyPolicy.dp)")
        if self.vocabulary.kind == "reference" and self.reference is None:
            raise ValueError("a vocabulary from the reference (VocabularyPolicy.from_reference) needs a reference")
        if self.source.built_in and self.source.path == "themed" and self.vocabulary.kind != "public":
            raise ValueError("the generated 'themed' corpus comes as counts over its own public word list: use "
                             "its vocabulary (topicdp.datasets.themed_vocabulary) as a public VocabularyPolicy")
        if self.guarantee == "random-dp":
            if self.reference is None and not self.topicdp.sampling.private_oracle:
                raise ValueError(NO_P_MESSAGE)
            if self.vocabulary.kind == "dp":
                raise ValueError("the random-dp road takes a public word list or the vocabulary of the texts "
                                 "(NOT COVERED, as its report says), not a DP selection")
        elif self.topicdp.sampling.private_oracle:
            raise ValueError("private_oracle is the sampling distribution of the random-dp road; guarantee 'dp' "
                             "samples nothing")
        if self.topicdp.secure_noise and self.guarantee == "dp" and self.mechanism != "gaussian-global":
            raise ValueError("secure_noise draws TopicDP's Gaussian noise: use it with guarantee 'random-dp' or "
                             "with mechanism 'gaussian-global'")
        if self.reference not in (None, "embedded"):
            check_corpus_path(self.reference, "reference")
        elif self.reference == "embedded" and not (self.source.built_in and self.source.path == "embedded"):
            raise ValueError("reference 'embedded' (half of the Lee corpus as P) goes with corpus 'embedded' only")
        # a sharded corpus is released by dp-vem, the one mechanism whose passes are sums over shards
        if not self.source.sharded and (self.scheduler is not None or self.work_dir is not None):
            raise ValueError("scheduler and work_dir run the passes over a sharded corpus (a directory of JSON "
                             "Lines files or a glob pattern); a single file is read in memory")
        if self.source.sharded and self.guarantee == "random-dp":
            raise ValueError("the random-dp road fits its model many times on resampled corpora held in memory; a "
                             "sharded corpus (a directory or glob) is released by dp-vem under guarantee 'dp'")
        if self.source.sharded and self.mechanism not in (None, "dp-vem"):
            raise ValueError(f"mechanism {self.mechanism!r} reads the corpus in memory; a sharded corpus (a "
                             "directory or glob) is released by dp-vem, whose passes are sums over shards")
        if self.scheduler is not None:
            check_scheduler(self.scheduler)
        if self.work_dir is not None and not os.path.isdir(self.work_dir):
            raise ValueError(f"work_dir: {self.work_dir} is not a directory")
        if self.reference is not None and self.topicdp.sampling.private_oracle:
            raise ValueError("reference (a public P) and private_oracle (P = the private corpus) exclude each other")



def check_scheduler(scheduler: str) -> int | None:
    """``"local:N"`` (N >= 1 worker processes; returns N) or a Dask scheduler address (returns None)."""
    if not isinstance(scheduler, str) or not scheduler:
        raise ValueError(f"scheduler must be 'local:N' or a Dask scheduler address, got {scheduler!r}")
    if scheduler.startswith("local:"):
        workers = scheduler[len("local:"):]
        if not workers.isdigit() or int(workers) < 1:
            raise ValueError(f"scheduler 'local:N' needs N >= 1 workers, got {scheduler!r}")
        return int(workers)
    if "://" not in scheduler and ":" not in scheduler:
        raise ValueError(f"scheduler must be 'local:N' or a Dask scheduler address such as tcp://host:8786, got "
                         f"{scheduler!r}")
    return None


def resolve_road(guarantee: str | None, mechanism: str | None, sensitivity: str | None) -> tuple[str, str | None]:
    """(guarantee, mechanism) from ``--guarantee``, ``--mechanism`` and ``--sensitivity``, TopicDP's own words for
    the two roads (sampled = random-dp, global = dp with gaussian-global or laplace); a contradiction is refused."""
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
    return guarantee or "dp", mechanism


NO_P_MESSAGE = (
    "the sampled sensitivity needs a sampling distribution P that is not the private data by default: give a "
    "public reference corpus (--reference PUBLIC.jsonl; sigma is then public) or opt in to the private oracle "
    "(--private-oracle: resample the private corpus, as TopicDP did; sigma then leaks and the report says so)"
)


class ReleaseRefused(ValueError):
    """The pipeline stopped before the topics were released. ``spent`` names what had been spent already, each
    step with its budget (empty: nothing of the budget was used); ``topics_spent`` says whether the topics' step
    had made some of its releases (a precondition checked on released quantities failed after them)."""

    def __init__(self, reason: str, spent: tuple[str, ...] = (), topics_spent: bool = False) -> None:
        self.reason, self.spent, self.topics_spent = reason, spent, topics_spent
        super().__init__(f"{reason}; nothing was released and {spent_statement(spent, topics_spent)}")


def spent_statement(spent: tuple[str, ...], topics_spent: bool) -> str:
    """What a stop says of the budget: the steps spent (each with its budget) and whether the topics' step was."""
    parts = list(spent) + (["part of the topics' budget (the releases made before the failure, which the "
                            "ledger recorded)"] if topics_spent else [])
    if topics_spent:
        return f"{join_and(parts)} were spent"
    if spent:
        verb = "spent its budget" if len(spent) == 1 else "spent their budgets"
        return f"only {join_and(parts)} {verb}; the topics' budget was not spent"
    return "no budget was spent"


def join_and(parts: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
