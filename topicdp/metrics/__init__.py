"""Utility metrics for released topic-word matrices.

* :func:`l1_distance`, :func:`rmse` — released vs non-private matrix (TopicDP §4; ``convention="topicdp"``
  reproduces the paper's row-averaged definitions).
* :func:`kendall_tau_distance`, :func:`topn_kendall_distance`, :func:`mean_kendall_distance` — keyword
  rankings (TopicDP §4; Fagin et al.'s K^(p) for top-n lists with different members).
* :func:`match_topics`, :func:`recovery_error` — against ground truth after Hungarian matching.
* :func:`heldout_perplexity` — document-completion perplexity with fixed topics (with :func:`infer_theta` and
  :func:`split_documents`, defined in :mod:`topicdp.inference`, which the estimators share).
* :func:`topic_coherence` — gensim CoherenceModel (c_npmi, u_mass; c_v for older work).
* :func:`readability` — what a reader sees: held-out document NPMI, NPMI contrast, topic diversity and
  matched top-n overlap with a reference (:mod:`~topicdp.metrics.readability`); :func:`split_users`.
"""

from ..inference import heldout_perplexity, infer_theta, split_documents
from .coherence import count_unseen_topic_words, topic_coherence, topic_top_words
from .distances import l1_distance, rmse
from .ranking import kendall_tau_distance, mean_kendall_distance, top_n, topn_kendall_distance
from .readability import (
    heldout_npmi,
    heldout_user_mask,
    npmi_contrast,
    readability,
    split_users,
    top_words_matrix,
    topic_diversity,
    topic_overlap,
)
from .recovery import match_topics, recovery_error

__all__ = [
    "match_topics",
    "recovery_error",
    "l1_distance",
    "rmse",
    "kendall_tau_distance",
    "topn_kendall_distance",
    "mean_kendall_distance",
    "top_n",
    "heldout_perplexity",
    "infer_theta",
    "split_documents",
    "topic_coherence",
    "topic_top_words",
    "count_unseen_topic_words",
    "readability",
    "heldout_npmi",
    "npmi_contrast",
    "topic_diversity",
    "topic_overlap",
    "top_words_matrix",
    "split_users",
    "heldout_user_mask",
]
