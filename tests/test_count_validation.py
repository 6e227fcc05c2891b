"""The one count validator (``topicdp._validation.check_count_matrix``) and its callers.

Every public entry point that takes a document-term matrix goes through it, so its messages (naming the
parameter and the allowed range) and its promise never to modify the caller's matrix hold everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp._validation import check_count_matrix
from topicdp.metrics import heldout_perplexity, infer_theta


def _with_explicit_zero_and_duplicate():
    """A COO-built CSR matrix with an explicit zero and an unsummed duplicate: canonicalising it in place would
    change its arrays."""
    X = sp.csr_matrix((np.array([2.0, 0.0, 1.0, 3.0, 1.0]), np.array([0, 1, 1, 2, 0]), np.array([0, 3, 5])),
                      shape=(2, 3))
    assert not X.has_canonical_format
    return X


def _arrays(X):
    return X.data.copy(), X.indices.copy(), X.indptr.copy()


@pytest.mark.parametrize("call", [
    lambda X: check_count_matrix(X),
    lambda X: check_count_matrix(X, integral=True, dtype=np.int64),
    lambda X: infer_theta(np.full((2, 3), 1 / 3), X),
    lambda X: heldout_perplexity(np.full((2, 3), 1 / 3), X, random_state=0),
], ids=["validator", "validator-int", "infer_theta", "heldout_perplexity"])
def test_the_input_is_never_modified(call):
    """The old perplexity validator called ``eliminate_zeros`` on a matrix sharing the caller's arrays."""
    X = _with_explicit_zero_and_duplicate()
    before = _arrays(X)
    dense = X.toarray()
    call(X)
    for a, b in zip(before, _arrays(X)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(X.toarray(), dense)


def test_result_is_a_canonical_copy():
    X = _with_explicit_zero_and_duplicate()
    out = check_count_matrix(X, integral=True, dtype=np.int64)
    assert out.dtype == np.int64 and out.has_canonical_format and 0 not in out.data
    np.testing.assert_array_equal(out.toarray(), X.toarray())
    assert not np.shares_memory(out.data, X.data)
    dense = np.array([[1.0, 0.0], [2.0, 3.0]])
    assert check_count_matrix(dense).nnz == 3 and dense[0, 0] == 1.0


@pytest.mark.parametrize("X, kwargs, match", [
    (np.array([[1.0, np.nan]]), {}, r"X must hold finite, non-negative counts \(found NaN or inf\)"),
    (np.array([[1.0, np.inf]]), {}, "found NaN or inf"),
    (np.array([[1.0, -2.0]]), {}, r"X must hold finite, non-negative counts \(found the negative value -2"),
    (np.array([[0.5, 1.0]]), {"integral": True}, r"non-negative integer counts \(found fractional values\)"),
    (np.array([1.0, 2.0]), {}, "2D"),
    (np.ones((1, 3)), {"min_docs": 2}, "1 sample"),  # scikit-learn's words, which its common checks expect
    (np.ones((3, 1)), {"min_words": 2}, "1 feature"),
    (np.ones((2, 3)), {"n_words": 4, "expected_by": "Model"}, "X has 3 features, but Model is expecting 4 features"),
])
def test_messages_name_the_parameter_and_the_property(X, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_count_matrix(X, **kwargs)


def test_fractional_counts_pass_unless_integral_is_required():
    X = np.array([[0.5, 1.0]])
    np.testing.assert_array_equal(check_count_matrix(X).toarray(), X)


def test_large_values_are_checked_in_blocks():
    """A negative entry beyond the first block is still found (the scan covers every block)."""
    data = np.ones((1 << 20) + 5)
    data[-1] = -1.0
    X = sp.csr_matrix((data, np.zeros(data.size, dtype=np.int64), np.array([0, data.size])), shape=(1, 1))
    with pytest.raises(ValueError, match="negative value -1"):
        check_count_matrix(X)
