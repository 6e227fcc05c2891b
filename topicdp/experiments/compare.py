"""``compare``: every road on the same corpus, budget and held-out users; a publishable table of private scores.

The private corpus is split by a hash of the user id (a per-user rule: adding a user moves no other) into the users
the releases read and held-out users, whose texts score each release's top words under DP
(:meth:`topicdp.PrivateRelease.evaluate`: NPMI and NPMI contrast with their intervals). Each release is made by the
pipeline's own release path (:func:`topicdp.pipeline.run.release_prepared`) on the training users: the number of
units is the pipeline's DP count unless the owner states it (``n_units``, the training units), and the spectral
configurations, which need it stated, are refused without it as ``topicdp privatize`` refuses them.

What the table publishes is covered, and it says by what: every release and every evaluation it holds is a ledger
entry, and ``table.md`` states their composed totals (the ledger's tightest proven total): the releases' for the
training users, the evaluations' for the held-out users (a disjoint set: each user is in one of them). With a
persisted ledger (``ledger``) each release is charged to it as ``topicdp privatize --ledger`` charges it, and each
evaluation as ``topicdp evaluate --ledger`` charges it; the table then states the ledger's total too.

With a public reference the table also says how to read its scores, from public facts only (nothing spent): the
plan's targets, a yardstick (a non-private LDA fitted on P's training users and scored exactly on P's held-out users)
that each private score is divided by, and each release's topics made of P's most common words
(:mod:`topicdp.metrics.yardstick`).

Outputs in ``out_dir``: ``table.md`` (publishable: guarantees, refusals, private scores, totals), ``diagnostics.md``
(the owner's: exact scores of the same lists on the held-out texts and the corpus' sizes, NOT for publication; written
atomically, mode 0600, as a release's diagnostics), ``compare.png`` (the private contrast per road over epsilon, when
matplotlib is installed), and ``results.jsonl`` / ``diagnostics.jsonl`` (the latter 0600), one line per finished
(road, epsilon): a rerun with the same settings resumes from them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._names import Unit
from .._validation import check_delta, check_epsilon, check_int, check_option, check_real
from .roads import RANDOM_DP, Outcome, Prepared, run_random_dp, run_registry, statement

#: the evaluation's budget per unit when none is given: a user's many documents need a larger epsilon for the same
#: interval (docs/results/private_evaluation.md: blogs' user level met 90% coverage from epsilon 10, the document
#: level at 0.75)
EVALUATION_EPSILON = {"document": 1.0, "user": 10.0}


@dataclass(frozen=True)
class CompareSettings:
    """What to compare (every field public).

    Parameters
    ----------
    unit : {"user", "document"}
    epsilons : tuple of float > 0
        Total budgets of each release.
    n_topics : int >= 2
    delta : float in (0, 1)
        Each release's total delta.
    evaluation_epsilon, evaluation_delta : float
        Each private evaluation's budget (default :data:`EVALUATION_EPSILON` of the unit, 1e-6).
    roads : tuple of str, optional
        Registry mechanisms to run (default all); the random-DP road runs unless ``random_dp`` is False.
    simulate : bool
        Decide dp-vem on its simulation on the public reference, as the pipeline does (minutes per epsilon);
        False: on its closed-form forecast.
    heldout_fraction : float in (0, 1)
        Share of the private users held out for the evaluation.
    max_features : int
        Words of the vocabulary (P's most frequent, or the public corpus' own).
    max_docs_per_user, max_tokens_per_doc : int
        Contribution bounds (the documents cap at the user level only: it breaks document-level privacy).
    ceiling : bool
        Fit a non-private LDA for the diagnostics' ratios (the owner's file only).
    sizing, gamma : str, float
        The random-DP road's sensitivity sample (:class:`topicdp.samplers.SensitivitySampling`): ``"lambert-w"`` at
        gamma 0.1 (the library's default: 285 pairs) or ``"exchangeable"`` (9 pairs at gamma 0.1; its statement is
        marginal over the sample, as its report says).
    n_units : int, optional
        The number of training units (users, or documents at the document level), stated public by the owner: every
        release then has replace-one neighbours with that count, as ``topicdp privatize --n-units`` (the spectral
        configurations need it). Default: not stated; each release counts its units under DP (add/remove).
    seed : int, optional
        Seeds every noise draw (testing only: each report marks its release seeded).
    """

    unit: str = "user"
    epsilons: tuple = (1.0, 3.0, 10.0)
    n_topics: int = 10
    delta: float = 1e-6
    evaluation_epsilon: float | None = None
    evaluation_delta: float = 1e-6
    roads: tuple | None = None
    random_dp: bool = True
    simulate: bool = True
    heldout_fraction: float = 0.2
    max_features: int = 2000
    max_docs_per_user: int = 20
    max_tokens_per_doc: int = 500
    ceiling: bool = True
    n_jobs: int = 2
    sizing: str = "lambert-w"
    gamma: float = 0.1
    n_units: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        from .._names import RIGOROUS_MECHANISMS

        check_option(self.unit, "unit", tuple(Unit))
        if not self.epsilons:
            raise ValueError("epsilons must hold at least one epsilon > 0")
        object.__setattr__(self, "epsilons", tuple(sorted({float(check_epsilon(e, "epsilons")) for e in self.epsilons})))
        check_int(self.n_topics, "n_topics", low=2)
        check_delta(self.delta)
        if self.evaluation_epsilon is not None:
            check_epsilon(self.evaluation_epsilon, "evaluation_epsilon")
        check_delta(self.evaluation_delta, "evaluation_delta")
        for road in self.roads or ():
            check_option(road, "roads", RIGOROUS_MECHANISMS)
        check_real(self.heldout_fraction, "heldout_fraction", low=0.0, high=1.0)
        check_int(self.max_features, "max_features", low=self.n_topics)
        check_int(self.max_docs_per_user, "max_docs_per_user", low=1)
        check_int(self.max_tokens_per_doc, "max_tokens_per_doc", low=1)
        check_option(self.sizing, "sizing", ("lambert-w", "exchangeable"))
        check_real(self.gamma, "gamma", low=0.0, high=0.5)
        if self.n_units is not None:
            check_int(self.n_units, "n_units", low=1)
        if self.seed is not None:
            check_int(self.seed, "seed", low=0)

    @classmethod
    def quick(cls, **overrides) -> "CompareSettings":
        """The quick grid: K = 5, epsilon 3, 1,000 words, dp-vem decided on its closed form, no random-DP road (its
        sensitivity sample fits the model some 285 times on P: tens of minutes on blogs), no non-private ceiling in the
        diagnostics (what it drops: the other epsilons, the simulation, the random-DP road, the ceiling's ratios)."""
        base = dict(epsilons=(3.0,), n_topics=5, max_features=1000, simulate=False, ceiling=False, random_dp=False)
        return cls(**{**base, **overrides})

    @property
    def evaluation(self) -> tuple[float, float]:
        eps = EVALUATION_EPSILON[str(self.unit)] if self.evaluation_epsilon is None else self.evaluation_epsilon
        return float(eps), float(self.evaluation_delta)


def heldout_user(user, fraction: float) -> bool:
    """Whether ``user`` is held out: a hash of its id alone (a salt of its own, independent of the user fractions
    of :func:`topicdp.pipeline.user_selected`, so a corpus already cut by one is split evenly)."""
    from ..corpus import _id_key

    digest = hashlib.sha256(b"topicdp.compare.heldout\x00" + _id_key(user)).digest()
    return int.from_bytes(digest[:8], "little") < fraction * 2.0 ** 64


@dataclass
class Split:
    """The private corpus' records cut into the users the releases read and the held-out users."""

    train: list
    heldout: list
    reference: tuple | None = None
    name: str = "corpus"
    built_in: bool = False
    meta: dict = field(default_factory=dict)


def read_split(path: str, reference: str | None, heldout_fraction: float) -> Split:
    """The private (text, user) records split into train and held-out users, and P's (texts, users) if given."""
    from ..corpus import embedded_texts, read_jsonl_records
    from ..pipeline.sources import EMBEDDED_PUBLIC_HALF

    if path == "embedded":
        texts = embedded_texts()
        first = EMBEDDED_PUBLIC_HALF if reference == "embedded" else 0
        records: list[tuple[str, object]] = [(t, u) for u, t in list(enumerate(texts))[first:]]
        name = "lee"
    else:
        records = list(read_jsonl_records(path))
        name = Path(path).name.split(".")[0]
    pair: tuple[list, list] | None = None
    if reference == "embedded":
        public = embedded_texts()[:EMBEDDED_PUBLIC_HALF]
        pair = (public, list(range(len(public))))
    elif reference is not None:
        public_records = list(read_jsonl_records(reference))
        if not public_records:
            raise ValueError(f"reference: {reference} holds no documents")
        pair = ([t for t, _ in public_records], [u for _, u in public_records])
    held = [heldout_user(u, heldout_fraction) for _, u in records]
    train = [r for r, h in zip(records, held) if not h]
    heldout = [r for r, h in zip(records, held) if h]
    if not train or not heldout:
        raise ValueError(f"{path}: the held-out split left no {'training' if not train else 'held-out'} users; "
                         "give a corpus with more users or another heldout_fraction")
    return Split(train, heldout, pair, name, path == "embedded")


def prepare(split: Split, settings: CompareSettings, corpus_path: str, reference: str | None,
            ledger: str | None = None) -> Prepared:
    """Vocabulary, the training users' source (tokenised once on the public words), the held-out corpus, the public
    start and P on the release's words: once per comparison. Nothing here counts the private data: each release's
    count is the pipeline's."""
    from ..corpus import Corpus
    from ..pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy
    from ..pipeline.run import reference_corpus, reference_vocabulary
    from ..pipeline.sources import InMemorySource, Records

    user_level = settings.unit == Unit.USER
    source = CorpusSource(corpus_path, max_docs_per_user=settings.max_docs_per_user if user_level else None,
                          max_tokens_per_doc=settings.max_tokens_per_doc)
    if split.reference is not None:
        words = reference_vocabulary(split.reference, source, max_features=settings.max_features, min_df=5,
                                     max_df=0.5)
        origin = "built from the public reference P"
    elif split.built_in:  # a built-in corpus is public as a whole: its own words
        texts = [t for t, _ in split.train + split.heldout]
        words = list(Corpus.from_texts(texts, min_df=2, max_df=0.5, max_features=settings.max_features).vocabulary)
        origin = "built from the public Lee corpus"
    else:
        raise ValueError("reference: a corpus file needs a public reference (--reference P.jsonl[.gz]) for its words, "
                         "dp-vem's start and the random-DP road's P")
    if len(words) < settings.n_topics:
        raise ValueError(f"topics: the vocabulary has {len(words)} words, fewer than the {settings.n_topics} topics")
    from ..adapters import make_model
    from ..agnostic import TopicDP
    from ..samplers import SensitivitySampling

    sampling = SensitivitySampling(gamma=settings.gamma, sizing=settings.sizing, random_state=0, progress=True)
    request = ReleaseRequest(source, VocabularyPolicy.public(words, origin), epsilon=settings.epsilons[0],
                             delta=settings.delta, unit=settings.unit, n_units=settings.n_units,
                             n_topics=settings.n_topics, reference=reference, seed=settings.seed, ledger=ledger,
                             n_jobs=settings.n_jobs, agnostic=TopicDP(make_model("gensim-lda", settings.n_topics, 0),
                                                                      sampling=sampling))
    stop = source.tokenizer_stop_words
    texts, users = [t for t, _ in split.train], [u for _, u in split.train]
    # tokenised once, unbounded: each release bounds it with its own seed, as the pipeline bounds every release
    corpus = Corpus.from_texts(texts, users, vocabulary=words, stop_words=stop)
    train = InMemorySource.of_records(request, Records(texts, users, corpus=corpus))
    heldout = Corpus.from_texts([t for t, _ in split.heldout], [u for _, u in split.heldout], vocabulary=words,
                                stop_words=stop)
    prep = Prepared(request, train, corpus, heldout, tuple(words), split.reference, simulate=settings.simulate)
    if split.reference is not None:
        from ..variational import public_init

        prep.reference_corpus = reference_corpus(split.reference, words, source)
        prep.start = public_init(prep.reference_corpus, settings.n_topics, unit=str(settings.unit))
    prep.cache["vocabulary_statement"] = statement(prep, origin)
    return prep


def compare(corpus_path: str, out_dir, settings: CompareSettings, *, reference: str | None = None,
            ledger: str | None = None, echo=None) -> dict:
    """Run every road at every epsilon of ``settings`` and write the outputs (module docstring).

    ``ledger``: a persisted privacy ledger of the dataset (:meth:`topicdp.rdp.PrivacyLedger.open`; ``topicdp ledger
    create``) that every release and evaluation is charged to.

    Returns
    -------
    dict
        ``{"table": path, "diagnostics": path, "rows": [published rows], "seconds": float}``.
    """
    from .table import format_diagnostics, format_table

    say = echo or (lambda line: print(line, file=sys.stderr))
    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # which roads run only adds rows: a rerun may add the random-DP road or more registry rows to the same table
    meta = {"corpus": corpus_path, "reference": reference,
            **{k: v for k, v in asdict(settings).items() if k not in ("random_dp", "roads", "n_jobs", "sizing", "gamma")}}
    meta["epsilons"] = list(settings.epsilons)
    meta["ledger"] = None if ledger is None else os.path.abspath(ledger)  # resumed rows were charged to it
    rows, exact = _resume(out, meta)
    split = read_split(corpus_path, reference, settings.heldout_fraction)
    prep = prepare(split, settings, corpus_path, reference, ledger)
    evaluations = None
    if ledger is not None:
        from ..rdp import PrivacyLedger

        evaluations = PrivacyLedger.open(ledger)
    say(f"corpus {split.name}: {len(prep.vocabulary)} words, prepared in {time.perf_counter() - started:.0f} s; "
        "held-out users score the releases (the exact sizes are private: the owner's diagnostics)")
    ceiling = _ceiling(prep, settings) if settings.ceiling else None
    scale = _public_scale(split, prep, settings)
    done = {(r["road"], r["epsilon"]) for r in rows}
    from ..pipeline import MECHANISMS

    # every registry row is tried, in the registry's order: the plan says which do not apply at this unit
    roads = list(settings.roads) if settings.roads is not None else list(MECHANISMS)
    for road in roads:
        for eps in settings.epsilons:
            if (road, eps) in done:
                continue
            t0 = time.perf_counter()
            outcome = run_registry(road, eps, prep)
            _record(out, outcome, prep, settings, time.perf_counter() - t0, rows, exact, ceiling, evaluations)
            say(f"{road} at epsilon {eps:g}: {rows[-1]['status']} ({time.perf_counter() - t0:.0f} s)")
    todo = [e for e in settings.epsilons if (RANDOM_DP, e) not in done]
    if settings.random_dp and todo:
        t0 = time.perf_counter()
        outcomes = run_random_dp(todo, prep, settings.n_jobs)
        seconds = (time.perf_counter() - t0) / len(outcomes)
        for outcome in outcomes:
            _record(out, outcome, prep, settings, seconds, rows, exact, ceiling, evaluations)
        say(f"{RANDOM_DP}: {len(outcomes)} releases ({seconds * len(outcomes):.0f} s)")
    from .._files import atomic_write

    info = {"corpus": split.name, "unit": str(settings.unit), "n_topics": settings.n_topics, "delta": settings.delta,
            "evaluation": settings.evaluation, "reference": reference is not None, "n_words": len(prep.vocabulary),
            "neighbours": str(prep.request.neighbours), "n_units": settings.n_units,
            "seeded": settings.seed is not None, "scale": _scale_info(scale)}
    if ledger is not None:
        info["ledger"] = ledger_total(ledger)
    table = out / "table.md"
    atomic_write(table, format_table(rows, info) + "\n")
    seconds = time.perf_counter() - started  # the owner's: how long the private data took is no published figure
    diagnostics = out / "diagnostics.md"
    atomic_write(diagnostics, format_diagnostics(exact, {**info, "seconds": seconds}, _owner_counts(prep), ceiling)
                 + "\n", private=True)
    _plot(rows, out, say)
    return {"table": str(table), "diagnostics": str(diagnostics), "rows": rows, "seconds": seconds}


def ledger_total(path: str) -> dict:
    """The persisted ledger's DP total now (its runs composed by its accounting at its budget's delta), as
    ``topicdp ledger show`` states it: what the table quotes beside its own totals."""
    from ..rdp import PrivacyLedger

    opened = PrivacyLedger.open(path)
    assert opened.file is not None
    summary = opened.file.summary(PrivacyLedger)
    return {"file": os.path.basename(path), "epsilon": summary["dp"]["spent"], "delta": summary["budget"]["delta"],
            "budget": summary["budget"]["epsilon"], "n_runs": summary["dp"]["n_runs"]}


def _resume(out: Path, meta: dict) -> tuple[list, list]:
    """The rows of an earlier run with the same settings; another run's settings are refused by name."""
    settings = out / "settings.json"
    if settings.exists():
        earlier = json.loads(settings.read_text())
        if earlier != json.loads(json.dumps(meta)):
            changed = sorted(k for k in set(earlier) | set(meta) if earlier.get(k) != json.loads(json.dumps(meta)).get(k))
            raise ValueError(f"out: the earlier run in {out} had other settings ({', '.join(changed)}); use another "
                             "directory, or --overwrite to start again")
    else:
        for name in ("results.jsonl", "diagnostics.jsonl"):
            (out / name).unlink(missing_ok=True)
        settings.write_text(json.dumps(meta, indent=1) + "\n")
    return _lines(out / "results.jsonl"), _lines(out / "diagnostics.jsonl")


def _lines(path: Path) -> list:
    if not path.exists():
        return []
    text = path.read_text()
    # a line a kill cut short has no newline: its (road, epsilon) is run again
    return [json.loads(line) for line in text.split("\n")[:-1] if line]


def _append(path: Path, row: dict, *, private: bool = False) -> None:
    """One line at the end of ``path``; ``private``: the file is the owner's only (0600, set when it is created)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600 if private else 0o666)
    if private:
        os.fchmod(fd, 0o600)
    with os.fdopen(fd, "a") as fh:
        fh.write(json.dumps(row) + "\n")


def _record(out: Path, outcome: Outcome, prep: Prepared, settings: CompareSettings, seconds: float, rows: list,
            exact: list, ceiling, evaluations=None) -> None:
    """The published row (guarantee, refusal, private scores, the ledger entries of the release and of its
    evaluation) and the owner's row (exact scores, the time taken), appended. ``evaluations``: the persisted ledger
    the evaluation is charged to, or None."""
    from ..rdp.ledger import GaussianEntry
    from ..rdp.ledger_file import entry_to_json
    from ..release import guarantee_line

    row: dict = {"road": outcome.road, "epsilon": outcome.epsilon, "forecast": outcome.forecast,
                 "entries": list(outcome.entries)}
    if outcome.not_run is not None:
        row.update(status="not applicable" if not outcome.applicable else "not run", reason=outcome.not_run)
    elif outcome.release is None:
        row.update(status="refused", reason=outcome.refused, forced=outcome.forced)
    else:
        release = outcome.release
        row.update(status="refused" if outcome.refused else "released", reason=outcome.refused,
                   forced=outcome.forced, guarantee=guarantee_line(release.report),
                   kind=str(release.report.guarantee), top_words=[[w for w, _ in t] for t in release.top_words(5)])
        common = prep.cache.get("common_words")
        if common is not None:  # public: the released lists against P's most common words
            from ..metrics.yardstick import TOP_N, common_word_counts

            row["common_words"] = list(common_word_counts([[w for w, _ in t] for t in release.top_words(TOP_N)],
                                                          common))
        eps, delta = settings.evaluation
        # every evaluation at the releases' relation (add/remove, or replace-one where the owner states the count),
        # so that one ledger composes them all
        neighbours = str(prep.request.neighbours)
        try:
            evaluation = release.evaluate(prep.heldout, epsilon=eps, delta=delta, neighbours=neighbours,
                                          ledger=evaluations, random_state=_evaluation_seed(settings.seed, outcome))
        except ValueError as exc:  # the persisted ledger's refusal, checked before the held-out corpus is read
            row["evaluation_refused"] = f"not charged: {exc}"
            rows.append(row)
            _append(out / "results.jsonl", row)
            return
        data = evaluation.to_dict()
        report = data["report"]
        # the one entry the evaluation recorded (topicdp.metrics.private.planned_entry), from its report
        row["evaluation_entries"] = [entry_to_json(GaussianEntry(
            "private evaluation (NPMI, contrast)", report["sigma"], report["sensitivity"], unit=report["unit"],
            neighbours=report["neighbours"]))]
        row["evaluation"] = {k: data[k] for k in ("mean_npmi", "mean_npmi_interval", "mean_contrast",
                                                  "mean_contrast_interval", "level", "interval_refused")}
        row["evaluation"].update({k: report[k] for k in ("epsilon", "delta", "sigma", "sensitivity", "unit",
                                                         "neighbours", "seeded", "n_across")})
        exact.append({"road": outcome.road, "epsilon": outcome.epsilon, "seconds": round(seconds, 1),
                      **_exact(release, prep, ceiling, settings)})
        _append(out / "diagnostics.jsonl", exact[-1], private=True)
    rows.append(row)
    _append(out / "results.jsonl", row)


def _evaluation_seed(seed: int | None, outcome: Outcome):
    """Each evaluation's own noise stream when the comparison is seeded (testing only), else OS entropy."""
    if seed is None:
        return None
    return np.random.default_rng([seed, zlib.crc32(outcome.road.encode()), int(round(outcome.epsilon * 1000))])


def _exact(release, prep: Prepared, ceiling, settings: CompareSettings) -> dict:
    """The exact (non-private) NPMI and contrast of the release's lists on the held-out texts: the owner's only.

    The value the private evaluation estimates (:func:`topicdp.metrics.private.exact_values`: the same lists as
    :meth:`~topicdp.PrivateRelease.evaluate`, the same documents, one pair function)."""
    from ..forecast import TARGETS
    from ..metrics import private as pv
    from ..release import N_TOP_WORDS

    lists = [[w for w, _ in topic] for topic in release.top_words(N_TOP_WORDS)]
    values = pv.exact_values(prep.heldout, pv.coherence_design(lists, n_across=0))
    out = {"npmi": float(values["mean_npmi"]), "contrast": float(values["mean_contrast"])}
    if ceiling is not None:
        target = TARGETS[str(settings.unit)]
        out["npmi_ratio"] = out["npmi"] / ceiling["npmi"] if ceiling["npmi"] > 0 else math.nan
        out["contrast_ratio"] = out["contrast"] / ceiling["contrast"] if ceiling["contrast"] > 0 else math.nan
        out["met_targets"] = bool(out["npmi_ratio"] >= target.npmi and out["contrast_ratio"] >= target.contrast)
    return out


def _ceiling(prep: Prepared, settings: CompareSettings) -> dict:
    """A non-private LDA of the same users (dp-vem's algorithm without noise, from the same start): the owner's
    scale for the diagnostics' ratios and the unit's targets (:data:`topicdp.forecast.TARGETS`)."""
    from ..metrics.readability import heldout_npmi, npmi_contrast
    from ..variational import VariationalLDA

    from ..pipeline.sources import bounded

    corpus = bounded(prep.request.source, prep.corpus, np.random.SeedSequence())  # the releases' bounds
    model = VariationalLDA(settings.n_topics, unit=str(settings.unit), init=prep.start, n_jobs=settings.n_jobs,
                           random_state=0).fit(corpus)
    words = list(prep.vocabulary)
    return {"npmi": float(heldout_npmi(model.topic_word_, prep.heldout, words)),
            "contrast": float(npmi_contrast(model.topic_word_, prep.heldout, words))}


def _public_scale(split: Split, prep: Prepared, settings: CompareSettings):
    """What the table's scores are read against, from the public reference P only (nothing spent): a non-private
    LDA's exact scores on P's held-out users, on the comparison's words, and P's most common words
    (:func:`topicdp.metrics.yardstick.public_scale`); kept in ``prep.cache`` for each row's common-words count."""
    from ..metrics.yardstick import public_scale

    scale = public_scale(str(settings.unit), settings.n_topics, split.reference, vocabulary=prep.vocabulary,
                         stop_words=prep.request.source.tokenizer_stop_words)
    prep.cache["common_words"] = scale.common
    return scale


def _scale_info(scale) -> dict:
    """The public scale as the table reads it (JSON): the yardstick, the size of the common list, the yardstick
    LDA's own common-word counts."""
    from ..metrics.yardstick import common_word_counts

    y = scale.yardstick
    return {"yardstick": None if y is None else y.as_dict(), "note": scale.note,
            "n_common": None if scale.common is None else len(scale.common),
            "yardstick_common": None if y is None or scale.common is None else
            list(common_word_counts(y.top_words, scale.common))}


def _owner_counts(prep: Prepared) -> dict:
    """Exact sizes of the private corpus: the owner's diagnostics only (the census is what ``n_units`` states)."""
    return {"training users": prep.corpus.n_users, "training documents": prep.corpus.n_docs,
            f"training {prep.request.unit}s by the pipeline's census (what --n-units states)": prep.source.census(),
            "held-out users": prep.heldout.n_users, "held-out documents": prep.heldout.n_docs}


def _plot(rows: list, out: Path, say) -> None:
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return
    from .plots import plot_all

    paths = plot_all(rows, out)
    if paths:
        say(f"plot: {paths[0]}")
