"""Claimed epsilon vs audited epsilon_lower on the Enron corpus, for three mechanisms under three canaries.

    OPENBLAS_NUM_THREADS=1 python benchmarks/privacy/audit_real.py [--trials 100000] [--spectral-budget 600]
        [--epsilon 1] [--delta 1e-5] [--gamma 0.22] [--n-jobs 1] [--only global,sampled,sampled-public,spectral]
        [--out-json audit_real.json] [--out-md audit_real.md] [--cache-dir DIR]
    python benchmarks/privacy/audit_real.py --from-json a.json[,b.json...] --out-md x.md [--out-json x.json]  # merge

Mechanisms (see topicdp/audit/setups.py and docs/auditing.md):
  (a) topicdp-global          Gaussian output perturbation, provable global sensitivity sqrt(2K)  [approx-DP]
  (b) spectral-1              DPSpectralMoments configuration 1, document level, rerun end to end per trial [approx-DP]
  (c) topicdp-sampled         TopicDP, sampled sensitivity, P = resample the private corpus (TopicDP's default):
                              sigma(D) and sigma(D') each sampled on their own dataset           [random DP]
  (c') topicdp-sampled-public same, P = a disjoint public reference of other Enron users: one sigma [random DP]
  spectral-power              (b) at epsilon = 1e6 (near noiseless), 60 trials: can the audit see the canary at all?
each under the typical-user, outlier-user and long-document canaries (replace-one neighbours), with the
projection and canary-word distinguishers (and, for (c), the noise-scale distinguisher, which reads the
variance of the release). Output perturbation re-draws only the noise (--trials per side); spectral reruns as
many trials as fit in --spectral-budget seconds (measured per run, split evenly over canaries and sides;
both distinguishers score the same releases). eps_lower uses the auditor's default held-out selection (test
chosen on half the trials, bounded on the other half: an exact 95% statement); the same scores are also
bounded with the exploratory same-sample selection (no confidence statement), for comparison with earlier
tables. Needs ../shared/data/enron_sent (skips otherwise). Prints scores, counts and epsilons only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from topicdp.audit import audit_output_perturbation, audit_pipeline, epsilon_bound, make_distinguisher
from topicdp.audit.setups import (
    SetupOptions,
    topicdp_global_setup,
    topicdp_sampled_setup,
    spectral1_setup,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import ENRON as PATH  # noqa: E402

CANARIES = ("typical", "outlier", "long-document")
MECHANISMS = ("global", "sampled", "sampled-public", "spectral", "spectral-power")
POWER_EPSILON = 1e6


@dataclass
class NoiseScaleDistinguisher:
    """Score = mean squared residual ``||M - f(D)||_F^2 / (K V)``, an estimate of the noise variance.

    A sigma computed from the private data is released along with the matrix: with K x V i.i.d. entries the
    variance is estimated to about ``sqrt(2/(K V))``, enough to separate sigma(D) from sigma(D'). Not a named
    distinguisher of the library: this benchmark passes it to the runners.
    """

    W_out: np.ndarray
    name: str = "noise-scale"

    def __post_init__(self) -> None:
        self.W_out = np.asarray(self.W_out, dtype=np.float64)

    def score(self, releases: np.ndarray) -> np.ndarray:
        R = np.asarray(releases, dtype=np.float64).reshape(len(releases), -1) - self.W_out.ravel()
        return np.einsum("ij,ij->i", R, R) / R.shape[1]


class MemoRelease:
    """Caches a pipeline's releases by (dataset, rng state): a second distinguisher re-scores the same trials."""

    def __init__(self, release):
        self.release = release
        self.cache: dict = {}

    def __call__(self, data, rng):
        key = (id(data), json.dumps(rng.bit_generator.state, sort_keys=True, default=str))
        if key not in self.cache:
            self.cache[key] = self.release(data, rng)
        return self.cache[key]


class Recording:
    """Wraps a distinguisher and keeps its scores: the runners score D's releases first, then D''s."""

    def __init__(self, inner):
        self.inner, self.name, self.scores = inner, getattr(inner, "name", type(inner).__name__), []

    def score(self, releases):
        s = self.inner.score(releases)
        self.scores.append(s)
        return s

    def same_sample(self, n_trials: int, delta: float):
        """The exploratory same-sample bound of the recorded scores (no confidence statement)."""
        all_scores = np.concatenate(self.scores)
        return epsilon_bound(all_scores[:n_trials], all_scores[n_trials:], delta, selection="same-sample")


def options(args, canary: str, **changes) -> SetupOptions:
    """The setup options of this benchmark: the library's defaults except what the flags set."""
    values = dict(
        corpus=str(args.corpus), n_users=args.n_users, max_docs_per_user=args.max_docs_per_user,
        max_tokens_per_doc=args.max_tokens_per_doc, max_features=args.max_features, n_topics=args.n_topics,
        gamma=args.gamma, n_pairs=args.n_pairs, cache_dir=args.cache_dir, canary=canary, epsilon=args.epsilon,
        delta=args.delta, n_jobs=args.n_jobs,
    )
    return SetupOptions(**{**values, **changes})


def row_of(result, setup, label: str, seconds: float, same_sample) -> dict:
    d = setup.details
    return {
        "mechanism": label,
        "canary": result.canary,
        "distinguisher": result.distinguisher,
        "epsilon": result.epsilon,
        "delta": result.delta,
        "eps_lower": result.eps_lower,
        "confidence": result.confidence,
        "selection": result.selection,
        "eps_lower_same_sample": same_sample.eps_lower,
        "flagged": result.flagged,
        "flagged_same_sample": same_sample.eps_lower > result.epsilon,
        "n_trials": result.n_trials,
        "fpr": result.bound.fpr, "fnr": result.bound.fnr, "fpr_hi": result.bound.fpr_hi, "fnr_hi": result.bound.fnr_hi,
        "sensitivity_claimed": d.get("sensitivity_claimed"),
        "delta_s_out": d.get("delta_s_out"),
        "delta_s_in": d.get("delta_s_in"),
        "distance": d.get("distance"),
        "covered": d.get("covered"),
        "sigma_out": d.get("sigma_out"),
        "sigma_in": d.get("sigma_in"),
        "true_epsilon_this_pair": d.get("true_epsilon_this_pair"),
        "seconds": seconds,
        "setup": {k: v for k, v in d.items() if k not in ("sensitivity_sample_out", "sensitivity_sample_in")},
    }


def audit_output(setup, label, args, distinguishers, seed) -> list[dict]:
    rows = []
    for dist in distinguishers:
        obj = NoiseScaleDistinguisher(setup.W_out) if dist == "noise-scale" else make_distinguisher(
            dist, W_out=setup.W_out, W_in=setup.W_in, canary_words=setup.canary.canary_words,
            canary_weights=setup.canary.canary_weights)
        rec = Recording(obj)
        t = time.perf_counter()
        res = audit_output_perturbation(setup.W_out, setup.W_in, setup.noise, n_trials=args.trials, distinguisher=rec,
                                        epsilon=setup.epsilon, delta=setup.delta, confidence=0.95, random_state=seed,
                                        mechanism=setup.mechanism, canary=setup.canary.name)
        rows.append(row_of(res, setup, label, time.perf_counter() - t, rec.same_sample(args.trials, setup.delta)))
        print(json.dumps({k: rows[-1][k] for k in ("mechanism", "canary", "distinguisher", "eps_lower",
                                                   "eps_lower_same_sample", "flagged", "distance",
                                                   "sensitivity_claimed", "sigma_out", "sigma_in", "seconds")}),
              flush=True)
    return rows


def spectral_rows(args, seed, power: bool = False) -> tuple[list[dict], dict]:
    """Spectral configuration 1; ``power=True``: the power check at epsilon = 1e6 (near noiseless), 60 trials.

    The power check asks whether these distinguishers could see the canary at all through the pipeline's
    own randomness (solver starts, power-method restarts): if not even a near-noiseless run is flagged, a
    "not flagged" at epsilon = 1 carries little information.
    """
    extra = {"epsilon": POWER_EPSILON} if power else {}
    setups = {c: spectral1_setup(options(args, c, **extra)) for c in CANARIES}
    t = time.perf_counter()
    n_timing = 3
    for c, s in setups.items():
        for i in range(n_timing):
            s.release(s.D_out, np.random.default_rng(1000 + i))
    per_run = (time.perf_counter() - t) / (n_timing * len(setups))
    if power:
        trials = 60
    else:
        trials = args.spectral_trials or max(20, int(args.spectral_budget / (per_run * 2 * len(setups))))
    info = {"seconds_per_run": per_run, "trials_per_side": trials,
            "budget_seconds": None if (power or args.spectral_trials) else args.spectral_budget}
    print(json.dumps({"spectral-power" if power else "spectral": info}), flush=True)
    label = f"(b) spectral config. 1, power check eps={POWER_EPSILON:g}" if power else "(b) spectral configuration 1"
    rows = []
    for c, s in setups.items():
        memo = MemoRelease(s.release)
        for dist in ("projection", "canary-words"):
            rec = Recording(make_distinguisher(dist, W_out=s.reference[0], W_in=s.reference[1],
                                               canary_words=s.canary.canary_words,
                                               canary_weights=s.canary.canary_weights))
            t = time.perf_counter()
            res = audit_pipeline(memo, s.D_out, s.D_in, distinguisher=rec, n_trials=trials, epsilon=s.epsilon,
                                 delta=s.delta, confidence=0.95, n_jobs=1, mechanism=s.mechanism, canary=c,
                                 random_state=seed)
            rows.append(row_of(res, s, label, time.perf_counter() - t, rec.same_sample(trials, s.delta)))
            print(json.dumps({k: rows[-1][k] for k in ("canary", "distinguisher", "eps_lower", "flagged", "seconds")}),
                  flush=True)
    return rows, info


def fmt(x, spec=".3g"):
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return format(x, spec)


def verdict(r) -> str:
    return "**yes**" if r["flagged"] else "no"


def markdown(rows, meta) -> str:
    lines = [
        "# Privacy audit on the Enron corpus: claimed epsilon vs audited epsilon_lower",
        "",
        f"Corpus: {meta['corpus']}",
        f"Model for (a), (c): gensim LDA, K={meta['n_topics']}; (b): spectral LDA, k={meta['n_topics']}, alpha0=1, "
        "document level. Neighbours: replace-one.",
        f"Claim: epsilon={meta['epsilon']:g}, delta={meta['delta']:g} (spectral: its report's epsilon); "
        f"(c) gamma={meta['gamma']:g}, h={meta['h']}.",
        f"Trials per side: output perturbation {meta['trials']}; spectral {meta['spectral']['trials_per_side']} "
        f"(~{meta['spectral']['seconds_per_run']:.2f} s a run, "
        + (f"budget {meta['spectral']['budget_seconds']:g} s)" if meta['spectral'].get('budget_seconds')
           else "fixed with --spectral-trials)")
        if meta.get("spectral") else f"Trials per side: output perturbation {meta['trials']}.",
        "eps_lower: Clopper-Pearson, 95% confidence, held-out selection (the auditor's default: the test is "
        "chosen on half the trials and bounded on the other half, an exact 95% statement); flagged = eps_lower > "
        "claimed eps. same-sample: the exploratory bound with the test chosen on all trials (no confidence "
        "statement; earlier versions of this table flagged on it).",
        "Delta: the claimed sensitivity (sqrt(2K) for (a); Delta_s(D) / Delta_s(D') for (c)); ||f(D)-f(D')||: the "
        "canary pair's actual Frobenius distance; eps(pair): the exact epsilon of the Gaussian mechanism on this "
        "pair at delta when sigma(D) = sigma(D').",
        "",
        "| mechanism | canary | distinguisher | claimed eps | eps_lower (held-out) | flagged | "
        "same-sample (exploratory) | Delta | "
        "‖f(D)−f(D')‖_F | covered | sigma(D) / sigma(D') | eps(pair) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["delta_s_out"] is not None:
            delta = f"{r['delta_s_out']:.3g} / {r['delta_s_in']:.3g}"
        else:
            delta = fmt(r["sensitivity_claimed"])
        sig = "–" if r["sigma_out"] is None else (
            f"{r['sigma_out']:.3g}" if r["sigma_out"] == r["sigma_in"] else f"{r['sigma_out']:.3g} / {r['sigma_in']:.3g}")
        lines.append(
            f"| {r['mechanism']} | {r['canary']} | {r['distinguisher']} | {r['epsilon']:.3g} | "
            f"{r['eps_lower']:.3f} | {verdict(r)} | {fmt(r['eps_lower_same_sample'], '.3f')} | "
            f"{delta} | {fmt(r['distance'])} | {fmt(r['covered'])} | {sig} | {fmt(r['true_epsilon_this_pair'])} |"
        )
    lines += ["", f"Wall time: {meta['wall_seconds'] / 60:.1f} min."]
    if meta.get("commands"):
        lines += ["", f"Made in {len(meta['commands'])} parts, merged with --from-json (the commands are in the JSON's "
                  "meta.commands). Wall times on a shared, loaded machine are not benchmarks."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(PATH))
    ap.add_argument("--n-users", type=int, default=SetupOptions.n_users)
    ap.add_argument("--max-docs-per-user", type=int, default=SetupOptions.max_docs_per_user)
    ap.add_argument("--max-tokens-per-doc", type=int, default=SetupOptions.max_tokens_per_doc)
    ap.add_argument("--max-features", type=int, default=SetupOptions.max_features)
    ap.add_argument("--n-topics", type=int, default=SetupOptions.n_topics)
    ap.add_argument("--epsilon", type=float, default=SetupOptions.epsilon)
    ap.add_argument("--delta", type=float, default=SetupOptions.delta)
    ap.add_argument("--gamma", type=float, default=SetupOptions.gamma)
    ap.add_argument("--n-pairs", type=int, default=None, help="override h (insecure below Thm. 1's h)")
    ap.add_argument("--trials", type=int, default=100_000, help="output perturbation trials per side")
    ap.add_argument("--spectral-budget", type=float, default=600.0, help="seconds for all spectral reruns")
    ap.add_argument("--spectral-trials", type=int, default=None, help="fix the spectral trials per side instead")
    ap.add_argument("--n-jobs", type=int, default=SetupOptions.n_jobs,
                    help="joblib workers of the sensitivity sampling")
    ap.add_argument("--only", default=",".join(MECHANISMS))
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out-json", default=None)
    ap.add_argument("--out-md", default=None)
    ap.add_argument("--from-json", default=None,
                    help="only re-render the markdown of earlier --out-json files (comma-separated: merged)")
    args = ap.parse_args()
    if args.from_json:
        saved = [json.loads(Path(p).read_text()) for p in args.from_json.split(",")]
        meta = {k: v for part in saved for k, v in part["meta"].items() if v is not None}
        sampled_h = [part["meta"]["h"] for part in saved if isinstance(part["meta"].get("h"), int)]
        meta["h"] = sampled_h[0] if sampled_h else "Thm. 1"
        meta["commands"] = [part["meta"].get("command") for part in saved]
        meta["wall_seconds"] = sum(part["meta"]["wall_seconds"] for part in saved)
        rows = [row for part in saved for row in part["rows"]]
        md = markdown(rows, meta)
        print(md)
        if args.out_md:
            Path(args.out_md).write_text(md)
        if args.out_json:
            Path(args.out_json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str))
        return 0
    if not Path(args.corpus).exists():
        print(f"skipped: {args.corpus} is absent (../shared/data/enron_sent)")
        return 0
    only = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = set(only) - set(MECHANISMS)
    if unknown:
        ap.error(f"--only: unknown {sorted(unknown)}; choose from {MECHANISMS}")
    start = time.perf_counter()
    rows: list[dict] = []
    meta: dict = {"epsilon": args.epsilon, "delta": args.delta, "gamma": args.gamma, "n_topics": args.n_topics,
                  "trials": args.trials, "h": args.n_pairs or "Thm. 1", "command": " ".join(sys.argv)}
    corpus_desc = None
    if "global" in only:
        for c in CANARIES:
            s = topicdp_global_setup(options(args, c))
            corpus_desc = s.details["corpus"]
            rows += audit_output(s, "(a) TopicDP global sqrt(2K)", args, ("projection", "canary-words"), args.seed)
    for variant in ("sampled", "sampled-public"):
        if variant not in only:
            continue
        dist = "private" if variant == "sampled" else "public"
        label = "(c) TopicDP sampled, P=private" if dist == "private" else "(c') TopicDP sampled, P=public ref."
        dists = ("projection", "canary-words", "noise-scale") if dist == "private" else ("projection", "canary-words")
        for c in CANARIES:
            t = time.perf_counter()
            s = topicdp_sampled_setup(options(args, c, distribution=dist))
            print(json.dumps({"setup": label, "canary": c, "seconds": time.perf_counter() - t,
                              "h": s.details["h"]}), flush=True)
            meta["h"] = s.details["h"]
            corpus_desc = s.details["corpus"]
            rows += audit_output(s, label, args, dists, args.seed)
    if "spectral" in only:
        spec_rows, meta["spectral"] = spectral_rows(args, args.seed)
        rows += spec_rows
        corpus_desc = corpus_desc or spec_rows[0]["setup"]["corpus"]
    if "spectral-power" in only:
        power_rows, meta["spectral_power"] = spectral_rows(args, args.seed, power=True)
        rows += power_rows
        corpus_desc = corpus_desc or power_rows[0]["setup"]["corpus"]
    meta["corpus"] = corpus_desc
    meta["wall_seconds"] = time.perf_counter() - start
    md = markdown(rows, meta)
    print(md)
    if args.out_md:
        Path(args.out_md).write_text(md)
    if args.out_json:
        Path(args.out_json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
