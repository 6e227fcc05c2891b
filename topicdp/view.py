"""An interactive, self-contained HTML view of a release, in the manner of LDAvis.

:func:`release_html` writes one HTML file a browser opens offline (inline CSS and script). It shows LDAvis'
elements (Sievert & Shirley 2014, "LDAvis: A method for visualizing and interpreting topics"): an intertopic
distance map, the topics placed by classical multidimensional scaling (:func:`classical_mds`) of the
Jensen-Shannon distances between the released rows (:func:`js_distances`) and laid out as circles that do not
cover one another (:func:`circle_layout`: distances on the map are approximate); the selected topic's words as
bars ranked by relevance (:func:`relevance`, Eq. 1) with a slider for lambda, opening at 1 on the words
``release.top_words()`` prints; and the release's privacy summary, headline and caveats first. A release over
time gets the same page with a period selector (:func:`topicdp.pipeline.over_time.over_time_html`).

The page is publishable: it is computed from the published part of the release only (``to_dict()``), so it is
post-processing. Topic sizes are ``alpha_k / alpha_0`` where the release publishes Dirichlet parameters as a DP
output (the spectral road), otherwise all equal and no size is printed (LDAvis' token counts are private here);
``p(w)`` is the size-weighted mean of the released rows, not the corpus' frequencies. Only the ``n_words`` most
probable words of each topic are embedded, so relevance re-ranks those.
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
    """The JSON the page embeds (:func:`topicdp._view_page.page_data`), from ``release.to_dict()`` only."""
    return page_data(_published(release), n_words=n_words, relevance_lambda=relevance_lambda)


def release_html(release, path=None, *, n_words: int = 30, relevance_lambda: float = DEFAULT_LAMBDA,
                 title: str | None = None, overwrite: bool = True) -> str:
    """One self-contained HTML page that shows a release interactively (module docstring): post-processing of the
    published release only, so it may be published with it.

    Parameters
    ----------
    release : PrivateRelease or mapping
        A release, or its published dict (checked against :data:`topicdp.private_release.SCHEMA`).
    path : str or path-like, optional
        Where to write the page (atomically).
    relevance_lambda : float in [0, 1], default=1
        The slider's initial lambda; ``n_words`` the words kept per topic; ``title`` the heading (default: the
        mechanism).
    overwrite : bool, default=True
        False raises ``FileExistsError`` for an existing ``path``.

    Examples
    --------
    >>> import numpy as np
    >>> from topicdp import TopicDP, CallableModel, embedded_corpus
    >>> corpus = embedded_corpus()
    >>> topics = np.random.default_rng(0).dirichlet(np.ones(corpus.n_words), size=3)
    >>> model = CallableModel(lambda c: topics, n_topics=3, name="fixed")
    >>> release = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(corpus).release_
    >>> release_html(release, n_words=10).startswith("<!DOCTYPE html>")
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
