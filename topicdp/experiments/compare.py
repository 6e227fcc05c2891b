"""``compare``: every road on the same corpus, budget and held-out users; a publishable table of private scores.

The private corpus is split by a hash of the user id (adding a user moves no other) into the users the releases
read, each release made by the pipeline's own :func:`topicdp.pipeline.release_prepared` on them (prepared once per
unit; the number of units the pipeline's DP count unless ``n_units`` states it), and held-out users whose texts
score each release's top words under DP (:meth:`topicdp.PrivateRelease.evaluate`), its error forecast first from
public facts (:func:`topicdp.metrics.private.predict_error`). Every release and evaluation is a ledger entry, and
``table.md`` states their composed totals, the training users' and the held-out users' apart (disjoint sets), and
a persisted ledger's (``ledger``) when each is charged to it. With a public reference the table also reads its
scores against a non-private LDA on P and P's most common words (:mod:`topicdp.metrics.yardstick`); with several
units it has a section per unit and ends with the road to use (:mod:`topicdp.experiments.ranking`). Outputs in
``out_dir``: ``table.md`` (publishable), ``diagnostics.md`` (the owner's exact scores and sizes, 0600),
``compare.png`` (with matplotlib), and ``results.jsonl`` / ``diagnostics.jsonl`` (0600), one line per finished
(unit, road, epsilon), from which a rerun with the same settings resumes.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._files import append_line, atomic_write
from .._names import RIGOROUS_MECHANISMS, Unit
from .._validation import check_delta, check_epsilon, check_int, check_option, check_real
from ..adapters import make_model
from ..agnostic import TopicDP
from ..corpus import Corpus, user_hash
from ..metrics import private as pv
from ..metrics.readability import _contrast
from ..metrics.yardstick import TARGETS, TOP_N, common_word_counts, public_scale
from ..pipeline import MECHANISMS, CorpusSource, InMemorySource, Records, ReleaseRefused, ReleaseRequest
from ..pipeline import Prepared as PreparedCorpus
from ..pipeline import VocabularyPolicy, bounded, noise_refusal, plan_request
from ..pipeline import prepare as prepare_corpus
from ..pipeline import read_records, reference_records, reference_vocabulary, release_prepared
from ..private_release import N_TOP_WORDS, guarantee_line
from ..rdp import PrivacyLedger
from ..rdp.ledger_file import entry_to_json
from ..samplers import SensitivitySampling
from ..variational import VariationalLDA
from .plots import plot_all
from .table import format_diagnostics, format_table

#: the evaluation's budget per unit when none is given: a user's many documents need a larger epsilon for the same
#: interval
EVALUATION_EPSILON = {"document": 1.0, "user": 10.0}


@dataclass(frozen=True)
class CompareSettings:
    """What to compare (every field public).

    Parameters
    ----------
    unit : {"user", "document"} or a tuple of them
        The privacy unit of every release and evaluation; with several, every road runs at each on the same split.
    epsilons, delta : tuple of float > 0, float in (0, 1)
        Total budgets of each release.
    evaluation_epsilon, evaluation_delta : float
        Each private evaluation's budget (default :data:`EVALUATION_EPSILON` of the unit, 1e-6).
    roads : tuple of str, optional
        Registry mechanisms to run (default all); the random-DP road runs unless ``random_dp`` is False (at the
        first unit only).
    simulate : bool
        Decide dp-vem on its simulation on the public reference, as the pipeline does; False: its closed form.
    max_features, max_docs_per_user, max_tokens_per_doc : int
        Words of the vocabulary and the contribution bounds (the documents cap at the user level only).
    ceiling : bool
        Fit a non-private LDA for the diagnostics' ratios (the owner's file only).
    sizing, gamma : str, float
        The random-DP road's sensitivity sample (:class:`topicdp.samplers.SensitivitySampling`).
    n_units : int, optional
        The number of training units, stated public: replace-one neighbours with that count, as ``topicdp
        privatize --n-units`` (the spectral configurations need it); default: a DP count per release.
    seed : int, optional
        Seeds every noise draw (testing only: each report marks its release seeded).
    """

    unit: str | tuple = "user"
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
        units = self.units
        if not units:
            raise ValueError("unit must be one of user, document, or a tuple of them, got ()")
        units = tuple(dict.fromkeys(str(check_option(u, "unit", tuple(Unit))) for u in units))
        object.__setattr__(self, "unit", units[0] if len(units) == 1 else units)  # one unit: a str, as before
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
            if len(units) > 1:
                raise ValueError(f"n_units states one unit's count: give one unit with it, not {', '.join(units)}")
        if self.seed is not None:
            check_int(self.seed, "seed", low=0)

    @classmethod
    def quick(cls, **overrides) -> "CompareSettings":
        """The quick grid: both units, K = 5, epsilon 3, 1,000 words, dp-vem decided on its closed form, the
        random-DP road on the exchangeable sample (9 pairs at gamma 0.1), no non-private ceiling."""
        base = dict(unit=("user", "document"), epsilons=(3.0,), n_topics=5, max_features=1000, simulate=False, ceiling=False,
                    sizing="exchangeable")
        return cls(**{**base, **overrides})

    @property
    def units(self) -> tuple[str, ...]:
        """The units run, in order (``unit`` as a tuple)."""
        return (self.unit,) if isinstance(self.unit, str) else tuple(self.unit)

    def at(self, unit: str) -> "CompareSettings":
        """These settings at the one ``unit``: what each unit's releases and evaluations are made with."""
        return replace(self, unit=str(unit))

    @property
    def evaluation(self) -> tuple[float, float]:
        """The evaluation's (epsilon, delta) at the first unit (:meth:`at` for another)."""
        eps = EVALUATION_EPSILON[self.units[0]] if self.evaluation_epsilon is None else self.evaluation_epsilon
        return float(eps), float(self.evaluation_delta)


def heldout_user(user, fraction: float) -> bool:
    """Whether ``user`` is held out: a hash of its id alone (a salt of its own, independent of the user fractions
    of :func:`topicdp.pipeline.user_selected`, so a corpus already cut by one is split evenly)."""
    return user_hash(user, b"topicdp.compare.heldout") < fraction * 2.0 ** 64


@dataclass
class Split:
    """The private corpus' records cut into the users the releases read and the held-out users."""

    train: list
    heldout: list
    reference: tuple | None = None
    name: str = "corpus"
    built_in: bool = False


def read_split(path: str, reference: str | None, heldout_fraction: float) -> Split:
    """The private (text, user) records split into train and held-out users, and P's (texts, users) if given."""
    source = CorpusSource(path)
    private = read_records(source, reference)
    records: list[tuple[str, object]] = list(zip(private.texts, private.users))
    name = "lee" if path == "embedded" else Path(path).name.split(".")[0]
    pair = None if reference is None else reference_records(reference, source)
    held = [heldout_user(u, heldout_fraction) for _, u in records]
    train = [r for r, h in zip(records, held) if not h]
    heldout = [r for r, h in zip(records, held) if h]
    if not train or not heldout:
        raise ValueError(f"{path}: the held-out split left no {'training' if not train else 'held-out'} users; "
                         "give a corpus with more users or another heldout_fraction")
    return Split(train, heldout, pair, name, path == "embedded")


#: the random-DP road's name in the table (not a registry row: its guarantee is not DP)
RANDOM_DP = "random-dp (TopicDP over gensim LDA)"


@dataclass
class Prepared:
    """One unit of a comparison: the pipeline's prepared training users, that corpus unbounded (the owner's), the
    held-out users, the words, and the request template each road replaces the mechanism and epsilon of."""

    request: Any
    prepared: PreparedCorpus
    corpus: Any
    heldout: Any
    vocabulary: tuple
    simulate: bool = False
    cache: dict = field(default_factory=dict)

    @property
    def reference_corpus(self):
        """P on the comparison's words under the bounds (None without a reference): the pipeline's own."""
        return None if self.prepared.reference is None else self.prepared.reference_corpus(self.vocabulary)


def prepare(split: Split, settings: CompareSettings, corpus_path: str, reference: str | None,
            ledger: str | None = None, tokenised: dict | None = None) -> Prepared:
    """One unit's words, training users (:func:`topicdp.pipeline.prepare`) and held-out corpus; nothing here counts
    the private data. ``tokenised``: the unbounded (training, held-out) corpora per vocabulary, shared by the units."""
    if len(settings.units) > 1:
        raise ValueError(f"unit: prepare takes one unit (settings.at(unit)), not {', '.join(settings.units)}")
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

    sampling = SensitivitySampling(gamma=settings.gamma, sizing=settings.sizing, random_state=0, progress=True)
    request = ReleaseRequest(source, VocabularyPolicy.public(words, origin), epsilon=settings.epsilons[0],
                             delta=settings.delta, unit=settings.units[0], n_units=settings.n_units,
                             n_topics=settings.n_topics, reference=reference, seed=settings.seed, ledger=ledger,
                             n_jobs=settings.n_jobs, agnostic=TopicDP(make_model("gensim-lda", settings.n_topics, 0),
                                                                      sampling=sampling))
    stop = source.tokenizer_stop_words
    texts, users = [t for t, _ in split.train], [u for _, u in split.train]
    # tokenised once, unbounded: each release bounds it with its own seed, as the pipeline bounds every release
    tokenised = {} if tokenised is None else tokenised
    if tuple(words) not in tokenised:
        tokenised[tuple(words)] = (Corpus.from_texts(texts, users, vocabulary=words, stop_words=stop),
                                   Corpus.from_texts([t for t, _ in split.heldout], [u for _, u in split.heldout],
                                                     vocabulary=words, stop_words=stop))
    corpus, heldout = tokenised[tuple(words)]
    train = InMemorySource.of_records(request, Records(texts, users, corpus=corpus))
    prepared = prepare_corpus(request, source=train, reference=split.reference)
    return Prepared(request, prepared, corpus, heldout, tuple(words), simulate=settings.simulate)


def run_road(name: str, epsilon: float, prep: Prepared) -> tuple[dict, Any]:
    """One road at total budget ``epsilon`` by :func:`topicdp.pipeline.release_prepared`: a registry row as ``topicdp
    privatize`` releases it, or :data:`RANDOM_DP` as ``--guarantee random-dp`` does. Forced (``release_anyway``), so
    that a refused release's private scores are shown beside the refusal's words; the plan's own refusal (e.g. a
    spectral configuration without a stated count) is "not applicable". Returns the row's outcome (the forecast's
    verdict, every ledger entry the release drew as JSON, also where it was refused after a spend, its status and
    reason) and the composed release (None where none was made)."""
    random_dp = name == RANDOM_DP
    if random_dp and prep.prepared.reference is None:
        return {"forecast": "", "entries": [], "status": "not run", "reason": "needs a public reference P "
                "(--reference): the private corpus as P is noise by construction and its sigma leaks"}, None
    road = dict(guarantee="random-dp", mechanism=None, n_units=None) if random_dp else dict(mechanism=name)
    request = replace(prep.request, epsilon=epsilon, release_anyway=True, **road)
    try:
        plan = plan_request(request, prep.prepared.reference)
    except ValueError as exc:  # the plan's own refusal (the unit or neighbour relation), before anything is read
        return {"forecast": "", "entries": [], "status": "not applicable", "reason": str(exc)}, None
    spent = PrivacyLedger()
    try:
        # the pipeline's lines of each release are not printed: the comparison prints one line per row instead
        result = release_prepared(plan, prep.prepared, ledger=spent, simulate=prep.simulate, echo=lambda line: None)
    except ValueError as exc:  # a refusal after the census or a spend (a precondition on released quantities), or
        # the persisted ledger's before any reading: the pipeline's words, which say what was spent
        reason = str(exc) if isinstance(exc, ReleaseRefused) else f"not charged: {exc}"
        entries = [entry_to_json(e) for e in spent.records]
        return {"forecast": "", "entries": entries, "status": "refused", "reason": reason, "forced": False}, None
    forecast = result.forecast if random_dp else getattr(result.decision, "forecast", None)
    verdict = str(getattr(forecast, "verdict", ""))
    noise = "the forecast from the sampled sensitivity says this release would be noise"
    refused = (noise if verdict == "noise" else None) if random_dp else noise_refusal(result.decision)
    outcome = {"forecast": verdict, "entries": [entry_to_json(e) for e in spent.records],
               "status": "refused" if refused else "released", "reason": refused, "forced": refused is not None}
    return outcome, result.release


def compare(corpus_path: str, out_dir, settings: CompareSettings, *, reference: str | None = None,
            ledger: str | None = None, echo=None) -> dict:
    """Run every road at every epsilon and unit of ``settings``, write the outputs (module docstring) and return
    ``{"table": path, "diagnostics": path, "rows": [published rows], "seconds": float}``. ``ledger``: the dataset's
    persisted privacy ledger (``topicdp ledger create``) every release and evaluation is charged to."""
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
    evaluations = None if ledger is None else PrivacyLedger.open(ledger)
    units: dict = {}
    scales: dict = {}
    tokenised: dict = {}
    for unit in settings.units:
        at, t0 = settings.at(unit), time.perf_counter()
        prep = prepare(split, at, corpus_path, reference, ledger, tokenised)
        say(f"corpus {split.name}, {unit} level: {len(prep.vocabulary)} words, prepared in "
            f"{time.perf_counter() - t0:.0f} s; held-out users score the releases (the exact sizes are private: "
            "the owner's diagnostics)")
        units[unit] = _run_unit(out, split, prep, at, rows, exact, evaluations, scales, say,
                                first=unit == settings.units[0])
    first = units[settings.units[0]]
    info = {"corpus": split.name, "unit": settings.units[0], "units": list(settings.units),
            "n_topics": settings.n_topics, "delta": settings.delta, "evaluation": settings.evaluation,
            "evaluations": {u: settings.at(u).evaluation for u in settings.units}, "reference": reference is not None,
            "n_words": first["n_words"], "neighbours": first["neighbours"], "n_units": settings.n_units,
            "seeded": settings.seed is not None, "scale": first["scale"], "sizing": settings.sizing,
            "scales": {u: units[u]["scale"] for u in settings.units}}
    if ledger is not None:
        info["ledger"] = ledger_total(ledger)
    table = out / "table.md"
    atomic_write(table, format_table(rows, info) + "\n")
    seconds = time.perf_counter() - started  # the owner's: how long the private data took is no published figure
    diagnostics = out / "diagnostics.md"
    parts = [format_diagnostics([e for e in exact if e.get("unit", u) == u], {**info, "unit": u, "seconds": seconds},
                                units[u]["counts"], units[u]["ceiling"]) for u in settings.units]
    # one owner's file: the later units' sections without the file's header
    text = "\n\n".join([parts[0]] + ["\n".join(p.splitlines()[2:]) for p in parts[1:]])
    atomic_write(diagnostics, text + "\n", private=True)
    if importlib.util.find_spec("matplotlib") is not None:
        paths = plot_all(rows, out)
        if paths:
            say(f"plot: {paths[0]}")
    return {"table": str(table), "diagnostics": str(diagnostics), "rows": rows, "seconds": seconds}


def _run_unit(out: Path, split: Split, prep: Prepared, settings: CompareSettings, rows: list, exact: list,
              evaluations, scales: dict, say, first: bool = True) -> dict:
    """Every road at every epsilon at the one unit of ``settings`` (skipping a resumed run's rows); returns the
    unit's facts. ``scales``: the public scale per vocabulary (:func:`topicdp.metrics.yardstick.public_scale`),
    shared by the units. The random-DP road runs at the ``first`` unit only: its sample fits the model 9 to 285
    times, and one row answers whether random DP is worth its weaker statement."""
    unit = str(settings.unit)
    ceiling = _ceiling(prep, settings) if settings.ceiling else None
    key = tuple(prep.vocabulary)
    if key not in scales:
        scales[key] = public_scale(unit, settings.n_topics, split.reference, vocabulary=prep.vocabulary,
                                   stop_words=prep.request.source.tokenizer_stop_words)
    prep.cache["common_words"] = scales[key].common
    done = {(r.get("unit", unit), r["road"], r["epsilon"]) for r in rows}
    # every registry row is tried, in the registry's order: the plan says which do not apply at this unit
    roads = list(settings.roads) if settings.roads is not None else list(MECHANISMS)
    for road in roads + ([RANDOM_DP] if settings.random_dp and first else []):
        for eps in settings.epsilons:
            if (unit, road, eps) in done:
                continue
            t0 = time.perf_counter()
            outcome, release = run_road(road, eps, prep)
            row = {"road": road, "epsilon": eps, "unit": unit, **outcome}
            _record(out, row, release, prep, settings, time.perf_counter() - t0, rows, exact, ceiling, evaluations)
            say(f"{road} at epsilon {eps:g}, {unit} level: {rows[-1]['status']} ({time.perf_counter() - t0:.0f} s)")
    return {"n_words": len(prep.vocabulary), "neighbours": str(prep.request.neighbours),
            "scale": _scale_info(scales[key]), "counts": _owner_counts(prep), "ceiling": ceiling}


def ledger_total(path: str) -> dict:
    """The persisted ledger's DP total now (its runs composed by its accounting at its budget's delta), as
    ``topicdp ledger show`` states it: what the table quotes beside its own totals."""
    opened = PrivacyLedger.open(path)
    assert opened.file is not None
    summary = opened.file.summary(PrivacyLedger)
    return {"file": os.path.basename(path), "epsilon": summary["dp"]["spent"], "delta": summary["budget"]["delta"],
            "budget": summary["budget"]["epsilon"], "n_runs": summary["dp"]["n_runs"]}


def _resume(out: Path, meta: dict) -> tuple[list, list]:
    """The rows of an earlier run with the same settings; another run's settings are refused by name."""
    settings = out / "settings.json"
    if settings.exists():
        earlier, now = json.loads(settings.read_text()), json.loads(json.dumps(meta))
        if earlier != now:
            changed = sorted(k for k in set(earlier) | set(now) if earlier.get(k) != now.get(k))
            raise ValueError(f"out: the earlier run in {out} had other settings ({', '.join(changed)}); use another "
                             "directory, or --overwrite to start again")
    else:
        for name in ("results.jsonl", "diagnostics.jsonl"):
            (out / name).unlink(missing_ok=True)
        atomic_write(settings, json.dumps(meta, indent=1) + "\n")
    return _lines(out / "results.jsonl"), _lines(out / "diagnostics.jsonl")


def _lines(path: Path) -> list:
    if not path.exists():
        return []
    text = path.read_text()
    # a line a kill cut short has no newline: its (road, epsilon) is run again
    return [json.loads(line) for line in text.split("\n")[:-1] if line]


def _record(out: Path, row: dict, release, prep: Prepared, settings: CompareSettings, seconds: float, rows: list,
            exact: list, ceiling, evaluations=None) -> None:
    """Append the published row (with the ``release``'s published facts and private scores, where one was made) and
    the owner's (exact scores, seconds); ``evaluations``: the persisted ledger."""
    if release is not None:
        row.update(guarantee=guarantee_line(release.report), kind=str(release.report.guarantee),
                   top_words=[[w for w, _ in t] for t in release.top_words(5)])
        common = prep.cache.get("common_words")
        if common is not None:  # public: the released lists against P's most common words
            row["common_words"] = list(common_word_counts([[w for w, _ in t] for t in release.top_words(TOP_N)],
                                                          common))
        if _score(row, release, prep, settings, evaluations):
            exact.append({"road": row["road"], "epsilon": row["epsilon"], "unit": str(settings.unit),
                          "seconds": round(seconds, 1), **_exact(release, prep, ceiling, settings)})
            append_line(out / "diagnostics.jsonl", json.dumps(exact[-1]), private=True)
    rows.append(row)
    append_line(out / "results.jsonl", json.dumps(row))


def _score(row: dict, release, prep: Prepared, settings: CompareSettings, evaluations) -> bool:
    """The row's private evaluation on the held-out units, or why it was not made; False where the persisted
    ledger refused it."""
    design = pv.coherence_design([[w for w, _ in t] for t in release.top_words(10)])
    row["evaluation_forecast"] = _evaluation_forecast(design, release, prep, settings)
    # refused before it spends where its interval would be whatever the noise draws, or where the forecast says so
    why = (pv.interval_refusal(design, str(settings.unit), None)
           or (row["evaluation_forecast"] or {}).get("refused") or None)
    if why is not None:
        row["evaluation_refused"] = f"not made (nothing spent): its interval would be refused: {why}"
        return True
    eps, delta = settings.evaluation
    # each evaluation's own noise stream when the comparison is seeded (testing only), else OS entropy
    rng = None if settings.seed is None else np.random.default_rng(
        [settings.seed, zlib.crc32(row["road"].encode()), int(round(row["epsilon"] * 1000))])
    # every evaluation at the releases' relation (add/remove, or replace-one where the owner states the count),
    # so that one ledger composes them all
    try:
        evaluation = release.evaluate(prep.heldout, epsilon=eps, delta=delta, neighbours=str(prep.request.neighbours),
                                      ledger=evaluations, random_state=rng)
    except ValueError as exc:  # the persisted ledger's refusal, checked before the held-out corpus is read
        row["evaluation_refused"] = f"not charged: {exc}"
        return False
    data = evaluation.to_dict()
    report = data["report"]
    # the entries the evaluation recorded, by the function it records them with (the same design and budget)
    row["evaluation_entries"] = [entry_to_json(e) for e in pv.planned_entries(design, eps, delta, report["unit"],
                                                                              report["neighbours"])]
    row["evaluation"] = {k: data[k] for k in ("mean_npmi", "mean_npmi_interval", "mean_contrast",
                                              "mean_contrast_interval", "level", "interval_refused")}
    row["evaluation"].update({k: report[k] for k in ("epsilon", "delta", "sigma", "sensitivity", "unit",
                                                     "neighbours", "seeded", "n_across")})
    return True


def _evaluation_forecast(design, release, prep: Prepared, settings: CompareSettings) -> dict | None:
    """The evaluation's error forecast before it spends (:func:`topicdp.metrics.private.predict_error`; None without
    a public reference), at a held-out count from DP outputs: the releases' count of training units scaled by the
    public held-out share, or P's own count before any release of the unit has counted."""
    if prep.reference_corpus is None:
        return None
    unit, f = str(settings.unit), settings.heldout_fraction
    plan = (release.report.details or {}).get("plan") or {}
    if plan.get("n_units") is not None:  # the unit's first DP count of its training units, or the stated one
        prep.cache.setdefault("dp_count", float(plan["n_units"]))
    reference = prep.reference_corpus
    if "dp_count" in prep.cache:
        n, source = max(prep.cache["dp_count"], 1.0) * f / (1.0 - f), "the releases' count of training units"
    else:
        n, source = float(reference.n_docs if unit == "document" else reference.n_users), "the reference's count"
    eps, delta = settings.evaluation
    fc = pv.predict_error(design, pv.reference_rates(reference, design, unit), n, epsilon=eps, delta=delta,
                          unit=unit, neighbours=str(prep.request.neighbours), n_sim=20)
    return {"quantile": fc.quantile, "probability": fc.probability, "bias": fc.bias, "n_units": round(n),
            "n_units_from": source, "half_width": fc.half_width, "refused": fc.refused}


def _exact(release, prep: Prepared, ceiling, settings: CompareSettings) -> dict:
    """The exact NPMI and contrast the private evaluation estimates (:func:`topicdp.metrics.private.exact_values`):
    the owner's only."""
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
    """A non-private LDA of the same users (dp-vem without noise, from the same start): the owner's scale."""
    corpus = bounded(prep.request.source, prep.corpus, np.random.SeedSequence())  # the releases' bounds
    # from the pipeline's own start: topics fitted on P on the comparison's words (none without a reference)
    start = None if prep.prepared.reference is None else prep.prepared.start(prep.prepared.plan, prep.vocabulary)
    model = VariationalLDA(settings.n_topics, unit=str(settings.unit), init=start, n_jobs=settings.n_jobs,
                           random_state=0).fit(corpus)
    scores = _contrast(model.topic_word_, prep.heldout, list(prep.vocabulary), TOP_N)  # NPMI and contrast at once
    return {"npmi": scores["npmi"], "contrast": scores["contrast"]}


def _scale_info(scale) -> dict:
    """The public scale as the table reads it (JSON)."""
    y = scale.yardstick
    return {"yardstick": None if y is None else y.as_dict(), "note": scale.note,
            "n_common": None if scale.common is None else len(scale.common),
            "yardstick_common": None if y is None or scale.common is None else
            list(common_word_counts(y.top_words, scale.common))}


def _owner_counts(prep: Prepared) -> dict:
    """Exact sizes of the private corpus: the owner's diagnostics only (the census is what ``n_units`` states)."""
    census = prep.prepared.reader().census()
    return {"training users": prep.corpus.n_users, "training documents": prep.corpus.n_docs,
            f"training {prep.request.unit}s by the pipeline's census (what --n-units states)": census,
            "held-out users": prep.heldout.n_users, "held-out documents": prep.heldout.n_docs}
