"""The release contract, checked over every producer of a :class:`PrivateRelease`.

Modelled on dp-accounting's ``PrivacyAccountantTest`` (one base of checks every accountant inherits) and
scikit-learn's common estimator checks: each producer below is run on a pair of neighbouring datasets
(at the unit and neighbour relation its report states) with the same fixed noise seed, and on the first
one without a seed. Every producer must give

1. a published part that validates against :data:`topicdp.private_release.SCHEMA` and states a status for every
   field (the allow-list), and that round-trips through ``save``/``load``;
2. a certified epsilon (the smallest valid ``composition_total`` at the report's delta) within the target
   under the stated accounting, and a report epsilon within the target too;
3. ``seeded`` exactly when a noise seed was given;
4. no published field derived from the private data except through a DP mechanism: between the two
   neighbouring releases, only fields whose status is "DP" or "post-processing" may differ (with the same
   noise seed, a field that differs is a function of the private data), and the DP fields must differ.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from topicdp import CallableModel, Corpus, PrivateRelease, TopicDP
from topicdp.samplers import SensitivitySampling
from topicdp.datasets import synthetic_lda
from topicdp.report import NOISED_STATUSES
from topicdp.private_release import SCHEMA, published_paths, status_of, unlisted_paths, validate

# the contract releases each corpus and its neighbours with every mechanism: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


TOL = 1 + 1e-9  # the totals are computed in floating point; a calibration meets its target to ~1e-15


# -- tiny neighbouring datasets ------------------------------------------------------------------------

def _user_corpora() -> tuple[Corpus, Corpus, Corpus]:
    """Private corpus D, its neighbour D' (user 0 replaced by a user with other words and another number of
    documents), and a disjoint public reference with the same vocabulary. 12 users, 25 words."""
    data = synthetic_lda(130, 25, 3, alpha0=1.0, mean_length=40, random_state=3)
    X = data.X.tocsr()
    vocab = [f"w{j}" for j in range(25)]
    users = np.arange(60) // 5  # 12 users x 5 documents
    D = Corpus.from_matrix(X[:60], vocab, users)
    replaced = np.concatenate([X[60:63].toarray(), X[5:60].toarray()])  # user 0 now owns 3 other documents
    D_prime = Corpus.from_matrix(replaced, vocab, np.concatenate([[0, 0, 0], users[5:]]))
    reference = Corpus.from_matrix(X[70:130], vocab, np.arange(60) // 5)
    return D, D_prime, reference


def _unigram(corpus) -> np.ndarray:
    """A deterministic, cheap f: the add-one smoothed unigram distribution (one topic, on the simplex)."""
    counts = np.asarray(corpus.X.sum(axis=0)).ravel() + 1.0
    return (counts / counts.sum())[None, :]


UNIGRAM = CallableModel(_unigram, n_topics=1, name="unigram")


@dataclass
class Producer:
    name: str
    run: Callable  # (which: 0 for D, 1 for D', seed) -> PrivateRelease
    epsilon: float
    delta: float


def _topicdp(**kwargs) -> Callable:
    D, D_prime, reference = _user_corpora()
    if kwargs.get("sensitivity") == "sampled":
        kwargs["sampling"] = SensitivitySampling(reference, 0.3, random_state=0)

    def run(which: int, seed):
        return TopicDP(UNIGRAM, epsilon=2.0, delta=1e-5, random_state=seed, **kwargs).fit(
            (D, D_prime)[which], vocabulary_source="public").release_

    return run


def _spectral(which: int, seed):
    from topicdp.spectral import DPSpectralMoments

    X = synthetic_lda(2000, 20, 2, alpha0=1.0, mean_length=30, random_state=5).X.tocsr()
    if which:  # replace document 0 by another document of >= 3 tokens: same N, same number of short documents
        X = X.tolil()
        X[0] = np.r_[np.full(3, 2.0), np.zeros(17)]
        X = X.tocsr()
    return DPSpectralMoments(2, 1.0, 1, epsilon=50.0, delta=1e-6, unit="document", random_state=seed).fit(X).release_


def _dpsvi(which: int, seed):
    from topicdp.baselines import DPStochasticVI

    X = synthetic_lda(300, 20, 2, mean_length=30, random_state=6).X.tocsr()
    X = X[1:] if which else X  # Poisson sampling: add/remove-one-document neighbours
    return DPStochasticVI(2, epsilon=2.0, delta=1e-5, sampling_rate=0.1, n_iterations=5, doc_length_cap=20,
                 random_state=seed).fit(X).release_


def _mvg(which: int, seed):
    from topicdp.mechanisms import mvg_release

    W = np.full((3, 4), 0.25)
    if which:  # a neighbouring output within the stated sensitivity 0.2
        W = W + np.array([[0.1, -0.1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    return mvg_release(W, 3.0, 1e-4, 0.2, random_state=seed)


PRODUCERS = [
    Producer("topicdp-gaussian-sampled-public-P", _topicdp(sensitivity="sampled"), 2.0, 1e-5),
    Producer("topicdp-gaussian-global", _topicdp(sensitivity="global"), 2.0, 1e-5),
    Producer("topicdp-laplace", _topicdp(mechanism="laplace", sensitivity="global"), 2.0, 0.0),
    Producer("topicdp-secure-noise", _topicdp(sensitivity="global", secure_noise=True), 2.0, 1e-5),
    Producer("spectral-config-1", _spectral, 50.0, 1e-6),
    Producer("dpsvi", _dpsvi, 2.0, 1e-5),
    Producer("mvg", _mvg, 3.0, 1e-4),
]


@pytest.fixture(scope="module", params=PRODUCERS, ids=lambda p: p.name)
def produced(request):
    p = request.param
    return p, p.run(0, 11), p.run(1, 11), p.run(0, None)


# -- the checks ----------------------------------------------------------------------------------------

def test_published_part_follows_the_schema_and_states_every_status(produced):
    _, release, _, _ = produced
    data = release.to_dict()
    validate(data, SCHEMA)
    assert unlisted_paths(data, release.statuses()) == []
    # the allow-list can fail: an unlisted field, or one the schema does not know, is refused
    with pytest.raises(ValueError, match="not allowed"):
        validate({**data, "n_docs": 60}, SCHEMA)
    assert unlisted_paths({**data, "report": {**data["report"], "details": {"n_docs": 60}}},
                          release.statuses()) == ["report.details.n_docs"]


def test_json_round_trip(produced, tmp_path):
    _, release, _, _ = produced
    path = tmp_path / "release.json"
    release.save(path)
    back = PrivateRelease.load(path)
    assert back.to_dict() == json.loads(path.read_text()) == release.to_dict()
    assert back.report == release.report


def test_certified_epsilon_within_target(produced):
    p, release, _, _ = produced
    rep = release.report
    valid = [t for t in rep.composition_total if t["valid"]]
    assert valid, "a release must state at least one proven total"
    assert rep.certified_epsilon() <= p.epsilon * TOL
    assert rep.epsilon <= p.epsilon * TOL and rep.delta <= p.delta * TOL
    assert rep.guarantee in ("approx-DP", "random-DP")


def test_seeded_flag(produced):
    _, seeded, _, unseeded = produced
    assert seeded.report.seeded and not unseeded.report.seeded


def test_only_dp_fields_depend_on_the_private_data(produced):
    """Same noise seed, neighbouring data: a published field that differs is a function of the data, so
    its status must be DP or post-processing; and the DP output itself must differ."""
    _, a, b, _ = produced
    assert a.report.published == b.report.published
    statuses = a.statuses()
    flat_a, flat_b = published_paths(a.to_dict()), published_paths(b.to_dict())
    assert flat_a.keys() == flat_b.keys()
    differing = {path for path in flat_a if flat_a[path] != flat_b[path]}
    leaking = {path: status_of(path, statuses) for path in differing
               if not status_of(path, statuses).startswith(NOISED_STATUSES)}
    assert leaking == {}
    assert "topic_word" in differing
    assert not any(status.startswith("NOT COVERED") for status in statuses.values())


def test_the_neighbour_check_catches_a_leak():
    """The check above can fail: publish the exact number of documents (which differs between user-level
    neighbours) under a 'public' status and it is caught."""
    run = _topicdp(sensitivity="global")
    a, b = run(0, 1), run(1, 1)
    fa, fb = published_paths(a.to_dict()), published_paths(b.to_dict())
    fa["report.details.corpus.n_docs"], fb["report.details.corpus.n_docs"] = 60, 58
    statuses = {**a.statuses(), "report.details.corpus.n_docs": "public"}
    differing = {p for p in fa if fa[p] != fb[p]}
    assert any(not status_of(p, statuses).startswith(NOISED_STATUSES) for p in differing)


def test_the_sampled_road_with_a_public_p_has_data_independent_sigma():
    """With a public reference P, Delta_s and sigma are functions of P, N, the vocabulary, the model and
    the sampler seed: identical on neighbouring corpora, hence public."""
    run = _topicdp(sensitivity="sampled")
    a, b = run(0, None), run(1, None)
    assert a.report.sensitivity == b.report.sensitivity and a.report.sigma == b.report.sigma
    assert a.report.guarantee == "random-DP" and math.isfinite(a.report.sigma)
