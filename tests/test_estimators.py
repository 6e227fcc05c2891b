"""scikit-learn conventions of the estimators: clone, get_params / set_params."""

import pytest
from sklearn.base import clone

from topicdp.baselines import DPStochasticVI
from topicdp.spectral import DPSpectralMoments, SpectralLDA
from topicdp.variational import DPVariationalEM


@pytest.mark.parametrize("estimator", [
    DPVariationalEM(5, epsilon=2.0, unit="document"),
    DPStochasticVI(5, epsilon=2.0),
    SpectralLDA(n_topics=5, alpha0=1.0),
    DPSpectralMoments(n_topics=5, alpha0=1.0, configuration=1, epsilon=1.0, delta=1e-6),
], ids=lambda e: type(e).__name__)
def test_clone_keeps_every_parameter(estimator):
    copy = clone(estimator)
    assert copy is not estimator and copy.get_params() == estimator.get_params()
    copy.set_params(n_topics=3)
    assert copy.n_topics == 3 and estimator.n_topics == 5
