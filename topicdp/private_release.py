"""What a private release hands to the analyst, and what it keeps for the data owner: every road returns one
:class:`PrivateRelease` of two parts that never mix, the **published** part (:meth:`PrivateRelease.save`, format
:data:`FORMAT` checked against :data:`SCHEMA`, every field with a status) and the owner's **diagnostics**
(:meth:`PrivateRelease.save_diagnostics`: exact statistics of the private data, covered by no guarantee).
"""

from __future__ import annotations

import html
import json
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import numpy as np

from ._files import atomic_write
from ._validation import check_real
from .report import (GUARANTEES, NEIGHBOURS, UNITS, PrivacyReport, _display_lines, _jsonable, _markdown_text,
                     check_status, report_html)
from .topics import top_indices

FORMAT = "topicdp.release/2"
DIAGNOSTICS_FORMAT = "topicdp.diagnostics/1"
N_TOP_WORDS = 10

_MATRIX = {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
_NUMBER_OR_NONFINITE = {"anyOf": [{"type": "number"}, {"enum": ["inf", "-inf", "nan"]}]}
_OPTIONAL_NUMBER = {"anyOf": [_NUMBER_OR_NONFINITE, {"type": "null"}]}


def _records(**properties) -> dict:
    """The schema of an array of objects with exactly these (required) fields."""
    return {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                       "required": list(properties), "properties": properties}}


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
        "composition_total": _records(accounting={"type": "string"}, epsilon=_NUMBER_OR_NONFINITE,
                                      delta={"type": "number"}, valid={"type": "boolean"}, details={"type": "object"}),
        "checks": _records(name={"type": "string"}, passed={"type": "boolean"}, detail={"type": "string"}),
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
    """(status for ``report.published["vocabulary"]``, note) of a release's vocabulary: ``source`` is one of
    :data:`VOCABULARY_SOURCES` (``"dp"``: selected under DP, in the caller's ledger) or the statement itself."""
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
    """The statement of a release's vocabulary: ``source`` if given, else ``corpus.vocabulary_source``."""
    if source is None:
        source = getattr(corpus, "vocabulary_source", "private-texts")
    return vocabulary_status(source)


class TopWords(list):
    """The top words of each topic: a list of lists of ``(word, weight)``, printed one line per topic.

    >>> print(TopWords([[("goal", 0.5), ("match", 0.25)], [("bake", 0.75), ("oven", 0.125)]]))
    topic 0: goal match
    topic 1: bake oven
    """

    def __str__(self) -> str:
        width = len(str(len(self) - 1)) if self else 1
        return "\n".join(f"topic {i:>{width}}: " + " ".join(str(w) for w, _ in topic) for i, topic in enumerate(self))


def _top_words(W: np.ndarray, vocabulary, n: int) -> TopWords:
    """Each row's n largest entries as ``(word, weight)``, largest first (ties: the smaller index)."""
    return TopWords([[(vocabulary[j], float(W[i, j])) for j in row] for i, row in enumerate(top_indices(W, n))])


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

    ``topic_word`` (K, V) is the released topics; ``noisy`` the mechanism's raw output (output perturbation
    only, else None); ``vocabulary`` the column labels, their status in ``report.published["vocabulary"]``;
    ``nonprivate`` the non-private f(D), kept on request and written by :meth:`save_diagnostics` only; ``extra``
    other published DP outputs (the spectral road's ``alpha``); ``diagnostics`` exact statistics of the private
    data for the owner's eyes, never published.
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
        """The n most heavily weighted words of each released topic (``print(release.top_words(8))``)."""
        return _top_words(self.topic_word, self.vocabulary, n)

    def with_vocabulary(self, words, *, source: str) -> "PrivateRelease":
        """This release fitted on a count matrix (column indices) with its columns named; ``source``:
        ``"private-texts"`` (the report marks the vocabulary NOT COVERED) or ``"public"``."""
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
        """Document-topic proportions (n_docs, K) of new documents ``X`` (on this vocabulary), folded into the
        released topics by a fixed-topic variational E-step (Blei, Ng & Jordan 2003, Eqs. 6-7;
        :func:`topicdp.transform.fold_in`): post-processing. ``alpha``: the Dirichlet prior, default 1/K."""
        from .transform import fold_in

        return fold_in(self.topic_word, X, alpha=alpha, vocabulary=self.vocabulary, who="the release")

    def evaluate(self, corpus, *, epsilon: float, delta: float, ledger=None, random_state=None,
                 unit: str | None = None, neighbours: str | None = None, **options):
        """Each topic's NPMI and NPMI contrast on the owner's ``corpus``, under (epsilon, delta)-DP: a release of its
        own (at this release's unit and neighbours unless given), charged to ``ledger``
        (:func:`topicdp.metrics.private.private_coherence`)."""
        from .metrics.private import private_coherence

        lists = [[w for w, _ in topic] for topic in self.top_words(N_TOP_WORDS)]
        return private_coherence(lists, corpus, epsilon=epsilon, delta=delta, unit=unit or self.report.unit,
                                 neighbours=neighbours or self.report.neighbours, ledger=ledger,
                                 random_state=random_state, **options)

    def nonprivate_top_words(self, n: int = 10) -> TopWords:
        """The n largest words of each topic of the non-private matrix (NOT private: for the owner's eyes)."""
        return _top_words(self._nonprivate(), self.vocabulary, n)

    def _nonprivate(self) -> np.ndarray:
        if self.nonprivate is None:
            raise ValueError("the non-private matrix was not kept; pass keep_nonprivate=True to the fit")
        return self.nonprivate

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
        """A notebook's view of the published part: the headline, the view's page in an iframe, words and summary."""
        from ._view_page import page_html

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
        head, _ = _display_lines(self.report)
        return ("".join(f"**{_markdown_text(line)}**\n\n" for line in head)
                + "```\n" + "\n".join(str(self).splitlines()[2:]) + "\n```\n")

    # -- post-processing into other libraries -----------------------------------------------------------
    def to_sklearn(self, *, pseudo_counts: float | None = None, doc_topic_prior: float | None = None,
                   feature_names: bool = False):
        """A fitted scikit-learn ``LatentDirichletAllocation`` whose topics are the released ones (post-processing).

        ``components_`` is ``pseudo_counts * topic_word`` (default V; the true counts are private, so ``score`` and
        ``perplexity`` depend on this choice) and ``exp_dirichlet_component_`` is ``topic_word``, so ``transform``
        folds documents into the released topics. ``doc_topic_prior`` defaults to 1/K.
        """
        from sklearn.decomposition import LatentDirichletAllocation

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
        fitted = dict(components_=scale * W, exp_dirichlet_component_=W.copy(), doc_topic_prior_=prior,
                      topic_word_prior_=1.0 / K, n_features_in_=V, n_iter_=0, n_batch_iter_=0, bound_=float("nan"))
        for name, value in fitted.items():  # the attributes a fitted LatentDirichletAllocation has
            setattr(lda, name, value)
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
        """Write the published release, atomically; nothing private. ``overwrite=False``: ``FileExistsError`` for an
        existing ``path`` (checked at the rename itself)."""
        if include_nonprivate:
            raise ValueError("save() writes only the published release; the non-private matrix goes to "
                             "save_diagnostics(path, include_nonprivate=True)")
        atomic_write(path, json.dumps(self.check_published()), overwrite=overwrite)

    # -- the owner's part ----------------------------------------------------------------------------
    def save_diagnostics(self, path, include_nonprivate: bool = False, *, overwrite: bool = True) -> None:
        """Write the owner's private diagnostics (NOT covered by the guarantee: never publish), atomically, mode 0600."""
        out = {
            "format": DIAGNOSTICS_FORMAT,
            "warning": "PRIVATE: exact statistics of the private data, not covered by any guarantee; do not publish",
            "mechanism": self.report.mechanism,
            "diagnostics": _jsonable(self.diagnostics),
        }
        if include_nonprivate:
            out["nonprivate"] = self._nonprivate().tolist()
        atomic_write(path, json.dumps(out), private=True, overwrite=overwrite)

    @classmethod
    def load(cls, path) -> "PrivateRelease":
        """Read a release written by :meth:`save`; ``ValueError`` naming the file and the field for another format,
        a field outside :data:`SCHEMA` or without a status, or a guarantee its composition does not prove."""
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
    keys = [key for key in statuses if path == key or path.startswith(key + ".")]
    return statuses[max(keys, key=len)] if keys else None


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
