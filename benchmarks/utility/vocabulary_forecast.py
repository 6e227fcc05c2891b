"""How well the DP vocabulary's size is forecast before the selection runs.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/vocabulary_forecast.py [--data ../shared/data] [--out FILE.md]

For each corpus, 10% of the users (a hash of the user id, ``heldout_user_mask(seed=3)``) stand in for a
public reference corpus and the other 90% for the private one. ``topicdp.vocabulary.forecast_vocabulary``
predicts from the reference alone (scaled to the private number of units) how many words
``select_vocabulary`` will keep; the selection then runs on the private part (the mechanism's own
``unit_word_sets`` / ``_select``, 3 noise seeds, mean). Replace-one neighbours, k = 300 words per unit,
delta = 5e-7 (half of the CLI's default 1e-6, as ``privatize`` spends it), epsilon in {0.3, 0.6, 1, 3}
(0.6 is what ``privatize --epsilon 3`` gives the vocabulary). Skips when the data is absent.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from topicdp.corpus import read_jsonl_records
from topicdp.metrics.readability import heldout_user_mask
from topicdp.vocabulary import _select, _word_totals, calibrate_selection, forecast_vocabulary, unit_word_sets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
EPSILONS, DELTA, K = (0.3, 0.6, 1.0, 3.0), 5e-7, 300


def split(path: Path):
    records = list(read_jsonl_records(path))
    ids = list(dict.fromkeys(u for _, u in records))
    public = dict(zip(ids, heldout_user_mask(ids, 0.1, seed=3)))
    ref = [(t, u) for t, u in records if public[u]]
    private = [(t, u) for t, u in records if not public[u]]
    return [t for t, _ in ref], [u for _, u in ref], [t for t, _ in private], [u for _, u in private]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", default=None, help="also write the table (markdown) here")
    args = ap.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent")
        return 0
    lines = ["| corpus | unit | private units | eps | units a word needs | forecast words | selected words "
             "(mean of 3) | forecast / selected |", "|---|---|---|---|---|---|---|---|"]
    for name in ("blogs", "enron_sent"):
        path = args.data / name / f"{name}.jsonl.gz"
        if not path.exists():
            continue
        start = time.perf_counter()
        ref_texts, ref_users, texts, users = split(path)
        for unit in ("user", "document"):
            sets = unit_word_sets(texts, users, unit=unit, max_words_per_unit=K)
            totals = _word_totals(sets)
            for eps in EPSILONS:
                fc = forecast_vocabulary(eps, DELTA, len(sets), unit=unit, max_words_per_unit=K,
                                         reference_texts=ref_texts, reference_users=ref_users)
                sigma, tau = calibrate_selection(eps, DELTA, K)
                kept = np.mean([len(_select(totals, sigma, tau, None, np.random.default_rng(s))) for s in range(3)])
                ratio = f"{fc.expected_words / kept:.2f}" if kept else ("both 0" if fc.expected_words < 0.5 else "inf")
                lines.append(f"| {name} | {unit} | {len(sets):,} | {eps:g} | {fc.units_per_word:,.0f} | "
                             f"{fc.expected_words:,.0f} | {kept:,.0f} | {ratio} |")
                print(lines[-1], flush=True)
        print(f"({name}: {time.perf_counter() - start:.0f} s)", flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
