"""A picture of a release (:func:`plot_release`, ``topicdp privatize --plot``): each topic's top words as bars of their
released probabilities, post-processing; with ``show_nonprivate=True`` the non-private top words beside them, for the
owner only, as its caption says. Needs matplotlib (the ``plots`` extra); built without ``pyplot`` (no global state).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ._extras import require
from ._files import atomic_path
from ._validation import check_int

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .private_release import PrivateRelease

#: caption of every picture that shows the non-private topics
NONPRIVATE_CAPTION = ("Shows NON-PRIVATE data: the topics before noise (right panels). For the data owner "
                      "only; do not publish this picture.")


def plot_release(release: PrivateRelease, path: Any = None, *, n_words: int = 10, show_nonprivate: bool = False,
                 n_cols: int | None = None, title: str | None = None, dpi: int = 110, overwrite: bool = True) -> Figure:
    """Draw each topic of ``release`` as a horizontal bar chart of its top words' released probabilities.

    ``path``: the picture's file (format by suffix; atomically; mode 0600 with ``show_nonprivate``; an existing one
    ``FileExistsError`` unless ``overwrite``). ``show_nonprivate``: the same row of ``release.nonprivate``
    (``keep_nonprivate=True``) beside each topic, words of both lists in full colour. ``n_cols``: topics per row
    (default up to 5, or 3 pairs). ``title``: default the report's mechanism, guarantee, epsilon, delta and unit.
    """
    require("matplotlib", extra="plots", purpose="plot_release")
    from matplotlib.figure import Figure

    check_int(n_words, "n_words", low=1)
    if show_nonprivate and release.nonprivate is None:
        raise ValueError("show_nonprivate=True needs the non-private matrix: fit(..., keep_nonprivate=True)")
    released = release.top_words(n_words)
    private = release.nonprivate_top_words(n_words) if show_nonprivate else None
    k = release.n_topics
    per_topic = 2 if show_nonprivate else 1
    n_cols = min(k, 3 if show_nonprivate else 5) if n_cols is None else check_int(n_cols, "n_cols", low=1)
    n_rows = math.ceil(k / n_cols)
    panel_w, panel_h = 2.4, 0.6 + 0.2 * n_words
    fig = Figure(figsize=(panel_w * n_cols * per_topic, panel_h * n_rows + 0.6))
    axes = fig.subplots(n_rows, n_cols * per_topic, squeeze=False)
    for ax in axes.flat[k * per_topic:]:
        ax.set_visible(False)
    for i in range(k):
        row, col = divmod(i, n_cols)
        if private is None:
            _bars(axes[row, col], released[i], f"topic {i}", "tab:blue", None)
            continue
        shared = {w for w, _ in released[i]} & {w for w, _ in private[i]}
        _bars(axes[row, 2 * col], released[i], f"topic {i}: released", "tab:blue", shared)
        _bars(axes[row, 2 * col + 1], private[i], f"NON-PRIVATE ({len(shared)}/{n_words} shared)", "tab:orange",
              shared)
    fig.suptitle(title if title is not None else _default_title(release), fontsize=10)
    bottom = 0.0
    if show_nonprivate:
        fig.text(0.5, 0.005, NONPRIVATE_CAPTION, ha="center", va="bottom", fontsize=9, color="tab:red")
        bottom = 0.4 / fig.get_figheight()
    fig.tight_layout(rect=(0.0, bottom, 1.0, 1.0 - 0.3 / fig.get_figheight()))
    if path is not None:  # atomically (atomic_path keeps the suffix that picks the format); non-private: 0600
        with atomic_path(path, private=show_nonprivate, overwrite=overwrite) as tmp:
            fig.savefig(tmp, dpi=dpi)
    return fig


def _bars(ax, words: list[tuple[str, float]], title: str, colour: str, shared: set | None) -> None:
    labels = [w for w, _ in words]
    values = [p for _, p in words]
    alphas = [1.0 if shared is None or w in shared else 0.35 for w in labels]
    bars = ax.barh(range(len(words)), values, color=colour)
    for bar, alpha in zip(bars, alphas):
        bar.set_alpha(alpha)
    ax.set_yticks(range(len(words)), labels, fontsize=8)
    ax.invert_yaxis()  # the heaviest word on top
    ax.tick_params(axis="x", labelsize=7)
    ax.set_title(title, fontsize=8)


def _default_title(release: PrivateRelease) -> str:
    r = release.report
    guarantee = {"approx-DP": "DP", "random-DP": "random DP (NOT DP)", "none": "NO formal guarantee"}.get(r.guarantee, r.guarantee)
    delta = f", delta={r.delta:.2g}" if r.delta else ""
    return f"{r.mechanism}: {guarantee}, epsilon={r.epsilon:g}{delta}, per {r.unit}"
