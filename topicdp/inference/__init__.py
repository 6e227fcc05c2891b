"""Inference primitives every road shares: LDA's variational E-step (:mod:`.estep`), fold-in under fixed topics and
held-out perplexity (:mod:`.perplexity`). A low layer (numpy, scipy and
:mod:`topicdp._validation` only), imported downward by the estimators, ``transform`` and the metrics."""

from .estep import batch_e_step, dirichlet_expectation, document_gamma
from .perplexity import check_alpha, check_topic_word, fold_in_theta, heldout_perplexity, infer_theta, split_documents

__all__ = [
    "dirichlet_expectation", "batch_e_step", "document_gamma", "infer_theta", "fold_in_theta", "check_topic_word",
    "check_alpha", "heldout_perplexity", "split_documents"
]
