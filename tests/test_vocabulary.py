"""Public word lists and the DP vocabulary selection (topicdp.vocabulary).

Independent truths: the Gaussian profile and the threshold probability are written here with mpmath at
50 digits; the privacy bound is checked by exact enumeration of every released set on a tiny universe
(all neighbours of a small dataset) and by numerical integration of the full output's hockey-stick
divergence, neither of which uses the proof's algebra.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import mpmath
import numpy as np
import pytest
from scipy import special

from topicdp.corpus import Corpus
from topicdp.rdp import PrivacyLedger
from topicdp.vocabulary import (
    _select,
    FIRST_ROUND_SHARE,
    TWO_ROUND_FROM,
    DPVocabulary,
    calibrate_selection,
    forecast_vocabulary,
    load_vocabulary,
    round_calibration,
    select_vocabulary,
    select_vocabulary_from_counts,
    selection_method,
    threshold_delta,
    unit_top_words,
    unit_word_sets,
    word_set_counts,
    words_per_unit,
)

mpmath.mp.dps = 50


def gauss_delta_ref(sigma, eps, sens):
    """Balle & Wang 2018, Thm. 8, in mpmath."""
    mu = mpmath.mpf(sens) / mpmath.mpf(sigma)
    eps = mpmath.mpf(eps)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def unique_pass_ref(tau, sigma, s):
    """1 - Phi((tau - 1/sqrt s)/sigma)^s: some word of a unit's own s words (total 1/sqrt s) passes."""
    z = (mpmath.mpf(tau) - 1 / mpmath.sqrt(s)) / mpmath.mpf(sigma)
    return 1 - mpmath.ncdf(z) ** s


def threshold_delta_ref(tau, sigma, k):
    """The worst unit size, in mpmath."""
    return max(unique_pass_ref(tau, sigma, s) for s in range(1, k + 1))


def sens(neighbours):
    return 1.0 if neighbours == "add-remove" else math.sqrt(2.0)


# --------------------------------------------------------------------------------------------------
# calibration against the exact profile

@pytest.mark.parametrize("neighbours", ["replace-one", "add-remove"])
@pytest.mark.parametrize("eps,delta,k", [(0.3, 1e-7, 50), (1.0, 1e-7, 100), (3.0, 1e-7, 300),
                                         (1.0, 1e-5, 1), (0.5, 0.2, 2), (8.0, 1e-10, 1000)])
def test_calibration_meets_and_nearly_attains_each_delta_share(eps, delta, k, neighbours):
    sigma, tau = calibrate_selection(eps, delta, k, neighbours)
    dg = gauss_delta_ref(sigma, eps, sens(neighbours))
    dt = threshold_delta_ref(tau, sigma, k)
    # each half of delta is met (the guarantee) ...
    assert dg <= delta / 2 and dt <= delta / 2
    # ... and nearly attained (no wasted noise): the roots are rounded up by a few ulps only
    assert dg >= delta / 2 * (1 - 1e-6) and dt >= delta / 2 * (1 - 1e-6)
    assert abs(threshold_delta(tau, sigma, k) - float(dt)) <= 1e-9 * float(dt)


# --------------------------------------------------------------------------------------------------
# brute force on a tiny universe: the exact law of the released set

def released_set_law(word_sets, k, sigma, tau):
    """{frozenset R: P(R)} for the mechanism on units with these word sets (independent noise per word).

    Written from the mechanism's definition: a unit with s words adds 1/sqrt(s) to each of them."""
    assert all(len(s) <= k for s in word_sets)
    totals = {}
    for s in word_sets:
        for w in s:
            totals[w] = totals.get(w, 0) + 1 / mpmath.sqrt(len(s))
    words = sorted(totals)
    p_pass = {w: 1 - mpmath.ncdf((mpmath.mpf(tau) - totals[w]) / mpmath.mpf(sigma)) for w in words}
    law = {}
    for mask in itertools.product([False, True], repeat=len(words)):
        prob = mpmath.mpf(1)
        for w, m in zip(words, mask):
            prob *= p_pass[w] if m else 1 - p_pass[w]
        law[frozenset(w for w, m in zip(words, mask) if m)] = prob
    return law


def hockey_stick(P, Q, eps):
    """sup_O P(O) - e^eps Q(O) over a discrete space = sum of positive parts."""
    e = mpmath.exp(eps)
    return sum(max(mpmath.mpf(0), p - e * Q.get(r, 0)) for r, p in P.items())


UNIVERSE = ("apple", "berry", "cherry", "damson")
K = 2
POOL = [frozenset(c) for n in (1, 2) for c in itertools.combinations(UNIVERSE, n)]  # every possible S_u
BASE = [frozenset({"apple", "berry"}), frozenset({"apple"}), frozenset({"berry", "cherry"})]


def neighbours_of(data, relation):
    if relation == "add-remove":
        for i in range(len(data)):
            yield data[:i] + data[i + 1:]
        for s in POOL:
            yield data + [s]
    else:
        for i, s in itertools.product(range(len(data)), POOL):
            yield data[:i] + [s] + data[i + 1:]


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
@pytest.mark.parametrize("eps,delta", [(0.5, 0.2), (1.0, 0.05)])
def test_every_neighbour_of_a_tiny_dataset_meets_the_bound(relation, eps, delta):
    sigma, tau = calibrate_selection(eps, delta, K, relation)
    P = released_set_law(BASE, K, sigma, tau)
    worst = mpmath.mpf(0)
    for other in neighbours_of(BASE, relation):
        Q = released_set_law(other, K, sigma, tau)
        worst = max(worst, hockey_stick(P, Q, eps), hockey_stick(Q, P, eps))
    assert worst <= delta
    # not vacuous: on these parameters the released set really moves (a noiseless set would give 1)
    assert worst > delta / 20


@pytest.mark.parametrize("eps,delta,k", [(1.0, 0.1, 1), (1.0, 0.1, 5), (6.0, 0.1, 5), (8.0, 1e-3, 6)])
def test_a_unit_with_only_unique_words_is_detected_exactly_with_probability_delta_tau(eps, delta, k):
    """The threshold part of the bound is attained: removing a unit whose s words nobody else uses."""
    sigma, tau = calibrate_selection(eps, delta, k, "add-remove")
    others = [frozenset({"apple"}), frozenset({"apple"})]
    detected = []
    for s in range(1, k + 1):
        unique = frozenset(f"only{i}" for i in range(s))
        with_u = released_set_law(others + [unique], k, sigma, tau)
        without = released_set_law(others, k, sigma, tau)
        d = hockey_stick(with_u, without, eps)
        assert d >= unique_pass_ref(tau, sigma, s) * (1 - 1e-12)  # a unique word is impossible without u
        assert d <= delta
        detected.append(d)
    assert max(detected) >= threshold_delta_ref(tau, sigma, k) * (1 - 1e-12)


def full_output_hockey_stick(j, m, sigma, tau, eps, bigger_first):
    """Exact divergence of the full output (noisy totals, not only the set) for add/remove.

    D' = D + u, where u has s = j + m words, j shared with D and m of its own, each of weight 1/sqrt(s).
    Along the direction of the shift the shared coordinates are one Gaussian with mean shift
    d = sqrt(j/s) / sigma (the likelihood ratio depends on that coordinate only); q = P(no word of u's own
    passes). Integrated numerically.
    """
    with mpmath.workdps(25):
        size = j + m
        d = mpmath.sqrt(mpmath.mpf(j) / size) / sigma
        q = mpmath.ncdf((mpmath.mpf(tau) - 1 / mpmath.sqrt(size)) / sigma) ** m
        e = mpmath.exp(eps)
        a, b = (q, e) if bigger_first else (1, e * q)  # integrand [a N(d', 1) - b N(d'', 1)]_+
        extra = 1 - q if bigger_first else 0  # outputs naming a unique word: impossible without u
        if d == 0:
            return extra + max(0, a - b)
        mean_a, mean_b = (d, 0) if bigger_first else (0, d)
        f = lambda x: max(0, a * mpmath.npdf(x, mean_a) - b * mpmath.npdf(x, mean_b))  # noqa: E731
        # the integrand is positive on one side of the single crossing point x*; split the range there
        cross = (mpmath.log(b / a) + (mean_a**2 - mean_b**2) / 2) / (mean_a - mean_b)
        return extra + mpmath.quad(f, [-50, min(cross, 0), cross, max(cross, d), 50])


@pytest.mark.parametrize("eps,delta,k", [(1.0, 1e-3, 4), (0.3, 1e-2, 5), (6.0, 1e-2, 3)])
def test_full_output_divergence_by_integration_meets_the_bound(eps, delta, k):
    sigma, tau = calibrate_selection(eps, delta, k, "add-remove")
    worst = 0
    for size in range(1, k + 1):
        for j in range(size + 1):
            for bigger_first in (True, False):
                worst = max(worst, full_output_hockey_stick(j, size - j, sigma, tau, eps, bigger_first))
    assert worst <= delta
    # j = s (all shared) is the plain Gaussian with sensitivity 1: the bound is nearly reached
    assert worst >= delta / 2 * (1 - 1e-6)


# --------------------------------------------------------------------------------------------------
# changing one unit changes only its own contribution

def random_corpus(rng, n_users=12, vocab=40):
    words = [f"w{chr(97 + i % 26)}{chr(97 + i // 26)}xx" for i in range(vocab)]
    texts, users = [], []
    for u in range(n_users):
        for _ in range(rng.integers(1, 5)):
            n = rng.integers(1, 30)
            texts.append(" ".join(rng.choice(words, size=n, p=np.r_[[0.3], np.full(vocab - 1, 0.7 / (vocab - 1))])))
            users.append(f"user{u}")
    return texts, users, words


@pytest.mark.parametrize("seed", range(8))
def test_changing_one_user_leaves_every_other_users_words_identical(seed):
    rng = np.random.default_rng(seed)
    texts, users, words = random_corpus(rng)
    before = unit_word_sets(texts, users, max_words_per_unit=3)
    victim = f"user{rng.integers(12)}"
    # replace the victim's documents by a different number of different documents, placed first
    new = [(" ".join(rng.choice(words, size=rng.integers(1, 50))), victim) for _ in range(rng.integers(1, 8))]
    kept = [(t, u) for t, u in zip(texts, users) if u != victim]
    rng.shuffle(kept)  # and reorder everyone else's documents across users
    after = unit_word_sets([t for t, _ in new + kept], [u for _, u in new + kept], max_words_per_unit=3)
    assert {u: s for u, s in before.items() if u != victim} == {u: s for u, s in after.items() if u != victim}
    assert all(len(s) <= 3 for s in after.values())


def test_document_units_depend_on_their_own_text_only():
    texts = ["alpha alpha beta gamma", "delta delta delta epsilon", "alpha zeta"]
    a = unit_word_sets(texts, unit="document", max_words_per_unit=2)
    b = unit_word_sets(texts[:1] + ["omega omega"] + texts[2:], unit="document", max_words_per_unit=2)
    assert a[0] == b[0] and a[2] == b[2] and a[1] != b[1]


def test_top_words_ties_break_by_a_fixed_public_order():
    # counts: zeta 2, beta 2, alpha 2, gamma 1 -> the two of count 2 first in code-point order
    assert unit_top_words(["zeta", "beta", "alpha", "zeta", "beta", "alpha", "gamma"], 2) == ("alpha", "beta")
    assert unit_top_words(["b", "a", "c"], 5) == ("a", "b", "c")


def test_tokenisation_is_the_corpus_one():
    texts = ["The Cats' cat-flap: 42 cats, naïve café", "Über straße and the of", "ab abc abcd"]
    sets = unit_word_sets(texts, unit="document", max_words_per_unit=1000)
    corpus = Corpus.from_texts(texts)
    assert set().union(*sets.values()) == set(corpus.vocabulary)
    sets4 = unit_word_sets(texts, unit="document", max_words_per_unit=1000, min_token_length=4, stop_words=None)
    assert set().union(*sets4.values()) == set(Corpus.from_texts(texts, min_token_length=4, stop_words=None).vocabulary)


# --------------------------------------------------------------------------------------------------
# statistics: a widely used word is kept, a single unit's word at most at the derived rate

def test_common_word_kept_and_single_unit_words_at_most_at_the_bound():
    eps, delta, k = 1.0, 0.3, 3
    sigma, tau = calibrate_selection(eps, delta, k, "replace-one")
    p_rare = float(unique_pass_ref(tau, sigma, 3))  # P(some word of the 3-word rare unit is released)
    assert p_rare <= delta / 2 + 1e-15  # the derived bound
    # 60 documents share "common" (plus two filler words); one document has three words of its own
    texts = ["common common filler other"] * 60 + ["rarea rareb rarec"]
    n_runs, leaks, common_missing = 400, 0, 0
    for seed in range(n_runs):
        words = select_vocabulary(texts, unit="document", epsilon=eps, delta=delta, max_words_per_unit=k,
                                  random_state=seed).words
        leaks += any(w.startswith("rare") for w in words)
        common_missing += "common" not in words
    # leaks ~ Binomial(400, p_rare) (the unit's 3 words have total 1/sqrt(3) each and independent noise);
    # 4 standard deviations either side: a false failure has probability < 1e-4, and the seeds are fixed
    sd = math.sqrt(n_runs * p_rare * (1 - p_rare))
    assert leaks <= n_runs * p_rare + 4 * sd
    assert leaks >= n_runs * p_rare - 4 * sd  # the derived rate is the true one, not only a bound
    # "common": 60 units of 3 words, total 60/sqrt(3) = 34.6; P(miss) = Phi((tau - 34.6)/sigma) per run
    p_miss = float(mpmath.ncdf((tau - 60 / math.sqrt(3)) / sigma))
    assert p_miss * n_runs < 1e-6 and common_missing == 0


# --------------------------------------------------------------------------------------------------
# the DPVocabulary result

def test_result_is_sorted_capped_marked_and_reportable():
    texts = [f"common word{i % 7}x shared" for i in range(200)]
    res = select_vocabulary(texts, unit="document", epsilon=2.0, delta=1e-5, max_words_per_unit=3,
                            random_state=1)
    assert isinstance(res, DPVocabulary) and res.seeded
    assert list(res.words) == sorted(res.words) and "common" in res.words and "shared" in res.words
    capped = select_vocabulary(texts, unit="document", epsilon=2.0, delta=1e-5, max_words_per_unit=3,
                               max_features=1, random_state=1)
    assert len(capped.words) == 1 and capped.words[0] in res.words
    d = res.to_dict()
    json.dumps(d)
    assert "words" not in d and d["n_words"] == len(res.words)
    assert d["epsilon"] == 2.0 and d["delta"] == 1e-5 and d["delta_gaussian"] + d["delta_threshold"] == 1e-5
    # the library's default relation, add/remove: sensitivity 1 (replace-one's is sqrt(2))
    assert d["unit"] == "document" and d["neighbours"] == "add-remove" and d["sensitivity"] == 1.0
    with pytest.raises(Exception):
        res.sigma = 0.0  # frozen
    unseeded = select_vocabulary(texts, unit="document", epsilon=2.0, delta=1e-5, max_words_per_unit=3)
    assert not unseeded.seeded


def test_ledger_composition_records_gaussian_and_threshold_delta():
    res = select_vocabulary(["alpha beta"] * 50, unit="document", epsilon=1.0, delta=1e-6, random_state=0)
    ledger = PrivacyLedger()
    res.add_to_ledger(ledger)
    kinds = [(e["kind"], e.get("sigma"), e.get("delta")) for e in ledger.entries()]
    assert kinds == [("gaussian", res.sigma, None), ("approx", None, res.delta_threshold)]
    # alone, the ledger's total at the selection's delta recovers (about) its epsilon
    assert ledger.epsilon(1e-6, "simple") == pytest.approx(1.0, rel=1e-6)


def test_user_level_uses_user_ids():
    texts = ["apple pie", "apple tart", "berry jam", "apple crumble"]
    sets = unit_word_sets(texts, ["u1", "u1", "u2", "u3"], max_words_per_unit=1)
    assert sets == {"u1": ("apple",), "u2": ("berry",), "u3": ("apple",)}


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=0.0, delta=1e-6), "epsilon"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, delta=1e-6, unit="word"), "unit"),
    (dict(epsilon=1.0, delta=1e-6, neighbours="swap"), "neighbours"),
    (dict(epsilon=1.0, delta=1e-6, max_words_per_unit=0), "max_words_per_unit"),
    (dict(epsilon=1.0, delta=1e-6, max_features=0), "max_features"),
])
def test_parameters_are_validated_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        select_vocabulary(["a text"], ["u"], **kwargs)


def test_user_unit_needs_one_user_per_text():
    with pytest.raises(ValueError, match="users"):
        select_vocabulary(["some text"], epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="one user id per text"):
        select_vocabulary(["some text", "more"], ["u"], epsilon=1.0, delta=1e-6)


# --------------------------------------------------------------------------------------------------
# public word lists

def test_load_vocabulary_reads_words_comments_and_bom(tmp_path):
    path = tmp_path / "words.txt"
    path.write_bytes("\ufeff# a public list\nenergy\n\n  market  # trailing comment\ncafé\n".encode("utf-8"))
    words = load_vocabulary(path)
    assert words == ("energy", "market", "café")
    corpus = Corpus.from_texts(["Energy market energy", "the café"], vocabulary=words)
    assert corpus.vocabulary == words and corpus.X.toarray().tolist() == [[2, 1, 0], [0, 0, 1]]


@pytest.mark.parametrize("content,match", [
    (b"# only comments\n\n", "empty"),
    (b"alpha\nbeta\nalpha\ngamma\nbeta\n", r"'alpha' \(lines 1 and 3\), 'beta' \(lines 2 and 5\)"),
    (b"alpha\nTwo\n", r"words.txt:2: 'Two'"),
    (b"alpha\nnew york\n", r"words.txt:2: one word per line"),
    (b"alpha\nx42\n", r"words.txt:2"),
    (b"alpha\n\xff\xfe\n", r"words.txt:2: not UTF-8"),
])
def test_load_vocabulary_errors_name_the_file_and_line(tmp_path, content, match):
    with pytest.raises(ValueError, match="is a directory"):
        load_vocabulary(tmp_path)
    path = tmp_path / "words.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        load_vocabulary(path)


def test_select_vocabulary_is_word_sets_then_noisy_threshold():
    """benchmarks/utility/vocabulary_blogs.py re-runs steps 3-4 (``_select``) on counted word sets: same result."""
    rng = np.random.default_rng(3)
    texts, users, _ = random_corpus(rng, n_users=40)
    res = select_vocabulary(texts, users, epsilon=5.0, delta=1e-3, max_words_per_unit=4, random_state=7)
    sets = unit_word_sets(texts, users, max_words_per_unit=4)
    pairs = word_set_counts(dict(reversed(list(sets.items()))))
    again = _select(pairs.totals(), res.sigma, res.tau, None, np.random.default_rng(7))
    assert again == res.words and len(res.words) > 0


def test_word_totals_are_each_words_correctly_rounded_sum():
    """Both layouts (one pair per unit and word; counted pairs) give, bit for bit, ``math.fsum`` of the terms
    ``n(w, s) / math.sqrt(s)`` written out from the definition."""
    from topicdp.vocabulary import _word_totals

    rng = np.random.default_rng(11)
    texts, users, _ = random_corpus(rng, n_users=60)
    sets = unit_word_sets(texts, users, max_words_per_unit=7)
    pairs = Counter((w, len(words)) for words in sets.values() for w in words)
    expected: dict = {}
    for (w, s), n in pairs.items():
        expected.setdefault(w, []).append(n / math.sqrt(s))
    expected = {w: math.fsum(terms) for w, terms in expected.items()}
    assert _word_totals(sets) == expected
    assert word_set_counts(sets).totals() == expected
    halves = [dict(list(sets.items())[i::2]) for i in (0, 1)]  # shards: their counts add
    assert (word_set_counts(halves[1]) + word_set_counts(halves[0])).totals() == expected
    assert _word_totals({}) == {} and (word_set_counts({}) + word_set_counts(halves[0])).totals() == \
        word_set_counts(halves[0]).totals()


def test_word_sets_do_not_depend_on_the_processes(monkeypatch):
    import topicdp.corpus as corpus_module

    monkeypatch.setattr(corpus_module, "PARALLEL_MIN_DOCS", 10)
    rng = np.random.default_rng(12)
    texts, users, _ = random_corpus(rng, n_users=40)
    one = unit_word_sets(texts, users, max_words_per_unit=5)
    assert len(texts) >= 20 and unit_word_sets(texts, users, max_words_per_unit=5, n_jobs=2) == one
    docs = unit_word_sets(texts, unit="document", max_words_per_unit=5, n_jobs=2)
    assert docs == unit_word_sets(texts, unit="document", max_words_per_unit=5)


def test_totals_weight_each_unit_by_its_own_size_and_ignore_unit_order():
    sets = [("alpha",), ("alpha", "beta", "gamma", "delta"), ("alpha", "beta")]
    totals = [word_set_counts(dict(enumerate(order))).totals() for order in (sets, sets[::-1])]
    assert totals[0] == totals[1]  # bit for bit
    assert totals[0]["alpha"] == pytest.approx(1 + 1 / 2 + 1 / math.sqrt(2), rel=1e-15)
    assert totals[0]["gamma"] == pytest.approx(1 / 2, rel=1e-15)
    # every unit's contribution vector has L2 norm exactly 1
    for words in sets:
        assert math.fsum((1 / math.sqrt(len(words))) ** 2 for _ in words) == pytest.approx(1.0, rel=1e-15)


# --------------------------------------------------------------------------------------------------
# the command-line hook (topicdp.cli.build_request -> topicdp.pipeline)

def _args(*extra):
    from topicdp.cli import build_parser, check_arguments

    args = build_parser().parse_args(["privatize", *extra])
    check_arguments(args)
    return args


def test_cli_public_vocabulary_sets_the_columns(tmp_path):
    from topicdp.pipeline import read_records
    from topicdp.pipeline.run import build_corpus

    path = tmp_path / "words.txt"
    path.write_text("# public\ngovernment\npolice\nfire\n", encoding="utf-8")
    request = _args("embedded", "--vocabulary", str(path), "--topics", "2").request
    assert request.vocabulary.kind == "public" and request.vocabulary.words == ("government", "police", "fire")
    corpus = build_corpus(read_records(request.source), request.vocabulary.words, request)
    assert corpus.vocabulary == ("government", "police", "fire")


def test_cli_dp_vocabulary_is_selected_and_composed_into_the_report():
    from topicdp.pipeline import release

    request = _args("embedded", "--vocabulary-epsilon", "8", "--vocabulary-delta", "1e-3", "--delta", "1e-2",
                    "--epsilon", "12", "--seed", "4", "--topics", "2", "--mechanism", "dp-vem",
                    "--release-anyway").request  # 289 users: the forecast calls it noise; the composition is tested
    assert request.vocabulary.kind == "dp" and request.vocabulary.epsilon == 8.0
    result = release(request, echo=lambda line: None)
    report = result.release.report
    names = [e["name"] for e in report.composition]
    assert names[:3] == ["unit count", "vocabulary selection", "vocabulary selection (threshold)"]
    assert report.published["vocabulary"].startswith("DP") and report.epsilon == 12.0
    assert 0 < len(result.release.vocabulary) and report.certified_epsilon() <= 12.0


@pytest.mark.parametrize("extra,match", [
    (["--vocabulary", "w.txt", "--vocabulary-epsilon", "1", "--vocabulary-delta", "1e-6"], "exclude"),
    (["--vocabulary-delta", "2"], "--vocabulary-delta"),  # either may be given alone (the other defaults)
    (["--vocabulary-epsilon", "-1", "--vocabulary-delta", "1e-6"], "--vocabulary-epsilon"),
    (["--vocabulary-epsilon", "1", "--vocabulary-delta", "2"], "--vocabulary-delta"),
])
def test_cli_vocabulary_options_fail_before_the_corpus_is_read(extra, match):
    with pytest.raises(ValueError, match=match):  # the corpus is the built-in one: nothing could be read
        _args("embedded", *extra)


# -- forecast of the selection's size (before it runs) ---------------------------------------------


def _population(n_users: int, seed: int):
    """Users whose texts draw 8 words from a 60-word Zipf-like pool (so word totals span the threshold)."""
    rng = np.random.default_rng(seed)
    pool = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    p = 1.0 / np.arange(1, 61)
    p /= p.sum()
    texts, users = [], []
    for u in range(n_users):
        texts.append(" ".join(rng.choice(pool, size=8, p=p)))
        users.append(u)
    return texts, users


def test_vocabulary_forecast_is_the_expected_size_of_the_selection():
    # reference = the private texts (scale 1): expected_words is exactly E[number of words passing], a sum of
    # independent Bernoulli(p_w); over 400 seeded selections the mean count lies within 4 standard errors
    # sqrt(sum p(1-p) / 400) of it (two-sided normal tail 6e-5)
    texts, users = _population(400, 0)
    eps, delta, k = 1.0, 1e-6, 5
    fc = forecast_vocabulary(eps, delta, 400, max_words_per_unit=k, reference_texts=texts, reference_users=users)
    sigma, tau = calibrate_selection(eps, delta, k)
    assert (fc.sigma, fc.tau) == (sigma, tau) and fc.units_per_word == pytest.approx(tau * math.sqrt(k))
    sets = unit_word_sets(texts, users, max_words_per_unit=k)
    totals = word_set_counts(sets).totals()
    p = special.ndtr((np.array(list(totals.values())) - tau) / sigma)
    assert 3 < fc.expected_words < len(totals) - 3  # the population straddles the threshold
    counts = [len(_select(totals, sigma, tau, None, np.random.default_rng(s))) for s in range(400)]
    assert abs(np.mean(counts) - fc.expected_words) <= 4 * math.sqrt((p * (1 - p)).sum() / 400)


def test_vocabulary_forecast_scales_the_reference_to_the_private_number_of_units():
    # a reference of n users forecasting 2n units equals the exact expectation on the reference doubled
    texts, users = _population(150, 1)
    doubled = forecast_vocabulary(1.0, 1e-6, 300, max_words_per_unit=5, reference_texts=texts * 2,
                                  reference_users=users + [u + 150 for u in users])
    scaled = forecast_vocabulary(1.0, 1e-6, 300, max_words_per_unit=5, reference_texts=texts, reference_users=users)
    assert scaled.expected_words == pytest.approx(doubled.expected_words, rel=1e-12)
    capped = forecast_vocabulary(1.0, 1e-6, 300, max_words_per_unit=5, max_features=3, reference_texts=texts,
                                 reference_users=users)
    assert capped.expected_words == 3.0


def test_vocabulary_forecast_advises_a_public_list_when_only_common_words_can_pass():
    few = forecast_vocabulary(0.6, 5e-7, 3000, max_words_per_unit=300,  # tau sqrt(k) ~ 1,074 users: 36%
                              neighbours="replace-one")
    assert few.share > 0.3 and few.expected_words is None
    assert any("public word list (vocabulary=VocabularyPolicy.public(words)" in line for line in few.lines())
    many = forecast_vocabulary(3.0, 5e-7, 1_000_000, unit="document")
    assert many.share < 0.001 and not any("public word list" in line for line in many.lines())
    with pytest.raises(ValueError, match="n_units"):
        forecast_vocabulary(1.0, 1e-6, 0)


# --------------------------------------------------------------------------------------------------
# the two-round selection (method="two-round")

def round_two_sets(word_sets, released):
    """Each unit's set without the words round 1 released (units left empty drop out)."""
    rest = [frozenset(s - released) for s in word_sets]
    return [s for s in rest if s]


def two_round_law(word_sets, k, rounds):
    """{frozenset R: P(R)}: round 1's exact law, then round 2's on the sets without round 1's words."""
    (s1, t1), (s2, t2) = rounds
    law: dict = {}
    for first, p in released_set_law(word_sets, k, s1, t1).items():
        for second, q in released_set_law(round_two_sets(word_sets, first), k, s2, t2).items():
            law[first | second] = law.get(first | second, 0) + p * q
    return law


def test_two_round_noise_composes_to_the_one_round_sigma_and_splits_the_threshold_delta():
    for eps, delta, k, relation in [(1.0, 1e-6, 300, "add-remove"), (0.2, 5e-7, 50, "replace-one")]:
        sigma, _ = calibrate_selection(eps, delta, k, relation)
        (s1, t1), (s2, t2) = round_calibration(eps, delta, k, relation)
        assert s1 ** -2 + s2 ** -2 == pytest.approx(sigma ** -2, rel=1e-12)  # mu_1^2 + mu_2^2 = mu^2
        assert s1 == pytest.approx(sigma / math.sqrt(FIRST_ROUND_SHARE), rel=1e-12)
        for s, t in ((s1, t1), (s2, t2)):  # each round's threshold meets (and nearly attains) delta/4
            assert delta / 4 * (1 - 1e-6) <= threshold_delta_ref(t, s, k) <= delta / 4


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
def test_two_round_weights_before_noise_move_by_at_most_the_sensitivity(relation):
    """Every round-1 outcome O1 and every neighbour: the round-2 weight vectors differ by <= Delta (attained)."""
    def weights(data):
        out: dict = {}
        for s in data:
            for w in s:
                out[w] = out.get(w, 0.0) + 1 / math.sqrt(len(s))
        return out

    worst = 0.0
    for n in range(len(UNIVERSE) + 1):
        for released in map(frozenset, itertools.combinations(UNIVERSE, n)):
            mine = weights(round_two_sets(BASE, released))
            for other in neighbours_of(BASE, relation):
                theirs = weights(round_two_sets(other, released))
                gap = math.sqrt(sum((mine.get(w, 0) - theirs.get(w, 0)) ** 2 for w in set(mine) | set(theirs)))
                worst = max(worst, gap)
    assert worst <= sens(relation) + 1e-12 and worst >= sens(relation) - 1e-12


@pytest.mark.parametrize("relation", ["replace-one", "add-remove"])
@pytest.mark.parametrize("eps,delta", [(0.5, 0.2), (1.0, 0.05)])
def test_two_round_every_neighbour_of_a_tiny_dataset_meets_the_bound(relation, eps, delta):
    rounds = round_calibration(eps, delta, K, relation)
    P = two_round_law(BASE, K, rounds)
    assert float(sum(P.values())) == pytest.approx(1.0, abs=1e-30)
    worst = mpmath.mpf(0)
    for other in neighbours_of(BASE, relation):
        Q = two_round_law(other, K, rounds)
        worst = max(worst, hockey_stick(P, Q, eps), hockey_stick(Q, P, eps))
    assert delta / 20 < worst <= delta


def pass_probabilities(word_sets, sigma, tau):
    """{w: P(w passes)} in one round on these sets (a unit with s words adds 1/sqrt(s) to each)."""
    totals: dict = {}
    for s in word_sets:
        for w in s:
            totals[w] = totals.get(w, 0) + 1 / mpmath.sqrt(len(s))
    return {w: 1 - mpmath.ncdf((mpmath.mpf(tau) - t) / mpmath.mpf(sigma)) for w, t in totals.items()}


def expected_two_round_words(word_sets, k, rounds):
    """Exact E|O1 ∪ O2|: every round-1 outcome O1 enumerated, round 2's expectation in closed form."""
    (s1, t1), (s2, t2) = rounds
    with mpmath.workdps(20):  # 2^11 outcomes below: precision to spare, at a third of the time
        return sum(p * (len(first) + sum(pass_probabilities(round_two_sets(word_sets, first), s2, t2).values()))
                   for first, p in released_set_law(word_sets, k, s1, t1).items())


def test_two_round_keeps_more_words_where_units_share_words_far_above_the_threshold_and_fewer_elsewhere():
    """Exact expectations. Four groups of units hold three common words and two words of their group's, the
    group words just below tau: round 1 releases the common words (about 4 tau against tau_1 = 2.3 tau) and
    round 2 gives the group words sqrt(5/2) times the weight, so they pass (more words kept). With no common
    word nothing is released in round 1, and round 2 only has more noise (fewer words)."""
    eps, delta, k = 1.0, 1e-6, 5
    sigma, tau = calibrate_selection(eps, delta, k, "add-remove")
    rounds = round_calibration(eps, delta, k, "add-remove")
    g = int(tau * math.sqrt(5))  # a group's words: total g / sqrt(5) just below tau
    common = frozenset({"c1", "c2", "c3"})
    shared = [common | {f"g{i}a", f"g{i}b"} for i in range(4) for _ in range(g)]
    one, two = sum(pass_probabilities(shared, sigma, tau).values()), expected_two_round_words(shared, k, rounds)
    assert 3 + 8 * 0.3 < one < 3 + 8 * 0.5 and two > 3 + 8 * 0.9  # the group words pass in round 2
    apart = [frozenset({f"g{i}a", f"g{i}b", f"g{i}c"}) for i in range(2) for _ in range(g)]
    assert expected_two_round_words(apart, k, rounds) < sum(pass_probabilities(apart, sigma, tau).values()) - 0.5


def test_two_round_selection_records_the_one_round_entries_and_reports_its_rounds():
    texts = [f"common shared word{i % 5}x" for i in range(400)]
    one = select_vocabulary(texts, unit="document", epsilon=2.0, delta=1e-5, random_state=1,
                            method="weighted-gaussian")
    ledger = PrivacyLedger()
    two = select_vocabulary(texts, unit="document", epsilon=2.0, delta=1e-5, random_state=1, method="two-round",
                            ledger=ledger)
    assert two.method == "two-round" and two.sigma == one.sigma and two.delta_threshold == one.delta_threshold
    kinds = [(e["kind"], e.get("sigma"), e.get("delta")) for e in ledger.entries()]
    assert kinds == [("gaussian", one.sigma, None), ("approx", None, one.delta_threshold)]
    (s1, t1, n1), (s2, t2, n2) = two.rounds
    assert n1 + n2 == len(two) and {"common", "shared"} <= set(two.words)
    d = two.to_dict()
    json.dumps(d)
    assert [r["n_words"] for r in d["rounds"]] == [n1, n2] and "two rounds" in d["mechanism"]
    capped = select_vocabulary(texts, unit="document", epsilon=2.0, delta=1e-5, random_state=1, method="two-round",
                               max_features=2)
    assert len(capped) == 2 and set(capped.words) <= set(two.words)


def test_two_round_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="method"):
        select_vocabulary(["a text"], ["u"], epsilon=1.0, delta=1e-6, method="mad")
    with pytest.raises(ValueError, match="first_share"):
        round_calibration(1.0, 1e-6, 300, first_share=1.0)
    with pytest.raises(ValueError, match="word sets"):
        select_vocabulary_from_counts(word_set_counts({"u": ("w",)}), epsilon=1.0, delta=1e-6, method="two-round")
    with pytest.raises(ValueError, match="max_words_per_unit=1"):
        select_vocabulary_from_counts({"u": ("a", "b")}, epsilon=1.0, delta=1e-6, max_words_per_unit=1,
                                      method="two-round")


def test_the_pipeline_method_is_two_rounds_from_a_public_number_of_units_per_word_up():
    eps, delta, k = 2.0, 5e-7, 300
    _, tau = calibrate_selection(eps, delta, k, "add-remove")
    first = math.ceil(TWO_ROUND_FROM * tau * math.sqrt(k))  # the smallest count that picks two rounds
    assert selection_method(eps, delta, first, k, "add-remove") == "two-round"
    assert selection_method(eps, delta, first - 1, k, "add-remove") == "weighted-gaussian"
    assert selection_method(eps / 10, delta, first, k, "add-remove") == "weighted-gaussian"  # tau grows
    with pytest.raises(ValueError, match="n_units"):
        selection_method(eps, delta, 0)


def test_words_per_unit_is_the_largest_cap_whose_units_per_word_fit_the_share():
    eps, delta, n = 0.6, 5e-7, 2000
    k = words_per_unit(eps, delta, n, "add-remove")
    need = lambda k: calibrate_selection(eps, delta, k, "add-remove")[1] * math.sqrt(k)  # noqa: E731
    assert 50 < k < 1000 and need(k) <= 0.4 * n < need(k + 1)
    assert words_per_unit(eps, delta, 100, "add-remove") == 50  # none fits: the smallest
    assert words_per_unit(30.0, delta, 10 ** 6, "add-remove") == 1000  # all fit: the largest
    with pytest.raises(ValueError, match="n_units"):
        words_per_unit(eps, delta, 0)
