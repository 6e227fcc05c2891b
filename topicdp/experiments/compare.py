"""``compare``: every road on the same corpus, budget and held-out users; a publishable table of private scores.

The private corpus is split by a hash of the user id (a per-user rule: adding a user moves no other) into the users
the releases read and held-out users, whose texts score each release's top words under DP
(:meth:`topicdp.PrivateRelease.evaluate`: NPMI and NPMI contrast with their intervals). The held-out users are
disjoint from the release's units, so an evaluation spends its own budget, not the release's; the evaluations all
read the same held-out users, so the table states their composed total too.

Outputs in ``out_dir``: ``table.md`` (publishable: guarantees, refusals, private scores), ``diagnostics.md`` (the
owner's: exact scores of the same lists on the held-out texts, NOT for publication), ``compare.png`` (the private
contrast per road over epsilon, when matplotlib is installed), and ``results.jsonl`` / ``diagnostics.jsonl``, one
line per finished (road, epsilon): a rerun with the same settings resumes from them.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
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


def prepare(split: Split, settings: CompareSettings, corpus_path: str, reference: str | None) -> Prepared:
    """Vocabulary, corpora, the public start and P on the release's words: once per comparison."""
    from ..corpus import Corpus
    from ..pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy
    from ..pipeline.run import reference_corpus, reference_vocabulary
    from ..pipeline.sources import bounded

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
                             delta=settings.delta, unit=settings.unit, n_topics=settings.n_topics, reference=reference,
                             n_jobs=settings.n_jobs, agnostic=TopicDP(make_model("gensim-lda", settings.n_topics, 0),
                                                                      sampling=sampling))
    stop = source.tokenizer_stop_words
    texts, users = [t for t, _ in split.train], [u for _, u in split.train]
    # bounding is per unit with a data-independent seed (fresh entropy), as the pipeline bounds each release
    corpus = bounded(source, Corpus.from_texts(texts, users, vocabulary=words, stop_words=stop),
                     np.random.SeedSequence())
    heldout = Corpus.from_texts([t for t, _ in split.heldout], [u for _, u in split.heldout], vocabulary=words,
                                stop_words=stop)
    n_units = len(set(users)) if user_level else len(texts)  # the census, before empty units were dropped
    prep = Prepared(request, corpus, heldout, n_units, tuple(words), split.reference, simulate=settings.simulate)
    if split.reference is not None:
        from ..variational import public_init

        prep.reference_corpus = reference_corpus(split.reference, words, source)
        prep.start = public_init(prep.reference_corpus, settings.n_topics, unit=str(settings.unit))
    prep.cache["vocabulary_statement"] = statement(prep, origin)
    return prep


def compare(corpus_path: str, out_dir, settings: CompareSettings, *, reference: str | None = None,
            echo=None) -> dict:
    """Run every road at every epsilon of ``settings`` and write the outputs (module docstring).

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
    rows, exact = _resume(out, meta)
    split = read_split(corpus_path, reference, settings.heldout_fraction)
    prep = prepare(split, settings, corpus_path, reference)
    say(f"corpus {split.name}: {len(prep.vocabulary)} words, prepared in {time.perf_counter() - started:.0f} s; "
        "held-out users score the releases (the exact sizes are private: the owner's diagnostics)")
    ceiling = _ceiling(prep, settings) if settings.ceiling else None
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
            _record(out, outcome, prep, settings, time.perf_counter() - t0, rows, exact, ceiling)
            say(f"{road} at epsilon {eps:g}: {rows[-1]['status']} ({rows[-1]['seconds']:.0f} s)")
    todo = [e for e in settings.epsilons if (RANDOM_DP, e) not in done]
    if settings.random_dp and todo:
        t0 = time.perf_counter()
        outcomes = run_random_dp(todo, prep, settings.n_jobs)
        seconds = (time.perf_counter() - t0) / len(outcomes)
        for outcome in outcomes:
            _record(out, outcome, prep, settings, seconds, rows, exact, ceiling)
        say(f"{RANDOM_DP}: {len(outcomes)} releases ({seconds * len(outcomes):.0f} s)")
    info = {"corpus": split.name, "unit": str(settings.unit), "n_topics": settings.n_topics, "delta": settings.delta,
            "evaluation": settings.evaluation, "reference": reference is not None, "n_words": len(prep.vocabulary),
            "seconds": time.perf_counter() - started}
    table = out / "table.md"
    table.write_text(format_table(rows, info) + "\n")
    diagnostics = out / "diagnostics.md"
    diagnostics.write_text(format_diagnostics(exact, info, _owner_counts(prep, split), ceiling) + "\n")
    _plot(rows, out, say)
    return {"table": str(table), "diagnostics": str(diagnostics), "rows": rows, "seconds": info["seconds"]}


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


def _append(path: Path, row: dict) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")


def _record(out: Path, outcome: Outcome, prep: Prepared, settings: CompareSettings, seconds: float, rows: list,
            exact: list, ceiling) -> None:
    """The published row (guarantee, refusal, private scores) and the owner's row (exact scores), appended."""
    from ..release import guarantee_line

    row: dict = {"road": outcome.road, "epsilon": outcome.epsilon, "seconds": round(seconds, 1),
                 "forecast": outcome.forecast}
    if outcome.not_run is not None:
        row.update(status="not applicable" if not outcome.applicable else "not run", reason=outcome.not_run)
    elif outcome.release is None:
        row.update(status="refused", reason=outcome.refused, forced=outcome.forced)
    else:
        release = outcome.release
        row.update(status="refused" if outcome.refused else "released", reason=outcome.refused,
                   forced=outcome.forced, guarantee=guarantee_line(release.report),
                   kind=str(release.report.guarantee), top_words=[[w for w, _ in t] for t in release.top_words(5)])
        eps, delta = settings.evaluation
        # every evaluation at the unit's add/remove relation, so that one ledger composes them all
        evaluation = release.evaluate(prep.heldout, epsilon=eps, delta=delta, neighbours="add-remove")
        data = evaluation.to_dict()
        report = data["report"]
        row["evaluation"] = {k: data[k] for k in ("mean_npmi", "mean_npmi_interval", "mean_contrast",
                                                  "mean_contrast_interval", "level")}
        row["evaluation"].update({k: report[k] for k in ("epsilon", "delta", "sigma", "sensitivity", "unit",
                                                         "neighbours", "seeded")})
        exact.append({"road": outcome.road, "epsilon": outcome.epsilon, **_exact(release, prep, ceiling, settings)})
        _append(out / "diagnostics.jsonl", exact[-1])
    rows.append(row)
    _append(out / "results.jsonl", row)


def _exact(release, prep: Prepared, ceiling, settings: CompareSettings) -> dict:
    """The exact (non-private) NPMI and contrast of the release's lists on the held-out texts: the owner's only."""
    from ..forecast import TARGETS
    from ..metrics.readability import heldout_npmi, npmi_contrast

    words = list(prep.vocabulary)
    out = {"npmi": float(heldout_npmi(release.topic_word, prep.heldout, words)),
           "contrast": float(npmi_contrast(release.topic_word, prep.heldout, words))}
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

    model = VariationalLDA(settings.n_topics, unit=str(settings.unit), init=prep.start, n_jobs=settings.n_jobs,
                           random_state=0).fit(prep.corpus)
    words = list(prep.vocabulary)
    return {"npmi": float(heldout_npmi(model.topic_word_, prep.heldout, words)),
            "contrast": float(npmi_contrast(model.topic_word_, prep.heldout, words))}


def _owner_counts(prep: Prepared, split: Split) -> dict:
    """Exact sizes of the private corpus: the owner's diagnostics only."""
    return {"training users": prep.corpus.n_users, "training documents": prep.corpus.n_docs,
            "held-out users": prep.heldout.n_users, "held-out documents": prep.heldout.n_docs,
            "stated count (spectral rows)": prep.n_units}


def _plot(rows: list, out: Path, say) -> None:
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return
    from .plots import plot_all

    paths = plot_all(rows, out)
    if paths:
        say(f"plot: {paths[0]}")
