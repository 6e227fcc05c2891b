import json

import numpy as np
import pytest
from scipy.stats import norm

from topicdp import CallableModel, GensimLDA, PrivacyLedger, PrivacyReport, PrivateRelease, TopicDP
from topicdp.mechanisms.postprocess import project_to_simplex
from topicdp.rdp import calibrate_gaussian
from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling

# these tests release the same small corpus many times on purpose (seeds, mechanisms, clones): the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


def exact_delta(sigma, eps, sens):
    """Balle & Wang (2018) Thm. 8, written here independently of topicdp.rdp."""
    a = sens / (2 * sigma)
    b = eps * sigma / sens
    return norm.cdf(a - b) - np.exp(eps) * norm.cdf(-a - b)


# the profile evaluated by two different floating-point routes agrees to ~1e-15 relative
TOL = 1 + 1e-9


@pytest.fixture(scope="module")
def small(lee_corpus):
    return lee_corpus.subset_documents(np.arange(60))


@pytest.fixture(scope="module")
def reference(lee_corpus):
    """Other Lee documents, disjoint from ``small``: a public reference P with the same vocabulary."""
    return lee_corpus.subset_documents(np.arange(60, 120))


@pytest.fixture(scope="module")
def quick_release(small, reference):
    dp = TopicDP(GensimLDA(4, random_state=0), epsilon=3.0, delta=1e-4, random_state=0,
                 sampling=SensitivitySampling(reference, 0.1, n_pairs=6, insecure_testing=True, random_state=0))
    return dp.fit(small, keep_nonprivate=True).release_


def test_release_shapes_and_postprocessing(quick_release, small):
    r = quick_release
    assert r.topic_word.shape == (4, small.n_words) == r.noisy.shape
    assert np.all(r.topic_word >= 0) and np.allclose(r.topic_word.sum(axis=1), 1.0)
    assert len(r.top_words(5)) == 4 and len(r.top_words(5)[0]) == 5
    assert r.nonprivate is not None and not np.array_equal(r.noisy, r.nonprivate)


def test_report_says_what_was_guaranteed(quick_release):
    rep = quick_release.report
    assert rep.guarantee == "none"  # too few pairs: the report must not claim random DP
    assert rep.published["noisy"].startswith("NOT COVERED") and rep.published["topic_word"].startswith("NOT COVERED")
    assert any("NO GUARANTEE" in n for n in rep.notes)
    assert rep.unit == "user" and rep.neighbours == "replace-one" and rep.seeded
    assert rep.sampling_distribution["kind"] == "public-reference"
    assert rep.published["report.sigma"].startswith("public")  # sigma depends on P, N and the vocabulary only
    assert rep.sigma == calibrate_gaussian(3.0, 1e-4, rep.sensitivity)
    assert exact_delta(rep.sigma, 3.0, rep.sensitivity) <= 1e-4 * TOL
    assert set(rep.sigma_alternatives) >= {"analytic", "rdp", "paper"}
    assert PrivacyReport.from_json(rep.to_json()) == rep


def test_noise_has_the_calibrated_scale(quick_release):
    """noisy - W ~ N(0, sigma^2) i.i.d.: the sample variance of n = K V entries has relative sd
    sqrt(2/n) < 0.02 here, so a 5-sd band is 10%."""
    r = quick_release
    resid = r.noisy - r.nonprivate
    assert abs(resid.std() / r.report.sigma - 1) < 5 * np.sqrt(2 / resid.size)
    assert abs(resid.mean()) < 5 * r.report.sigma / np.sqrt(resid.size)


def test_full_h_is_random_dp(small, reference):
    uniform = CallableModel(lambda c: (np.asarray(c.X.sum(axis=0)) + 1.0) / (c.n_tokens + c.n_words), n_topics=1,
                            name="unigram")
    r = TopicDP(uniform, epsilon=1.0, delta=1e-5, sampling=SensitivitySampling(reference, 0.2, random_state=1)).fit(small).release_
    assert r.report.guarantee == "random-DP" and r.report.details["sensitivity_sample"]["h"] == 61
    assert "not differential privacy" in r.report.notes[0]
    assert not r.report.seeded


def test_global_gaussian_and_laplace_baselines(small):
    model = GensimLDA(3, random_state=0)
    g = TopicDP(model, epsilon=2.0, delta=1e-5, sensitivity="global", random_state=1).fit(small).release_
    assert g.report.guarantee == "approx-DP" and g.report.sensitivity == pytest.approx(np.sqrt(6))
    assert exact_delta(g.report.sigma, 2.0, np.sqrt(6)) <= 1e-5 * TOL
    lap = TopicDP(model, epsilon=2.0, mechanism="laplace", sensitivity="global", random_state=1).fit(
        small, keep_nonprivate=True).release_
    assert lap.report.delta == 0.0 and lap.report.sigma == pytest.approx(6 / 2.0)
    # Laplace(b): E|x| = b; the mean of n absolute values has sd b/sqrt(n)
    resid = np.abs(lap.noisy - lap.nonprivate)
    assert abs(resid.mean() - 3.0) < 5 * 3.0 / np.sqrt(resid.size)


def test_seeded_noise_reproduces_and_unseeded_differs(small):
    model = CallableModel(lambda c: np.full((1, c.n_words), 1.0 / c.n_words), n_topics=1, name="const")
    kw = dict(delta=1e-4, sensitivity="global")
    a = TopicDP(model, epsilon=1.0, random_state=7, **kw).fit(small).release_
    b = TopicDP(model, epsilon=1.0, random_state=7, **kw).fit(small).release_
    c = TopicDP(model, epsilon=1.0, **kw).fit(small).release_
    assert np.array_equal(a.noisy, b.noisy) and not np.array_equal(a.noisy, c.noisy)


def test_release_save_load(tmp_path, quick_release):
    path = tmp_path / "r.json"
    quick_release.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "topicdp.release/2" and "nonprivate" not in json.dumps(data)
    back = PrivateRelease.load(path)
    assert np.array_equal(back.topic_word, quick_release.topic_word) and back.report == quick_release.report
    with pytest.raises(ValueError, match="save_diagnostics"):
        quick_release.save(path, include_nonprivate=True)
    quick_release.save_diagnostics(tmp_path / "d.json", include_nonprivate=True)
    private = json.loads((tmp_path / "d.json").read_text())
    assert private["diagnostics"]["corpus"]["fingerprint"] == quick_release.diagnostics["corpus"]["fingerprint"]
    assert np.array_equal(private["nonprivate"], quick_release.nonprivate)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"epsilon": 1.0, "delta": 0.0}, "delta"),
        ({"epsilon": 1.0, "unit": "tenant"}, "unit"),
        ({"epsilon": 1.0, "mechanism": "laplace"}, "laplace"),
        ({"epsilon": 1.0, "calibration": "magic"}, "calibration"),
        ({"epsilon": 1.0}, "distribution=.*private-oracle.*sensitivity='global'"),  # no default P
        ({"epsilon": 1.0, "sampling": SensitivitySampling()}, "distribution=.*private-oracle"),  # P not given
        ({"epsilon": 1.0, "sensitivity": "global", "sampling": SensitivitySampling(PRIVATE_ORACLE)},
         "sampling applies to .*sampled"),
    ],
)
def test_bad_parameters(kwargs, match, small):
    """scikit-learn's rule: the constructor only stores; fit refuses before fitting anything."""
    fits = []
    model = CallableModel(lambda c: fits.append(1) or np.full((2, c.n_words), 1.0 / c.n_words), n_topics=2)
    dp = TopicDP(model, **kwargs)
    assert dp.get_params()["epsilon"] == kwargs["epsilon"]
    with pytest.raises(ValueError, match=match):
        dp.fit(small)
    assert fits == [] and not hasattr(dp, "release_")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"gamma": 0.5}, "gamma"),
        ({"distribution": "private"}, "private-oracle"),
        ({"sizing": "magic"}, "sizing"),
        ({"max_minutes": 0.0}, "max_minutes"),
    ],
)
def test_bad_sampling_options_are_refused_when_made(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SensitivitySampling(**kwargs)


def test_a_model_that_is_not_a_spec_is_refused_by_fit(small):
    dp = TopicDP(lambda c: np.full((2, c.n_words), 1.0 / c.n_words), epsilon=1.0, sensitivity="global")
    with pytest.raises(TypeError, match="TopicModelSpec"):
        dp.fit(small)


def test_clone_keeps_parameters_and_no_ledger_is_kept(small):
    """A privatizer keeps no ledger: a clone has the same parameters, and each fit without a ledger composes
    that release alone."""
    from sklearn.base import clone

    model = CallableModel(lambda c: np.full((2, c.n_words), 1.0 / c.n_words), n_topics=2)
    dp = TopicDP(model, epsilon=2.0, delta=1e-5, sensitivity="global", secure_noise=True, random_state=1)
    assert dp.calibration == "auto"  # secure_noise no longer rewrites it; the report states "rdp"
    first = dp.fit(small).report_
    copy = clone(dp)
    params, copied = dp.get_params(deep=False), copy.get_params(deep=False)
    assert copied.pop("model").get_params() == params.pop("model").get_params() and copied == params
    assert not hasattr(dp, "ledger") and not hasattr(copy, "release_")
    second = copy.fit(small).report_
    assert len(first.composition) == 1 and len(second.composition) == 1


def test_nondeterministic_model_is_refused(small):
    rng = np.random.default_rng()
    model = CallableModel(lambda c: rng.dirichlet(np.ones(c.n_words), size=2), n_topics=2, name="random")
    sampling = SensitivitySampling(PRIVATE_ORACLE, n_pairs=2, insecure_testing=True)
    with pytest.raises(ValueError, match="not deterministic"):
        TopicDP(model, epsilon=1.0, delta=1e-4, sampling=sampling).fit(small)


def test_composition_of_repeated_releases(small):
    """Two Gaussian releases with the same sigma compose exactly to one with sensitivity sqrt(2) Delta
    (Dong, Roth & Su 2022): the report's exact total equals that Gaussian's epsilon."""
    from topicdp.rdp import gaussian_epsilon

    model = GensimLDA(3, random_state=0)
    dp = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global")
    ledger = PrivacyLedger()  # shared by the two releases of the same data
    first = dp.fit(small, ledger=ledger).report_
    second = dp.fit(small, ledger=ledger).report_
    exact = lambda rep: next(t for t in rep.composition_total if t["accounting"] == "exact")  # noqa: E731
    assert exact(first)["epsilon"] == pytest.approx(1.0, rel=1e-6) and exact(first)["delta"] == 1e-5
    expected = gaussian_epsilon(second.sigma, 1e-5, second.sensitivity, count=2, method="exact")
    assert exact(second)["epsilon"] == pytest.approx(expected, rel=1e-9)
    assert len(second.composition) == 2 and any("shared ledger holds 2 entries" in n for n in second.notes)
    assert len(ledger) == 2
    alone = dp.fit(small).report_  # without the ledger: this release alone
    assert len(alone.composition) == 1 and exact(alone)["epsilon"] == pytest.approx(1.0, rel=1e-6)


def test_secure_noise_lands_on_a_grid_with_at_least_the_calibrated_scale(small):
    from topicdp.rdp import gaussian_epsilon

    model = GensimLDA(3, random_state=0)
    r = TopicDP(model, epsilon=2.0, delta=1e-5, sensitivity="global", secure_noise=True, random_state=3).fit(small).release_
    info = r.report.details["secure_noise"]
    assert r.report.calibration == "rdp"
    assert np.all(np.mod(r.noisy / info["grid"], 1.0) == 0)  # every entry is an integer multiple of the grid
    # the scale used is at least the RDP-calibrated sigma, so the RDP accounting still certifies epsilon
    assert gaussian_epsilon(r.report.sigma, 1e-5, r.report.sensitivity) <= 2.0 + 1e-9
    with pytest.raises(ValueError, match="secure_noise"):
        TopicDP(model, epsilon=2.0, secure_noise=True, calibration="analytic", sensitivity="global").fit(small)


@pytest.mark.parametrize("kwargs", [{"sensitivity": "global"}, {"sensitivity": "global", "mechanism": "laplace"}])
def test_global_bounds_project_f_onto_the_simplex_whatever_the_data(small, kwargs):
    """A matrix off the simplex is projected onto it before the noise (part of f, the same for every corpus), so
    the bound holds; whether f was on the simplex, and how far off, goes to the owner's diagnostics only. Before,
    it was refused with the private matrix's smallest entry and row-sum error in the message: a refusal that
    depended on the data and printed it."""
    off = CallableModel(lambda c: np.full((2, c.n_words), 2.0 / c.n_words) + 0.123456789 * (np.arange(c.n_words) == 0),
                        n_topics=2, name="rows-sum-to-2")
    on = CallableModel(lambda c: np.full((2, c.n_words), 1.0 / c.n_words), n_topics=2, name="uniform")
    a = TopicDP(off, epsilon=1.0, delta=1e-4, random_state=0, **kwargs).fit(small).release_
    b = TopicDP(on, epsilon=1.0, delta=1e-4, random_state=0, **kwargs).fit(small).release_
    # the projection of rows 2/V (+0.1235 on word 0) is 1/V (+ the same shift on word 0, less its share)
    assert np.allclose(a.noisy - b.noisy, project_to_simplex(off.func(small)) - on.func(small))
    assert a.report.checks == b.report.checks and a.report.notes == b.report.notes
    assert a.diagnostics["row_stochastic"]["on_simplex"] is False and b.diagnostics["row_stochastic"]["on_simplex"]
    private = a.diagnostics["row_stochastic"]["before_projection"]  # "min entry ..., max |row sum - 1| ..."
    assert "row sum" in private and private not in json.dumps(a.to_dict())


@pytest.mark.parametrize("kwargs", [{"sensitivity": "global"}, {"sensitivity": "global", "mechanism": "laplace"}])
def test_global_bounds_refuse_a_model_declared_not_probabilistic_before_fitting(small, kwargs):
    calls = []
    signed = CallableModel(lambda c: calls.append(1) or np.zeros((2, c.n_words)), n_topics=2, probabilistic=False)
    with pytest.raises(ValueError, match="probabilistic=False") as caught:
        TopicDP(signed, epsilon=1.0, delta=1e-4, **kwargs).fit(small)
    assert calls == [] and "sensitivity='sampled'" in str(caught.value)


def test_private_oracle_is_an_explicit_opt_in_that_says_what_it_leaks(small):
    """With the private oracle, Delta_s and sigma are functions of the private data: the report marks them
    NOT COVERED, keeps the private corpus' fingerprint out of the published part, and says that sigma leaks."""
    model = GensimLDA(3, random_state=0)
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.2, n_pairs=3, insecure_testing=True)
    r = TopicDP(model, epsilon=2.0, delta=1e-5, sampling=sampling, random_state=0).fit(small).release_
    rep = r.report
    assert rep.sampling_distribution["kind"] == "private-resample"
    # the private corpus' size is not "the stated N" when nobody stated it: the owner's diagnostics only
    assert "reference_records" not in rep.sampling_distribution
    assert r.diagnostics["private_oracle_records"] == small.n_users
    for path in ("report.sensitivity", "report.sigma", "report.composition_total"):
        assert rep.published[path].startswith("NOT COVERED")
    assert any("PRIVATE ORACLE" in n and "9.5" in n for n in rep.notes)
    published = json.dumps(r.to_dict())
    assert small.fingerprint() not in published and r.diagnostics["private_oracle_fingerprint"] == small.fingerprint()


def test_a_dp_vocabulary_is_composed_by_the_pipeline_not_by_topicdp(small):
    """TopicDP states its own release; a DP vocabulary is one more step of a pipeline release
    (tests/test_pipeline.py checks that every mechanism composes it)."""
    with pytest.raises(ValueError, match="topicdp.pipeline.release"):
        TopicDP(GensimLDA(3, random_state=0), epsilon=1.0, delta=1e-4, sensitivity="global").fit(
            small, vocabulary_source={"epsilon": 0.5, "delta": 1e-6})
