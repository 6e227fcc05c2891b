"""An interactive, self-contained HTML view of a release, in the manner of LDAvis.

:func:`release_html` writes one HTML file that a browser opens offline (no network, no CDN: the CSS and the
script are inline and hand-written). It shows the elements of LDAvis (Sievert & Shirley 2014, "LDAvis: A
method for visualizing and interpreting topics"):

* an **intertopic distance map**: the topics placed in the plane by classical multidimensional scaling
  (:func:`classical_mds`) of the Jensen-Shannon distances between the released topic rows
  (:func:`js_distances`), each drawn as a circle whose area is the topic's size;
* for the selected topic (click a circle), its words as horizontal bars, ranked by **relevance**
  (:func:`relevance`, Sievert & Shirley's Eq. 1) with a slider for the weight lambda in [0, 1];
* the release's privacy summary (guarantee, unit, neighbour relation, epsilon, delta, and the caveats).

The page is **publishable**: it is computed from the published part of the release only (what
:meth:`topicdp.release.PrivateRelease.to_dict` writes: ``topic_word``, ``vocabulary``, ``extra``, ``report``),
so it is post-processing of the release. Nothing from ``release.diagnostics`` or ``release.nonprivate`` is
read. In particular the topic sizes and the overall word probabilities p(w) come from published quantities:

* topic sizes: alpha_k / alpha_0 when the release carries Dirichlet parameters ``extra["alpha"]`` (the
  spectral road; a post-processing of DP outputs); otherwise the sizes are not released and every topic is
  drawn the same size, and the page says so. (LDAvis sizes topics by the corpus' token counts; those are
  private here.)
* p(w) = sum_k size_k p(w | k), the size-weighted mean of the released topic rows (not the corpus' word
  frequencies, which are private).

Only the ``n_words`` most probable words of each topic are embedded (as JSON in a
``<script type="application/json">`` element), so relevance re-ranks those words; at lambda = 0 it does not
reach down to rare words outside them, which in a noisy release would mostly be noise anyway.
"""

from __future__ import annotations

import html
import json
import math
import os
from typing import Any, Mapping

import numpy as np

from ._validation import check_int, check_real

#: version of the JSON block embedded in the page
VIEW_FORMAT = "topicdp.view/1"
#: text the page shows when the release has no DP estimate of the topic sizes
EQUAL_SIZES = "sizes: not released; drawn equal"
DEFAULT_LAMBDA = 0.6  # Sievert & Shirley's user study found lambda near 0.6 best for interpreting topics


def js_distances(topic_word) -> np.ndarray:
    """Jensen-Shannon distances between the rows of ``topic_word`` (base-2 logs, so each is in [0, 1]).

    The distance is the square root of the Jensen-Shannon divergence
    ``JSD(p, q) = KL(p || m) / 2 + KL(q || m) / 2`` with ``m = (p + q) / 2``, a metric (Endres & Schindelin
    2003, "A new metric for probability distributions"); scipy's ``jensenshannon(p, q, base=2)`` gives the
    same number. Rows are normalised to sum to 1 first.

    Parameters
    ----------
    topic_word : array-like, shape (K, V)
        Non-negative rows, each with positive mass.

    Returns
    -------
    ndarray, shape (K, K)
        Symmetric, zero on the diagonal.

    Examples
    --------
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
    """Classical (Torgerson) multidimensional scaling: points whose Euclidean distances approximate ``distances``.

    With ``J = I - 11'/K`` the centring matrix, ``B = -J D^2 J / 2`` is the Gram matrix of centred points
    when ``D`` is Euclidean; the coordinates are its leading eigenvectors scaled by the square roots of their
    eigenvalues (negative eigenvalues, from a non-Euclidean ``D``, count as 0). Distances that a point set in
    ``n_components`` dimensions realises are reproduced exactly, up to rotation and reflection. The sign of
    each axis is fixed (its largest entry in absolute value is positive), so the result is deterministic.
    This is LDAvis' default layout ("PCoA").

    Parameters
    ----------
    distances : array-like, shape (K, K)
        Symmetric, non-negative, zero diagonal.
    n_components : int, default=2

    Returns
    -------
    ndarray, shape (K, n_components)
        Centred coordinates (columns of zeros where the distances need fewer dimensions).

    Examples
    --------
    >>> X = classical_mds([[0, 3, 4], [3, 0, 5], [4, 5, 0]])
    >>> from scipy.spatial.distance import pdist
    >>> pdist(X).round(6).tolist()
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
    order = np.argsort(-eigenvalues, kind="stable")[:n_components]
    values = np.clip(eigenvalues[order], 0.0, None)
    vectors = eigenvectors[:, order]
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])])
    X = vectors * np.where(signs == 0, 1.0, signs) * np.sqrt(values)
    out = np.zeros((K, n_components))
    out[:, :X.shape[1]] = X
    return out


def relevance(p_word_topic, p_word, lambda_: float) -> np.ndarray:
    """Relevance of words to a topic (Sievert & Shirley 2014, Eq. 1).

    ``r(w, t | lambda) = lambda log p(w|t) + (1 - lambda) log(p(w|t) / p(w))``: lambda = 1 ranks by the
    probability within the topic, lambda = 0 by the lift p(w|t) / p(w). Natural logs (the ranking does not
    depend on the base). A word with p(w|t) = 0 has relevance -inf.

    Parameters
    ----------
    p_word_topic, p_word : array-like of the same shape
        p(w|t) and p(w) (positive where p(w|t) is).
    lambda_ : float in [0, 1]

    Examples
    --------
    >>> relevance([0.5, 0.1], [0.25, 0.1], 1.0).round(4).tolist()
    [-0.6931, -2.3026]
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


def topic_sizes(published: Mapping[str, Any]) -> tuple[np.ndarray, str]:
    """(sizes summing to 1, the sentence saying where they come from), from a published release dict.

    ``alpha / alpha.sum()`` when ``extra["alpha"]`` holds K positive finite Dirichlet parameters (a DP
    output or its post-processing, whatever its status in ``report.published``); otherwise equal sizes and
    :data:`EQUAL_SIZES`.
    """
    K = len(published["topic_word"])
    alpha = (published.get("extra") or {}).get("alpha")
    if alpha is not None:
        a = np.asarray(alpha, dtype=float).ravel()
        if a.shape == (K,) and np.all(np.isfinite(a)) and np.all(a > 0):
            status = published["report"].get("published", {}).get("extra.alpha", "")
            where = f" ({status.split(':')[0]})" if status else ""
            return a / a.sum(), ("sizes: alpha_k / alpha_0, the released Dirichlet parameters extra.alpha"
                                 f"{where}")
        return np.full(K, 1.0 / K), f"{EQUAL_SIZES} (the released extra.alpha is not K positive numbers)"
    return np.full(K, 1.0 / K), EQUAL_SIZES


def view_data(release, n_words: int = 30, relevance_lambda: float = DEFAULT_LAMBDA) -> dict[str, Any]:
    """The JSON the page embeds: per topic its MDS coordinates, size and top words with p(w|t) and p(w).

    Parameters are those of :func:`release_html`. Computed from ``release.to_dict()`` only.
    """
    published = _published(release)
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
    n = min(n_words, P.shape[1])
    order = np.argsort(-P, axis=1, kind="stable")[:, :n]  # the order of release.top_words(n)
    topics = [{
        "x": float(coordinates[k, 0]), "y": float(coordinates[k, 1]), "size": float(sizes[k]),
        "words": [vocabulary[j] for j in row], "p": [float(P[k, j]) for j in row],
        "pw": [float(p_word[j]) for j in row],
    } for k, row in enumerate(order)]
    return {
        "format": VIEW_FORMAT, "n_topics": int(P.shape[0]), "n_vocabulary": int(P.shape[1]), "n_words": n,
        "lambda": relevance_lambda, "sizes_released": not sizes_source.startswith(EQUAL_SIZES),
        "sizes_source": sizes_source, "topics": topics,
    }


def release_html(release, path=None, *, n_words: int = 30, relevance_lambda: float = DEFAULT_LAMBDA,
                 title: str | None = None, overwrite: bool = True) -> str:
    """One self-contained HTML page that shows a release interactively (LDAvis' elements; module docstring).

    Post-processing of the published release only, so the page may be published with it.

    Parameters
    ----------
    release : PrivateRelease or mapping
        A release, or its published dict (``release.to_dict()``, or ``json.load`` of a file written by
        ``release.save``; checked against :data:`topicdp.release.SCHEMA`).
    path : str or path-like, optional
        Where to write the page (UTF-8; atomically: a reader never sees half a page).
    n_words : int, default=30
        Words kept per topic (at least 1; at most the vocabulary's size is used).
    relevance_lambda : float in [0, 1], default=0.6
        The slider's initial lambda.
    title : str, optional
        The page's heading; default names the mechanism.
    overwrite : bool, default=True
        Replace an existing ``path``; False raises ``FileExistsError`` instead (checked at the rename).

    Returns
    -------
    str
        The HTML text.

    Examples
    --------
    >>> import numpy as np
    >>> from topicdp import TopicDP, CallableModel, embedded_corpus
    >>> corpus = embedded_corpus()
    >>> topics = np.random.default_rng(0).dirichlet(np.ones(corpus.n_words), size=3)
    >>> model = CallableModel(lambda c: topics, n_topics=3, name="fixed")
    >>> release = TopicDP(model, 1.0, 1e-5, sensitivity="global", random_state=0).fit(corpus).release_
    >>> page = release_html(release, n_words=10)
    >>> page.startswith("<!DOCTYPE html>") and 'type="application/json"' in page
    True
    """
    data = view_data(release, n_words=n_words, relevance_lambda=relevance_lambda)
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str, a path-like object or None, got {type(path).__name__}")
    report = _published(release)["report"]
    heading = title if title is not None else f"topicdp release: {report['mechanism']}"
    page = _TEMPLATE.format(
        title=html.escape(heading), css=_CSS, script=_SCRIPT, data=_script_json(data),
        privacy=_privacy_html(report), sizes=html.escape(data["sizes_source"]), n_words=data["n_words"],
        K=data["n_topics"], V=data["n_vocabulary"], lam=f"{data['lambda']:.2f}",
    )
    if path is not None:  # atomically: a browser or a killed run never sees half a page
        from ._files import atomic_write

        atomic_write(path, page, overwrite=overwrite)
    return page


# -- helpers ---------------------------------------------------------------------------------------------

def _published(release) -> dict[str, Any]:
    """The published dict of a PrivateRelease, or a given published dict after the schema check."""
    from .release import SCHEMA, PrivateRelease, validate

    if isinstance(release, PrivateRelease):
        return release.to_dict()
    if isinstance(release, Mapping):
        data = dict(release)
        validate(data, SCHEMA)
        return data
    raise TypeError(f"release must be a PrivateRelease or its published dict (to_dict()), got {type(release).__name__}")


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


def _script_json(data: Mapping) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' (each written as a \\u escape)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _privacy_html(report: Mapping[str, Any]) -> str:
    """The privacy summary, as static HTML (readable without the script)."""
    from .release import guarantee_line
    from .report import RANDOM_DP_CAVEAT, PrivacyReport

    r = PrivacyReport.from_dict(dict(report))
    rows = [("guarantee", r.guarantee), ("unit", r.unit), ("neighbours", r.neighbours),
            ("epsilon", f"{float(r.epsilon):g}"), ("delta", f"{float(r.delta):g}")]
    if r.gamma is not None:
        rows.append(("gamma", f"{float(r.gamma):g}"))
    certified = r.certified_epsilon()
    if math.isfinite(certified):
        rows.append(("certified epsilon", f"{certified:.4g}"))
    rows.append(("mechanism", r.mechanism))
    cells = "".join(f"<div><span class=\"k\">{html.escape(k)}</span> <b>{html.escape(str(v))}</b></div>"
                    for k, v in rows)
    parts = [f"<div class=\"line\">{html.escape(guarantee_line(r))}</div>", f"<div class=\"kv\">{cells}</div>"]
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


_CSS = """
*{box-sizing:border-box}
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#222;
background:#fff}
header{padding:10px 18px 8px;border-bottom:1px solid #ddd;background:#f7f7f9}
h1{font-size:18px;margin:0 0 4px}
h2{font-size:14px;margin:0 0 6px}
h2 .k{font-weight:400;font-size:12px}
.line{font-weight:600;margin-bottom:3px}
.kv{display:flex;flex-wrap:wrap;gap:2px 16px}
.k{color:#666}
.warn{margin:4px 0 0;padding-left:18px;color:#8a1c1c;max-width:1150px}
details{margin-top:3px;color:#444}
main{display:flex;gap:24px;padding:8px 18px;align-items:flex-start}
#left{flex:0 0 520px}
#right{flex:1 1 auto;min-width:380px}
#map{width:520px;height:520px;border:1px solid #ddd;background:#fff;display:block}
.axis{stroke:#bbb;stroke-dasharray:4 3}
.axis-label{fill:#888;font-size:11px}
.topic{fill:#1f77b4;fill-opacity:.32;stroke:#1f77b4;stroke-width:1;cursor:pointer}
.topic:hover,.topic:focus{fill-opacity:.55;outline:none}
.topic.selected{fill:#d62728;fill-opacity:.55;stroke:#a01010;stroke-width:2}
.topic-label{font-size:12px;font-weight:600;text-anchor:middle;dominant-baseline:central;pointer-events:none;fill:#111}
.controls{display:flex;flex-wrap:wrap;gap:6px 18px;align-items:center;margin-bottom:2px}
.controls button{font:inherit;padding:1px 8px}
#lambda{width:180px;vertical-align:middle}
#bars{display:grid;grid-template-columns:max-content 1fr max-content;gap:0 8px;align-items:center;line-height:15px}
.bar-row{display:contents}
.word{text-align:right;white-space:nowrap;max-width:170px;overflow:hidden;text-overflow:ellipsis}
.track{position:relative;height:12px}
.overall,.intopic{position:absolute;left:0;top:0;height:12px}
.overall{background:#c9d3dd}
.intopic{background:#d62728;opacity:.85}
.num{color:#555;font-variant-numeric:tabular-nums;font-size:11px}
.legend{margin:2px 0 4px;color:#444}
.legend i{display:inline-block;width:12px;height:10px;margin:0 4px 0 10px;vertical-align:middle}
.small{color:#555;font-size:12px;margin-top:6px;max-width:520px}
#error{color:#b00;font-weight:600}
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var body = document.body;
  function fail(message) {
    body.setAttribute("data-error", String(message));
    var box = document.getElementById("error");
    if (box) { box.textContent = "The view could not be drawn: " + message; }
  }
  window.addEventListener("error", function (e) { fail(e.message || String(e)); });
  try {
    var data = JSON.parse(document.getElementById("topicdp-view-data").textContent);
    var svg = document.getElementById("map");
    var NS = svg.namespaceURI;  // the SVG namespace, as the HTML parser set it
    var W = 520, H = 520, M = 14;
    var topics = data.topics, K = topics.length;
    var state = {topic: 0, lambda: data.lambda};

    function el(name, attrs, parent) {
      var node = document.createElementNS(NS, name);
      for (var a in attrs) { node.setAttribute(a, attrs[a]); }
      if (parent) { parent.appendChild(node); }
      return node;
    }

    // -- the intertopic distance map: circle areas proportional to the sizes --------------------------
    var maxSize = Math.max.apply(null, topics.map(function (t) { return t.size; }));
    var R = Math.min(W / 7, Math.sqrt(0.18 * W * H / Math.PI / Math.max(K, 1) / 1.0));
    var radii = topics.map(function (t) { return Math.max(3, R * Math.sqrt(t.size / maxSize)); });
    var xs = topics.map(function (t) { return t.x; }), ys = topics.map(function (t) { return t.y; });
    var span = Math.max(Math.max.apply(null, xs) - Math.min.apply(null, xs),
                        Math.max.apply(null, ys) - Math.min.apply(null, ys), 1e-12);
    var cx0 = (Math.max.apply(null, xs) + Math.min.apply(null, xs)) / 2;
    var cy0 = (Math.max.apply(null, ys) + Math.min.apply(null, ys)) / 2;
    var inner = Math.min(W, H) - 2 * (M + Math.max.apply(null, radii));
    var scale = K > 1 ? inner / span : 0;
    function px(t) { return W / 2 + (t.x - cx0) * scale; }
    function py(t) { return H / 2 - (t.y - cy0) * scale; }
    var ox = W / 2 - cx0 * scale, oy = H / 2 + cy0 * scale;
    el("line", {x1: 0, y1: oy, x2: W, y2: oy, "class": "axis"}, svg);
    el("line", {x1: ox, y1: 0, x2: ox, y2: H, "class": "axis"}, svg);
    el("text", {x: W - 6, y: oy - 5, "class": "axis-label", "text-anchor": "end"}, svg).textContent = "PC1";
    el("text", {x: ox + 5, y: 13, "class": "axis-label"}, svg).textContent = "PC2";
    var order = topics.map(function (t, k) { return k; }).sort(function (a, b) { return radii[b] - radii[a]; });
    var circleLayer = el("g", {}, svg), labelLayer = el("g", {}, svg);
    var circles = [];
    order.forEach(function (k) {
      var t = topics[k];
      var c = el("circle", {cx: px(t), cy: py(t), r: radii[k], "class": "topic", "data-topic": k,
                            tabindex: 0, role: "button"}, circleLayer);
      el("title", {}, c).textContent = "topic " + k + " (size " + (100 * t.size).toFixed(1) + "%): " +
        t.words.slice(0, 6).join(" ");
      c.addEventListener("click", function () { select(k); });
      c.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(k); }
      });
      circles[k] = c;
    });
    order.forEach(function (k) {
      el("text", {x: px(topics[k]), y: py(topics[k]), "class": "topic-label"}, labelLayer).textContent = String(k);
    });

    // -- the selected topic's words, ranked by relevance ------------------------------------------
    function ranked(t, lambda) {
      var idx = t.words.map(function (w, i) { return i; });
      var rel = t.p.map(function (p, i) {
        if (!(p > 0)) { return -Infinity; }
        return lambda * Math.log(p) + (1 - lambda) * (Math.log(p) - Math.log(t.pw[i]));
      });
      idx.sort(function (a, b) { return (rel[b] - rel[a]) || (t.p[b] - t.p[a]) || (a - b); });
      return idx;
    }
    var bars = document.getElementById("bars");
    function drawBars() {
      var k = state.topic, t = topics[k];
      while (bars.firstChild) { bars.removeChild(bars.firstChild); }
      var top = Math.max.apply(null, t.pw.concat(t.p.map(function (p) { return p * t.size; })));
      ranked(t, state.lambda).forEach(function (i) {
        var row = document.createElement("div");
        row.className = "bar-row";
        row.setAttribute("data-topic", k);
        row.setAttribute("data-word", t.words[i]);
        var word = document.createElement("div");
        word.className = "word";
        word.textContent = t.words[i];
        word.title = t.words[i];
        var track = document.createElement("div");
        track.className = "track";
        var overall = document.createElement("div");
        overall.className = "overall";
        overall.style.width = (100 * t.pw[i] / top) + "%";
        var intopic = document.createElement("div");
        intopic.className = "intopic";
        intopic.style.width = (100 * t.size * t.p[i] / top) + "%";
        track.title = "p(w|t) = " + t.p[i].toPrecision(3) + ", p(w) = " + t.pw[i].toPrecision(3);
        track.appendChild(overall);
        track.appendChild(intopic);
        var num = document.createElement("div");
        num.className = "num";
        num.textContent = t.p[i].toPrecision(3);
        row.appendChild(word); row.appendChild(track); row.appendChild(num);
        bars.appendChild(row);
      });
      document.getElementById("topic-number").textContent = String(k);
      document.getElementById("topic-size").textContent = (100 * t.size).toFixed(1) + "%";
    }
    function select(k) {
      state.topic = k;
      circles.forEach(function (c, j) { c.setAttribute("class", j === k ? "topic selected" : "topic"); });
      circleLayer.appendChild(circles[k]);  // drawn last: on top of the circles it overlaps
      drawBars();
    }
    var slider = document.getElementById("lambda");
    slider.value = String(state.lambda);
    function readLambda() {
      state.lambda = Math.min(1, Math.max(0, parseFloat(slider.value)));
      document.getElementById("lambda-value").textContent = state.lambda.toFixed(2);
      drawBars();
    }
    slider.addEventListener("input", readLambda);
    document.getElementById("prev").addEventListener("click", function () { select((state.topic + K - 1) % K); });
    document.getElementById("next").addEventListener("click", function () { select((state.topic + 1) % K); });
    select(0);
    document.getElementById("lambda-value").textContent = state.lambda.toFixed(2);
    body.setAttribute("data-ready", "1");
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
})();
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header>
<h1>{title} <span class="k">&middot; {K} topics, vocabulary of {V} words</span></h1>
{privacy}
</header>
<main>
<section id="left">
<h2>Intertopic distance map <span class="k">(classical MDS of Jensen&ndash;Shannon distances)</span></h2>
<svg id="map" viewBox="0 0 520 520" role="img" aria-label="intertopic distance map"></svg>
<div class="small">Circle area: topic size. <b>{sizes}</b>. Click a circle (or Tab to it and press Enter) to
select its topic.</div>
<div class="small">relevance = &lambda; log p(w|t) + (1 &minus; &lambda;) log(p(w|t) / p(w)) (Sievert &amp;
Shirley 2014, Eq. 1): &lambda; = 1 ranks by probability in the topic, &lambda; = 0 by lift. p(w) is the
size-weighted mean of the released topics. Every number here is computed from the published release only.</div>
</section>
<section id="right">
<h2>Topic <span id="topic-number">0</span> <span class="k">(size <span id="topic-size"></span>)</span>:
the {n_words} most probable words, ranked by relevance</h2>
<div class="controls">
<span><button id="prev" type="button" aria-label="previous topic">&#9664;</button>
<button id="next" type="button" aria-label="next topic">&#9654;</button></span>
<label>relevance &lambda; = <span id="lambda-value">{lam}</span>
<input id="lambda" type="range" min="0" max="1" step="0.01" value="{lam}"></label>
</div>
<div class="legend"><i style="background:#c9d3dd"></i>overall p(w)<i style="background:#d62728"></i>from this topic:
size &times; p(w|t) <span class="k">(number: p(w|t))</span></div>
<div id="bars"></div>
<div id="error"></div>
</section>
</main>
<noscript>The map and the bars need JavaScript; the privacy summary above does not.</noscript>
<script type="application/json" id="topicdp-view-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""
