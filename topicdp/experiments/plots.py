"""Figures of a comparison: metric vs a swept parameter, one line per mechanism, error bars over repeats."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from .._extras import require
from .._files import atomic_path

#: panel -> (x field, metrics to plot, x label)
PANELS = {
    "eps": ("epsilon", ("l1", "rmse", "kendall"), "epsilon"),
    "gamma": ("gamma", ("l1", "rmse", "kendall"), "gamma"),
    "size": ("n_topics", ("l1", "rmse", "kendall"), "matrix size m = n"),
    "spectral": ("epsilon", ("recovery_error", "perplexity"), "epsilon"),
}


def plot_all(rows: list[dict], out_dir) -> list[Path]:
    """One PNG per (panel, corpus, model, metric) present in ``rows``; returns the files written."""
    require("matplotlib", extra="plots", purpose="plot_all")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    groups = defaultdict(list)
    for r in rows:
        if r["panel"] in PANELS:
            groups[(r["panel"], r["corpus"], r["model"], r["metric"])].append(r)
    written = []
    for (panel, corpus, model, metric), group in sorted(groups.items()):
        x_field, wanted, x_label = PANELS[panel]
        if metric not in wanted:
            continue
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for mech, xs, mean, sd in _series(group, x_field):
            ax.errorbar(xs, mean, yerr=sd, marker="o", capsize=3, label=mech)
        ax.set_xlabel(x_label)
        ax.set_ylabel(metric)
        if metric in ("l1", "rmse", "l1_full", "rmse_full", "recovery_error", "perplexity"):
            ax.set_yscale("log")
        ax.set_title(f"{corpus} / {model}: {metric} vs {x_label}", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out_dir / f"{panel}_{corpus}_{model}_{metric}.png".replace("/", "-")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def _series(group, x_field):
    by_mech = defaultdict(lambda: defaultdict(list))
    for r in group:
        value = float(r["value"])
        if np.isfinite(value):
            by_mech[r["mechanism"]][float(r[x_field])].append(value)
    for mech, points in sorted(by_mech.items()):
        xs = sorted(points)
        yield mech, xs, [np.mean(points[x]) for x in xs], [np.std(points[x]) for x in xs]
