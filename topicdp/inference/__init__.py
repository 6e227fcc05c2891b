"""Inference primitives every road shares: LDA's variational E-step, fold-in and held-out perplexity.

A low layer of the package (it imports only :mod:`topicdp._validation`, numpy and scipy), imported
*downward* by the estimators (:mod:`topicdp.baselines`, :mod:`topicdp.variational`), by ``transform``
(:mod:`topicdp.transform`) and by the metrics (:mod:`topicdp.metrics`):

* :mod:`~topicdp.inference.estep` — the batched variational E-step of LDA (Blei, Ng & Jordan 2003
  Eqs. 6-7; Hoffman, Blei & Bach 2010 Alg. 2): :func:`dirichlet_expectation`, :func:`batch_e_step`,
  :func:`document_gamma`, :func:`document_sstats`.
* :mod:`~topicdp.inference.foldin` — topic proportions of documents under fixed (released) topics:
  :func:`infer_theta`, and its validators :func:`check_topic_word`, :func:`check_alpha`.
* :mod:`~topicdp.inference.perplexity` — document-completion held-out perplexity (Wallach et al. 2009):
  :func:`heldout_perplexity`, :func:`split_documents`.
"""

from .estep import batch_e_step, dirichlet_expectation, document_gamma, document_sstats
from .foldin import check_alpha, check_topic_word, fold_in_theta, infer_theta
from .perplexity import heldout_perplexity, split_documents

__all__ = [
    "dirichlet_expectation",
    "batch_e_step",
    "document_gamma",
    "document_sstats",
    "infer_theta",
    "fold_in_theta",
    "check_topic_word",
    "check_alpha",
    "heldout_perplexity",
    "split_documents",
]
