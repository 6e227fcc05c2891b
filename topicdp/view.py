"""An interactive, self-contained HTML view of a release in the manner of LDAvis (Sievert & Shirley 2014, "LDAvis: A
method for visualizing and interpreting topics"), one file a browser opens offline (:func:`release_html`).

An intertopic distance map (classical MDS, :func:`classical_mds`, of the Jensen-Shannon distances between the released
rows, :func:`js_distances`, as circles that do not cover one another, :func:`circle_layout`: distances approximate);
the selected topic's words as bars ranked by relevance (:func:`relevance`, Eq. 1) with a lambda slider opening at 1
(``release.top_words()``'s order); the privacy summary, headline and caveats first. A release over time gets a period
selector (:func:`topicdp.pipeline.over_time.over_time_html`). Publishable: computed from ``to_dict()`` only
(post-processing). Sizes are ``alpha_k / alpha_0`` where Dirichlet parameters are a DP output (the spectral road),
else equal and unprinted (LDAvis' token counts are private here); ``p(w)`` is the size-weighted mean of the released
rows; only each topic's ``n_words`` most probable words are embedded, and relevance re-ranks those.
"""

from __future__ import annotations

from typing import Any, Mapping

from .private_release import SCHEMA, PrivateRelease, validate
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
    published part only, publishable with it.

    ``release``: a PrivateRelease or its published dict (checked against :data:`topicdp.private_release.SCHEMA`);
    ``path``: where to write the page, atomically (an existing one ``FileExistsError`` unless ``overwrite``);
    ``relevance_lambda`` in [0, 1]: the slider's start; ``n_words``: words kept per topic; ``title``: the heading.

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
    if isinstance(release, PrivateRelease):
        return release.to_dict()
    if isinstance(release, Mapping):
        data = dict(release)
        validate(data, SCHEMA)
        return data
    raise TypeError(f"release must be a PrivateRelease or its published dict (to_dict()), got {type(release).__name__}")
