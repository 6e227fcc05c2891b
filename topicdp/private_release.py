"""What a private release hands to the analyst, and what it keeps for the data owner.

Every road and mechanism (TopicDP's Gaussian, Laplace and secure-noise releases, ``DPSpectralMoments.release_``,
``DPStochasticVI.release_``, :func:`topicdp.mechanisms.mvg_release`) returns one :class:`PrivateRelease`. It has two
parts that never mix:

* the **published** part (:meth:`PrivateRelease.save`, :meth:`PrivateRelease.to_dict`): DP outputs,
  post-processing of them, and parameters stated as public. Its format is versioned (:data:`FORMAT`) and
  described by a JSON Schema (:data:`SCHEMA`); the report lists the status of every quantity in it
  (``report.published``, see :data:`topicdp.report.STATUSES`). :meth:`save` refuses to write a field whose
  status is not listed.
* the owner's **diagnostics** (:meth:`PrivateRelease.save_diagnostics`): exact statistics of the private
  data (what bounding cut, fingerprints of the counts, the sampled distances, timings, and the non-private
  matrix when it was kept). They are not covered by any guarantee and never enter the published file.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import numpy as np

from .mechanisms.postprocess import top_words
from .report import GUARANTEES, NEIGHBOURS, UNITS, PrivacyReport, _jsonable, check_status

FORMAT = "topicdp.release/2"
DIAGNOSTICS_FORMAT = "topicdp.diagnostics/1"
N_TOP_WORDS = 10

_MATRIX = {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
_NUMBER_OR_NONFINITE = {"anyOf": [{"type": "number"}, {"enum": ["inf", "-inf", "nan"]}]}
_OPTIONAL_NUMBER = {"anyOf": [_NUMBER_OR_NONFINITE, {"type": "null"}]}

#: JSON Schema (draft 2020-12) of the published release file; checked by :func:`validate` in :meth:`save`.
REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["mechanism", "guarantee", "unit", "neighbours", "epsilon", "delta", "seeded", "published",
                 "composition_total"],
    "properties": {
        "mechanism": {"type": "string"},
        "guarantee": {"enum": list(GUARANTEES)},
        "unit": {"enum": list(UNITS)},
        "neighbours": {"enum": list(NEIGHBOURS)},
        "epsilon": _NUMBER_OR_NONFINITE,
        "delta": {"type": "number"},
        "gamma": _OPTIONAL_NUMBER,
        "sampling_distribution": {"type": ["object", "null"]},
        "sensitivity": _OPTIONAL_NUMBER,
        "sensitivity_method": {"type": "string"},
        "sigma": _OPTIONAL_NUMBER,
        "calibration": {"type": "string"},
        "sigma_alternatives": {"type": "object"},
        "composition": {"type": "array", "items": {"type": "object"}},
        "composition_total": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["accounting", "epsilon", "delta", "valid", "details"],
                "properties": {
                    "accounting": {"type": "string"},
                    "epsilon": _NUMBER_OR_NONFINITE,
                    "delta": {"type": "number"},
                    "valid": {"type": "boolean"},
                    "details": {"type": "object"},
                },
            },
        },
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "passed", "detail"],
                "properties": {"name": {"type": "string"}, "passed": {"type": "boolean"}, "detail": {"type": "string"}},
            },
        },
        "seeded": {"type": "boolean"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "details": {"type": "object"},
        "published": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": FORMAT,
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "topic_word", "vocabulary", "top_words", "report"],
    "properties": {
        "format": {"const": FORMAT},
        "topic_word": _MATRIX,
        "noisy": _MATRIX,
        "vocabulary": {"type": "array", "items": {"type": "string"}},
        "top_words": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
        "extra": {"type": "object", "additionalProperties": {"type": "array"}},
        "report": REPORT_SCHEMA,
    },
}

VOCABULARY_SOURCES = ("private-texts", "public", "dp")
VOCABULARY_NOTE = (
    "NOT COVERED: the vocabulary (the columns of the release) was built from the private texts, so which "
    "words occur is not protected. Use a public word list, or a vocabulary selected under DP."
)


class VocabularyStatement(NamedTuple):
    """What a release says of its vocabulary: the status of ``vocabulary`` in the published file, and a note."""

    status: str
    note: str


def vocabulary_status(source: "str | VocabularyStatement") -> VocabularyStatement:
    """(status for ``report.published["vocabulary"]``, note) of a release's vocabulary.

    ``source``: ``"private-texts"`` (NOT COVERED), ``"public"`` (a public word list), or ``"dp"`` (selected under
    DP and recorded in the caller's ledger, whose statement covers both steps; this report's totals are the
    topics' alone); or the statement itself, as :func:`topicdp.pipeline.release` gives it to the estimator it
    fits (:func:`topicdp.pipeline.compose.vocabulary_statement`: where the words came from, a DP selection with
    its budget), for every mechanism.
    """
    if isinstance(source, VocabularyStatement):
        return source
    if source not in VOCABULARY_SOURCES:
        raise ValueError(f"vocabulary_source must be one of {VOCABULARY_SOURCES}, got {source!r} (a DP-selected "
                         "vocabulary is composed by topicdp.pipeline.release)")
    if source == "public":
        return VocabularyStatement("public: a public word list stated by the data owner",
                                   "The vocabulary is a public word list.")
    if source == "dp":
        return VocabularyStatement(
            "DP: selected under DP; its budget is in the caller's ledger, not in this report's totals",
            "The vocabulary was selected under DP and recorded in the caller's ledger: ledger.statement() composes "
            "it with these topics; this report's epsilon and delta are the topics' alone.")
    return VocabularyStatement("NOT COVERED: built from the private texts", VOCABULARY_NOTE)


def vocabulary_of(corpus, source: "str | VocabularyStatement | None") -> VocabularyStatement:
    """The statement of a release's vocabulary: ``source`` where the caller gives one (:func:`vocabulary_status`),
    else where ``corpus``' words came from (:attr:`topicdp.Corpus.vocabulary_source`: a word list the caller gave is
    stated public, words built from the texts are not covered)."""
    if source is None:
        source = getattr(corpus, "vocabulary_source", "private-texts")
    return vocabulary_status(source)


class TopWords(list):
    """The top words of each topic: a list (one entry per topic) of lists of ``(word, weight)`` tuples.

    A plain list in every other respect (indexing, iteration, equality, ``json.dumps``); only ``str()``
    differs: one line per topic, its words in order.

    Examples
    --------
    >>> print(TopWords([[("goal", 0.5), ("match", 0.25)], [("bake", 0.75), ("oven", 0.125)]]))
    topic 0: goal match
    topic 1: bake oven
    """

    def __str__(self) -> str:
        width = len(str(len(self) - 1)) if self else 1
        return "\n".join(f"topic {i:>{width}}: " + " ".join(str(w) for w, _ in topic) for i, topic in enumerate(self))


def guarantee_line(report: PrivacyReport) -> str:
    """One line stating a report's guarantee: kind, (epsilon, delta[, gamma]), unit and neighbour relation."""
    eps, delta = f"{float(report.epsilon):g}", f"{float(report.delta):g}"
    where = f"at the {report.unit} level ({report.neighbours} neighbours)"
    if report.guarantee == "approx-DP":
        head = f"({eps}, {delta})-DP"
    elif report.guarantee == "random-DP":
        gamma = "?" if report.gamma is None else f"{float(report.gamma):g}"
        head = f"({eps}, {delta}, {gamma})-random DP (NOT differential privacy: see the caveat)"
    else:
        head = f"NO guarantee (stated ({eps}, {delta}) does not hold)"
    return f"{head} {where}, mechanism {report.mechanism}" + ("; SEEDED: do not publish" if report.seeded else "")


#: statuses every release states itself; producers give the rest through ``report.published``
_RELEASE_STATUSES = {
    "format": "public: the file format version",
    "top_words": "post-processing: the largest entries of topic_word",
}


@dataclass(frozen=True, eq=False)
class PrivateRelease:
    """A released topic-word matrix.

    Attributes
    ----------
    topic_word : ndarray, shape (K, V)
        The released topics (rows on the simplex).
    noisy : ndarray, shape (K, V), or None
        The mechanism's raw output before post-processing (output perturbation only; None where the
        topics come out of a longer private pipeline, e.g. the spectral configurations).
    vocabulary : tuple of str
        Column labels; their status is in ``report.published["vocabulary"]``.
    report : PrivacyReport
    nonprivate : ndarray or None
        The non-private f(D), kept only when the caller asked for it for evaluation. Not private: it is
        written only by :meth:`save_diagnostics` with ``include_nonprivate=True``.
    extra : dict of str -> array
        Other published DP outputs (e.g. the spectral road's Dirichlet parameters ``alpha``).
    diagnostics : dict
        Exact statistics of the private data for the owner's eyes (never published; see module docstring).
    """

    topic_word: np.ndarray
    noisy: np.ndarray | None
    vocabulary: tuple
    report: PrivacyReport
    nonprivate: np.ndarray | None = field(default=None, repr=False)
    extra: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "topic_word", np.asarray(self.topic_word, dtype=float))
        object.__setattr__(self, "vocabulary", tuple(str(w) for w in self.vocabulary))
        if self.topic_word.ndim != 2 or self.topic_word.shape[1] != len(self.vocabulary):
            raise ValueError(f"vocabulary must have one word per column of topic_word {self.topic_word.shape}, "
                             f"got {len(self.vocabulary)}")

    @property
    def n_topics(self) -> int:
        return self.topic_word.shape[0]

    def top_words(self, n: int = 10) -> TopWords:
        """The n most heavily weighted words of each released topic.

        A :class:`TopWords`: a list of lists of ``(word, weight)`` tuples whose ``str()`` is one line per
        topic (``print(release.top_words(8))``).
        """
        return TopWords(top_words(self.topic_word, self.vocabulary, n))

    def with_vocabulary(self, words, *, source: str) -> "PrivateRelease":
        """This release with its columns named, for a release fitted on a count matrix (column indices).

        Parameters
        ----------
        words : sequence of str
            One word per column, in column order (e.g. ``CountVectorizer.get_feature_names_out()``).
        source : {"private-texts", "public"}
            Where the words came from: a vectorizer fitted on the private texts (the report then marks the
            vocabulary NOT COVERED, as it is), or a public word list.

        Examples
        --------
        >>> import numpy as np
        >>> from topicdp.variational import DPVariationalEM
        >>> X = np.random.default_rng(0).poisson(1.0, size=(50, 4))
        >>> release = DPVariationalEM(2, epsilon=1.0, delta=1e-6, unit="document", random_state=0).fit(X).release_
        >>> named = release.with_vocabulary(["cat", "dog", "fish", "bird"], source="public")
        >>> sorted(named.vocabulary), named.report.published["vocabulary"].split(":")[0]
        (['bird', 'cat', 'dog', 'fish'], 'public')
        """
        from dataclasses import replace

        words = tuple(str(w) for w in words)
        if words == self.vocabulary:
            return self
        if self.vocabulary != tuple(str(j) for j in range(len(self.vocabulary))):
            raise ValueError("with_vocabulary names the columns of a release fitted on a count matrix; this "
                             "release already has words")
        if len(words) != len(self.vocabulary) or len(set(words)) != len(words):
            raise ValueError(f"words must be {len(self.vocabulary)} distinct words, one per column; got {len(words)}"
                             f" ({len(set(words))} distinct)")
        status, note = vocabulary_status(source)
        report = replace(self.report, published={**self.report.published, "vocabulary": status},
                         notes=[*self.report.notes, note])
        return replace(self, vocabulary=words, report=report)

    def transform(self, X, *, alpha=None) -> np.ndarray:
        """Document-topic proportions of new documents, folded into the released topics.

        A fixed-topic variational E-step (Blei, Ng & Jordan 2003, Eqs. 6-7), as gensim's and scikit-learn's
        LDA do for unseen documents (:func:`topicdp.transform.fold_in`). This is post-processing of the
        released matrix: it reads only ``X``, the caller's own documents, never the private corpus, so it
        spends no budget and changes nothing in the report (which says nothing about ``X``).

        Parameters
        ----------
        X : topicdp.Corpus or (n_docs, V) count matrix
            A Corpus must have this release's vocabulary (build it with ``vocabulary=release.vocabulary``);
            a matrix must have one column per word of ``vocabulary``, in that order.
        alpha : float or (K,) array, optional
            Dirichlet prior on the proportions; default 1/K (the spectral road's ``extra["alpha"]`` may be
            passed).

        Returns
        -------
        ndarray (n_docs, K)
            Rows sum to 1.

        Examples
        --------
        >>> import numpy as np
        >>> from topicdp import TopicDP, CallableModel, embedded_corpus
        >>> corpus = embedded_corpus()
        >>> topics = np.full((3, corpus.n_words), 1.0 / corpus.n_words)
        >>> model = CallableModel(lambda c: topics, n_topics=3, name="uniform")
        >>> release = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(corpus).release_
        >>> theta = release.transform(corpus.X[:4])
        >>> theta.shape, bool(np.allclose(theta.sum(axis=1), 1.0))
        ((4, 3), True)
        """
        from .transform import fold_in

        return fold_in(self.topic_word, X, alpha=alpha, vocabulary=self.vocabulary, who="the release")

    def evaluate(self, corpus, *, epsilon: float, delta: float, ledger=None, random_state=None,
                 unit: str | None = None, neighbours: str | None = None, **options):
        """Each topic's NPMI and NPMI contrast on the owner's ``corpus``, under (epsilon, delta)-DP.

        Not post-processing: it reads the private corpus, so it is a release of its own, at this release's unit and
        neighbour relation unless ``unit``/``neighbours`` are given, charged to ``ledger`` (checked before the
        corpus is read). See :func:`topicdp.metrics.private.private_coherence` (``options``: ``clip``,
        ``n_across``, ``level``, ``n_boot``) for the statistic, its sensitivity and the interval.

        Returns
        -------
        topicdp.metrics.private.PrivateEvaluation
        """
        from .metrics.private import private_coherence

        lists = [[w for w, _ in topic] for topic in self.top_words(N_TOP_WORDS)]
        return private_coherence(lists, corpus, epsilon=epsilon, delta=delta, unit=unit or self.report.unit,
                                 neighbours=neighbours or self.report.neighbours, ledger=ledger,
                                 random_state=random_state, **options)

    def nonprivate_top_words(self, n: int = 10) -> TopWords:
        """The n largest words of each topic of the non-private matrix (NOT private: for the owner's eyes)."""
        if self.nonprivate is None:
            raise ValueError("the non-private matrix was not kept; pass keep_nonprivate=True to the fit")
        return TopWords(top_words(self.nonprivate, self.vocabulary, n))

    def __repr__(self) -> str:
        r = self.report
        return (f"<PrivateRelease of {self.n_topics} topics over {len(self.vocabulary)} words: {r.mechanism}, "
                f"{r.guarantee} (epsilon={float(r.epsilon):g}, delta={float(r.delta):g}), unit={r.unit}>")

    def __str__(self) -> str:
        """A readable summary of the published part: size, guarantee, vocabulary status, top 8 words per topic."""
        lines = [f"PrivateRelease: {self.n_topics} topics over a vocabulary of {len(self.vocabulary)} words",
                 f"guarantee: {guarantee_line(self.report)}"]
        vocabulary = self.report.published.get("vocabulary")
        if vocabulary:
            lines.append(f"vocabulary: {vocabulary}")
        lines.append("top words:")
        lines.extend("  " + line for line in str(self.top_words(8)).splitlines())
        lines.append("(release.report.summary() for the full privacy report)")
        return "\n".join(lines)

    # -- notebook displays ------------------------------------------------------------------------------
    #: height in CSS pixels of the inline view in a notebook (the map is 520 units square, under the header)
    VIEW_HEIGHT = 760

    def _repr_html_(self) -> str:
        """What a notebook shows for a release: the guarantee first, then the interactive view inline.

        The headline (and, for a release forced past its plan's refusal, that statement) comes first, as
        :meth:`topicdp.report.PrivacyReport.headline` states it; then the page of :func:`topicdp.view.release_html`
        in an ``<iframe srcdoc>``, so that its styles and script stay apart from the notebook's and two releases
        shown in one notebook do not share element ids; then the top words and the report's summary, folded, for
        a renderer that runs no script. Self-contained: nothing is fetched from the network. Computed from the
        published part only (post-processing), so the output cell may be published with the release.
        """
        import html

        from ._view_page import page_html
        from .report import report_html

        try:
            page = page_html(self.to_dict())
            view = (f'<iframe class="topicdp-view" title="topicdp release view" srcdoc="{html.escape(page, quote=True)}" '
                    f'style="width:100%;height:{self.VIEW_HEIGHT}px;border:1px solid #ddd"></iframe>')
        except ValueError as exc:  # e.g. a row without positive mass: the guarantee and the words still show
            view = f'<div style="color:#a01010">the view could not be drawn: {html.escape(str(exc))}</div>'
        size = (f"{self.n_topics} topics over a vocabulary of {len(self.vocabulary)} words, mechanism "
                f"{self.report.mechanism}")
        vocabulary = self.report.published.get("vocabulary")
        return "".join([
            '<div class="topicdp-release">',
            report_html(self.report, with_summary=False),
            f'<div style="color:#555;margin:2px 0 6px">{html.escape(size)}'
            + (f"; vocabulary: {html.escape(vocabulary)}" if vocabulary else "") + "</div>",
            view,
            "<details><summary>top words</summary><pre>"
            f"{html.escape(str(self.top_words(N_TOP_WORDS)))}</pre></details>",
            "<details><summary>privacy report</summary><pre style=\"white-space:pre-wrap\">"
            f"{html.escape(self.report.summary())}</pre></details>",
            "</div>",
        ])

    def _repr_markdown_(self) -> str:
        """A release in Markdown (a renderer without HTML): the guarantee in bold first, then what ``print`` shows."""
        from .report import _display_lines, _markdown_text

        head, _ = _display_lines(self.report)
        return ("".join(f"**{_markdown_text(line)}**\n\n" for line in head)
                + "```\n" + "\n".join(str(self).splitlines()[2:]) + "\n```\n")

    # -- post-processing into other libraries -----------------------------------------------------------
    def to_sklearn(self, *, pseudo_counts: float | None = None, doc_topic_prior: float | None = None,
                   feature_names: bool = False):
        """A fitted scikit-learn ``LatentDirichletAllocation`` whose topics are the released ones.

        Post-processing of the release: it reads ``topic_word`` and ``vocabulary`` only, never the private corpus,
        so it spends no budget and the report covers it as it covers the topics. The estimator then works where a
        scikit-learn LDA is expected: ``transform`` of a ``CountVectorizer(vocabulary=release.vocabulary)`` output
        gives document-topic proportions, ``get_feature_names_out``, pipelines.

        What is set, and why:

        * ``components_`` = ``pseudo_counts * topic_word``: scikit-learn's topics are Dirichlet pseudo-counts
          (topic_word_prior plus expected word counts), whose rows normalised are the topics; here each row sums
          to ``pseudo_counts``, so ``components_ / components_.sum(axis=1)`` is ``topic_word``. The true counts
          are a statistic of the private corpus, which is not released; the default ``pseudo_counts`` is the
          vocabulary's size V, an entry of about 1, the scale of scikit-learn's own random start.
        * ``exp_dirichlet_component_`` = ``topic_word``: ``transform`` folds documents into exactly the released
          topics, as :meth:`transform` does. A released matrix is a point estimate, not a Dirichlet posterior; its
          rows are used as beta itself, which is exp E[log beta] in the limit of large pseudo-counts. ``score`` and
          ``perplexity`` read the Dirichlet of ``components_``, so they depend on the arbitrary ``pseudo_counts``:
          judge a release with :mod:`topicdp.metrics` rather than with them.
        * ``doc_topic_prior_`` (``doc_topic_prior``, default 1/K as :meth:`transform`) and ``topic_word_prior_``
          (1/K, scikit-learn's default); ``n_components`` = K; ``n_features_in_`` = V;
          ``n_iter_`` = ``n_batch_iter_`` = 0 and ``bound_`` = nan: scikit-learn made no pass over any data.
        * ``feature_names_in_`` = the vocabulary only with ``feature_names=True``, for DataFrames whose columns are
          the words: scikit-learn warns on every sparse matrix (a ``CountVectorizer`` output) given to an
          estimator fitted with feature names.

        Parameters
        ----------
        pseudo_counts : float > 0, optional
            The total of each row of ``components_``; default V.
        doc_topic_prior : float > 0, optional
            The Dirichlet prior on a document's proportions used by ``transform``; default 1/K.
        feature_names : bool, default=False
            Set ``feature_names_in_`` to the vocabulary.

        Returns
        -------
        sklearn.decomposition.LatentDirichletAllocation

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.feature_extraction.text import CountVectorizer
        >>> from topicdp import TopicDP, CallableModel, embedded_corpus
        >>> corpus = embedded_corpus()
        >>> topics = np.random.default_rng(0).dirichlet(np.ones(corpus.n_words), size=3)
        >>> model = CallableModel(lambda c: topics, n_topics=3, name="fixed")
        >>> release = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(corpus).release_
        >>> lda = release.to_sklearn()
        >>> X = CountVectorizer(vocabulary=release.vocabulary).transform(["the government said on monday"])
        >>> theta = lda.transform(X)
        >>> theta.shape, bool(np.allclose(theta.sum(axis=1), 1.0))
        ((1, 3), True)
        """
        from sklearn.decomposition import LatentDirichletAllocation

        from ._validation import check_real

        K, V = self.topic_word.shape
        scale = float(V) if pseudo_counts is None else check_real(pseudo_counts, "pseudo_counts", low=0.0)
        prior = 1.0 / K if doc_topic_prior is None else check_real(doc_topic_prior, "doc_topic_prior", low=0.0)
        if not isinstance(feature_names, bool):
            raise TypeError(f"feature_names must be True or False, got {feature_names!r}")
        W = np.asarray(self.topic_word, dtype=float)
        if not np.all(np.isfinite(W)) or np.any(W < 0) or np.any(W.sum(axis=1) <= 0):
            raise ValueError("to_sklearn needs released topics with finite, non-negative rows of positive mass")
        W = W / W.sum(axis=1, keepdims=True)  # the released rows, exactly on the simplex
        lda = LatentDirichletAllocation(n_components=K, doc_topic_prior=prior, learning_method="batch")
        lda.components_ = scale * W
        lda.exp_dirichlet_component_ = W.copy()
        lda.doc_topic_prior_ = prior
        lda.topic_word_prior_ = 1.0 / K
        lda.n_features_in_ = V
        lda.n_iter_ = 0
        lda.n_batch_iter_ = 0
        lda.bound_ = float("nan")
        if feature_names:
            lda.feature_names_in_ = np.asarray(self.vocabulary, dtype=object)
        return lda

    def __iter__(self):
        """Deprecated: ``noisy, report = mvg_release(...)`` (the old tuple) still unpacks, with a warning."""
        warnings.warn("unpacking a PrivateRelease as (noisy, report) is deprecated; use release.noisy and "
                      "release.report", DeprecationWarning, stacklevel=2)
        return iter((self.noisy, self.report))

    # -- the published part --------------------------------------------------------------------------
    def to_dict(self, include_nonprivate: bool = False) -> dict:
        """The published release (JSON-serialisable), as :meth:`save` writes it."""
        if include_nonprivate:
            raise ValueError("the non-private matrix is never part of the published release; use "
                             "save_diagnostics(path, include_nonprivate=True) for the owner's copy")
        out: dict[str, Any] = {
            "format": FORMAT,
            "topic_word": self.topic_word.tolist(),
            "vocabulary": list(self.vocabulary),
            "top_words": [[w for w, _ in topic] for topic in self.top_words(N_TOP_WORDS)],
            "report": self.report.to_dict(),
        }
        if self.noisy is not None:
            out["noisy"] = np.asarray(self.noisy).tolist()
        if self.extra:
            out["extra"] = _jsonable(dict(self.extra))
        return out

    def statuses(self) -> dict[str, str]:
        """Status of every published path: the release's own and the report's ``published``."""
        return {**_RELEASE_STATUSES, **self.report.published}

    def check_published(self) -> dict:
        """The published dict, after checking it against :data:`SCHEMA` and that every field has a status."""
        data = self.to_dict()
        validate(data, SCHEMA)
        missing = unlisted_paths(data, self.statuses())
        if missing:
            raise ValueError(f"refusing to publish fields without a stated status: {missing}")
        return data

    def save(self, path, include_nonprivate: bool = False, *, overwrite: bool = True) -> None:
        """Write the published release (see the module docstring); nothing private goes into it.

        The write is atomic (a temporary file in the same directory, flushed, then renamed over ``path``): a
        reader, or a run killed half-way, finds the previous file or the complete new one, never a part. By
        default an existing ``path`` is replaced, as ``numpy.save`` or ``DataFrame.to_csv`` would; with
        ``overwrite=False`` an existing one raises ``FileExistsError`` (checked at the rename itself, so a file
        another process wrote meanwhile is kept). The ``topicdp`` command refuses existing files unless given
        ``--overwrite``, and refuses clashing paths.
        """
        from ._files import atomic_write

        if include_nonprivate:
            raise ValueError("save() writes only the published release; the non-private matrix goes to "
                             "save_diagnostics(path, include_nonprivate=True)")
        atomic_write(path, json.dumps(self.check_published()), overwrite=overwrite)

    # -- the owner's part ----------------------------------------------------------------------------
    def save_diagnostics(self, path, include_nonprivate: bool = False, *, overwrite: bool = True) -> None:
        """Write the owner's private diagnostics (NOT covered by the guarantee: never publish this file).

        Atomic like :meth:`save` (``overwrite`` as there), and readable by the owner only: mode 0600, set before
        the file appears at ``path``. Keep it apart from the release (the ``topicdp`` command refuses a path
        shared with the release, another output or an input).
        """
        from ._files import atomic_write

        out = {
            "format": DIAGNOSTICS_FORMAT,
            "warning": "PRIVATE: exact statistics of the private data, not covered by any guarantee; do not publish",
            "mechanism": self.report.mechanism,
            "diagnostics": _jsonable(self.diagnostics),
        }
        if include_nonprivate:
            if self.nonprivate is None:
                raise ValueError("the non-private matrix was not kept; pass keep_nonprivate=True to the fit")
            out["nonprivate"] = self.nonprivate.tolist()
        atomic_write(path, json.dumps(out), private=True, overwrite=overwrite)

    @classmethod
    def load(cls, path) -> "PrivateRelease":
        """Read a published release written by :meth:`save` (diagnostics are not part of it).

        The file is checked as :meth:`save` checked it, and for what an edit would break: the schema, a status
        for every published field, and a stated guarantee that its composition proves
        (:meth:`topicdp.report.PrivacyReport.check_consistent`). A release that fails is refused, never re-saved
        with a guarantee it does not have.

        Raises
        ------
        ValueError
            Naming the file and the field: not a release of this format, a field outside the schema or without a
            status, or a guarantee (``report.epsilon``, ``report.delta``, ``report.guarantee``) its
            ``report.composition_total`` does not prove.
        """
        data = json.loads(Path(path).read_text())
        if data.get("format") != FORMAT:
            raise ValueError(f"{path}: not a {FORMAT} release file (format {data.get('format')!r}); files written "
                             "before the format version existed mixed private diagnostics in and are not read")
        validate(data, SCHEMA)
        noisy = data.get("noisy")
        release = cls(
            topic_word=np.asarray(data["topic_word"], dtype=float),
            noisy=None if noisy is None else np.asarray(noisy, dtype=float),
            vocabulary=tuple(data["vocabulary"]),
            report=PrivacyReport.from_dict(data["report"]),
            extra={k: np.asarray(v) for k, v in data.get("extra", {}).items()},
        )
        missing = unlisted_paths(data, release.statuses())
        if missing:
            raise ValueError(f"{path}: published fields without a stated status: {missing} (a release states the "
                             "status of everything it publishes: was the file edited?); refused")
        try:
            release.report.check_consistent()
        except ValueError as exc:
            raise ValueError(f"{path}: {exc} (was the file edited?)") from None
        return release


# -- the published fields and their statuses ------------------------------------------------------------

def published_paths(data: Mapping, prefix: str = "") -> dict[str, Any]:
    """Flatten a published dict into ``{dotted path: value}``; lists and empty containers are leaves."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and path != "report.published":
            out.update(published_paths(value, path + "."))
        else:
            out[path] = value
    return out


def status_of(path: str, statuses: Mapping[str, str]) -> str | None:
    """The status of ``path``: that of the longest listed path equal to it or above it (None if none)."""
    best = None
    for key in statuses:
        if (path == key or path.startswith(key + ".")) and (best is None or len(key) > len(best)):
            best = key
    return None if best is None else statuses[best]


def unlisted_paths(data: Mapping, statuses: Mapping[str, str]) -> list[str]:
    """Published paths carrying a value (not None or empty) whose status is not stated."""
    for path, status in statuses.items():
        check_status(status, f"status of {path!r}")
    return sorted(p for p, v in published_paths(data).items()
                  if v not in (None, [], {}) and status_of(p, statuses) is None)


# -- a small JSON Schema validator (the subset SCHEMA uses; no third-party dependency) ----------------

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def validate(instance: Any, schema: Mapping[str, Any], path: str = "$") -> None:
    """Raise ValueError where ``instance`` breaks ``schema`` (type, const, enum, anyOf, required,
    properties, additionalProperties, items: the JSON Schema keywords :data:`SCHEMA` uses)."""
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            raise ValueError(f"{path}: expected {' or '.join(types)}, got {type(instance).__name__}")
    if "const" in schema and instance != schema["const"]:
        raise ValueError(f"{path}: expected {schema['const']!r}, got {instance!r}")
    if "enum" in schema and instance not in schema["enum"]:
        raise ValueError(f"{path}: expected one of {schema['enum']}, got {instance!r}")
    if "anyOf" in schema:
        errors = []
        for option in schema["anyOf"]:
            try:
                validate(instance, option, path)
                break
            except ValueError as exc:
                errors.append(str(exc))
        else:
            raise ValueError(f"{path}: matches none of the allowed forms ({'; '.join(errors)})")
    if isinstance(instance, dict):
        missing = [k for k in schema.get("required", ()) if k not in instance]
        if missing:
            raise ValueError(f"{path}: missing required field(s) {missing}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            if key in props:
                validate(value, props[key], f"{path}.{key}")
            elif extra is False:
                raise ValueError(f"{path}: field {key!r} is not allowed (allowed: {sorted(props)})")
            elif isinstance(extra, Mapping):
                validate(value, extra, f"{path}.{key}")
    if isinstance(instance, list) and "items" in schema:
        for i, value in enumerate(instance):
            validate(value, schema["items"], f"{path}[{i}]")
