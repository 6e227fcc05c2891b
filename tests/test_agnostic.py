import json

import numpy as np
import pytest
from scipy.stats import norm

from topicdp import CallableModel, GensimLDA, PrivacyReport, PrivateRelease, TopicDP
from topicdp.rdp import calibrate_gaussian


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
def quick_release(small):
    dp = TopicDP(3.0, 1e-4, 0.1, n_pairs=6, insecure_testing=True, random_state=0, sampler_random_state=0)
    return dp.privatize(GensimLDA(4, random_state=0), small, keep_nonprivate=True)


def test_release_shapes_and_postprocessing(quick_release, small):
    r = quick_release
    assert r.topic_word.shape == (4, small.n_words) == r.noisy.shape
    assert np.all(r.topic_word >= 0) and np.allclose(r.topic_word.sum(axis=1), 1.0)
    assert len(r.top_words(5)) == 4 and len(r.top_words(5)[0]) == 5
    assert r.nonprivate is not None and not np.array_equal(r.noisy, r.nonprivate)


def test_report_says_what_was_guaranteed(quick_release):
    rep = quick_release.report
    assert rep.guarantee == "none"  # too few pairs: the report must not claim random DP
    assert any("NO GUARANTEE" in n for n in rep.notes)
    assert rep.unit == "user" and rep.neighbours == "replace-one" and rep.seeded
    assert rep.sampling_distribution["kind"] == "private-resample"
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


def test_full_h_is_random_dp(small):
    uniform = CallableModel(lambda c: (np.asarray(c.X.sum(axis=0)) + 1.0) / (c.n_tokens + c.n_words), n_topics=1,
                            name="unigram")
    r = TopicDP(1.0, 1e-5, 0.2, sampler_random_state=1).privatize(uniform, small)
    assert r.report.guarantee == "random-DP" and r.report.details["sensitivity_sample"]["h"] == 61
    assert "not differential privacy" in r.report.notes[0]
    assert not r.report.seeded


def test_global_gaussian_and_laplace_baselines(small):
    model = GensimLDA(3, random_state=0)
    g = TopicDP(2.0, 1e-5, sensitivity="global", random_state=1).privatize(model, small)
    assert g.report.guarantee == "approx-DP" and g.report.sensitivity == pytest.approx(np.sqrt(6))
    assert exact_delta(g.report.sigma, 2.0, np.sqrt(6)) <= 1e-5 * TOL
    lap = TopicDP(2.0, mechanism="laplace", sensitivity="global", random_state=1).privatize(model, small, keep_nonprivate=True)
    assert lap.report.delta == 0.0 and lap.report.sigma == pytest.approx(6 / 2.0)
    # Laplace(b): E|x| = b; the mean of n absolute values has sd b/sqrt(n)
    resid = np.abs(lap.noisy - lap.nonprivate)
    assert abs(resid.mean() - 3.0) < 5 * 3.0 / np.sqrt(resid.size)


def test_seeded_noise_reproduces_and_unseeded_differs(small):
    model = CallableModel(lambda c: np.full((1, c.n_words), 1.0 / c.n_words), n_topics=1, name="const")
    kw = dict(sensitivity="global")
    a = TopicDP(1.0, random_state=7, **kw).privatize(model, small)
    b = TopicDP(1.0, random_state=7, **kw).privatize(model, small)
    c = TopicDP(1.0, **kw).privatize(model, small)
    assert np.array_equal(a.noisy, b.noisy) and not np.array_equal(a.noisy, c.noisy)


def test_release_save_load(tmp_path, quick_release):
    path = tmp_path / "r.json"
    quick_release.save(path)
    assert "nonprivate_do_not_publish" not in json.loads(path.read_text())
    back = PrivateRelease.load(path)
    assert np.array_equal(back.topic_word, quick_release.topic_word) and back.report == quick_release.report


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"epsilon": 1.0, "delta": 0.0}, "delta"),
        ({"epsilon": 1.0, "gamma": 0.5}, "gamma"),
        ({"epsilon": 1.0, "unit": "tenant"}, "unit"),
        ({"epsilon": 1.0, "mechanism": "laplace"}, "laplace"),
        ({"epsilon": 1.0, "calibration": "magic"}, "calibration"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TopicDP(**kwargs)


def test_nondeterministic_model_is_refused(small):
    rng = np.random.default_rng()
    model = CallableModel(lambda c: rng.dirichlet(np.ones(c.n_words), size=2), n_topics=2, name="random")
    with pytest.raises(ValueError, match="not deterministic"):
        TopicDP(1.0, n_pairs=2, insecure_testing=True).privatize(model, small)


def test_composition_of_repeated_releases(small):
    """Two Gaussian releases with the same sigma compose exactly to one with sensitivity sqrt(2) Delta
    (Dong, Roth & Su 2022): the report's exact total equals that Gaussian's epsilon."""
    from topicdp.rdp import gaussian_epsilon

    model = GensimLDA(3, random_state=0)
    dp = TopicDP(1.0, 1e-5, sensitivity="global")
    first = dp.privatize(model, small).report
    second = dp.privatize(model, small).report
    key = "epsilon at delta=1e-05 (exact)"
    assert first.composition_total[key] == pytest.approx(1.0, rel=1e-6)
    expected = gaussian_epsilon(second.sigma, 1e-5, second.sensitivity, count=2, method="exact")
    assert second.composition_total[key] == pytest.approx(expected, rel=1e-9)
    assert len(second.composition) == 2 and any("2 releases" in n for n in second.notes)


def test_secure_noise_lands_on_a_grid_with_at_least_the_calibrated_scale(small):
    from topicdp.rdp import gaussian_epsilon

    model = GensimLDA(3, random_state=0)
    r = TopicDP(2.0, 1e-5, sensitivity="global", secure_noise=True, random_state=3).privatize(model, small)
    info = r.report.details["secure_noise"]
    assert r.report.calibration == "rdp"
    assert np.all(np.mod(r.noisy / info["grid"], 1.0) == 0)  # every entry is an integer multiple of the grid
    # the scale used is at least the RDP-calibrated sigma, so the RDP accounting still certifies epsilon
    assert gaussian_epsilon(r.report.sigma, 1e-5, r.report.sensitivity) <= 2.0 + 1e-9
    with pytest.raises(ValueError, match="secure_noise"):
        TopicDP(2.0, secure_noise=True, calibration="analytic")


@pytest.mark.parametrize("kwargs", [{"sensitivity": "global"}, {"sensitivity": "global", "mechanism": "laplace"}])
def test_global_bounds_refuse_matrices_off_the_simplex(small, kwargs):
    signed = CallableModel(lambda c: np.full((2, c.n_words), 2.0 / c.n_words), n_topics=2, name="rows-sum-to-2")
    with pytest.raises(ValueError, match="probability vectors"):
        TopicDP(1.0, **kwargs).privatize(signed, small)
