"""The warning on repeated private fits outside a ledger (topicdp._repeats)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp._repeats import RepeatedReleaseWarning, _SEEN, document_sketch, warn_on_repeated_release
from topicdp.rdp import PrivacyLedger


@pytest.fixture(autouse=True)
def fresh():
    _SEEN.clear()
    yield
    _SEEN.clear()


def _counts(n_docs, seed):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(rng.poisson(0.3, size=(n_docs, 50)))


def test_overlapping_fits_warn_and_disjoint_ones_do_not():
    a, b = _counts(400, 0), _counts(400, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_on_repeated_release(a, "fit")
        warn_on_repeated_release(b, "fit")  # other documents: no warning
    with pytest.warns(RepeatedReleaseWarning, match="overlap those of 1 earlier"):
        warn_on_repeated_release(sp.vstack([a[:200], b[:0]]).tocsr(), "fit")  # half of a's documents


def test_a_ledger_takes_over_the_counting():
    a = _counts(100, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            warn_on_repeated_release(a, "fit", PrivacyLedger())


def test_the_sketch_is_a_function_of_the_documents_not_their_order():
    a = _counts(300, 2)
    order = np.random.default_rng(0).permutation(300)
    assert document_sketch(a) == document_sketch(a[order]) and len(document_sketch(a)) == 64


def test_a_grid_search_over_a_dp_estimator_warns():
    from sklearn.model_selection import GridSearchCV

    from topicdp.variational import DPVariationalEM

    X = _counts(120, 3)
    search = GridSearchCV(DPVariationalEM(2, epsilon=1.0, delta=1e-6, unit="document", n_iterations=1),
                          {"n_topics": [2, 3]}, cv=2)
    with pytest.warns(RepeatedReleaseWarning):
        search.fit(X)
