"""Utility metrics for released topic-word matrices: L1 and RMSE against the non-private matrix (TopicDP §4),
recovery error after Hungarian matching, held-out perplexity (defined in
:mod:`topicdp.inference`), and the readability measures a reader sees
(:mod:`~topicdp.metrics.readability`).
"""

from ..inference import heldout_perplexity, infer_theta, split_documents
from .distances import l1_distance, rmse
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
    "heldout_perplexity",
    "infer_theta",
    "split_documents",
    "readability",
    "heldout_npmi",
    "npmi_contrast",
    "topic_diversity",
    "topic_overlap",
    "top_words_matrix",
    "split_users",
    "heldout_user_mask",
]
