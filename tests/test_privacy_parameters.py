"""Every private estimator checks its privacy parameters by the one table (``PRIVACY_PARAMETERS``) and states the library's one default neighbour relation unless its mechanism can state only another."""

from __future__ import annotations

import numpy as np
import pytest

from topicdp import Corpus, TopicDP
from topicdp.baselines import DPStochasticVI
from topicdp.spectral import DPSpectralMoments
from topicdp.variational import DPVariationalEM
from topicdp._names import DEFAULT_NEIGHBOURS, Neighbours, Unit
from topicdp._validation import PRIVACY_PARAMETERS
from topicdp.adapters import make_model

ESTIMATORS = {
    "TopicDP": lambda **p: TopicDP(make_model("sklearn-lda", 2), sensitivity="global", **p),
    "DPVariationalEM": lambda **p: DPVariationalEM(2, **p),
    "DPSpectralMoments": lambda **p: DPSpectralMoments(2, **p),
    "DPStochasticVI": lambda **p: DPStochasticVI(2, **p),
}
BAD = [("epsilon", -1.0, r"epsilon must be in \(0, inf\), got -1"), ("delta", 1.5, r"delta must be in \(0, 1\), got 1.5"),
       ("unit", "person", "unit must be one of 'user', 'document'; got 'person'"),
       ("neighbours", "swap", "neighbours must be one of 'replace-one', 'add-remove'; got 'swap'")]


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(0)
    words = ["apple", "river", "stone", "cloud", "music", "paper", "table", "green", "light", "water", "money", "train"]
    texts = [" ".join(rng.choice(words, size=20)) for _ in range(30)]
    return Corpus.from_texts(texts, [i // 3 for i in range(30)], vocabulary=words)


# the parameters each estimator takes (DPStochasticVI is document-level add/remove by construction; DPSpectralMoments's relation
# follows its stated n_units)
CASES = [(name, *bad) for name, make in ESTIMATORS.items() for bad in BAD if hasattr(make(), bad[0])]


def test_the_cases_cover_every_estimator_and_every_parameter():
    assert {c[0] for c in CASES} == set(ESTIMATORS) and {c[1] for c in CASES} == set(PRIVACY_PARAMETERS)


@pytest.mark.parametrize("name, param, value, message", CASES)
def test_every_private_estimator_refuses_a_privacy_parameter_with_the_tables_message(name, param, value, message,
                                                                                    tiny):
    estimator = ESTIMATORS[name]()
    with pytest.raises(ValueError, match=message):
        estimator.set_params(**{param: value}).fit(tiny)
    # the same words as the table's own check: one statement of each constraint
    with pytest.raises(ValueError, match=message):
        PRIVACY_PARAMETERS[param](value)


def test_one_default_neighbour_relation():
    """Add/remove where the number of units is not stated, for every estimator that takes a relation; TopicDP's
    sampled road states replace-one, the only relation its sampler draws."""
    assert DEFAULT_NEIGHBOURS == Neighbours.ADD_REMOVE
    assert DPVariationalEM().neighbours == DEFAULT_NEIGHBOURS
    assert TopicDP(make_model("sklearn-lda", 2), sensitivity="global")._neighbours == DEFAULT_NEIGHBOURS
    assert TopicDP(make_model("sklearn-lda", 2), mechanism="laplace", sensitivity="global")._neighbours == "add-remove"
    assert TopicDP(make_model("sklearn-lda", 2))._neighbours == Neighbours.REPLACE_ONE


def test_a_global_release_states_the_default_relation_and_the_enums_read_as_their_strings(tiny):
    released = TopicDP(make_model("sklearn-lda", 2), sensitivity="global", unit=Unit.DOCUMENT,
                       random_state=0).fit(tiny).release_
    assert released.report.neighbours == "add-remove" and released.report.unit == "document"
    assert "Unit" not in repr(TopicDP(make_model("sklearn-lda", 2), unit=Unit.DOCUMENT))
