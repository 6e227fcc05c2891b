"""Sensitivity of LDA's minibatch expected sufficient statistics (Park et al. 2016, Eq. 4), and
the document-length cap it relies on.

Derivation
----------
For document d with (capped) length L_d <= N, its expected sufficient statistics are the K x V matrix
S_d[k, v] = sum_n phi_dnk w_dnv >= 0 with sum_{k,v} S_d = sum_n (sum_k phi_dnk)(sum_v w_dnv) = L_d
(phi_dn is a distribution over topics, w_dn a one-hot word). In one SVI iteration phi_d depends only on
document d and on the previous (already released, noisy) iterate, so a neighbouring corpus changes the
minibatch *sum* only through the differing document's S_d:

* add/remove one document: ||S_d||_2 <= ||S_d||_1 = L_d <= N;
* replace one document by another: S_d, S_d' >= 0, so ||S_d - S_d'||_2^2 = ||S_d||^2 + ||S_d'||^2 -
  2 <S_d, S_d'> <= ||S_d||_1^2 + ||S_d'||_1^2 <= 2 N^2, i.e. sqrt(2) N.

Both are attained in the limit (a document of N copies of one word with phi concentrated on one topic;
for replace-one, two such documents on different (topic, word) cells). Eq. 4 of the paper states N/D for
the mean over D documents under "|D - D~| = 1", i.e. N for the sum; its chain of inequalities replaces
max_{d,d'} ||S_d - S_d'|| by max_d ||S_d||_1, dropping the second document. That is right for add/remove
and too small by sqrt(2) for replace-one, which is the relation of fixed-size batches; we use sqrt(2) N
there.

Document-length cap
-------------------
The paper "limit[s] the maximum length of any document to N by randomly selecting N words in a document
if the number of words in the document is longer than N". ``policy="subsample"`` does exactly that (N
tokens uniformly without replacement, drawn once before training); ``policy="scale"`` instead multiplies
the document's counts by N / L_d (deterministic fractional counts with the same word proportions). Either
way every document has L1 mass <= N, which is all the bound needs. The number of capped documents is
returned for the report; it is a statistic of the private data and is *not* privatised.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._names import NEIGHBOURS
from .._validation import check_int, check_option, check_random_state

LENGTH_POLICIES = ("subsample", "scale")


def sstats_sensitivity(doc_length_cap: int, neighbours: str) -> float:
    """L2 sensitivity of the minibatch *sum* of expected sufficient statistics (module docstring).

    Parameters
    ----------
    doc_length_cap : int
        N, the maximum number of tokens per document after capping.
    neighbours : {"add-remove", "replace-one"}

    Returns
    -------
    float
        N for add/remove, sqrt(2) N for replace-one.
    """
    n = check_int(doc_length_cap, "doc_length_cap", low=1)
    check_option(neighbours, "neighbours", NEIGHBOURS)
    return float(n) if neighbours == "add-remove" else math.sqrt(2.0) * n


def paper_sensitivity(doc_length_cap: int, n_docs: int) -> float:
    """Eq. 4 as printed: Delta s-bar <= N / D for the statistics averaged over D documents."""
    return check_int(doc_length_cap, "doc_length_cap", low=1) / check_int(n_docs, "n_docs", low=1)


def cap_document_lengths(X, doc_length_cap: int, *, policy: str = "subsample",
                         random_state=None) -> tuple[sp.csr_matrix, int]:
    """Limit every document to ``doc_length_cap`` tokens (module docstring).

    Parameters
    ----------
    X : (n_docs, V) non-negative counts (integer counts for ``policy="subsample"``)
    doc_length_cap : int
    policy : {"subsample", "scale"}
    random_state : None, int or Generator

    Returns
    -------
    X_capped : csr_matrix (float64)
    n_capped : int
        Number of documents that were longer than the cap.
    """
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
    counts = np.round(X.data).astype(np.int64)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    tok_doc, tok_word = np.repeat(rows, counts), np.repeat(X.indices, counts)
    order = np.lexsort((rng.random(tok_doc.size), tok_doc))
    tok_doc, tok_word = tok_doc[order], tok_word[order]
    lengths = np.bincount(tok_doc, minlength=X.shape[0])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    kept = (np.arange(tok_doc.size) - starts[tok_doc]) < cap
    out = sp.csr_matrix((np.ones(int(kept.sum())), (tok_doc[kept], tok_word[kept])), shape=X.shape)
    out.sum_duplicates()
    return out
