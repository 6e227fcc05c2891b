"""The plan's decision beside the release it decided on, measured: blogs at 500 to 2,000 private users, both units,
with and without a public reference, several noise draws each.

Split (``no_public_data.split_records``, a hash of the user id): ``h < 0.5`` the private pool, ``0.5 <= h < 0.75``
the public reference (and its 2,000 most frequent words, ``reference_word_list.most_frequent``: the public word
list of the "reference" rows), ``h >= 0.75`` held out for the scores, whole. A size n takes the first n users of
the private pool in the order of a second hash of the id (so the sizes are nested), each with at most 20 posts (a
per-user rule: a hash of the user and the post's index picks them); that file *is* the private corpus, so its
count is exact and the release states it (``n_units``: replace-one neighbours, as ``topicdp privatize --n-units``).
The reference file is capped at 20 posts per blogger as the private one is; with ``--whole-reference`` it is the
public quarter whole, and at user level the request states the 20-post cap instead, so that the pipeline bounds
the reference's bloggers as the private ones are for the start and the simulation (and scores on its whole text).

Two steps:

``release`` (expensive, cached in ``--cache``, one JSON line per (size, unit, reference, draw); resumable): the
release forced (``release_anyway``) through :func:`topicdp.pipeline.release` exactly as the owner runs it --
without a reference a DP vocabulary of at most 2,000 words (20% of epsilon) and dp-vem from a random start; with
one, the reference's word list (public, nothing spent on it) and dp-vem from the reference's topics. A line keeps
the release's top-10 lists, the DP outputs the plan read (the words kept) and the lines it printed then. A refusal
that ``release_anyway`` cannot override (the DP vocabulary kept fewer words than topics) is a line too.

``table`` (cheap but for one LDA fit per size, cached beside ``--cache``): every release scored from its lists on
the held-out users (:func:`topicdp.metrics.readability`) against a non-private gensim LDA (5 passes) of the same
private file on an *ordinary* vocabulary (the 2,000 most frequent words with min_df 5 and max_df 0.5, as
``utility_real.load`` builds it: what the owner fits without privacy), never one restricted to the release's words:
NPMI and contrast as ratios to that LDA's on the same held-out users, diversity, matched overlap by word. Beside it,
the decision the *current* code makes for each cell from the public facts and the recorded DP outputs (the stated
count, the words kept), with the simulation on the public reference where there is one.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/decision_validation.py release \
        --cache docs/results/decision_validation.jsonl
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/decision_validation.py table \
        --cache docs/results/decision_validation.jsonl --out docs/results/decision_validation_table.md --n-jobs 2

``simulations`` (a minute a size): the simulation on the reference with more draws than the decision's 9
(``--simulation-draws``, default 21; the first 9 are the decision's), each judged readable or not: whether more
simulated draws would move a decision on the edge.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/decision_validation.py simulations --units user --sizes 500 750 1000

``texts`` (cheap): the cached releases with a reference scored as ``table`` scores them, on other texts: the
held-out posts' thirds (by a hash of the user), the held-out posts capped at 20 per blogger, the reference (what
the simulation scores on; with ``--whole-reference`` also capped at 20 posts per blogger, and split into the posts
its bounded copy keeps, which the release's start is fitted on, and the rest) and its two halves:
how much the score of one release depends on the text it is read on.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/decision_validation.py texts --units user document \
        --cache docs/results/decision_validation.jsonl

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from topicdp.forecast import TARGETS as _TARGETS, on_the_edge  # noqa: E402
from utility.no_public_data import DATA, split_records  # noqa: E402
from utility.reference_word_list import most_frequent  # noqa: E402

SIZES = (500, 750, 1000, 1500, 2000)
UNITS = ("user", "document")
K, MAX_DOCS, EPSILON, DELTA = 10, 20, 3.0, 1e-6
#: the product owner's targets (topicdp.forecast.TARGETS), relative to the non-private LDA (x) or absolute
TARGETS = {unit: vars(t) for unit, t in _TARGETS.items()}


def _hash(*parts) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()[:8], "big")


def capped(records: list, users: set | None = None) -> list:
    """At most MAX_DOCS posts of each user (of ``users``), chosen by a hash of (user, post index): per user."""
    by_user: dict = {}
    for text, user in records:
        if users is None or user in users:
            by_user.setdefault(user, []).append(text)
    out = []
    for user, texts in by_user.items():
        keep = sorted(range(len(texts)), key=lambda i: _hash("post", user, i))[:MAX_DOCS]
        out += [(texts[i], user) for i in sorted(keep)]
    return out


def private_sample(pool: list, n: int) -> list:
    """The first ``n`` users of the private pool in the order of a hash of their id, capped (nested sizes)."""
    users = sorted(dict.fromkeys(u for _, u in pool), key=lambda u: _hash("size", u))[:n]
    return capped(pool, set(users))


def write_jsonl(rows: list, path: Path) -> str:
    # written aside and renamed: parallel workers of ``table`` write the same file while others read it
    part = path.with_name(f"{path.name}.{os.getpid()}")
    part.write_text("".join(json.dumps({"text": t, "user": u}) + "\n" for t, u in rows))
    os.replace(part, path)
    return str(path)


class Data:
    """The split, the reference file and its word list, built once per process in ``workdir``."""

    def __init__(self, workdir: Path, whole_reference: bool = False):
        pool, reference, held = split_records("blogs")
        self.pool, self.held = pool, held
        # whole: the public quarter as an owner has it (a user-level request then states the cap: request_for)
        self.reference_rows = reference if whole_reference else capped(reference)
        self.cap = MAX_DOCS if whole_reference else None
        self.reference = write_jsonl(self.reference_rows, workdir / "reference.jsonl")
        self.words = sorted(most_frequent([t for t, _ in self.reference_rows], 2000))
        self.workdir = workdir

    def private(self, n: int) -> tuple[str, list]:
        rows = private_sample(self.pool, n)
        return write_jsonl(rows, self.workdir / f"private-{n}.jsonl"), rows


def request_for(path: str, rows: list, unit: str, reference: str | None, words: list | None, seed: int | None,
                release_anyway: bool = True, cap: int | None = None):
    """The owner's request: the count stated (the file's exact count), DP vocabulary or the reference's words."""
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy

    n_units = len({u for _, u in rows}) if unit == "user" else len(rows)
    vocabulary = VocabularyPolicy.dp(max_features=2000) if words is None else VocabularyPolicy.public(words)
    # ``cap`` (a whole reference): at user level the request states the cap the private file was made with, so that
    # the reference's bloggers are bounded as the private ones are (for the start and the simulation; the private
    # file is within it already). A per-user cap breaks document-level privacy: at that level the reference is whole.
    cap = cap if unit == "user" and reference is not None else None
    return ReleaseRequest(CorpusSource(path, max_docs_per_user=cap), vocabulary, epsilon=EPSILON, delta=DELTA,
                          unit=unit, n_topics=K, reference=reference, n_units=n_units, seed=seed,
                          release_anyway=release_anyway)


def ordinary_corpus(rows: list):
    """The posts ``(text, user)`` counted on the owner's ordinary vocabulary: the 2,000 most frequent words (min_df
    5, max_df 0.5)."""
    from topicdp.corpus import Corpus

    return Corpus.from_texts([t for t, _ in rows], [u for _, u in rows], min_df=5, max_df=0.5, max_features=2000)


def ordinary_lda(rows: list, seed: int = 0):
    """The non-private gensim LDA the owner would fit: :func:`ordinary_corpus`, 5 passes (as
    ``utility_real.gensim_reference`` and the simulation's LDA: one pass over a few thousand posts is 3 updates,
    far from converged), with the owner's seed ``seed``."""
    from topicdp.topics import reference_lda

    corpus = ordinary_corpus(rows)
    return reference_lda(corpus, K, passes=5, random_state=seed), list(corpus.vocabulary)


def top_lists(W, vocabulary, n: int = 10) -> list[list[str]]:
    """Each topic's ``n`` top words (:func:`topicdp.topics.top_indices`: largest first, ties to the smaller index)."""
    from topicdp.topics import top_indices

    return [[vocabulary[j] for j in row] for row in top_indices(W, n)]


def lda_lists(data: "Data", n: int, path: Path, seed: int = 0) -> list[list[str]]:
    """The top-10 lists of the ordinary LDA of size ``n`` with seed ``seed``, fitted once and cached in ``path``
    (JSON, by size; ``"size:seed"`` for seeds other than 0)."""
    cached = json.loads(path.read_text()) if path.exists() else {}
    key = str(n) if seed == 0 else f"{n}:{seed}"
    if key not in cached:
        W, vocabulary = ordinary_lda(data.private(n)[1], seed)
        cached[key] = top_lists(W, vocabulary)
        path.write_text(json.dumps(cached))
    return cached[key]


def score_against(ours: list[list[str]], ldas: list[list[list[str]]], heldout) -> dict:
    """:func:`score_lists` against each of the owner's LDA fits (seeds), each measure the median over them: the
    owner's non-private LDA is itself random, and one fit's contrast on these held-out users moved 2-3x between
    seeds (0.032, 0.063, 0.067 at 500 bloggers), which one seed would put into every ratio."""
    scores = [score_lists(ours, lda, heldout) for lda in ldas]
    return {key: float(np.median([s[key] for s in scores])) for key in scores[0]}


def score_lists(ours: list[list[str]], lda: list[list[str]], heldout) -> dict:
    """The scores of :func:`scores` from top-10 lists alone (all four measures read only the lists), on a held-out
    corpus whose vocabulary holds every word of both (matched by word)."""
    from topicdp.metrics.readability import readability, top_words_matrix

    words = sorted({w for lists in (ours, lda) for row in lists for w in row})
    index = {w: j for j, w in enumerate(words)}

    def matrix(lists):
        return top_words_matrix(np.array([[index[w] for w in row] for row in lists]), len(words))

    mine = readability(matrix(ours), words, heldout, reference=matrix(lda))
    base = readability(matrix(lda), words, heldout)
    return {"npmi": mine["npmi"] / base["npmi"], "contrast": mine["npmi_contrast"] / base["npmi_contrast"],
            "diversity": mine["diversity"], "overlap": mine["overlap"], "lda_npmi": base["npmi"],
            "lda_contrast": base["npmi_contrast"]}


def meets(row: dict, unit: str) -> bool:
    return all(row[k] >= v for k, v in TARGETS[unit].items())


def run_releases(args) -> int:
    from topicdp.pipeline import ReleaseRefused, release

    cache = Path(args.cache)
    done = set()
    if cache.exists():
        done = {(r["n"], r["unit"], r["reference"], r["draw"]) for r in map(json.loads, cache.open())}
    data = Data(Path(args.workdir), args.whole_reference)
    for n in args.sizes:
        path, rows = data.private(n)
        todo = [(unit, ref, draw) for unit in args.units for ref in args.references
                for draw in range(args.first_draw, args.draws)
                if (n, unit, ref, draw) not in done]
        for unit, ref, draw in todo:
            with_reference = ref == "yes"
            request = request_for(path, rows, unit, data.reference if with_reference else None,
                                  data.words if with_reference else None, seed=1000 + draw, cap=data.cap)
            lines: list[str] = []
            t0 = time.perf_counter()
            head = {"n": n, "unit": unit, "reference": ref, "draw": draw, "seed": 1000 + draw,
                    "n_units": request.n_units}
            try:
                result = release(request, echo=lines.append)
            except ReleaseRefused as refused:  # a refusal release_anyway cannot override (e.g. no DP word kept)
                with cache.open("a") as f:
                    f.write(json.dumps({**head, "refused": str(refused), "lines": lines}) + "\n")
                print(f"n={n} {unit} reference={ref} draw={draw}: cannot release: {refused}", flush=True)
                continue
            seconds = time.perf_counter() - t0
            rel = result.release
            vocabulary = list(rel.vocabulary)
            record = {**head, "words": len(vocabulary), "seconds": seconds, "load": os.getloadavg()[0],
                      "top": top_lists(rel.topic_word, vocabulary),
                      "lines": lines}
            with cache.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(f"n={n} {unit} reference={ref} draw={draw}: {record['words']} words ({seconds:.0f} s, load "
                  f"{record['load']:.1f})", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("release", "table", "texts", "simulations"))
    ap.add_argument("--cache", default=str(Path(__file__).resolve().parents[2] / "docs" / "results"
                                           / "decision_validation.jsonl"))
    ap.add_argument("--workdir", default="/tmp/decision_validation")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--units", nargs="+", default=list(UNITS))
    ap.add_argument("--references", nargs="+", default=["no", "yes"])
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--first-draw", type=int, default=0, help="release: draws first-draw..draws-1 (split a run)")
    ap.add_argument("--lda-seeds", type=int, default=3, help="the owner's LDA fits (seeds 0..N-1) scored against")
    ap.add_argument("--out", default=None)
    ap.add_argument("--simulation-draws", type=int, default=21, help="simulations: simulated releases per cell")
    ap.add_argument("--n-jobs", type=int, default=1, help="table: cells decided in parallel (one simulation each)")
    ap.add_argument("--whole-reference", action="store_true",
                    help="the public reference uncapped (a user-level request states the 20-post cap)")
    args = ap.parse_args(argv)
    if not (DATA / "blogs").exists():
        print(f"skipped: {DATA / 'blogs'} is absent")
        return 0
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    if args.step == "release":
        return run_releases(args)
    if args.step == "texts":
        return scoring_texts(args)
    if args.step == "simulations":
        return simulated_draws(args)
    return make_table(args)


def simulated_draws(args) -> int:
    """How many of ``--simulation-draws`` simulated releases on the reference are readable, per size (at the unit of
    ``--units``, with the reference's words): the decision reads the first ``SIMULATION_DRAWS`` (the same noise
    streams), so this says whether more simulated draws would move it. Nothing released; no cache read."""
    from topicdp.pipeline import MECHANISMS
    from topicdp.pipeline.plan import vocabulary_share
    from topicdp.pipeline.run import reference_text
    from topicdp.forecast import SIMULATION_DRAWS

    data = Data(Path(args.workdir), args.whole_reference)
    for unit in args.units:
        for n in args.sizes:
            plan, reference, count = owners_plan(data, n, unit, with_reference=True)
            text = reference_text(reference, data.words, plan.request.source)
            fc = MECHANISMS["dp-vem"].simulate(plan, text, count, n_draws=args.simulation_draws,
                                               vocabulary_share=vocabulary_share(plan, text.n_words, count))
            first = fc.draw_verdicts[:SIMULATION_DRAWS].count("readable")
            print(f"{unit} {n}: readable in {first}/{SIMULATION_DRAWS} of the first simulated draws, "
                  f"{fc.draw_verdicts.count('readable')}/{args.simulation_draws} of all: {fc.verdict} "
                  f"(median contrast {fc.contrast:.2f}x)", flush=True)
    return 0


def scoring_texts(args) -> int:
    """The median (over draws) contrast and NPMI ratios of each cell with a reference, on each scoring text."""
    from topicdp.corpus import Corpus
    from topicdp.forecast import _halves

    rows = [r for r in map(json.loads, Path(args.cache).open())
            if "top" in r and r["reference"] == "yes" and r["unit"] in args.units and r["n"] in args.sizes]
    data = Data(Path(args.workdir), args.whole_reference)
    ldas = {n: [lda_lists(data, n, Path(args.cache).with_suffix(".lda.json"), seed) for seed in range(args.lda_seeds)]
            for n in sorted({r["n"] for r in rows})}
    words = sorted({w for r in rows for row in r["top"] for w in row}
                   | {w for fits in ldas.values() for lists in fits for row in lists for w in row})
    texts = {"held-out": data.held, "held-out capped": capped(data.held), "reference": data.reference_rows}
    if data.cap is not None:  # a whole reference: also read capped (otherwise that is the reference itself)
        texts["reference capped"] = capped(data.reference_rows)
        texts["reference within the bound"], texts["reference beyond the bound"] = split_by_bound(data)
    texts.update({f"held-out third {i}": [(t, u) for t, u in data.held if _hash("third", u) % 3 == i]
                  for i in range(3)})
    corpora = {name: Corpus.from_texts([t for t, _ in v], [u for _, u in v], vocabulary=words)
               for name, v in texts.items()}
    corpora["reference start half"], corpora["reference simulated half"] = _halves(corpora["reference"], "user")
    print("| unit | users | measure | " + " | ".join(f"{name} ({c.n_docs:,} posts)" for name, c in corpora.items())
          + " |")
    print("|---|---:|---|" + "---:|" * len(corpora))
    for unit in args.units:
        for n in sorted(ldas):
            cell = [r for r in rows if r["n"] == n and r["unit"] == unit]
            scores = {name: [score_against(r["top"], ldas[n], c) for r in cell] for name, c in corpora.items()}
            for key in ("contrast", "npmi"):
                print(f"| {unit} | {n} | {key} | " + " | ".join(
                    f"{np.median([s[key] for s in scores[name]]):.2f}" for name in corpora) + " |", flush=True)
            print(f"| {unit} | {n} | meet all targets | " + " | ".join(
                f"{sum(meets(s, unit) for s in scores[name])}/{len(cell)}" for name in corpora) + " |", flush=True)
    return 0


def split_by_bound(data: Data) -> tuple[list, list]:
    """The whole reference's posts that its bounded copy keeps (what a user-level release's start and its simulation
    are fitted on: :func:`topicdp.pipeline.run.bounded_reference` on the reference's words) and the rest, which
    neither saw: posts empty on those words are in neither."""
    from topicdp.corpus import Corpus

    rows = data.reference_rows
    texts, users = [t for t, _ in rows], [u for _, u in rows]
    # the rows that have a word of the list (a corpus of one user per row drops the others and keeps their ids)
    nonempty = list(Corpus.from_texts(texts, list(range(len(rows))), vocabulary=data.words).user_ids)
    corpus = Corpus.from_texts(texts, users, vocabulary=data.words)
    # a copy whose document p is one word counted p + 1 times: a per-user document cap keeps rows whole, so the
    # bounded copy's counts name the positions it kept (the same choice: same users, positions and seed)
    marked = Corpus(X=sp.csr_matrix((np.arange(1, corpus.n_docs + 1), (np.arange(corpus.n_docs),
                                     np.zeros(corpus.n_docs, dtype=int))), shape=(corpus.n_docs, 1)),
                    vocabulary=("position",), doc_users=corpus.doc_users, user_ids=corpus.user_ids)
    kept = set((marked.bound(data.cap, random_state=0).X.data - 1).tolist())
    assert corpus.bound(data.cap, random_state=0).n_tokens == corpus.X[sorted(kept)].sum()  # the same documents
    return ([rows[nonempty[p]] for p in sorted(kept)],
            [rows[nonempty[p]] for p in range(corpus.n_docs) if p not in kept])


def owners_plan(data: Data, n: int, unit: str, with_reference: bool):
    """The plan of the owner's request at size ``n`` (the count stated; with the reference and its words or a DP
    vocabulary), the reference it read (None without) and the count: the public facts a decision is made from."""
    from topicdp.pipeline.plan import UnitCount, plan_request
    from topicdp.pipeline.run import read_reference

    path, rows = data.private(n)
    request = request_for(path, rows, unit, data.reference if with_reference else None,
                          data.words if with_reference else None, seed=None, release_anyway=False, cap=data.cap)
    reference = read_reference(request) if with_reference else None
    return plan_request(request, reference), reference, UnitCount(request.n_units, "stated")


def decisions(data: Data, n: int, unit: str, ref: str, records: list) -> list[dict]:
    """The plan's decision for each cached draw of one cell, from the current code: the public facts (the stated
    count, the reference and its words) and the DP output recorded with the draw (the words a DP selection kept)."""
    from topicdp.pipeline.plan import decide, planned_words
    from topicdp.pipeline import MECHANISMS, Prepared
    from topicdp.pipeline.plan import vocabulary_share

    with_reference = ref == "yes"
    plan, reference, count = owners_plan(data, n, unit, with_reference)
    if with_reference:  # one decision for every draw: the words are public, the count stated
        prepared = Prepared(plan.request, plan, reference)
        text = prepared.reference_text(data.words)
        simulation = MECHANISMS["dp-vem"].simulate(plan, text, count, fitted_on=prepared.reference_corpus(data.words),
                                                   vocabulary_share=vocabulary_share(plan, text.n_words, count))
        decision = decide(plan, count, n_words=len(data.words), simulation=simulation, words="the release's words")
        return [{"refused": decision.noise, "why": decision.forecast.verdict, "forecast": decision.forecast,
                 "lines": decision.lines()} for _ in records]
    out = []
    n_words, _ = planned_words(plan, count)
    try:
        first = decide(plan, count, n_words=n_words)
    except ValueError as exc:  # the DP vocabulary is forecast to keep fewer words than topics
        return [{"refused": True, "why": str(exc).split(":")[0], "forecast": None, "lines": []} for _ in records]
    for r in records:
        # the forecast set against the forced release is the re-plan on the words the selection kept (what the
        # release was); the decision refuses where either plan does (the first one before the selection's spend)
        if "refused" in r:  # the selection kept fewer words than topics: nothing can be released
            why = first.forecast.verdict if first.noise else "the DP vocabulary kept fewer words than topics"
            out.append({"refused": True, "why": why, "forecast": None, "lines": first.lines()})
            continue
        second = decide(plan, count, n_words=r["words"])
        why = (f"{first.forecast.verdict} before the selection" if first.noise else second.forecast.verdict)
        out.append({"refused": first.noise or second.noise, "why": why, "forecast": second.forecast,
                    "lines": first.lines() + second.lines()})
    return out


def _median(values):
    return float(np.median(values)) if values else float("nan")


def make_table(args) -> int:
    from joblib import Parallel, delayed

    from topicdp.corpus import Corpus

    cache = [json.loads(line) for line in Path(args.cache).open()]
    data = Data(Path(args.workdir), args.whole_reference)
    # every score from the cached top-10 lists against the cached 5-pass ordinary LDA's lists (re-scored here, so
    # that a change of the scoring needs no new release)
    ldas = {n: [lda_lists(data, n, Path(args.cache).with_suffix(".lda.json"), seed) for seed in range(args.lda_seeds)]
            for n in sorted({r["n"] for r in cache})}
    words = sorted({w for r in cache for row in r.get("top", []) for w in row}
                   | {w for fits in ldas.values() for lists in fits for row in lists for w in row})
    heldout = Corpus.from_texts([t for t, _ in data.held], [u for _, u in data.held], vocabulary=words)
    for r in cache:
        if "top" in r:
            r.update(score_against(r["top"], ldas[r["n"]], heldout))
    cells: dict = {}
    for r in cache:
        cells.setdefault((r["n"], r["unit"], r["reference"]), []).append(r)
    head = ("| users | unit | reference | decision | forecast overlap / NPMI / contrast | measured overlap | NPMI x | "
            "contrast x | diversity | meets targets | decision right? |")
    lines = [head, "|---:|---|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    order = sorted(cells, key=lambda cell: (cell[1], cell[2], cell[0]))
    for cell in order:
        cells[cell] = sorted(cells[cell], key=lambda r: r["draw"])
    # the decisions (a simulation on the reference per cell with one) are the step's cost: one cell a worker
    decided_by_cell = Parallel(n_jobs=args.n_jobs)(delayed(decisions)(data, *cell, cells[cell]) for cell in order)
    for (n, unit, ref), decided in zip(order, decided_by_cell):
        records = cells[(n, unit, ref)]
        released = [r for r in records if "refused" not in r]
        meets_n = sum(meets(r, unit) for r in released)
        refused_n = sum(d["refused"] for d in decided)
        fc = next((d["forecast"] for d in decided if d["forecast"] is not None), None)
        verdict = ", ".join(sorted({d["why"] for d in decided}))
        decision = (f"refuse ({verdict})" if refused_n == len(decided) else
                    f"release ({verdict})" if refused_n == 0 else f"{len(decided) - refused_n}/{len(decided)} "
                    f"released ({verdict})")
        forecast = "-" if fc is None else f"{fc.overlap_with_lda:.2f} / {fc.npmi:.2f}x / {fc.contrast:.2f}x"
        if fc is not None and getattr(fc, "contrast_range", None) is not None:  # the simulated draws' spread
            forecast += " ({:.2f}-{:.2f}; {}/{} draws readable)".format(
                *fc.contrast_range, sum(v == "readable" for v in fc.draw_verdicts), len(fc.draw_verdicts))

        def spread(key, fmt="{:.2f}"):
            if not released:
                return "cannot release"
            values = [r[key] for r in released]
            return f"{fmt.format(_median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"
        majority_meets = meets_n * 2 > len(records)
        majority_refused = refused_n * 2 > len(decided)
        right = ("yes" if majority_meets != majority_refused else
                 "NO: refused a release that meets the targets" if majority_meets else "NO: released a miss")
        checks = {}
        if fc is not None and released:
            checks["overlap"] = fc.overlap_with_lda / max(_median([r["overlap"] for r in released]), 1e-9)
            checks["npmi"] = fc.npmi / max(_median([r["npmi"] for r in released]), 1e-9)
            target = TARGETS[unit]["contrast"]
            checks["contrast side"] = (fc.contrast >= target) == (_median([r["contrast"] for r in released]) >= target)
        # the measured pass rate within one binomial standard error of one half: another set of draws (or of
        # held-out bloggers) could as well have put most releases on the other side
        edge = on_the_edge(meets_n, len(records))
        # the plan's own flag: its simulated draws within one standard error of one half (the line it prints)
        flagged = bool(getattr(fc, "draws_on_the_edge", False))
        verdicts.append({"cell": (n, unit, ref), "right": right == "yes", "edge": edge, "flagged": flagged, **checks})
        lines.append(f"| {n} | {unit} | {ref} | {decision} | {forecast} | {spread('overlap')} | {spread('npmi')} | "
                     f"{spread('contrast')} | {spread('diversity')} | {meets_n}/{len(records)} | {right} |")
    with_ratio = [v for v in verdicts if "overlap" in v]
    summary = [
        "",
        f"Decisions right (refused where most draws miss the targets, released where most meet them): "
        f"{sum(v['right'] for v in verdicts)} of {len(verdicts)} cells; "
        f"{sum(v['right'] for v in verdicts if not v['edge'])} of the {sum(not v['edge'] for v in verdicts)} whose "
        f"pass rate is more than one binomial standard error (0.5 / sqrt(draws)) from one half.",
        "Cells within one standard error of one half (on the edge): " + (", ".join(
            f"{n} {unit} {ref} ({'right' if v['right'] else 'wrong'})"
            for v in verdicts if v["edge"] for (n, unit, ref) in [v["cell"]]) or "none") + ".",
        "Decisions the plan said were on the edge (its simulated draws within one standard error of one half): " + (
            ", ".join(f"{n} {unit} {ref} ({'right' if v['right'] else 'wrong'})"
                      for v in verdicts if v["flagged"] for (n, unit, ref) in [v["cell"]]) or "none")
        + f"; the others right in {sum(v['right'] for v in verdicts if not v['flagged'])} of "
        f"{sum(not v['flagged'] for v in verdicts)}.",
        f"Overlap forecast within 2x of the measured median: {sum(0.5 <= v['overlap'] <= 2 for v in with_ratio)} of "
        f"{len(with_ratio)} cells with a release; NPMI: {sum(0.5 <= v['npmi'] <= 2 for v in with_ratio)} of "
        f"{len(with_ratio)}; contrast on the measured side of its target: "
        f"{sum(v['contrast side'] for v in with_ratio)} of {len(with_ratio)}.",
        "Ratios forecast / measured: " + "; ".join(
            f"{n} {unit} {ref}: overlap {v['overlap']:.2f}, NPMI {v['npmi']:.2f}"
            for v in with_ratio for (n, unit, ref) in [v["cell"]]),
    ]
    text = "\n".join(lines + summary) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
