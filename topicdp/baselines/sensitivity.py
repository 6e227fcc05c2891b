"""Sensitivity of LDA's minibatch sufficient statistics (Park et al. 2016, Eq. 4), and the document-length cap.

In one SVI iteration phi_d depends only on document d and the released iterate, so a neighbour changes the minibatch
sum only through ``S_d[k, v] = sum_n phi_dnk w_dnv >= 0``, of mass ``L_d <= N`` under the cap: add/remove,
``||S_d||_2 <= ||S_d||_1 <= N``; replace, ``||S_d - S_d'||_2^2 <= ||S_d||_1^2 + ||S_d'||_1^2 <= 2 N^2``, i.e.
``sqrt(2) N``; both attained in the limit (Eq. 4's proof drops the second document of a replace-one pair). The cap
``"subsample"`` keeps N tokens uniformly without replacement (the paper's), ``"scale"`` multiplies the counts by
``N / L_d``; how many documents were capped is private, not privatised.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._names import neighbour_factor
from .._validation import check_int, check_option, check_random_state

LENGTH_POLICIES = ("subsample", "scale")


def sstats_sensitivity(doc_length_cap: int, neighbours: str) -> float:
    """L2 sensitivity of the minibatch sum of sufficient statistics: N for add/remove, sqrt(2) N for replace-one."""
    n = check_int(doc_length_cap, "doc_length_cap", low=1)
    return neighbour_factor(neighbours) * n


def cap_document_lengths(X, doc_length_cap: int, *, policy: str = "subsample",
                         random_state=None) -> tuple[sp.csr_matrix, int]:
    """Limit every document to ``doc_length_cap`` tokens (module docstring); returns the capped float64 counts and the
    number of documents that were longer."""
    cap = check_int(doc_length_cap, "doc_length_cap", low=1)
    check_option(policy, "length_policy", LENGTH_POLICIES)
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    long_docs = np.flatnonzero(lengths > cap)
    if long_docs.size == 0:
        return X, 0
    if policy == "scale":
        factors = np.ones(X.shape[0])
        factors[long_docs] = cap / lengths[long_docs]
        return sp.csr_matrix(sp.diags(factors) @ X), int(long_docs.size)
    rng = check_random_state(random_state)
    sub = X[long_docs]
    if not np.allclose(sub.data, np.round(sub.data)):
        raise ValueError("policy='subsample' needs integer token counts; use policy='scale'")
    capped = _subsample_tokens(sub, cap, rng)
    keep = np.setdiff1d(np.arange(X.shape[0]), long_docs)
    out = sp.vstack([X[keep], capped], format="csr")
    order = np.empty(X.shape[0], dtype=np.int64)  # undo the keep/long split
    order[np.concatenate([keep, long_docs])] = np.arange(X.shape[0])
    return out[order], int(long_docs.size)


def _subsample_tokens(X: sp.csr_matrix, cap: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Keep ``cap`` tokens of each row uniformly without replacement (random keys sorted per row)."""
    from ..inference.perplexity import shuffled_tokens, token_matrix

    tok_doc, tok_word, rank = shuffled_tokens(X, np.round(X.data).astype(np.int64), rng)
    return token_matrix(tok_doc, tok_word, rank < cap, X.shape)
