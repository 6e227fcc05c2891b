"""TopicDP on the real Enron corpus (skipped where ../shared/data is absent)."""

import numpy as np
import pytest

from topicdp import Corpus, TopicDP, make_model
from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling
from topicdp.rdp import calibrate_gaussian


@pytest.fixture(scope="module")
def enron_subset(enron_path):
    corpus = Corpus.from_jsonl(enron_path, min_df=3, max_df=0.5, max_features=500)
    return corpus.subset_users(np.arange(10)).bound(max_docs_per_user=10, max_tokens_per_doc=300, random_state=0)


def _release(name, corpus):
    return TopicDP(make_model(name, 5, 0), epsilon=3.0, delta=1e-4, unit="user", n_jobs=2,
                   sampling=SensitivitySampling(PRIVATE_ORACLE, 0.1, random_state=0)).fit(
        corpus, keep_nonprivate=True).release_


@pytest.mark.parametrize("name", ["gensim-lda", "gensim-lsi"])
def test_user_level_release_with_full_h(enron_subset, name):
    r = _release(name, enron_subset)
    rep = r.report
    assert rep.guarantee == "random-DP" and rep.unit == "user"
    assert rep.details["sensitivity_sample"]["h"] == 285 and rep.details["sensitivity_sample"]["sufficient"]
    assert rep.sigma == calibrate_gaussian(3.0, 1e-4, rep.sensitivity)
    assert 0 < rep.sensitivity <= np.sqrt(2 * 5) + 1e-9  # never above the global bound for rows on the simplex
    assert rep.details["corpus"]["bounding"]["max_docs_per_user"] == 10
    assert r.diagnostics["corpus"]["construction"]["max_docs_per_user"] == 10


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gensim-hdp", "sklearn-lda"])
def test_user_level_release_slow_models(enron_subset, name):
    assert _release(name, enron_subset).report.guarantee == "random-DP"
