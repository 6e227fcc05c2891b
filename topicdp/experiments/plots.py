"""The comparison's figure: each road's private NPMI contrast over epsilon, with its interval (publishable: the
same DP values as ``table.md``)."""

from __future__ import annotations

from pathlib import Path

from .._extras import require
from .._files import atomic_path


def plot_all(rows: list[dict], out_dir) -> list[Path]:
    """``compare.png`` in ``out_dir`` from the published rows (those with a private evaluation); returns the files
    written (none when no row has one)."""
    require("matplotlib", extra="plots", purpose="plot_all")
    from matplotlib.figure import Figure  # no pyplot: no global state of the caller changed

    lines: dict[str, list] = {}
    several = len({r.get("unit") for r in rows}) > 1  # a line per road and unit
    for r in rows:
        e = r.get("evaluation")
        if e and e.get("mean_contrast") is not None:
            name = r["road"] + (f", {r['unit']} level" if several else "")
            lines.setdefault(name, []).append((r["epsilon"], e["mean_contrast"], e["mean_contrast_interval"]))
    if not lines:
        return []
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    for road, points in sorted(lines.items()):
        points.sort()
        x = [p[0] for p in points]
        y = [p[1] for p in points]
        low = [p[1] - (p[2][0] if p[2][0] is not None else p[1]) for p in points]
        high = [(p[2][1] if p[2][1] is not None else p[1]) - p[1] for p in points]
        ax.errorbar(x, y, yerr=[low, high], marker="o", capsize=3, label=road + (" (refused)" if any(
            road.startswith(r["road"]) and r["status"] == "refused" for r in rows) else ""))
    ax.set(xscale="log", xlabel="epsilon of the release", ylabel="private NPMI contrast (held-out)")
    ax.axhline(0.0, color="grey", lw=0.5)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(out_dir) / "compare.png"
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    return [path]
