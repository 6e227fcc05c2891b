"""The user level as the corpus grows: 1,000 to 9,000 private bloggers of both blog folders, no public data.

Split (a hash of the user id, ``_data.user_share`` with salt ``"scale"`` or ``--salt``): ``h < HELD_SHARE`` held out for the scores
(whole: every post), the rest the private pool. A size n takes the first n bloggers of the pool in the order of a
second hash (so the sizes are nested), each with at most 20 posts (``decision_validation.capped``: per user); that
file *is* the private corpus, so its count is exact and the request states it (replace-one neighbours, as
``topicdp privatize --n-units``). The request is the owner's at the user level: a DP vocabulary of at most 2,000
words, K = 10, delta 1e-6, the road named by ``--mechanisms`` (dp-vem from a random start, a spectral
configuration), forced (``release_anyway``) so that a refused cell is measured too.

``release`` (cached, one JSON line per (size, epsilon, mechanism, draw); resumable): the forced release through
:func:`topicdp.pipeline.release`; a line keeps the words the DP vocabulary kept, the plan's decision and forecast
(from the release's own plan: the count stated, the words kept), the top-10 lists and the seconds.

``table``: every release scored from its lists on the held-out bloggers against the owner's non-private gensim LDA
(5 passes, 3 seeds, median) of the same private file on an *ordinary* vocabulary (``decision_validation
.ordinary_lda``), never one restricted to the release's words; the decision judged right where it refuses a cell
whose draws mostly miss the user-level targets or releases one whose draws mostly meet them; each forecast against
the measured median.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/scale_curve.py release \
        --cache docs/results/scale_curve.jsonl --sizes 1000 2000 4000 6000 9000 --epsilons 1 3 10
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/scale_curve.py table \
        --cache docs/results/scale_curve.jsonl --out docs/results/scale_curve.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from _data import BLOGS, BLOGS_MORE, available, nearest, user_share  # noqa: E402
from utility.decision_validation import (  # noqa: E402
    _hash, capped, lda_lists, meets, on_the_edge, score_against, top_lists, write_jsonl)

SIZES = (1000, 2000, 4000, 6000, 9000)
EPSILONS = (1.0, 3.0, 10.0)
MECHANISMS = ("dp-vem", "spectral-config-1")
HELD_SHARE = 0.06  # about 580 of the 9,630 bloggers: the pool then holds the 9,000 of the largest size
K, DELTA, MAX_WORDS = 10, 1e-6, 2000


class Data:
    """Both folders read once: the held-out bloggers' posts and the private pool, split by a hash of the id."""

    def __init__(self, workdir: Path, salt: str = "scale"):
        from topicdp.corpus import read_jsonl_records

        self.pool, self.held = [], []
        for path in (nearest(BLOGS), nearest(BLOGS_MORE)):
            for text, user in read_jsonl_records(path):
                (self.held if user_share(user, salt) < HELD_SHARE else self.pool).append((text, user))
        self.users = sorted(dict.fromkeys(u for _, u in self.pool), key=lambda u: _hash(f"{salt}-size", u))
        self.workdir = workdir

    def private(self, n: int) -> tuple[str, list]:
        if n > len(self.users):
            raise ValueError(f"size {n} exceeds the pool's {len(self.users)} bloggers")
        rows = capped(self.pool, set(self.users[:n]))
        return write_jsonl(rows, self.workdir / f"scale-{n}.jsonl"), rows


def request_for(path: str, n_units: int, epsilon: float, mechanism: str, seed: int, words_per_user: int | None = None):
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy

    policy = VocabularyPolicy.dp(max_features=MAX_WORDS, max_words_per_unit=words_per_user)
    return ReleaseRequest(CorpusSource(path), policy, epsilon=epsilon,
                          delta=DELTA, unit="user", n_topics=K, n_units=n_units, seed=seed,
                          mechanism=mechanism, release_anyway=True)


def replanned(record: dict, path: str) -> tuple[bool, dict | None]:
    """The plan's decision and forecast for a cached release, recomputed by this checkout's plan from what the release
    saw when it decided (the count stated, the words the DP vocabulary kept): a change to the forecast is judged
    without drawing the releases again (a forced release does not depend on the decision)."""
    from topicdp.pipeline.plan import UnitCount, decide, plan_request

    request = request_for(path, record["n"], record["epsilon"], record["mechanism"], record["seed"],
                          record.get("words_per_user", 300))
    decision = decide(plan_request(request), UnitCount(record["n"], "stated"), n_words=record["words"])
    return bool(decision.noise), _forecast(decision.forecast)


def _forecast(fc) -> dict | None:
    if fc is None:
        return None
    out = {"overlap": fc.overlap_with_lda, "npmi": getattr(fc, "npmi", None),
           "contrast": getattr(fc, "contrast", None), "verdict": fc.verdict}
    if hasattr(fc, "m2_noise"):  # a spectral configuration: its utility check's noise, not a readability forecast
        out["m2_noise"] = fc.m2_noise
    return out


def run_releases(args) -> int:
    from topicdp.pipeline import ReleaseRefused, release
    from topicdp.pipeline.plan import plan_request, word_cap

    cache = Path(args.cache)
    done = {(r["n"], r["epsilon"], r["mechanism"], r["draw"]) for r in map(json.loads, cache.open())} \
        if cache.exists() else set()
    data = Data(Path(args.workdir), args.salt)
    for n in args.sizes:
        path, rows = data.private(n)
        for epsilon in args.epsilons:
            for mechanism in args.mechanisms:
                for draw in range(args.draws):
                    if (n, epsilon, mechanism, draw) in done:
                        continue
                    head = {"n": n, "epsilon": epsilon, "mechanism": mechanism, "draw": draw, "seed": 2000 + draw,
                            "posts": len(rows)}
                    lines: list[str] = []
                    t0 = time.perf_counter()
                    try:
                        request = request_for(path, n, epsilon, mechanism, 2000 + draw, args.words_per_user)
                        head["words_per_user"] = word_cap(plan_request(request), n)
                        result = release(request, echo=lines.append)
                    except ReleaseRefused as refused:  # one release_anyway cannot override (no word kept)
                        record = {**head, "refused": str(refused), "lines": lines}
                    else:
                        rel, decision = result.release, result.decision
                        vocabulary = list(rel.vocabulary)
                        record = {**head, "words": len(vocabulary), "seconds": time.perf_counter() - t0,
                                  "load": os.getloadavg()[0], "refuses": bool(decision and decision.noise),
                                  "forecast": _forecast(decision.forecast if decision else None),
                                  "top": top_lists(rel.topic_word, vocabulary), "lines": lines}
                    with cache.open("a") as f:
                        f.write(json.dumps(record) + "\n")
                    print(f"n={n} eps={epsilon:g} {mechanism} draw={draw}: {record.get('words', 'no')} words, "
                          f"{'refuses' if record.get('refuses', True) else 'releases'} "
                          f"({record.get('seconds', 0):.0f} s)", flush=True)
    return 0


def make_table(args) -> int:
    from topicdp.corpus import Corpus

    cache = [json.loads(line) for line in Path(args.cache).open()]
    data = Data(Path(args.workdir), args.salt)
    lda_path = Path(args.lda_cache) if args.lda_cache else Path(args.cache).with_suffix(".lda.json")
    ldas = {n: [lda_lists(data, n, lda_path, seed) for seed in range(args.lda_seeds)]
            for n in sorted({r["n"] for r in cache})}
    words = sorted({w for r in cache for row in r.get("top", []) for w in row}
                   | {w for fits in ldas.values() for lists in fits for row in lists for w in row})
    heldout = Corpus.from_texts([t for t, _ in data.held], [u for _, u in data.held], vocabulary=words)
    cells: dict = {}
    for r in cache:
        if "top" in r:
            r.update(score_against(r["top"], ldas[r["n"]], heldout))
            if args.replan:
                r["refuses"], r["forecast"] = replanned(r, str(data.workdir / f"scale-{r['n']}.jsonl"))
        cells.setdefault((r["mechanism"], r["epsilon"], r["n"]), []).append(r)
    lines = [f"Held out: {len({u for _, u in data.held}):,} bloggers ({len(data.held):,} posts); targets "
             "(user level): NPMI 0.5x, contrast 0.25x, diversity 0.5, overlap 0.15.", "",
             "| road | epsilon | users | words kept | decision | forecast overlap / NPMI / contrast | measured overlap "
             "| NPMI x | contrast x | diversity | meets targets | right? | top words (draw 0) |",
             "|---|---:|---:|---:|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for (mechanism, epsilon, n), records in sorted(cells.items()):
        released = [r for r in records if "top" in r]
        meets_n = sum(meets(r, "user") for r in released)
        refuses = sum(r.get("refuses", True) for r in records)
        fc = next((r["forecast"] for r in released if r.get("forecast")), None)

        def spread(key):
            values = [r[key] for r in released]
            return "-" if not values else f"{np.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"
        right = (meets_n * 2 > len(records)) != (refuses * 2 > len(records))
        edge = on_the_edge(meets_n, len(records))
        ratios = {}
        if fc and released:
            for key in ("overlap", "npmi", "contrast"):
                if fc.get(key) is not None:
                    ratios[key] = fc[key] / max(float(np.median([r[key] for r in released])), 1e-9)
        verdicts.append((right, edge, ratios, (mechanism, epsilon, n)))
        forecast = "-" if not fc else " / ".join("-" if fc.get(k) is None else f"{fc[k]:.2f}"
                                                 for k in ("overlap", "npmi", "contrast"))
        if fc and "m2_noise" in fc:
            forecast = f"M2 noise {fc['m2_noise']:.2g} x lambda_k ({fc['verdict']})"
        top = "; ".join(" ".join(row[:5]) for row in released[0]["top"][:4]) if released else "-"
        lines.append(f"| {mechanism} | {epsilon:g} | {n:,} | {spread('words') if released else '-'} | "
                     f"{'refuse' if refuses * 2 > len(records) else 'release'} ({len(records) - refuses}/"
                     f"{len(records)} released) | {forecast} | {spread('overlap')} | {spread('npmi')} | "
                     f"{spread('contrast')} | {spread('diversity')} | {meets_n}/{len(records)} | "
                     f"{'yes' if right else 'NO'}{' (edge)' if edge else ''} | {top} |")
    clear = [v for v in verdicts if not v[1]]
    within = [v for v in verdicts if v[2]]
    lines += ["", f"Decisions right: {sum(v[0] for v in verdicts)} of {len(verdicts)} cells; "
              f"{sum(v[0] for v in clear)} of the {len(clear)} clear of the edge (pass rate more than one binomial "
              "standard error from one half).",
              "Forecast within 2x of the measured median (cells with a release): " + "; ".join(
                  f"{key} {sum(0.5 <= v[2][key] <= 2 for v in within if key in v[2])} of "
                  f"{sum(key in v[2] for v in within)}" for key in ("overlap", "npmi", "contrast")) + ".",
              "Ratios forecast / measured: " + "; ".join(
                  f"{m} eps {e:g} n {n}: " + ", ".join(f"{k} {x:.2f}" for k, x in v[2].items())
                  for v in within for (m, e, n) in [v[3]])]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("release", "table"))
    ap.add_argument("--cache", default=str(Path(__file__).resolve().parents[2] / "docs" / "results"
                                           / "scale_curve.jsonl"))
    ap.add_argument("--workdir", default="/tmp/scale_curve")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    ap.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS))
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--lda-seeds", type=int, default=3)
    ap.add_argument("--words-per-user", type=int, default=None,
                    help="release: the DP vocabulary's words per user (default: the cap public facts give)")
    ap.add_argument("--salt", default="scale", help="the hash of the user ids that splits and orders the bloggers")
    ap.add_argument("--lda-cache", default=None,
                    help="table: the owner's LDA fits (default: the cache's name with .lda.json)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--replan", action="store_true",
                    help="table: the decision and forecast of this checkout's plan, not the cached ones")
    args = ap.parse_args(argv)
    if not available(nearest(BLOGS), nearest(BLOGS_MORE)):
        print("skipped: the blogs and blogs-more corpora are absent")
        return 0
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    return run_releases(args) if args.step == "release" else make_table(args)


if __name__ == "__main__":
    sys.exit(main())
