"""The readability forecast against an exact recursion and against direct simulation (fixed seeds)."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from facts import assert_facts
from topicdp.forecast import (
    CEILING_VOCABULARY,
    CONTRAST_CEILING,
    LDA_AGREEMENT,
    NOISE_VS_LDA,
    RANDOM_START_AGREEMENT,
    READABLE_VS_LDA,
    TARGETS,
    contrast_ceiling,
    dirichlet_signal,
    expected_topn_overlap,
    forecast_readability,
    verdict_for,
    verdict_of_draws,
)
from topicdp._validation import check_int, check_random_state, check_real

#: the thresholds on the closed form's own scale at the default agreement
READABLE, NOISE = READABLE_VS_LDA / LDA_AGREEMENT, NOISE_VS_LDA / LDA_AGREEMENT

NODES, WEIGHTS = np.polynomial.hermite_e.hermegauss(80)
WEIGHTS = WEIGHTS / math.sqrt(2 * math.pi)  # E f(Z) = sum WEIGHTS f(NODES), Z ~ N(0, 1)


def zipf_signal(n_topics: int, n_words: int, exponent: float = 1.0, random_state=0) -> np.ndarray:
    """K rows with Zipf profile w_r proportional to r^(-exponent), r = 1..V, each on its own random word order."""
    n_topics = check_int(n_topics, "n_topics", low=1)
    n_words = check_int(n_words, "n_words", low=2)
    exponent = check_real(exponent, "exponent", low=0.0, low_open=False)
    profile = np.arange(1, n_words + 1, dtype=float) ** -exponent
    profile /= profile.sum()
    rng = check_random_state(random_state)
    return np.stack([profile[rng.permutation(n_words)] for _ in range(n_topics)])


def exact_overlap(S, sigma, n=10):
    """Oracle: E|noisy top n ∩ top n| / n per row, exact for independent Gaussian noise up to quadrature.

    Given Z_i = z, the number of other words whose noisy value exceeds Y_i = w_i + sigma z is a sum of
    independent Bernoullis with p_j = Phi((w_j - w_i) / sigma - z); word i stays iff that number is < n.
    The Poisson-binomial probabilities come from the textbook recursion over j (states 0..n-1), the
    expectation over z from 80-node Gauss-Hermite quadrature (the integrand is smooth on the scale of z).
    """
    out = []
    for row in np.asarray(S, dtype=float):
        w = np.sort(row)[::-1]
        state = np.zeros((n, NODES.size, n))
        state[:, :, 0] = 1.0
        shift = w[:n, None] / sigma + NODES
        for j, wj in enumerate(w):
            p = ndtr(wj / sigma - shift)
            if j < n:
                p[j] = 0.0
            p = p[..., None]
            state[..., 1:] = state[..., 1:] * (1 - p) + state[..., :-1] * p
            state[..., 0] *= 1 - p[..., 0]
        out.append((state.sum(axis=2) @ WEIGHTS).mean())
    return np.array(out)


def simulated_overlap(S, sigma, n=10, draws=2000, seed=0):
    """Direct simulation of the row-aligned overlap: mean and standard error over draws."""
    rng = np.random.default_rng(seed)
    true_top = np.argsort(-S, axis=1, kind="stable")[:, :n]
    vals = np.empty(draws)
    for d in range(draws):
        top = np.argsort(-(S + rng.normal(0, sigma, S.shape)), axis=1, kind="stable")[:, :n]
        vals[d] = np.mean([np.intersect1d(a, b).size / n for a, b in zip(top, true_top)])
    return vals.mean(), vals.std(ddof=1) / math.sqrt(draws)


SMALL = dirichlet_signal(3, 300, 0.05, random_state=0)


@pytest.mark.parametrize("sigma", [0.005, 0.02, 0.05, 0.2])
def test_exact_recursion_matches_simulation(sigma):
    # The oracle is exact up to quadrature (80 vs 361 trapezoid nodes on [-9, 9] agree to 2e-5 here), so it
    # must lie within 4 standard errors of the simulated mean (a 6e-5 two-sided chance per case).
    exact = exact_overlap(SMALL, sigma).mean()
    mean, se = simulated_overlap(SMALL, sigma)
    assert abs(exact - mean) <= 4 * se + 1e-4


@pytest.mark.parametrize("signal", [SMALL, zipf_signal(3, 300, 1.1, random_state=0)], ids=["dirichlet", "zipf"])
@pytest.mark.parametrize("sigma", [0.002, 0.005, 0.01, 0.02, 0.05, 0.2])
def test_normal_approximation_is_close_to_exact(signal, sigma):
    # The approximation replaces the noisy n-th order statistic by its concentration level; measured error
    # per topic <= 0.008 on these cases (largest where nearly every top word survives), <= 0.004 on average
    # on K = 10, V = 2000 Dirichlet(0.05) topics from overlap 0.04 to 0.94. Not a derived bound: 0.01 pins
    # the measured accuracy, far inside the factor of 2 asked of the forecast.
    approx = expected_topn_overlap(signal, sigma, per_topic=True)
    np.testing.assert_allclose(approx, exact_overlap(signal, sigma), atol=0.01)


def test_formula_against_simulation_directly():
    S = dirichlet_signal(10, 2000, 0.05, random_state=0)
    for sigma in (0.003, 0.01):
        mean, se = simulated_overlap(S, sigma, draws=300, seed=1)
        # 4 standard errors of the simulation plus the approximation allowance of the previous test
        assert abs(expected_topn_overlap(S, sigma) - mean) <= 4 * se + 0.01


def test_monte_carlo_method_reports_matched_and_aligned():
    S = dirichlet_signal(10, 2000, 0.05, random_state=0)
    f = forecast_readability(0.01, S, method="monte_carlo", n_draws=50, random_state=3)
    assert f.method == "monte_carlo" and f.standard_error > 0
    assert f.matched_overlap >= f.expected_overlap  # the identity is one of the matchings
    assert abs(f.expected_overlap - expected_topn_overlap(S, 0.01)) <= 4 * f.standard_error + 0.01
    # pure noise: aligned overlap ~ n / V, the matched one at chance (<= n K / V up to sampling)
    g = forecast_readability(10.0, S, method="monte_carlo", n_draws=50, random_state=3)
    assert g.expected_overlap <= 10 / 2000 + 4 * g.standard_error + 1e-3
    assert g.matched_overlap <= 10 * 10 / 2000 + 0.02


def test_verdicts_thresholds_and_advice():
    S = dirichlet_signal(10, 2000, 0.05, random_state=0)
    nth = np.median(np.sort(S, axis=1)[:, -10])
    quiet = forecast_readability(0.05 * nth, S)
    assert quiet.verdict == "readable" and quiet.expected_overlap >= READABLE
    loud = forecast_readability(5 * nth, S, n_units=1000, unit="user")
    assert loud.verdict == "noise" and loud.expected_overlap < NOISE
    assert loud.noise_to_signal == pytest.approx(np.median(5 * nth / np.sort(S, axis=1)[:, -10]))
    for phrase in ("do not publish", "more users", "epsilon", "document instead of user", "smaller vocabulary",
                   "another mechanism"):
        assert phrase in loud.advice
    # sigma_readable is the crossing of the readable threshold (the unit's overlap target where a unit is given), to
    # the stated 1% resolution
    s = loud.sigma_readable
    user_readable = TARGETS["user"].overlap / LDA_AGREEMENT
    assert expected_topn_overlap(S, s) >= user_readable > expected_topn_overlap(S, 1.02 * s)
    plain = forecast_readability(5 * nth, S).sigma_readable  # no unit: the document-level threshold
    assert expected_topn_overlap(S, plain) >= READABLE > expected_topn_overlap(S, 1.02 * plain)
    assert quiet.sigma_readable == pytest.approx(plain, rel=0.02)
    assert f"{loud.sigma / s:.3g}x" in loud.advice
    assert "readability forecast: noise" in loud.lines()[0]
    assert loud.as_dict()["verdict"] == "noise"


def test_a_vocabulary_where_pure_noise_keeps_the_top_words_has_no_noise_limit():
    """Top 9 of 10 words: any two 9-sets share 8, so the overlap never falls below 0.8 >= READABLE."""
    fc = forecast_readability(1e6, dirichlet_signal(3, 10, 0.5), top_n=9)
    assert fc.sigma_readable == float("inf") and fc.verdict == "readable" and fc.expected_overlap >= 0.8
    assert forecast_readability(1e6, dirichlet_signal(3, 40, 0.5), top_n=9).sigma_readable < float("inf")


def test_the_simulation_verdict_is_on_the_scale_of_an_overlap_with_lda():
    assert [verdict_for(x, "public-simulation") for x in (0.1, 0.2, 0.3)] == ["noise", "marginal", "readable"]
    assert [verdict_for(x) for x in (0.1, 0.3, 0.5)] == ["noise", "marginal", "readable"]
    assert (NOISE_VS_LDA, READABLE_VS_LDA) == (0.15, 0.25)  # the user- and document-level targets


def test_the_verdict_reads_the_units_targets_and_calls_a_low_contrast_common_words():
    """Overlap below the noise line: noise, whatever the contrast; a contrast below the unit's target: common words
    (not readable), however well the lists overlap; at the user level readable from its overlap target 0.15."""
    sim = "public-simulation"
    assert verdict_for(0.10, sim, unit="user", contrast=1.0) == "noise"
    assert verdict_for(0.40, sim, unit="user", contrast=0.2) == "common words"
    assert verdict_for(0.40, sim, unit="user", contrast=0.3) == "readable"
    assert verdict_for(0.20, sim, unit="user", contrast=0.3) == "readable"  # the user-level overlap target: 0.15
    assert verdict_for(0.20, sim, unit="document", contrast=0.6) == "marginal"  # below the document level's 0.25
    assert verdict_for(0.30, sim, unit="document", contrast=0.4) == "common words"
    assert (TARGETS["document"].contrast, TARGETS["user"].contrast) == (0.5, 0.25)


def test_several_draws_are_readable_only_when_most_of_them_are():
    """The targets ask that most releases meet them: readable needs more than half the draws readable; otherwise
    what most of the others are, a tie going to the worse verdict."""
    r, c, m, n = "readable", "common words", "marginal", "noise"
    assert verdict_of_draws([r] * 5 + [c] * 4) == r
    assert verdict_of_draws([r] * 4 + [c] * 3 + [m] * 2) == c  # 4 of 9: not most, although the plurality
    assert verdict_of_draws([r, r, c, m]) == c  # half is not most; the tie c-m goes to the worse
    assert verdict_of_draws([r, n, m]) == n
    assert verdict_of_draws([m]) == m and verdict_of_draws([r]) == r
    with pytest.raises(ValueError, match="verdicts"):
        verdict_of_draws([])
    # medians apart meet the targets (overlap 0.30, contrast 0.30) while only 4 of 9 draws meet both
    overlaps = [0.10, 0.12, 0.14, 0.30, 0.30, 0.35, 0.40, 0.45, 0.50]
    contrasts = [0.60, 0.50, 0.40, 0.30, 0.10, 0.10, 0.30, 0.30, 0.30]
    verdicts = [verdict_for(o, "public-simulation", unit="user", contrast=x) for o, x in zip(overlaps, contrasts)]
    assert verdict_for(float(np.median(overlaps)), "public-simulation", unit="user",
                       contrast=float(np.median(contrasts))) == r
    assert verdicts.count(r) == 4 and verdicts.count(n) == 3 and verdict_of_draws(verdicts) == n  # 3 noise, 2 c


def test_the_closed_form_contrast_on_common_words_is_q2_times_their_ceiling_and_refuses_below_the_target():
    """Module docstring: NPMI ratio q^2; contrast q^2, times the kept words' ceiling on a DP vocabulary of common
    words only (``vocabulary_share`` below 1); a forecast that misses the targets refuses."""
    S = dirichlet_signal(10, 2000, 0.15, random_state=0)
    kept = dirichlet_signal(10, 100, 0.15, random_state=0)  # 100 of 2,000 words kept: share 0.05
    assert CEILING_VOCABULARY == 2000  # so share 0.05 reads the ceiling at 100 words
    nth = np.median(np.sort(S, axis=1)[:, -10])
    for sigma in (0.05 * nth, 0.5 * nth, 2 * nth):
        full = forecast_readability(sigma, S, unit="user")
        assert full.contrast == pytest.approx(full.expected_overlap ** 2)
        assert full.npmi == pytest.approx(full.expected_overlap ** 2)
        for fit in ("lda", "vem"):
            small = forecast_readability(sigma, kept, unit="user", vocabulary_share=0.05, fit=fit)
            q = small.expected_overlap
            assert small.contrast == pytest.approx(contrast_ceiling(100, fit) * q ** 2)
            assert small.npmi == pytest.approx(q ** 2) and small.contrast_ceiling == contrast_ceiling(100, fit)
            if small.verdict != "noise" and small.contrast < TARGETS["user"].contrast:
                assert small.verdict == "common words" and small.refuses and "public word list" in small.advice
                assert_facts(" ".join(small.lines()), "contrast", f"{contrast_ceiling(100, fit):.2f}",
                             "100 common words")
    # an owner's ordinary vocabulary of 100 words, 97 kept: read at share 0.97 (1,940 of 2,000), not at 97 words
    almost = forecast_readability(0.05 * nth, kept[:, :97] / kept[:, :97].sum(axis=1, keepdims=True), unit="user",
                                  vocabulary_share=0.97, fit="vem")
    assert almost.contrast_ceiling == contrast_ceiling(1940, "vem") > contrast_ceiling(97, "vem")
    quiet = forecast_readability(0.05 * nth, S, unit="user")
    assert quiet.verdict == "readable" and not quiet.refuses
    assert forecast_readability(0.05 * nth, S).contrast is None  # no unit: no targets, the overlap alone


def test_the_contrast_ceiling_interpolates_its_measured_points_in_log_words():
    """CONTRAST_CEILING's points are returned at their V'; between two points the value at their geometric mean is
    the mean of theirs (linear in log V'); constant beyond the ends; nondecreasing in V' and in (0, 1]."""
    for fit, points in CONTRAST_CEILING.items():
        for (a, ca), (b, cb) in zip(points, points[1:]):
            assert contrast_ceiling(a, fit) == pytest.approx(min(1.0, ca))
            mid = math.sqrt(a * b)
            if mid == int(mid):
                assert contrast_ceiling(int(mid), fit) == pytest.approx(min(1.0, (ca + cb) / 2))
        assert contrast_ceiling(1, fit) == pytest.approx(points[0][1])
        assert contrast_ceiling(10 * points[-1][0], fit) == pytest.approx(min(1.0, points[-1][1]))
        values = [contrast_ceiling(v, fit) for v in range(1, 5001, 7)]
        assert all(0 < x <= 1 for x in values) and all(x <= y for x, y in zip(values, values[1:]))
    with pytest.raises(ValueError, match="fit"):
        contrast_ceiling(100, "nmf")
    with pytest.raises(ValueError, match="n_words"):
        contrast_ceiling(0)


def test_no_noise_and_monotone():
    S = zipf_signal(4, 500, 1.0)
    assert expected_topn_overlap(S, 0.0) == 1.0
    values = [expected_topn_overlap(S, s) for s in (1e-4, 1e-3, 1e-2, 1e-1)]
    assert all(a > b for a, b in zip(values, values[1:]))


def test_validation():
    with pytest.raises(ValueError, match="sigma"):
        forecast_readability(-1.0, SMALL)
    with pytest.raises(ValueError, match="method"):
        forecast_readability(0.1, SMALL, method="exact")
    with pytest.raises(ValueError, match="top_n"):
        expected_topn_overlap(SMALL, 0.1, top_n=300)
    with pytest.raises(ValueError, match="positive entries"):
        forecast_readability(0.1, np.eye(3, 20))
    with pytest.raises(ValueError, match="beta"):
        dirichlet_signal(2, 10, 0.0)



def bisected_overlap(S, sigma, n):
    """Oracle: the same normal approximation with t_k found by 64 bisection steps on its equation
    sum_j Phi((w_kj - t_k) / sigma) = n (bracket [min w - 10 sigma, max w + 10 sigma], shrunk 2^64-fold)."""
    lo, hi = S.min(axis=1) - 10 * sigma, S.max(axis=1) + 10 * sigma
    for _ in range(64):
        mid = (lo + hi) / 2
        above = ndtr((S - mid[:, None]) / sigma).sum(axis=1) > n
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    top = -np.sort(-S, axis=1)[:, :n]
    return ndtr((top - ((lo + hi) / 2)[:, None]) / sigma).mean(axis=1)


def test_newton_threshold_agrees_with_bisection_on_hard_rows():
    """Rows with ties, sparse and flat profiles, sigma from 1e-7 to 10: the safeguarded Newton solve gives
    the overlap that bisection gives, to 1e-10 (both solve the same monotone equation)."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        V = int(rng.integers(12, 800))
        S = rng.dirichlet(np.full(V, [0.01, 0.1, 1.0][trial % 3]), size=3)
        S[0, :4] = S[0, 0]
        sigma, n = float(10 ** rng.uniform(-7, 1)), int(rng.integers(1, 11))
        got = expected_topn_overlap(S, sigma, n, per_topic=True)
        np.testing.assert_allclose(got, bisected_overlap(S, sigma, n), rtol=0, atol=1e-10)


@pytest.mark.parametrize("agreement", [LDA_AGREEMENT, RANDOM_START_AGREEMENT, 1.0])
def test_the_agreement_scales_the_forecast_its_verdict_and_its_readable_sigma(agreement):
    """overlap_with_lda = closed form x agreement; the verdict's thresholds and sigma_readable move with it."""
    S = dirichlet_signal(10, 2000, 0.15, random_state=0)
    for sigma in np.geomspace(1e-4, 1e-1, 13):
        fc = forecast_readability(sigma, S, agreement=agreement)
        assert fc.overlap_with_lda == pytest.approx(fc.expected_overlap * agreement)
        assert fc.verdict == verdict_for(fc.overlap_with_lda, "public-simulation")
        s = fc.sigma_readable
        assert expected_topn_overlap(S, s) * agreement >= READABLE_VS_LDA
        assert expected_topn_overlap(S, 1.02 * s) * agreement < READABLE_VS_LDA
        assert f"x {agreement:g}, how far" in fc.lines()[2]


def test_an_agreement_outside_zero_to_one_is_refused():
    S = dirichlet_signal(3, 50, 0.15)
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="agreement"):
            forecast_readability(0.01, S, agreement=bad)


def test_dp_vem_forecasts_a_random_start_at_the_random_start_agreement():
    from topicdp.variational import DPVariationalEM
    from topicdp.forecast import forecast

    init = dirichlet_signal(5, 300, 0.15, random_state=1)
    random_start = forecast(DPVariationalEM(5, epsilon=3.0, delta=1e-6, unit="document"), 20_000, 300)
    public_start = forecast(DPVariationalEM(5, epsilon=3.0, delta=1e-6, unit="document", init=init), 20_000, 300)
    assert (random_start.agreement, public_start.agreement) == (RANDOM_START_AGREEMENT, LDA_AGREEMENT)
    assert random_start.expected_overlap == pytest.approx(public_start.expected_overlap)


def test_advice_states_a_count_relative_to_the_plan_s_not_as_a_fact():
    """The plan's count is stated or a DP estimate: the advice says how many more units relative to it."""
    from topicdp.forecast import _advice

    advice = _advice("noise", 0.04, 0.01, 408, "user")
    assert "about 4x the 408 the plan counts: 1,632" in advice and "instead of 408" not in advice


def test_a_count_of_readable_draws_within_one_standard_error_of_one_half_is_said_to_be_on_the_edge():
    """``on_the_edge`` is ``|p - 1/2| <= 1 / (2 sqrt(n))`` (one binomial standard error of p = 1/2) in integers:
    checked against that float definition on every count up to 30 draws, and printed with the simulation's count."""
    from dataclasses import replace

    from topicdp.forecast import on_the_edge

    for n in range(1, 31):
        for passed in range(n + 1):
            gap, se = abs(passed / n - 0.5), 0.5 / math.sqrt(n)
            if not math.isclose(gap, se):  # the boundary itself (e.g. 3 of 9) is the integer form's to say
                assert on_the_edge(passed, n) == (gap < se), (passed, n)
    assert [p for p in range(10) if on_the_edge(p, 9)] == [3, 4, 5, 6]
    base = forecast_readability(1e-4, dirichlet_signal(3, 50, 0.1), unit="user")
    for readable, edge in ((4, True), (6, True), (9, False), (2, False)):
        fc = replace(base, method="public-simulation",
                     draw_verdicts=("readable",) * readable + ("common words",) * (9 - readable))
        line = next(x for x in fc.lines() if "readable in" in x)
        assert f"readable in {readable} of 9" in line and ("on the edge" in line) == edge


def test_the_common_words_advice_offers_a_word_list_only_where_the_words_are_a_dp_selection():
    """A DP vocabulary that kept a share of the words asked for is why a release is common words: a public word list
    helps. A release that has all its words (a public list already) is common words for the noise: it does not."""
    from topicdp.forecast import _advice

    selected = _advice("common words", 0.01, 0.005, 500, "user", vocabulary_share=0.3)
    listed = _advice("common words", 0.01, 0.005, 500, "user")
    assert "public word list" in selected and "30% of the words asked for" in selected
    assert "public word list" not in listed and "Document level gives themes" in listed
