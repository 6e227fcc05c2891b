"""The page of :mod:`topicdp.view`, built from a release's published dict (``PrivateRelease.to_dict()``): it reads
nothing of :mod:`topicdp.private_release`, so a release can show its view in a notebook without depending on the views.
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import json
import math
import os
from typing import Any, Mapping, Sequence

import numpy as np

from ._files import atomic_write
from ._validation import check_int, check_real
from .report import RANDOM_DP_CAVEAT, PrivacyReport
from .topics import top_indices

#: version of the JSON block embedded in the page
VIEW_FORMAT = "topicdp.view/1"
#: text the page shows when the release has no DP estimate of the topic sizes
EQUAL_SIZES = "sizes: not released; drawn equal"
#: the slider's initial lambda: 1 ranks by p(w|t), the words ``release.top_words()`` prints (a lower lambda
#: favours rare words, whose lift on a noisy release is mostly noise)
DEFAULT_LAMBDA = 1.0
#: the map's size in SVG user units (its viewBox) and the margin kept free at its edges
MAP_SIZE = 520.0
MAP_MARGIN = 14.0
#: the most a circle may overlap another, as a share of the smaller one's area (:func:`circle_layout`)
MAX_OVERLAP = 0.2


def js_distances(topic_word) -> np.ndarray:
    """Jensen-Shannon distances of the normalised rows of ``topic_word``: ``sqrt(KL(p || m) / 2 + KL(q || m) / 2)``,
    ``m = (p + q) / 2``, base-2 logs, a metric in [0, 1] (Endres & Schindelin 2003).

    >>> js_distances([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]).round(6).tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    P = _rows(topic_word, "topic_word")
    P = P / P.sum(axis=1, keepdims=True)
    K = P.shape[0]
    D = np.zeros((K, K))
    with np.errstate(divide="ignore", invalid="ignore"):
        logP = np.where(P > 0, np.log2(P), 0.0)
        for i in range(K):
            M = (P[i] + P) / 2.0  # (K, V): the midpoints of row i and every row
            logM = np.where(M > 0, np.log2(M), 0.0)
            kl_i = np.sum(np.where(P[i] > 0, P[i] * (logP[i] - logM), 0.0), axis=1)
            kl_j = np.sum(np.where(P > 0, P * (logP - logM), 0.0), axis=1)
            D[i] = np.sqrt(np.clip((kl_i + kl_j) / 2.0, 0.0, 1.0))
    D = (D + D.T) / 2.0  # exact symmetry despite rounding
    np.fill_diagonal(D, 0.0)
    return D


def classical_mds(distances, n_components: int = 2) -> np.ndarray:
    """Classical (Torgerson) multidimensional scaling, LDAvis' default layout: the leading eigenvectors of
    ``B = -J D^2 J / 2`` (``J = I - 11'/K``) times the roots of their eigenvalues (negative ones 0), each axis' largest
    entry positive (deterministic).

    >>> from scipy.spatial.distance import pdist
    >>> pdist(classical_mds([[0, 3, 4], [3, 0, 5], [4, 5, 0]])).round(6).tolist()
    [3.0, 4.0, 5.0]
    """
    n_components = check_int(n_components, "n_components", low=1)
    D = np.asarray(distances, dtype=float)
    if D.ndim != 2 or D.shape[0] != D.shape[1] or D.shape[0] < 1:
        raise ValueError(f"distances must be a square (K, K) matrix with K >= 1, got shape {D.shape}")
    if not np.all(np.isfinite(D)) or np.any(D < 0):
        raise ValueError("distances must be finite and non-negative")
    if not np.allclose(D, D.T, atol=1e-9) or not np.allclose(np.diag(D), 0.0, atol=1e-9):
        raise ValueError("distances must be symmetric with a zero diagonal")
    K = D.shape[0]
    J = np.eye(K) - 1.0 / K
    B = -0.5 * J @ (D ** 2) @ J
    eigenvalues, eigenvectors = np.linalg.eigh((B + B.T) / 2.0)
    order = top_indices(eigenvalues, n_components)
    values = np.clip(eigenvalues[order], 0.0, None)
    vectors = eigenvectors[:, order]
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])])
    X = vectors * np.where(signs == 0, 1.0, signs) * np.sqrt(values)
    out = np.zeros((K, n_components))
    out[:, :X.shape[1]] = X
    return out


def relevance(p_word_topic, p_word, lambda_: float) -> np.ndarray:
    """Relevance (Sievert & Shirley 2014, Eq. 1): ``lambda log p(w|t) + (1 - lambda) log(p(w|t) / p(w))``, -inf at 0.

    >>> relevance([0.5, 0.1], [0.25, 0.1], 0.0).round(4).tolist()
    [0.6931, 0.0]
    """
    lambda_ = check_real(lambda_, "lambda_", low=0.0, high=1.0, low_open=False, high_open=False)
    p = np.asarray(p_word_topic, dtype=float)
    q = np.asarray(p_word, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.log(p)
        lift = np.where(p > 0, log_p - np.log(q), 0.0)
        out = lambda_ * log_p + (1.0 - lambda_) * lift
    return np.where(p > 0, out, -np.inf)


def lens_area(r1: float, r2: float, d: float) -> float:
    """Area shared by two discs of radii ``r1`` and ``r2`` whose centres are ``d`` apart (exact).

    >>> round(lens_area(1.0, 1.0, 0.0), 6) == round(math.pi, 6), lens_area(1.0, 2.0, 3.0)
    (True, 0.0)
    """
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2
    # the two circular segments on either side of the common chord
    a1 = r1 * r1 * math.acos(max(-1.0, min(1.0, (d * d + r1 * r1 - r2 * r2) / (2.0 * d * r1))))
    a2 = r2 * r2 * math.acos(max(-1.0, min(1.0, (d * d + r2 * r2 - r1 * r1) / (2.0 * d * r2))))
    kite = 0.5 * math.sqrt(max(0.0, (-d + r1 + r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2)))
    return a1 + a2 - kite


def worst_overlap(centres, radii) -> float:
    """The largest :func:`lens_area` of two circles, as a share of the smaller circle's area (0 for K < 2)."""
    C = np.asarray(centres, dtype=float)
    r = np.asarray(radii, dtype=float)
    worst = 0.0
    for i in range(len(r)):
        for j in range(i + 1, len(r)):
            d = float(math.hypot(*(C[i] - C[j])))
            worst = max(worst, lens_area(float(r[i]), float(r[j]), d) / (math.pi * min(r[i], r[j]) ** 2))
    return worst


_GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))
_LABEL_FONT = 12.0  # px; the CSS of .topic-label
_GAP = 2.0  # SVG units kept between two circles' clear discs


def circle_layout(coordinates, sizes, *, size: float = MAP_SIZE, margin: float = MAP_MARGIN,
                  max_overlap: float = MAX_OVERLAP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(centres (K, 2), radii (K,), origin (2,))`` in SVG units (y down): the MDS positions moved apart so that none
    hides another (``worst_overlap <= max_overlap``; distances on the map are then approximate).

    Areas are proportional to the sizes (largest radius ``min(size / 7, sqrt(0.18 size^2 / (pi K)))``); overlapping
    *clear discs* (circle or label, whichever is larger) move apart, the larger less; a crowd 100 rounds do not
    resolve is placed greedily, largest first; if overlaps remain the radii shrink by 15% and the layout restarts.

    >>> centres, radii, origin = circle_layout(np.zeros((3, 2)), [1.0, 1.0, 1.0])  # three identical topics
    >>> worst_overlap(centres, radii)
    0.0
    """
    X = np.asarray(coordinates, dtype=float)
    s = np.asarray(sizes, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2 or X.shape[0] < 1 or s.shape != (X.shape[0],):
        raise ValueError(f"coordinates must be (K, 2) and sizes (K,), got shapes {X.shape} and {s.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError("coordinates must be finite and sizes positive")
    size = check_real(size, "size", low=1.0)
    margin = check_real(margin, "margin", low=0.0, high=size / 4, low_open=False)
    max_overlap = check_real(max_overlap, "max_overlap", low=0.0, high=1.0, low_open=False, high_open=False)
    K = X.shape[0]
    largest = min(size / 7.0, math.sqrt(0.18 * size * size / math.pi / K))
    radii = np.maximum(3.0, largest * np.sqrt(s / s.max()))
    # a label is the topic's number in a bold 12 px font: about 0.65 em a digit, 1.15 em high
    digits = np.array([len(str(k)) for k in range(K)], dtype=float)
    label = np.hypot(0.325 * _LABEL_FONT * digits, 0.575 * _LABEL_FONT)
    centres, origin = _separate(X, radii, label, size, margin)
    for _ in range(30):  # 0.85^30 < 1%: circles that small always fit, unless the labels alone cannot
        if centres is not None and worst_overlap(centres, radii) <= max_overlap:
            break
        radii = radii * 0.85
        centres, origin = _separate(X, radii, label, size, margin)
    if centres is None:  # only when the labels alone cannot fit (K in the thousands): overlap allowed, said so
        centres, origin = _separate(X, radii, label, size, margin, give_up=True)
    assert centres is not None
    return centres, radii, origin


def _separate(X: np.ndarray, radii: np.ndarray, label: np.ndarray, size: float, margin: float,
              give_up: bool = False) -> tuple[np.ndarray | None, np.ndarray]:
    """Steps 2 and 3 of :func:`circle_layout`: (centres, origin), centres None when overlaps remain."""
    K = X.shape[0]
    clear = np.maximum(radii, label) + _GAP / 2.0
    clear = np.minimum(clear, (size - 2.0 * margin) / 2.0)
    low, high = margin + clear, size - margin - clear
    mid = (X.max(axis=0) + X.min(axis=0)) / 2.0
    span = float(np.max(X.max(axis=0) - X.min(axis=0)))
    inner = size - 2.0 * (margin + clear.max())
    scale = inner / span if K > 1 and span > 1e-12 else 0.0
    flip = np.array([1.0, -1.0])  # MDS' y points up, SVG's down
    origin = size / 2.0 - mid * scale * flip
    P = size / 2.0 + (X - mid) * scale * flip
    # a Vogel spiral of half a unit: distinct starts even for identical topics, no visible move otherwise
    k = np.arange(K)
    P = P + 0.5 * np.sqrt((k + 0.5) / K)[:, None] * np.stack([np.cos(_GOLDEN_ANGLE * k),
                                                              np.sin(_GOLDEN_ANGLE * k)], axis=1)
    P = np.clip(P, low[:, None], high[:, None])
    relaxed = _relax(P, clear, low, high, rounds=100)
    if relaxed is None:
        # a crowd (many topics at nearly one point) relaxes slowly: place the circles one by one, each at the
        # free point nearest its MDS position, then relax what is left
        placed = _place(P, clear, low, high, np.argsort(-clear, kind="stable"))
        relaxed = None if placed is None else _relax(placed, clear, low, high)
        if relaxed is None and give_up:
            relaxed = P if placed is None else placed
    return relaxed, origin


def _relax(P: np.ndarray, clear: np.ndarray, low: np.ndarray, high: np.ndarray, rounds: int = 300) -> np.ndarray | None:
    """Move overlapping clear discs apart, all pairs at once, until none overlaps (None if rounds run out)."""
    K = P.shape[0]
    need = clear[:, None] + clear[None, :]
    area = clear ** 2
    share = area[None, :] / (area[:, None] + area[None, :])  # i's part of pair (i, j)'s move: larger moves less
    upper = np.triu(np.ones((K, K), dtype=bool), 1)
    pairs = upper | upper.T
    sign = np.where(upper, 1.0, -1.0)[..., None] * np.array([1.0, 0.0])
    for _ in range(rounds):
        diff = P[:, None, :] - P[None, :, :]
        d = np.hypot(diff[..., 0], diff[..., 1])
        gap = np.where(pairs, need - d, -np.inf)
        if K < 2 or gap.max() <= 0.0:
            return P
        # push a quarter unit past touching, so a pair ends apart in finitely many rounds
        push = np.where(gap > 0.0, gap + 0.25, 0.0) * share
        with np.errstate(divide="ignore", invalid="ignore"):
            unit = np.where(d[..., None] > 1e-9, diff / d[..., None], 0.0)
        same = (d <= 1e-9) & pairs  # coincident centres: a fixed direction, opposite for the two circles
        if same.any():
            unit = np.where(same[..., None], sign, unit)
        P = np.clip(P + np.einsum("ij,ijc->ic", push, unit), low[:, None], high[:, None])
    return None


def _place(P: np.ndarray, clear: np.ndarray, low: np.ndarray, high: np.ndarray, order: np.ndarray,
           n_angles: int = 16) -> np.ndarray | None:
    """Greedy placement in ``order``, each circle at the free point nearest its start (None if none is free)."""
    Q = P.copy()
    angles = 2.0 * np.pi * np.arange(n_angles) / n_angles
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    placed: list[int] = []
    for i in order:
        target = P[i]
        if placed:
            centres, radius = Q[placed], clear[placed] + clear[i] + 0.25
            towards = target - centres
            norm = np.hypot(towards[:, 0], towards[:, 1])
            towards = np.where(norm[:, None] > 1e-9, towards / np.maximum(norm, 1e-300)[:, None], ring[0])
            candidates = np.concatenate([target[None, :], centres + radius[:, None] * towards,
                                         (centres[:, None, :] + radius[:, None, None] * ring[None]).reshape(-1, 2)])
            inside = np.flatnonzero(np.all((candidates >= low[i] - 1e-9) & (candidates <= high[i] + 1e-9), axis=1))
            dx = candidates[inside, None, 0] - centres[None, :, 0]
            dy = candidates[inside, None, 1] - centres[None, :, 1]
            free = np.all(dx * dx + dy * dy >= ((clear[placed] + clear[i]) ** 2)[None, :], axis=1)
            ok = inside[free]
            if ok.size == 0:
                return None
            far = np.hypot(*(candidates[ok] - target).T)
            Q[i] = candidates[ok[np.argmin(far)]]
        placed.append(int(i))
    return Q


def topic_sizes(published: Mapping[str, Any]) -> tuple[np.ndarray, str]:
    """(sizes summing to 1, their source): ``alpha / alpha.sum()`` for K positive ``extra["alpha"]`` published as DP or
    post-processing, else equal sizes and :data:`EQUAL_SIZES`."""
    K = len(published["topic_word"])
    alpha = (published.get("extra") or {}).get("alpha")
    if alpha is None:
        return np.full(K, 1.0 / K), EQUAL_SIZES
    status = str(published["report"].get("published", {}).get("extra.alpha", ""))
    if not status.startswith(("DP", "post-processing")):
        return np.full(K, 1.0 / K), f"{EQUAL_SIZES} (extra.alpha is not published as a DP output)"
    a = np.asarray(alpha, dtype=float).ravel()
    if a.shape != (K,) or not (np.all(np.isfinite(a)) and np.all(a > 0)):
        return np.full(K, 1.0 / K), f"{EQUAL_SIZES} (the released extra.alpha is not K positive numbers)"
    return a / a.sum(), f"sizes: alpha_k / alpha_0, the released Dirichlet parameters extra.alpha ({status.split(':')[0]})"


def page_data(published: Mapping[str, Any], n_words: int = 30,
              relevance_lambda: float = DEFAULT_LAMBDA) -> dict[str, Any]:
    """The JSON the page embeds: per topic its MDS coordinates, size, circle and top words with p(w|t) and p(w)."""
    published = dict(published)
    n_words = check_int(n_words, "n_words", low=1)
    relevance_lambda = check_real(relevance_lambda, "relevance_lambda", low=0.0, high=1.0, low_open=False,
                                  high_open=False)
    P = _rows(published["topic_word"], "topic_word")  # the released values, as they are (rows on the simplex)
    vocabulary = [str(w) for w in published["vocabulary"]]
    if P.shape[1] != len(vocabulary):
        raise ValueError(f"the release's vocabulary has {len(vocabulary)} words for {P.shape[1]} columns")
    sizes, sizes_source = topic_sizes(published)
    p_word = sizes @ P
    coordinates = classical_mds(js_distances(P), 2)
    centres, radii, origin = circle_layout(coordinates, sizes)
    n = min(n_words, P.shape[1])
    order = top_indices(P, n)  # the order of release.top_words(n)
    topics = [{
        "x": float(coordinates[k, 0]), "y": float(coordinates[k, 1]), "size": float(sizes[k]),
        "cx": round(float(centres[k, 0]), 3), "cy": round(float(centres[k, 1]), 3), "r": round(float(radii[k]), 3),
        "words": [vocabulary[j] for j in row], "p": [float(P[k, j]) for j in row],
        "pw": [float(p_word[j]) for j in row],
    } for k, row in enumerate(order)]
    return {
        "format": VIEW_FORMAT, "n_topics": int(P.shape[0]), "n_vocabulary": int(P.shape[1]), "n_words": n,
        "lambda": relevance_lambda, "sizes_released": not sizes_source.startswith(EQUAL_SIZES),
        "sizes_source": sizes_source, "topics": topics,
        "map": {"size": MAP_SIZE, "origin": [round(float(origin[0]), 3), round(float(origin[1]), 3)]},
    }


def page_html(published: Mapping[str, Any], path=None, *, n_words: int = 30,
              relevance_lambda: float = DEFAULT_LAMBDA, title: str | None = None, overwrite: bool = True) -> str:
    """The page of :func:`topicdp.view.release_html` from a published release dict (checked by the caller)."""

    data = page_data(published, n_words=n_words, relevance_lambda=relevance_lambda)
    _check_title_and_path(title, path)
    report = published["report"]
    heading = title if title is not None else f"topicdp release: {report['mechanism']}"
    subtitle = f"{data['n_topics']} topics, vocabulary of {data['n_vocabulary']} words"
    return _page(heading, subtitle, data, data, _privacy_html(report), path, overwrite)


def series_page_html(periods: Sequence[str], published: Mapping[str, Mapping[str, Any]],
                     refused: Mapping[str, str], headline: Sequence[str], path=None, *, n_words: int = 30,
                     table_words: int = 8, relevance_lambda: float = DEFAULT_LAMBDA, title: str | None = None,
                     overwrite: bool = True) -> str:
    """The page of a release over time: :func:`page_html`'s page per released period (topic k is row k of each),
    with a period selector, the series' ``headline``, each period's privacy summary, the refused periods and their
    reasons, and a table of every topic's top words per period. Post-processing of the releases.
    """
    released = [p for p in periods if p in published]
    if not released:
        raise ValueError("no period of the series was released: there is no release to show")
    table_words = check_int(table_words, "table_words", low=1)
    _check_title_and_path(title, path)
    views = {p: page_data(published[p], n_words=n_words, relevance_lambda=relevance_lambda) for p in released}
    first = views[released[0]]
    block = {"format": VIEW_FORMAT, "series": True, "lambda": first["lambda"], "periods": released, "views": views}
    report = published[released[0]]["report"]
    heading = title if title is not None else f"topicdp release over time: {report['mechanism']}"
    subtitle = f"{first['n_topics']} topics matched across {len(periods)} periods"
    header = _series_header(periods, published, refused, headline)
    return _page(heading, subtitle, first, block, header, path, overwrite, _series_table(periods, views, table_words))


def _page(heading: str, subtitle: str, data: Mapping[str, Any], block: Mapping[str, Any], privacy: str, path,
          overwrite: bool, after: str = "") -> str:
    """The page's HTML (``data`` the view the static text describes, ``block`` the JSON the script reads), written to
    ``path`` if given, atomically: a browser or a killed run never sees half a page."""
    # the JSON block safe inside a <script> element: no '<', '>' or '&' (each written as a \u escape)
    block_json = json.dumps(block, separators=(",", ":"), allow_nan=False)
    block_json = block_json.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    source = html.escape(data["sizes_source"])  # a release without sizes says so once and prints none anywhere
    sizes = ({"sizes": f"Circle area: topic size. <b>{source}</b>", "mean": "size-weighted mean",
              "size_heading": ' <span class="k">(size <span id="topic-size"></span>)</span>',
              "share": "size &times; p(w|t)"} if data["sizes_released"] else
             {"sizes": f"<b>{source}</b>", "mean": "mean", "size_heading": "", "share": "p(w|t) / K"})
    page = _asset("view_page.html").format(
        title=html.escape(heading), subtitle=html.escape(subtitle), css=_asset("view_page.css"), script=_asset("view_page.js"),
        data=block_json, privacy=privacy, n_words=data["n_words"], **sizes,
        lam=f"{data['lambda']:.2f}", map_size=f"{MAP_SIZE:g}", after=after)
    if path is not None:
        atomic_write(path, page, overwrite=overwrite)
    return page


def _check_title_and_path(title, path) -> None:
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str, a path-like object or None, got {type(path).__name__}")


def _series_header(periods: Sequence[str], published: Mapping[str, Mapping[str, Any]], refused: Mapping[str, str],
                   headline: Sequence[str]) -> str:
    """The series' header: its headline, the period selector, each period's privacy summary, the refusals."""
    lines = list(headline)
    parts = [f"<div class=\"line\" id=\"headline\">{html.escape(lines[0])}</div>" if lines else ""]
    parts += [f"<div class=\"line series\">{html.escape(line)}</div>" for line in lines[1:]]
    options = "".join(f"<option value=\"{html.escape(p)}\">{html.escape(p)}</option>" if p in published else
                      f"<option value=\"{html.escape(p)}\" disabled>{html.escape(p)} (refused)</option>"
                      for p in periods)
    parts.append(f"<div class=\"controls\"><label>period shown <select id=\"period\">{options}</select></label>"
                 "<span class=\"k\">topics keep their numbers across periods (matched on the released "
                 "topics)</span></div>")
    for p in periods:
        if p in published:
            panel = _privacy_html(published[p]["report"], ids=False)
            parts.append(f"<div class=\"period-privacy\" data-period-privacy=\"{html.escape(p)}\">"
                         f"<div class=\"k\">{html.escape(p)}:</div>{panel}</div>")
    if refused:
        items = "".join(f"<li><b>{html.escape(p)}</b>: {html.escape(refused[p])}</li>" for p in periods
                        if p in refused)
        parts.append(f"<div class=\"refusals\">refused periods (no release):<ul>{items}</ul></div>")
    return "\n".join(parts)


def _series_table(periods: Sequence[str], views: Mapping[str, Mapping[str, Any]], n: int) -> str:
    """Every matched topic's top ``n`` words per period, released p(w|t) on hover (readable without the script)."""
    K = next(iter(views.values()))["n_topics"]
    head = "".join(f"<th>{html.escape(p)}</th>" for p in periods)
    rows = []
    for k in range(K):
        cells = []
        for p in periods:
            if p not in views:
                cells.append('<td class="refused">refused</td>')
                continue
            t = views[p]["topics"][k]
            cells.append("<td>" + " ".join(f"<span title=\"{q:.4f}\">{html.escape(w)}</span>"
                                           for w, q in zip(t["words"][:n], t["p"][:n])) + "</td>")
        rows.append(f"<tr><th>topic {k}</th>{''.join(cells)}</tr>")
    return (f"<section id=\"over-time\"><h2>Top words of each topic over time <span class=\"k\">(matched across "
            f"periods)</span></h2><table><tr><th></th>{head}</tr>{''.join(rows)}</table></section>\n")


def _rows(topic_word, name: str) -> np.ndarray:
    P = np.asarray(topic_word, dtype=float)
    if P.ndim != 2 or P.shape[0] < 1 or P.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty (K, V) matrix, got shape {P.shape}")
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise ValueError(f"{name} must hold finite, non-negative probabilities")
    sums = P.sum(axis=1)
    if np.any(sums <= 0):
        raise ValueError(f"{name} has a row without positive mass (row {int(np.argmin(sums))})")
    return P


def _privacy_html(report: Mapping[str, Any], ids: bool = True) -> str:
    """The privacy summary as static HTML; ``ids=False`` for one of several on a page (classes only)."""
    r = PrivacyReport.from_dict(dict(report))
    # the first line is the report's headline (the certified epsilon, and the requested one when they differ);
    # its column padding is for a terminal
    key, _, statement = r.headline().partition(" ")
    rows = [("guarantee", r.guarantee), ("unit", r.unit), ("neighbours", r.neighbours),
            ("requested epsilon", f"{float(r.epsilon):g}"), ("delta", f"{float(r.delta):g}")]
    if r.gamma is not None:
        rows.append(("gamma", f"{float(r.gamma):g}"))
    rows.append(("mechanism", r.mechanism))
    cells = "".join(f"<div><span class=\"k\">{html.escape(k)}</span> <b>{html.escape(str(v))}</b></div>"
                    for k, v in rows)
    headline_id, forced_id = (' id="headline"', ' id="forced"') if ids else ("", "")
    parts = [f"<div class=\"line\"{headline_id}>{html.escape(key)} {html.escape(statement.strip())}</div>"]
    forced = r.released_against_forecast()  # a release the owner forced past the plan's refusal says so here
    if forced:
        parts.append(f"<div class=\"line forced\"{forced_id}>{html.escape(forced)}</div>")
    parts.append(f"<div class=\"kv\">{cells}</div>")
    warnings = [f"{path}: {status}" for path, status in r.published.items() if status.startswith("NOT COVERED")]
    if r.seeded:
        warnings.append("seeded: the noise is reproducible; a seeded release must not be published as private")
    if r.guarantee == "random-DP":
        warnings.insert(0, RANDOM_DP_CAVEAT)
    if warnings:
        parts.append("<ul class=\"warn\">" + "".join(f"<li>{html.escape(w)}</li>" for w in warnings) + "</ul>")
    notes = [n for n in r.notes if n != RANDOM_DP_CAVEAT]
    if notes:
        parts.append("<details><summary>notes of the report</summary><ul>"
                     + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul></details>")
    return "\n".join(parts)


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> str:
    """The page's style sheet, script or HTML template (package data)."""
    return importlib.resources.files("topicdp").joinpath(name).read_text(encoding="utf-8")
