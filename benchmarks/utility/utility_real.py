"""What each rigorous mechanism releases on real text: readability next to its guarantee.

For a corpus in ``../shared/data`` (``blogs`` or ``enron_sent``): users split 80/20 by a hash of their id
(:func:`topicdp.metrics.heldout_user_mask`); the training users keep at most 20 documents each (a per-user
function, :meth:`topicdp.Corpus.bound`); K = 10 topics over a 2,000-word vocabulary. For each unit
(document, user) and epsilon in {1, 3, 10} (delta = 1e-6) it releases topics with

* ``dp-vem`` -- :class:`topicdp.variational.DPVariationalEM` (T = 5), and
* ``spectral-config-1`` -- :class:`topicdp.spectral.DPSpectralMoments` configuration 1 (when ``--spectral``),

and measures, on the held-out users, the held-out NPMI, the NPMI contrast, the topic diversity and the
matched top-10 overlap with non-private gensim LDA fit on the same training documents
(:func:`topicdp.metrics.readability`), next to the forecast made before the fit
(:func:`topicdp.forecast.forecast`). ``--vocabulary dp`` selects the vocabulary under DP at the unit
(:func:`topicdp.vocabulary.select_vocabulary`) out of the same total budget (exact GDP split); the default
``nonprivate`` takes the 2,000 most frequent training words, which is *not* covered by the guarantee and
isolates the topic mechanism.

Run (about 20-40 minutes on 2 idle cores for blogs)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/utility_real.py --corpus blogs --out docs/results/utility_blogs
    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/utility_real.py --corpus enron_sent --out docs/results/utility_enron

Writes ``results.jsonl`` (one line per cell, resumable) and ``table.md`` in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED  # noqa: E402

from topicdp import Corpus  # noqa: E402
from topicdp.corpus import read_jsonl_records  # noqa: E402
from topicdp.metrics.readability import heldout_user_mask, readability  # noqa: E402
from topicdp.variational import DPVariationalEM  # noqa: E402
from topicdp.forecast import forecast, public_init

K, V, MAX_DOCS, DELTA = 10, 2000, 20, 1e-6
#: The forecast predicts the overlap with the mechanism's own noiseless output; against *another* model's topics
#: it is scaled by how well two non-private fits agree: 0.55 for two seeds of gensim LDA on blog text (
#: docs/results/readability_reference.md). A public constant, not a measurement on the private data.
AGREEMENT = 0.55


def load(corpus: str, data: Path, vocabulary: str, epsilon_vocab: float | None, unit: str):
    path = data / corpus / f"{corpus}.jsonl.gz"
    records = list(read_jsonl_records(path))
    texts = [t for t, _ in records]
    users = [u for _, u in records]
    held = dict(zip(dict.fromkeys(users), heldout_user_mask(list(dict.fromkeys(users)), 0.2, seed=0)))
    public_half = dict(zip(dict.fromkeys(users), heldout_user_mask(list(dict.fromkeys(users)), 0.5, seed=1)))
    train = [i for i, u in enumerate(users) if not held[u]]
    test = [i for i, u in enumerate(users) if held[u] and not public_half[u]]
    public = [i for i, u in enumerate(users) if held[u] and public_half[u]]
    train_texts, train_users = [texts[i] for i in train], [users[i] for i in train]
    vocab_info = {"kind": "non-private: the 2,000 most frequent training words (min_df=5, max_df=0.5); NOT covered"}
    if vocabulary == "dp":
        from topicdp.vocabulary import select_vocabulary

        selection = select_vocabulary(train_texts, train_users, epsilon=epsilon_vocab, delta=DELTA / 2, unit=unit,
                                      neighbours="add-remove", max_features=V)
        vocab_info = {"kind": "DP", **selection.to_dict()}
        full = Corpus.from_texts(train_texts, train_users, vocabulary=selection.words)
    else:
        full = Corpus.from_texts(train_texts, train_users, min_df=5, max_df=0.5, max_features=V)
    train_corpus = full.bound(max_docs_per_user=MAX_DOCS, random_state=0)
    heldout = Corpus.from_texts([texts[i] for i in test], [users[i] for i in test], vocabulary=full.vocabulary)
    reference = Corpus.from_texts([texts[i] for i in public], [users[i] for i in public],
                                  vocabulary=full.vocabulary).bound(max_docs_per_user=MAX_DOCS, random_state=0)
    return train_corpus, heldout, reference, vocab_info


def gensim_reference(corpus: Corpus, seed: int = 0) -> np.ndarray:
    from gensim.models import LdaModel

    dictionary, bow = corpus.to_gensim()
    return LdaModel(bow, num_topics=K, id2word=dictionary, passes=5, iterations=50, random_state=seed,
                    chunksize=2000).get_topics()


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """--corpus, --data, --out and --epsilons, shared by the utility benchmarks."""
    p.add_argument("--corpus", default="blogs", choices=("blogs", "enron_sent"))
    p.add_argument("--data", default=str(SHARED))
    p.add_argument("--out", required=True)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0, 10.0])


def data_and_out(args) -> tuple[Path, Path] | None:
    """The data folder and the (created) output folder; None, after saying so, when the corpus is absent."""
    data = Path(args.data)
    if not (data / args.corpus).exists():
        print(f"skipped: {data / args.corpus} not found")
        return None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return data, out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(p)
    p.add_argument("--units", nargs="+", default=["document", "user"])
    p.add_argument("--inits", nargs="+", default=["random", "public"], help="random start, or from the public half")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--vocabulary", choices=("nonprivate", "dp"), default="nonprivate")
    p.add_argument("--vocabulary-share", type=float, default=0.2,
                   help="share of epsilon spent on the vocabulary with --vocabulary dp (and delta/2; basic composition)")
    p.add_argument("--spectral", action="store_true", help="also spectral configuration 1")
    args = p.parse_args(argv)
    paths = data_and_out(args)
    if paths is None:
        return 0
    data, out = paths
    results_path = out / "results.jsonl"
    done = set()
    if results_path.exists():
        done = {_key(r) for r in map(json.loads, results_path.open())}
    dp_vocab = args.vocabulary == "dp"
    for unit in args.units:
        cache: dict = {}
        for eps in args.epsilons:
            cells = [(mech, init, seed) for mech, init in [("dp-vem", i) for i in args.inits]
                     + ([("spectral-config-1", "-")] if args.spectral else []) for seed in args.seeds]
            todo = [c for c in cells if (c[0], unit, eps, args.vocabulary, c[1], c[2]) not in done]
            if not todo:
                continue
            vocab_key = eps if dp_vocab else None
            if vocab_key not in cache:
                t0 = time.perf_counter()
                train, heldout, public, vocab_info = load(args.corpus, data, args.vocabulary,
                                                          args.vocabulary_share * eps if dp_vocab else None, unit)
                reference = gensim_reference(train)
                ref_scores = readability(reference, train.vocabulary, heldout)
                init = public_init(public, K, unit=unit)
                init_scores = readability(init, train.vocabulary, heldout, reference=reference)
                print(f"[{unit}] {train}; public half {public}; held-out {heldout.n_docs} docs; "
                      f"{time.perf_counter() - t0:.0f} s. gensim: npmi {ref_scores['npmi']:.3f} contrast "
                      f"{ref_scores['npmi_contrast']:.3f}; public start alone: npmi {init_scores['npmi']:.3f} "
                      f"contrast {init_scores['npmi_contrast']:.3f} overlap {init_scores['overlap']:.2f}", flush=True)
                cache = {vocab_key: (train, heldout, public, vocab_info, reference, ref_scores, init, init_scores)}
            train, heldout, public, vocab_info, reference, ref_scores, init, init_scores = cache[vocab_key]
            for mech, init_kind, seed in todo:
                t0 = time.perf_counter()
                extra: dict = {"vocabulary_info": vocab_info, "public_start": {k: init_scores[k] for k in ("npmi", "npmi_contrast", "diversity", "overlap")}}
                if mech == "dp-vem":
                    model = DPVariationalEM(K, epsilon=eps * (1 - args.vocabulary_share) if dp_vocab else eps,
                                             delta=DELTA / 2 if dp_vocab else DELTA, unit=unit,
                                             n_iterations=2 if init_kind == "public" else 5,
                                             init=init if init_kind == "public" else None, random_state=seed)
                    n_units = train.n_users if unit == "user" else train.n_docs
                    predicted = forecast(model, n_units=n_units, n_words=train.n_words,
                                         signal=init if init_kind == "public" else None)
                    model.fit(train)
                    W = model.topic_word_
                    extra.update(sigma=model.sigma_, forecast=predicted.as_dict(), iterations=model.n_iterations)
                else:
                    from topicdp.spectral import DPSpectralMoments

                    try:
                        W = DPSpectralMoments(n_topics=K, alpha0=1.0, configuration=1, epsilon=eps, delta=DELTA, unit=unit,
                                       random_state=seed).fit(train).topic_word_
                    except Exception as exc:  # a refused precondition is a result
                        W, extra["note"] = None, f"{type(exc).__name__}: {exc}"
                row = _row(mech, unit, eps, args.vocabulary, W, train, heldout, reference, ref_scores,
                           time.perf_counter() - t0, init=init_kind, seed=seed, **extra)
                _append(results_path, row)
    write_table(results_path, out / "table.md", args.corpus)
    return 0


def _key(r: dict) -> tuple:
    return (r["mechanism"], r["unit"], r["epsilon"], r["vocabulary"], r.get("init", "random"), r.get("seed", 0))


def _row(mechanism, unit, eps, vocabulary, W, train, heldout, reference, ref_scores, seconds, **extra) -> dict:
    row = {"mechanism": mechanism, "unit": unit, "epsilon": eps, "delta": DELTA, "vocabulary": vocabulary,
           "n_users": train.n_users, "n_docs": train.n_docs, "seconds": round(seconds, 1),
           "reference": {k: ref_scores[k] for k in ("npmi", "npmi_contrast", "diversity")}, **extra}
    if W is not None:
        scores = readability(W, train.vocabulary, heldout, reference=reference)
        row.update({k: scores[k] for k in ("npmi", "npmi_contrast", "diversity", "overlap")})
        row["top_words"] = scores["per_topic"]["top_words"]
        print(f"  {mechanism:<18} {unit:<8} eps={eps:<4g} npmi {scores['npmi']:.3f} contrast {scores['npmi_contrast']:.3f} "
              f"diversity {scores['diversity']:.2f} overlap {scores['overlap']:.2f} ({seconds:.0f} s)", flush=True)
    return row


def _append(path: Path, row: dict) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(row, default=float) + "\n")


def write_table(results_path: Path, table_path: Path, corpus: str) -> None:
    rows = [json.loads(line) for line in results_path.open()]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["mechanism"], r["unit"], r["vocabulary"], r.get("init", "random"), r["epsilon"]), []).append(r)
    lines = [f"# Readability of rigorous DP releases on `{corpus}` (K={K}, V<={V}, delta={DELTA:g}, <= {MAX_DOCS} docs per user)",
             "",
             "Medians over noise/start seeds (min-max in brackets). Ratios are against non-private gensim LDA on the same "
             "training documents, measured on held-out users; overlap is the matched top-10 overlap with it (0 random, 1 "
             "identical). Forecast: the expected top-10 overlap predicted from public quantities before the fit "
             f"(topicdp.forecast.forecast), times {AGREEMENT} for the agreement of two non-private fits; "
             "the sharper forecast by simulation on the public reference, against these measurements, is in "
             "docs/results/forecast_validation.md. "
             "init=public starts from topics fitted on the public half of the held-out users (public data), and is "
             "evaluated like every row on the other half.",
             "",
             "| mechanism | unit | vocabulary | start | eps | NPMI (x gensim) | contrast (x gensim) | diversity | overlap | forecast | s/fit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (mech, unit, vocab, init, eps), rs in sorted(groups.items()):
        ok = [r for r in rs if "npmi" in r]
        if not ok:
            lines.append(f"| {mech} | {unit} | {vocab} | {init} | {eps:g} | refused: {rs[0].get('note', '')[:90]} | | | | | |")
            continue
        ref = ok[0]["reference"]

        def med(key, scale=None):
            v = np.array([r[key] for r in ok], dtype=float)
            txt = f"{np.median(v):.3f}" if len(v) == 1 else f"{np.median(v):.3f} [{v.min():.3f}, {v.max():.3f}]"
            if scale is None:
                return txt
            return txt + (f" ({np.median(v) / scale:.2f}x)" if scale > 0.02 else " (ratio n/a: gensim <= 0.02)")
        fc = [AGREEMENT * r["forecast"]["expected_overlap"] for r in ok if r.get("forecast")]
        forecast_cell = f"{np.median(fc):.2f}" if fc else ""
        lines.append(f"| {mech} | {unit} | {vocab} | {init} | {eps:g} | {med('npmi', ref['npmi'])} | "
                     f"{med('npmi_contrast', ref['npmi_contrast'])} | {med('diversity')} | {med('overlap')} | "
                     f"{forecast_cell} | {np.median([r['seconds'] for r in ok]):.0f} |")
    table_path.write_text("\n".join(lines) + "\n")
    plot(groups, table_path.with_name("overlap.png"), corpus)


def plot(groups: dict, path: Path, corpus: str) -> None:
    """Overlap with non-private gensim LDA against epsilon, one panel per unit (median, min-max bars)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install '.[plots]'): no plot")
        return
    units = sorted({key[1] for key in groups})
    fig, axes = plt.subplots(1, len(units), figsize=(5 * len(units), 3.6), sharey=True, squeeze=False)
    for ax, unit in zip(axes[0], units):
        series: dict = {}
        for (mech, u, vocab, init, eps), rs in groups.items():
            ok = [r["overlap"] for r in rs if "overlap" in r]
            if u == unit and ok:
                series.setdefault(f"{mech}, {init} start, {vocab} vocabulary", []).append((eps, np.median(ok), min(ok), max(ok)))
        for label, pts in sorted(series.items()):
            pts.sort()
            e, m, lo, hi = map(np.array, zip(*pts))
            ax.errorbar(e, m, yerr=[m - lo, hi - m], marker="o", capsize=3, label=label)
        ax.axhline(0.55, color="grey", ls=":", label="two non-private gensim seeds (0.55)")
        ax.axhline({"document": 0.25, "user": 0.15}.get(unit, 0.2), color="red", ls="--", label="target")
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (delta = 1e-6)")
        ax.set_title(f"{corpus}: {unit} level")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("top-10 overlap with non-private gensim LDA")
    axes[0][-1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
