"""One PrivacyLedger across every road: an enforced budget, random DP kept apart, dp-accounting agreement."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from topicdp import BudgetExceededError, CallableModel, Corpus, PrivacyLedger, TopicDP
from topicdp.baselines import DPStochasticVI
from topicdp.datasets import synthetic_lda
from topicdp.mechanisms import mvg_release
from topicdp.rdp import EventEntry, calibrate_gaussian
from topicdp.rdp.ledger import ApproxEntry, GaussianEntry, LaplaceEntry
from topicdp.samplers import SensitivitySampling
from topicdp.spectral import DPSpectralMoments
from topicdp.variational import DPVariationalEM
from topicdp.vocabulary import select_vocabulary

DELTA = 1e-6
ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


@pytest.fixture(scope="module")
def corpus():
    data = synthetic_lda(3000, 30, 3, alpha0=1.0, random_state=1)
    return Corpus.from_matrix(data.X, vocabulary=[f"w{j:02d}" for j in range(30)])


class Spy:
    """Counts how often a road touches the private data (a model fit, the texts)."""

    def __init__(self):
        self.calls = 0

    def topics(self, c):
        self.calls += 1
        return np.full((3, c.n_words), 1.0 / c.n_words)


def _state(rng: np.random.Generator) -> dict:
    return rng.bit_generator.state


def test_budget_lets_two_releases_through_and_refuses_the_third_before_any_noise(corpus):
    """Budget (2, 1e-6): dp-vem at epsilon 1 and DPSpectralMoments at 0.9 compose (all Gaussian, exactly: GDP) to
    about 1.24 < 2; a TopicDP release at 2 would bring the total to about 2.25 and is refused before its
    model is fitted or a single noise draw is made; the ledger is left exactly as it was."""
    ledger = PrivacyLedger(budget=(2.0, DELTA))
    vem = DPVariationalEM(3, epsilon=1.0, delta=1e-7, unit="document", neighbours="replace-one", n_iterations=3,
                           random_state=0).fit(corpus, ledger=ledger)
    assert vem.release_.report.epsilon == 1.0 and len(ledger) == 1
    DPSpectralMoments(3, 1.0, 2, epsilon=0.9, delta=1e-7, unit="document", random_state=0, strict=False).fit(corpus, ledger=ledger)
    assert len(ledger) == 3  # dp-vem (T releases as one entry of count 3) + DPSpectralMoments's e6, e8
    spent = ledger.epsilon(DELTA, "best", scope="all")
    assert spent < 1.9  # tighter than basic composition 1 + 0.9 (releases composed at one delta)
    # the total is the exact GDP composition of all Gaussian releases (Dong, Roth & Su 2022, Cor. 3.3)
    mu1 = math.sqrt(3) * math.sqrt(2) / vem.sigma_
    mu2 = 1.0 / calibrate_gaussian(0.9, 1e-7, 1.0, method="analytic")
    from topicdp.rdp import gdp_epsilon
    assert spent == pytest.approx(gdp_epsilon(math.hypot(mu1, mu2), DELTA), rel=1e-6)

    before = ledger.entries()
    spy, rng = Spy(), np.random.default_rng(5)
    state = _state(rng)
    third = TopicDP(CallableModel(spy.topics, 3, name="spy"), epsilon=2.0, delta=1e-7, unit="document",
                    neighbours="replace-one", sensitivity="global", random_state=rng)  # the ledger's one relation
    with pytest.raises(BudgetExceededError) as err:
        third.fit(corpus, ledger=ledger)
    assert isinstance(err.value, ValueError)
    assert err.value.spent == pytest.approx(spent, rel=1e-12) and err.value.total > 2.0
    assert err.value.budget == (2.0, DELTA) and 0 < err.value.requested
    for word in ("spent", "requested", "budget"):
        assert word in str(err.value)
    assert spy.calls == 0 and _state(rng) == state and ledger.entries() == before
    # a release that fits what remains goes through (the refusal was about the total, not the road)
    small = TopicDP(CallableModel(spy.topics, 3, name="spy"), epsilon=0.2, delta=1e-7, unit="document",
                    neighbours="replace-one", sensitivity="global", random_state=0)
    release = small.fit(corpus, ledger=ledger).release_
    assert len(ledger) == 4 and release.report.composition == ledger.entries()
    assert ledger.epsilon(DELTA, "best", scope="all") <= 2.0


@pytest.fixture()
def exhausted():
    """A ledger whose budget is almost spent: any further release at epsilon 1 must be refused."""
    ledger = PrivacyLedger(budget=(1.0, DELTA))
    ledger.add_gaussian("earlier", sigma=calibrate_gaussian(0.95, DELTA / 2, 1.0), sensitivity=1.0)
    return ledger


def test_every_road_checks_before_noise(corpus, exhausted):
    """Each producer of a release refuses up front: ledger unchanged, no draw from the noise generator."""
    before = exhausted.entries()
    roads = {
        "dp-vem": lambda rng: DPVariationalEM(3, epsilon=1.0, n_iterations=2, unit="document",
                                               random_state=rng).fit(corpus, ledger=exhausted),
        "spectral": lambda rng: DPSpectralMoments(3, 1.0, 3, epsilon=1.0, delta=1e-7, unit="document", random_state=rng).fit(
            corpus, ledger=exhausted),
        "dpsvi": lambda rng: DPStochasticVI(3, epsilon=1.0, delta=1e-7, n_iterations=5, batch_size=50,
                                   random_state=rng).fit(corpus.X, ledger=exhausted),
        "mvg": lambda rng: mvg_release(np.full((3, 30), 1 / 30), 1.0, 1e-7, math.sqrt(2), unit="document",
                                       random_state=rng, ledger=exhausted),
        "topicdp": lambda rng: TopicDP(CallableModel(Spy().topics, 3), epsilon=1.0, delta=1e-7, sensitivity="global",
                                       random_state=rng).fit(corpus, ledger=exhausted),
    }
    for name, run in roads.items():
        rng = np.random.default_rng(0)
        state = _state(rng)
        with pytest.raises(BudgetExceededError):
            run(rng)
        assert _state(rng) == state, name
        assert exhausted.entries() == before, name


def test_select_vocabulary_checks_before_reading_the_texts(exhausted):
    class Texts(list):
        reads = 0

        def __iter__(self):
            Texts.reads += 1
            return super().__iter__()

    texts = Texts(["alpha beta gamma"] * 20)
    with pytest.raises(BudgetExceededError):
        select_vocabulary(texts, [str(i) for i in range(20)], epsilon=1.0, delta=1e-7, ledger=exhausted)
    assert Texts.reads == 0 and len(exhausted) == 1
    roomy = PrivacyLedger(budget=(5.0, 1e-5))
    vocab = select_vocabulary(texts, [str(i) for i in range(20)], epsilon=1.0, delta=1e-7, random_state=0,
                              ledger=roomy)
    assert [e["kind"] for e in roomy.entries()] == ["gaussian", "approx"]
    assert roomy.entries()[1]["delta"] == vocab.delta_threshold


def test_without_a_ledger_nothing_changes(corpus):
    """The same seed gives the same release with and without a (roomy) ledger."""
    a = DPVariationalEM(3, epsilon=1.0, n_iterations=2, unit="document", random_state=3).fit(corpus)
    b = DPVariationalEM(3, epsilon=1.0, n_iterations=2, unit="document", random_state=3).fit(
        corpus, ledger=PrivacyLedger())
    assert np.array_equal(a.topic_word_, b.topic_word_)


def test_random_dp_entries_are_not_summed_into_the_dp_total():
    """One DP Gaussian and two random-DP Gaussians (gamma 0.1 and 0.05, same P). The DP total is that of
    the DP entry alone; the all-entries total equals a ledger holding the three as if DP, and is stated
    with gamma = 0.15 (union bound); the budget is charged for all three."""
    ledger = PrivacyLedger()
    ledger.add_gaussian("dp", sigma=3.0, sensitivity=1.0, unit="user")
    ledger.add_gaussian("sampled 1", sigma=2.0, sensitivity=0.5, gamma=0.1, distribution="public reference")
    ledger.add_gaussian("sampled 2", sigma=4.0, sensitivity=0.7, gamma=0.05, distribution="public reference")
    alone, everything = PrivacyLedger(), PrivacyLedger()
    alone.add_gaussian("dp", 3.0, 1.0)
    for s, d in ((3.0, 1.0), (2.0, 0.5), (4.0, 0.7)):
        everything.add_gaussian(f"g{s}", s, d)
    assert ledger.totals(DELTA) == alone.totals(DELTA)
    assert ledger.totals(DELTA, "all") == pytest.approx(everything.totals(DELTA))
    st = ledger.statement(DELTA)
    assert st["n_dp_entries"] == 1 and st["random_dp"]["gamma"] == pytest.approx(0.15)
    assert st["random_dp"]["n_entries"] == 2 and st["random_dp"]["distribution"] == ["public reference"]
    assert len(ledger.dp_event().events) == 1 and len(ledger.dp_event("all").events) == 3
    assert [e.get("guarantee") for e in ledger.entries()] == [None, "random-DP", "random-DP"]
    # the budget counts the random-DP releases: the all-entries total is what is spent
    capped = PrivacyLedger(budget=(alone.epsilon(DELTA, "best") * 1.01, DELTA))
    capped.add_gaussian("dp", 3.0, 1.0)
    with pytest.raises(BudgetExceededError):
        capped.add_gaussian("sampled", 2.0, 0.5, gamma=0.1)
    # random-DP entries with different P do not compose by the union bound
    with pytest.raises(ValueError, match="sampling distribution"):
        ledger.add_gaussian("other P", 2.0, 0.5, gamma=0.1, distribution="private-oracle")


def test_topicdp_sampled_release_is_a_random_dp_entry(lee_corpus):
    small, reference = lee_corpus.subset_documents(np.arange(40)), lee_corpus.subset_documents(np.arange(40, 80))
    from topicdp import GensimLDA

    ledger = PrivacyLedger(budget=(10.0, 1e-4))
    dp = TopicDP(GensimLDA(3, random_state=0), epsilon=3.0, delta=1e-5, random_state=0,
                 sampling=SensitivitySampling(reference, 0.1, n_pairs=4, insecure_testing=True, random_state=0))
    rep = dp.fit(small, ledger=ledger).report_
    (entry,) = ledger.entries()
    # an insufficient (insecure_testing) sample guarantees nothing: gamma 1; the DP total is empty
    assert entry["guarantee"] == "random-DP" and entry["gamma"] == 1.0 and entry["unit"] == "user"
    assert ledger.epsilon(1e-4) == 0.0 and ledger.epsilon(1e-4, scope="all") > 0
    assert all(t["details"]["guarantee"] == "random-DP" for t in rep.composition_total)
    assert rep.composition == ledger.entries() and not hasattr(dp, "ledger")  # the privatizer keeps no ledger


def test_ledger_refuses_to_mix_neighbour_relations():
    ledger = PrivacyLedger()
    ledger.add_gaussian("a", 1.0, 1.0, neighbours="replace-one")
    with pytest.raises(ValueError, match="neighbours"):
        ledger.add_gaussian("b", 1.0, 1.0, neighbours="add-remove")
    assert len(ledger) == 1


# -- dp-accounting as the common language ----------------------------------------------------------------

def _gaussian_ledger() -> PrivacyLedger:
    ledger = PrivacyLedger()
    ledger.add_gaussian("dp-vem", sigma=calibrate_gaussian(1.0, 1e-7, math.sqrt(2), count=5), sensitivity=math.sqrt(2),
                        count=5)
    ledger.add_gaussian("e6", sigma=3.1, sensitivity=0.4)
    ledger.add_gaussian("e8", sigma=0.9, sensitivity=0.2)
    return ledger


def test_exact_gdp_total_equals_dp_accounting_pld():
    """All-Gaussian ledger: our exact GDP total against dp-accounting's PLD accountant on ledger.dp_event().
    PLD discretises the privacy loss (interval 1e-4 here) pessimistically, so theirs is at least ours minus
    rounding and at most 1e-5 above it relatively (measured: 2e-8 at delta 1e-5 and 1e-7). The event states noise over each entry's own sensitivity, which is
    dp-accounting's add/remove convention (its PLD doubles a Gaussian's sensitivity under REPLACE_ONE)."""
    ledger = _gaussian_ledger()
    for delta in (1e-5, 1e-7):
        acc = PLDAccountant(ADD_REMOVE, value_discretization_interval=1e-4)
        acc.compose(ledger.dp_event())
        theirs, ours = acc.get_epsilon(delta), ledger.epsilon(delta, "exact")
        assert ours * (1 - 1e-6) <= theirs <= ours * (1 + 1e-5)


def test_rdp_total_against_dp_accounting_rdp_with_a_dpsvi_event():
    """A mixed ledger (Gaussian, Laplace, DP-SVI's Poisson-subsampled Gaussian) under add/remove. Our RDP
    total converts on a superset of dp-accounting's order grid with the same conversion, so it is at most
    theirs; the extra orders gain little (measured 0.006 % at delta 1e-5, 0.01 % at 1e-7; bound 1 %)."""
    from topicdp.baselines.accounting import make_scheme

    scheme = make_scheme("poisson", 5000, 200, sampling_rate=0.02)
    ledger = PrivacyLedger()
    ledger.add_gaussian("g", sigma=6.0, sensitivity=1.0, count=3, neighbours="add-remove")
    ledger.add_laplace("l", scale=20.0, sensitivity=1.0)
    ledger.add_event("dp-svi", scheme.event(1.1), neighbours="add-remove")
    assert ledger.neighbours == "add-remove"
    acc = RdpAccountant(neighboring_relation=ADD_REMOVE)
    acc.compose(ledger.dp_event())
    for delta in (1e-5, 1e-7):
        theirs, ours = acc.get_epsilon(delta), ledger.epsilon(delta, "rdp")
        assert ours <= theirs * (1 + 1e-9)
        assert theirs <= ours * 1.01


def test_dpsvi_records_its_calibration_event(corpus):
    """DP-SVI's entry is the event its noise multiplier was calibrated on: the ledger alone gives the epsilon
    of the report (dp-accounting RDP), up to the grid: ours is a superset of dp-accounting's orders, so at most
    theirs, and here 2.3 % below it (with 20 steps the best order falls between their grid points); the
    bound 7 % is their grid's spacing above order 64 (see test_rdp_accounting)."""
    ledger = PrivacyLedger()
    m = DPStochasticVI(3, epsilon=1.0, delta=1e-6, n_iterations=20, sampling_rate=0.02, random_state=0).fit(
        corpus.X, ledger=ledger)
    (record,) = ledger.records
    assert isinstance(record, EventEntry) and record.neighbours == "add-remove"
    certified = m.release_.report.epsilon
    assert ledger.epsilon(1e-6) <= certified * (1 + 1e-9) and certified <= ledger.epsilon(1e-6) * 1.07


def test_unsupported_entries_are_refused_by_dp_accounting_not_misaccounted():
    ledger = PrivacyLedger()
    ledger.add_gaussian("g", 2.0, 1.0)
    ledger.add_approx("threshold", 0.0, 1e-7)
    assert not RdpAccountant().supports(ledger.dp_event())
    assert not PLDAccountant().supports(ledger.dp_event())


def test_planned_entries_match_recorded_ones_for_spectral(corpus):
    """DPSpectralMoments is checked against entries at sensitivity 1 before the data is read; the recorded entries
    (data-dependent sensitivities) have the same totals, for each accounting and configuration."""
    for cfg, accounting in ((1, "exact"), (3, "rdp"), (2, "simple")):
        ledger = PrivacyLedger()
        m = DPSpectralMoments(3, 1.0, cfg, epsilon=1000.0, delta=1e-6, unit="document", random_state=0, accounting=accounting,
                       strict=False).fit(corpus, ledger=ledger)
        planned = PrivacyLedger()
        from topicdp.spectral.accounting import DEFAULT_SPLITS, SpectralBudget
        from topicdp.spectral.configurations import releases

        _, gaussian, laplace = releases(cfg, False)
        planned.record(SpectralBudget(1000.0, 1e-6, DEFAULT_SPLITS[cfg], gaussian, laplace, accounting).planned_entries())
        assert ledger.totals(1e-6) == pytest.approx(planned.totals(1e-6), rel=1e-9), cfg
        assert ledger.unit == "document" and m.release_.report.composition


def test_spectral_records_what_it_released_before_a_failed_precondition(corpus):
    """At epsilon 0.9 on 3,000 documents the released M2 fails the (utility) gap check: the fit raises after
    releasing M2 (e8), and the ledger holds that release (the error message is a function of it)."""
    from topicdp.spectral import PreconditionError

    ledger = PrivacyLedger()
    with pytest.raises(PreconditionError):
        DPSpectralMoments(3, 1.0, 2, epsilon=0.9, delta=1e-7, unit="document", random_state=0).fit(corpus, ledger=ledger)
    assert [e["name"] for e in ledger.entries()] == ["e8"]


def test_budget_error_when_approx_deltas_alone_exceed_it():
    ledger = PrivacyLedger(budget=(1.0, 1e-6))
    with pytest.raises(BudgetExceededError) as err:
        ledger.record([ApproxEntry("big delta", 0.1, 2e-6)])
    assert math.isinf(err.value.total) and len(ledger) == 0
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget=1.0)
    ledger.record([LaplaceEntry("count", 2.0, 1.0), GaussianEntry("m", 10.0, 1.0)])
    assert 0 < ledger.remaining() < 0.5


def test_replace_one_ledger_with_fixed_batch_dpsvi_against_dp_accounting_rdp(corpus):
    """DPStochasticVI with fixed batches is replace-one, like DPSpectralMoments: both go in one ledger, and dp-accounting's
    RDP accountant under REPLACE_ONE (which reads a plain Gaussian event as we do) agrees with our RDP total
    within 1 % (the grid argument above)."""
    ledger = PrivacyLedger()
    DPSpectralMoments(3, 1.0, 1, epsilon=1000.0, delta=1e-6, unit="document", random_state=0, strict=False).fit(corpus, ledger=ledger)
    DPStochasticVI(3, epsilon=1.0, delta=1e-6, n_iterations=5, batch_size=100, sampling="fixed", random_state=0).fit(
        corpus.X, ledger=ledger)
    assert ledger.neighbours == "replace-one" and len(ledger) == 4
    acc = RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(ledger.dp_event())
    theirs, ours = acc.get_epsilon(1e-5), ledger.epsilon(1e-5, "rdp")
    assert ours <= theirs * (1 + 1e-9) and theirs <= ours * 1.01
