"""An interactive, self-contained HTML view of a release, in the manner of LDAvis.

:func:`release_html` writes one HTML file that a browser opens offline (no network, no CDN: the CSS and the
script are inline and hand-written). It shows the elements of LDAvis (Sievert & Shirley 2014, "LDAvis: A
method for visualizing and interpreting topics"):

* an **intertopic distance map**: the topics placed in the plane by classical multidimensional scaling
  (:func:`classical_mds`) of the Jensen-Shannon distances between the released topic rows
  (:func:`js_distances`), each drawn as a circle whose area is the topic's size where the release publishes sizes
  (below), else all circles equal, with no size printed;
* for the selected topic (click a circle), its words as horizontal bars, ranked by **relevance**
  (:func:`relevance`, Sievert & Shirley's Eq. 1) with a slider for the weight lambda in [0, 1];
* the release's privacy summary: first the report's headline (:meth:`topicdp.report.PrivacyReport.headline`:
  the certified guarantee) and, for a release forced past its plan's refusal, that statement
  (:meth:`topicdp.report.PrivacyReport.released_against_forecast`), then the kind, unit, neighbour relation, requested epsilon, delta, and the caveats.

A release over time gets the same page with a selector of the period shown, the series' guarantee first
(:func:`topicdp.pipeline.over_time.over_time_html`).

The page opens on lambda = 1 (:data:`DEFAULT_LAMBDA`): the bars are then the words ``release.top_words()``
prints, in its order. The circles are laid out by :func:`circle_layout`: the MDS positions, moved apart where
circles would cover one another, so distances on the map are approximate.

The page is **publishable**: it is computed from the published part of the release only (what
:meth:`topicdp.private_release.PrivateRelease.to_dict` writes: ``topic_word``, ``vocabulary``, ``extra``, ``report``),
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

from typing import Any, Mapping

from ._view_page import (DEFAULT_LAMBDA, EQUAL_SIZES, MAP_MARGIN, MAP_SIZE, MAX_OVERLAP, VIEW_FORMAT, circle_layout,
                         classical_mds, js_distances, lens_area, page_data, page_html, relevance, topic_sizes,
                         worst_overlap)

__all__ = ["VIEW_FORMAT", "EQUAL_SIZES", "DEFAULT_LAMBDA", "MAP_SIZE", "MAP_MARGIN", "MAX_OVERLAP", "js_distances",
           "classical_mds", "relevance", "lens_area", "worst_overlap", "circle_layout", "topic_sizes", "view_data",
           "release_html"]


def view_data(release, n_words: int = 30, relevance_lambda: float = DEFAULT_LAMBDA) -> dict[str, Any]:
    """The JSON the page embeds: per topic its MDS coordinates, size, circle and top words with p(w|t) and p(w).

    Each topic's circle (``cx``, ``cy``, ``r``, in the map's SVG units, y downwards) is :func:`circle_layout`'s,
    and ``map.origin`` is where the MDS origin is drawn; the script draws them as they are.

    Parameters are those of :func:`release_html`. Computed from ``release.to_dict()`` only.
    """
    return page_data(_published(release), n_words=n_words, relevance_lambda=relevance_lambda)


def release_html(release, path=None, *, n_words: int = 30, relevance_lambda: float = DEFAULT_LAMBDA,
                 title: str | None = None, overwrite: bool = True) -> str:
    """One self-contained HTML page that shows a release interactively (LDAvis' elements; module docstring).

    Post-processing of the published release only, so the page may be published with it.

    Parameters
    ----------
    release : PrivateRelease or mapping
        A release, or its published dict (``release.to_dict()``, or ``json.load`` of a file written by
        ``release.save``; checked against :data:`topicdp.private_release.SCHEMA`).
    path : str or path-like, optional
        Where to write the page (UTF-8; atomically: a reader never sees half a page).
    n_words : int, default=30
        Words kept per topic (at least 1; at most the vocabulary's size is used).
    relevance_lambda : float in [0, 1], default=1
        The slider's initial lambda: 1 opens on the words ``release.top_words()`` prints, in its order.
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
    >>> release = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(corpus).release_
    >>> page = release_html(release, n_words=10)
    >>> page.startswith("<!DOCTYPE html>") and 'type="application/json"' in page
    True
    """
    return page_html(_published(release), path, n_words=n_words, relevance_lambda=relevance_lambda, title=title,
                     overwrite=overwrite)


def _published(release) -> dict[str, Any]:
    """The published dict of a PrivateRelease, or a given published dict after the schema check."""
    from .private_release import SCHEMA, PrivateRelease, validate

    if isinstance(release, PrivateRelease):
        return release.to_dict()
    if isinstance(release, Mapping):
        data = dict(release)
        validate(data, SCHEMA)
        return data
    raise TypeError(f"release must be a PrivateRelease or its published dict (to_dict()), got {type(release).__name__}")
