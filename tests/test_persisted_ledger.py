"""The persisted privacy ledger: totals across runs, refusals before reading, locking, crashes, tampering."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.stats import norm

from topicdp.rdp import (BudgetExceededError, EventEntry, GaussianEntry, LaplaceEntry, PrivacyLedger,
                         calibrate_gaussian)
from topicdp.rdp.ledger_file import LedgerFileError, entry_from_json, entry_to_json
from facts import assert_facts

LABELS = {"unit": "user", "neighbours": "add-remove"}


def _run_entries(eps: float, delta: float = 1e-6):
    """The entries of one pipeline run at (eps, delta) with a public word list: a DP unit count (5% of the budget)
    and dp-vem's 7 Gaussian releases (the rest), as topicdp.pipeline.charge plans them."""
    count = GaussianEntry("unit count", calibrate_gaussian(0.05 * eps, 0.05 * delta, 1.0, method="analytic"), 1.0,
                          **LABELS)
    topics = GaussianEntry("dp-vem", calibrate_gaussian(0.95 * eps, 0.95 * delta, 1.0, method="analytic", count=7),
                           1.0, 7, **LABELS)
    return [count, topics]


def _gdp_delta(mu: float, eps: float) -> float:
    """Dong, Roth & Su (2022), Cor. 2.13: the exact privacy profile of mu-GDP (an independent closed form)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "data.ledger")


def _open(path):
    return PrivacyLedger.open(path, budget=(3.0, 1e-5), unit="user", neighbours="add-remove")


def _spend(path, eps):
    ledger = PrivacyLedger.open(path)
    run = ledger.file.reserve(ledger, _run_entries(eps), guarantee={"epsilon": eps, "delta": 1e-6})
    ledger.file.complete(ledger, run, _run_entries(eps))


# -- composition across runs ----------------------------------------------------------------------------------

def test_totals_across_runs_equal_one_process_and_the_closed_form(path):
    _open(path)
    memory = PrivacyLedger()
    for eps in (1.2, 1.2, 1.2):
        _spend(path, eps)  # each run opens the file afresh, as a new process would
        memory.record(_run_entries(eps))
    reread = PrivacyLedger.open(path)
    assert reread.totals(1e-5) == memory.totals(1e-5)
    exact = reread.epsilon(1e-5, "exact")
    assert exact == pytest.approx(1.827, abs=1e-3)
    # the closed form: sqrt(sum mu_i^2)-GDP has delta(eps) = 1e-5 at the ledger's exact epsilon
    mu = math.sqrt(sum(e.count * (e.sensitivity / e.sigma) ** 2 for e in reread.records))
    assert _gdp_delta(mu, exact) == pytest.approx(1e-5, rel=1e-6)
    assert 3.0 - exact == pytest.approx(reread.remaining(), abs=1e-12)


def test_rdp_across_runs_is_dp_accountings():
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant

    orders = [1.5, 2.0, 4.0, 8.0, 32.0, 128.0]
    ledger = PrivacyLedger()
    for eps in (2.5, 1.2):
        ledger.record(_run_entries(eps))
    acc = rdp_privacy_accountant.RdpAccountant(orders=orders,
                                               neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(ledger.dp_event())
    np.testing.assert_allclose(ledger.rdp(np.array(orders)), acc._rdp, rtol=1e-12)


def test_persisted_rdp_matches_dp_accounting(path):
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant

    _open(path)
    for eps in (2.5,):
        _spend(path, eps)
    reread = PrivacyLedger.open(path)
    orders = [2.0, 8.0, 64.0]
    acc = rdp_privacy_accountant.RdpAccountant(orders=orders,
                                               neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(e.sigma / e.sensitivity), e.count)
                                     for e in _run_entries(2.5)]))
    np.testing.assert_allclose(reread.rdp(np.array(orders)), acc._rdp, rtol=1e-12)


def test_entries_round_trip_through_json():
    import dp_accounting as dpa

    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.3)), 50)
    for entry in (GaussianEntry("g", 1.7, 0.5, 3, **LABELS), LaplaceEntry("l", 2.0, 1.0, gamma=0.1, distribution="P"),
                  EventEntry("e", event, neighbours="add-remove")):
        back = entry_from_json(entry_to_json(entry))
        assert back == entry


# -- refusals -------------------------------------------------------------------------------------------------

def test_second_run_refused_with_exact_and_basic_figures(path):
    _open(path)
    _spend(path, 2.5)
    ledger = PrivacyLedger.open(path)
    with pytest.raises(BudgetExceededError) as err:
        ledger.file.reserve(ledger, _run_entries(2.5), guarantee={"epsilon": 2.5, "delta": 1e-6})
    assert err.value.total == pytest.approx(3.104, abs=1e-3) and err.value.spent == pytest.approx(2.100, abs=1e-3)
    assert err.value.basic["total"] == pytest.approx(5.0)
    assert "3.104" in str(err.value) and "2.5 + 2.5 = 5" in str(err.value)
    assert len(PrivacyLedger.open(path)) == 2  # nothing recorded


def test_three_runs_fit_where_basic_composition_would_refuse_the_third(path):
    _open(path)
    for _ in range(3):
        _spend(path, 1.2)
    summary = PrivacyLedger.open(path).file.summary(PrivacyLedger)
    assert summary["dp"]["spent"] == pytest.approx(1.827, abs=1e-3)
    assert summary["dp"]["basic"]["epsilon"] == pytest.approx(3.6)  # over the budget of 3


def test_unit_and_neighbours_must_be_the_files(path):
    _open(path)
    with pytest.raises(LedgerFileError, match="unit"):
        PrivacyLedger.open(path, unit="document")
    ledger = PrivacyLedger.open(path)
    with pytest.raises(LedgerFileError, match="replace-one"):
        ledger.file.reserve(ledger, [GaussianEntry("x", 10.0, 1.0, unit="user", neighbours="replace-one")])


def test_random_dp_is_recorded_apart_and_never_charged(path):
    _open(path)
    _spend(path, 2.5)
    ledger = PrivacyLedger.open(path)
    ledger.record([GaussianEntry("TopicDP", 0.2, 1.0, gamma=0.1, distribution="P", **LABELS)])  # eps >> 3
    reread = PrivacyLedger.open(path)
    assert reread.epsilon(1e-5, "exact") == pytest.approx(2.100, abs=1e-3)  # the DP scope
    summary = reread.file.summary(PrivacyLedger)
    assert summary["dp"]["n_runs"] == 1 and summary["random_dp"]["n_runs"] == 1
    assert summary["random_dp"]["spent_all"] > 10


# -- concurrency and crashes ---------------------------------------------------------------------------------

def _racer(path, barrier, results):
    ledger = PrivacyLedger.open(path)
    barrier.wait()
    try:
        ledger.file.reserve(ledger, _run_entries(2.5), guarantee={"epsilon": 2.5, "delta": 1e-6})
        results.put("planned")
    except BudgetExceededError:
        results.put("refused")


def test_two_runs_at_once_exactly_one_passes(tmp_path):
    ctx = mp.get_context("fork")
    for round_ in range(4):
        path = str(tmp_path / f"race{round_}.ledger")
        _open(path)
        barrier, results = ctx.Barrier(3), ctx.Queue()
        procs = [ctx.Process(target=_racer, args=(path, barrier, results)) for _ in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        outcomes = sorted(results.get(timeout=5) for _ in procs)
        assert outcomes == ["planned", "refused", "refused"]
        assert len(PrivacyLedger.open(path)) == 2


def _plan_then_hang(path, ready):
    ledger = PrivacyLedger.open(path)
    ledger.file.reserve(ledger, _run_entries(1.2))
    ready.set()
    signal.pause()  # "drawing the noise": killed here


def test_a_killed_run_stays_counted_at_its_plan(path):
    _open(path)
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_plan_then_hang, args=(path, ready))
    proc.start()
    assert ready.wait(30)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    ledger = PrivacyLedger.open(path)
    assert len(ledger) == 2 and ledger.epsilon(1e-5, "exact") == pytest.approx(0.9957, abs=1e-3)
    runs = ledger.file.summary(PrivacyLedger)["runs"]
    assert runs[0]["status"].startswith("planned (never completed")


# -- a file that cannot be trusted -----------------------------------------------------------------------------

def _lines(path):
    with open(path, "rb") as fh:
        return fh.read().splitlines(keepends=True)


def test_truncated_altered_or_shortened_files_are_refused(path):
    _open(path)
    _spend(path, 1.2)
    good = b"".join(_lines(path))
    with open(path, "wb") as fh:  # cut inside the last line
        fh.write(good[:-40])
    with pytest.raises(LedgerFileError, match="incomplete|truncated"):
        PrivacyLedger.open(path)
    with open(path, "wb") as fh:  # the last whole line removed: the chain is valid, the head is not
        fh.write(b"".join(_lines_of(good)[:-1]))
    with pytest.raises(LedgerFileError, match="head"):
        PrivacyLedger.open(path)
    with open(path, "wb") as fh:  # a spend made smaller
        fh.write(good.replace(b'"count":7', b'"count":1'))
    with pytest.raises(LedgerFileError, match="hash chain"):
        PrivacyLedger.open(path)
    with open(path, "wb") as fh:
        fh.write(good)
    assert len(PrivacyLedger.open(path)) == 2


def _lines_of(data: bytes):
    return data.splitlines(keepends=True)


# -- the command line --------------------------------------------------------------------------------------------

def test_ledger_show_says_both_totals(path, capsys):
    from topicdp.cli import main

    assert main(["ledger", "create", path, "--epsilon", "3", "--delta", "1e-5", "--unit", "user",
                 "--neighbours", "add-remove"]) == 0
    for _ in range(3):
        _spend(path, 1.2)
    capsys.readouterr()
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    assert "1.827 at delta 1e-05 by the ledger's exact accounting" in out
    assert "3.6 at delta 3e-06 by basic composition" in out
    assert "remaining  1.173" in out and out.count("[released]") == 3


def test_privatize_refuses_before_reading_the_corpus(tmp_path, monkeypatch, capsys):
    from topicdp.cli import main
    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import run

    words, path = tmp_path / "words.txt", str(tmp_path / "themed.ledger")
    words.write_text("\n".join(themed_vocabulary()))
    _open(path)
    _spend(path, 2.5)

    def no_reading(*args, **kwargs):
        raise AssertionError("the corpus was opened")

    monkeypatch.setattr(run, "open_source", no_reading)
    status = main(["privatize", "themed", "--vocabulary", str(words), "--epsilon", "2.5", "--mechanism", "dp-vem",
                   "--ledger", path])
    err = capsys.readouterr().err
    assert status == 2 and "no room for this run" in err and "3.104" in err and "= 5 at delta=2e-06" in err
    assert len(PrivacyLedger.open(path)) == 2


def test_privatize_plans_what_it_draws(tmp_path, capsys):
    from topicdp.cli import main
    from topicdp.datasets import themed_vocabulary

    words, path = tmp_path / "words.txt", str(tmp_path / "themed.ledger")
    words.write_text("\n".join(themed_vocabulary()))
    _open(path)
    assert main(["privatize", "themed", "--vocabulary", str(words), "--epsilon", "2.5", "--mechanism", "dp-vem",
                 "--ledger", path, "--seed", "1", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "dataset total        (2.1, 1e-05)-DP over the 1 DP run(s)" in out
    state = PrivacyLedger.open(path).file.state()
    assert [r["type"] for r in state.records] == ["planned", "completed"]  # no re-plan: the plan was exact
    assert state.records[0]["entries"] == state.records[1]["entries"]
    assert state.records[1]["status"] == "released"


def _themed_request(tmp_path, path, **kwargs):
    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy

    return ReleaseRequest(CorpusSource("themed"), VocabularyPolicy.public(themed_vocabulary()), ledger=path,
                          n_jobs=1, seed=3, **kwargs)


def test_the_mechanism_chosen_after_the_count_is_planned_before_its_noise(tmp_path):
    from topicdp.pipeline import release

    path = str(tmp_path / "themed.ledger")
    _open(path)
    result = release(_themed_request(tmp_path, path, epsilon=1.2), echo=lambda line: None)
    records = PrivacyLedger.open(path).file.state().records
    # the count planned before reading (the choice waits for it), the chosen mechanism's topics once chosen, completed
    assert [r["type"] for r in records] == ["planned", "planned", "completed"]
    assert {e["name"] for e in records[0]["entries"]} == {"unit count"}
    assert [e["name"] for e in records[1]["entries"]] == ["unit count", result.decision.mechanism]
    assert records[1]["entries"] == records[2]["entries"]
    assert result.release.report.details["ledger"]["spent"] == pytest.approx(0.9957, abs=1e-3)


def test_a_run_refused_after_its_count_is_charged_with_the_count_only(tmp_path):
    from topicdp.pipeline import ReleaseRefused, release

    path = str(tmp_path / "themed.ledger")
    _open(path)
    with pytest.raises(ReleaseRefused, match="noise"):
        release(_themed_request(tmp_path, path, epsilon=0.02, mechanism="dp-vem"), echo=lambda line: None)
    state = PrivacyLedger.open(path).file.state()
    completed = state.records[-1]
    assert completed["type"] == "completed" and completed["status"] == "stopped: refused"  # a category, no text
    assert [e["name"] for e in completed["entries"]] == ["unit count"]
    assert [e["name"] for e in state.records[0]["entries"]] == ["unit count", "dp-vem"]


def test_a_random_dp_run_is_charged_to_its_own_scope(tmp_path):
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy
    from topicdp.pipeline.charge import charged, open_charge
    from topicdp.pipeline.plan import plan_request

    path = str(tmp_path / "random.ledger")
    PrivacyLedger.open(path, budget=(1.0, 1e-5), unit="user", neighbours="replace-one")
    request = ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.public(["a", "b", "c"]), epsilon=3.0, n_topics=2,
                             guarantee="random-dp", reference="embedded", ledger=path)
    charge = open_charge(plan_request(request), lambda line: None)  # 3 > 1: not charged to the DP budget
    ledger = charge.run_ledger()

    class Report:
        details: dict = {}
        published: dict = {}
        mechanism = "topicdp"

    class Release:
        report = Report()

    with charged(charge, ledger) as done:
        ledger.check([GaussianEntry("TopicDP release", 0.5, 1.0, gamma=0.1, distribution="P", unit="user",
                                    neighbours="replace-one")])  # what TopicDP checks, then draws
        ledger.record([GaussianEntry("TopicDP release", 0.5, 1.0, gamma=0.1, distribution="P", unit="user",
                                     neighbours="replace-one")])
        done(Release())
    details = Release.report.details["ledger"]
    assert details["scope"] == "random-DP" and details["spent"] == 0.0
    assert "not counted in (nor fitting within) its DP budget" in details["line"]
    summary = PrivacyLedger.open(path).file.summary(PrivacyLedger)
    assert summary["dp"]["n_runs"] == 0 and summary["random_dp"]["n_runs"] == 1


class _Captured(Exception):
    pass


@dataclass
class _CaptureLedger(PrivacyLedger):
    """Raises with the entries a producer checks (just before its noise): what it will draw."""

    def check(self, entries):
        raise _Captured(list(entries))


@pytest.mark.parametrize("configuration", [1, 2, 3, 4])
def test_spectral_plans_are_what_spectral_dp_checks(tmp_path, configuration):
    from topicdp import Corpus
    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy
    from topicdp.pipeline.plan import plan_request
    from topicdp.spectral import DPSpectralMoments

    path = str(tmp_path / "doc.ledger")
    PrivacyLedger.open(path, budget=(30.0, 1e-5), unit="document", neighbours="replace-one")
    request = ReleaseRequest(CorpusSource("themed"), VocabularyPolicy.public(themed_vocabulary()), epsilon=2.0,
                             unit="document", n_units=500, mechanism=f"spectral-config-{configuration}", ledger=path)
    plan = plan_request(request)
    planned = plan.topics_entries(f"spectral-config-{configuration}")
    rng = np.random.default_rng(0)
    corpus = Corpus.from_matrix(rng.poisson(1.0, size=(500, 20)), vocabulary=[f"w{j}" for j in range(20)])
    model = DPSpectralMoments(n_topics=10, alpha0=1.0, configuration=configuration, epsilon=plan.budget.topics.epsilon,
                       delta=plan.budget.topics.delta, unit="document", n_units=500)
    with pytest.raises(_Captured) as checked:
        model.fit(corpus, ledger=_CaptureLedger())
    assert checked.value.args[0] == planned


def test_dp_svi_is_planned_as_its_pair_and_re_planned_at_its_event(tmp_path):
    from topicdp.pipeline import release

    path = str(tmp_path / "doc.ledger")
    PrivacyLedger.open(path, budget=(30.0, 1e-5), unit="document", neighbours="add-remove")
    release(_themed_request(tmp_path, path, epsilon=3.0, unit="document", mechanism="dpsvi", release_anyway=True),
            echo=lambda line: None)
    records = PrivacyLedger.open(path).file.state().records
    assert [[e["kind"] for e in r["entries"]] for r in records] == [["gaussian", "approx"],
                                                                    ["gaussian", "dp-event"],
                                                                    ["gaussian", "dp-event"]]
    assert [r["type"] for r in records] == ["planned", "planned", "completed"]


# -- one ledger, whatever its name ---------------------------------------------------------------------------

def _show(name, capsys):
    from topicdp.cli import main

    capsys.readouterr()
    assert main(["ledger", "show", name]) == 0
    return capsys.readouterr().out


def test_a_symbolic_link_names_the_one_ledger(tmp_path, capsys):
    real, link = str(tmp_path / "data.ledger"), str(tmp_path / "link.ledger")
    _open(real)
    os.symlink(real, link)
    _spend(link, 1.2)
    _spend(real, 1.2)
    assert os.path.islink(link) and os.path.realpath(link) == os.path.realpath(real)
    for name in (real, link):  # a third run of 3.5 would bring the 1.83 spent over 3, through either name
        ledger = PrivacyLedger.open(name)
        with pytest.raises(BudgetExceededError):
            ledger.file.reserve(ledger, _run_entries(3.5), guarantee={"epsilon": 3.5, "delta": 1e-6})
    assert os.path.islink(link) and not os.path.exists(link + ".head") and not os.path.exists(link + ".lock")
    by_real, by_link = _show(real, capsys), _show(link, capsys)
    assert by_real == by_link and by_real.count("[released]") == 2 and "DP releases: 2" in by_real


def test_a_spend_through_a_link_is_seen_through_the_real_path(tmp_path):
    real, link = str(tmp_path / "data.ledger"), str(tmp_path / "link.ledger")
    _open(real)
    os.symlink(real, link)
    _spend(link, 2.5)
    ledger = PrivacyLedger.open(real)
    with pytest.raises(BudgetExceededError, match="2.5 \\+ 2.5 = 5"):
        ledger.file.reserve(ledger, _run_entries(2.5), guarantee={"epsilon": 2.5, "delta": 1e-6})
    assert os.path.islink(link) and len(PrivacyLedger.open(real)) == 2


def test_two_names_at_once_share_one_lock(tmp_path):
    ctx = mp.get_context("fork")
    for round_ in range(3):
        real, link = str(tmp_path / f"race{round_}.ledger"), str(tmp_path / f"link{round_}.ledger")
        _open(real)
        os.symlink(real, link)
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_racer, args=(name, barrier, results)) for name in (real, link, link, real)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        outcomes = sorted(results.get(timeout=5) for _ in procs)
        assert outcomes == ["planned", "refused", "refused", "refused"]
        assert os.path.islink(link) and len(PrivacyLedger.open(real)) == 2


def test_a_ledger_with_a_second_hard_link_is_refused(tmp_path):
    real, other = str(tmp_path / "data.ledger"), str(tmp_path / "copy.ledger")
    _open(real)
    os.link(real, other)
    for name in (real, other):
        with pytest.raises(LedgerFileError, match="2 hard links") as err:
            PrivacyLedger.open(name)
        assert os.path.realpath(name) in str(err.value) and "two ledgers" in str(err.value)
        assert "atomic rename" in str(err.value) and "Remove the other names" in str(err.value)
    os.unlink(other)
    _spend(real, 1.2)  # one name again: the ledger is usable
    assert len(PrivacyLedger.open(real)) == 2


# -- a ledger without its head --------------------------------------------------------------------------------

def test_a_ledger_cut_at_a_line_and_without_its_head_is_refused_until_resealed(path, capsys):
    from topicdp.cli import main
    from topicdp.rdp.ledger_file import LedgerFile

    _open(path)
    for _ in range(3):
        _spend(path, 1.2)
    lines = _lines(path)
    assert len(lines) == 7  # the header, and a planned and a completed line per run
    with open(path, "wb") as fh:  # two runs cut at a line boundary: the chain that is left is valid
        fh.write(b"".join(lines[:3]))
    os.unlink(path + ".head")
    with pytest.raises(LedgerFileError) as err:
        PrivacyLedger.open(path)
    message = str(err.value)
    assert f"{os.path.realpath(path)}.head is missing" in message and "topicdp ledger reseal" in message
    with pytest.raises(LedgerFileError, match="head"):
        _spend(path, 1.2)
    assert main(["ledger", "show", path]) == 2 and "reseal" in capsys.readouterr().err
    assert main(["ledger", "reseal", path]) == 0
    out = capsys.readouterr().out
    assert "resealed with 1 run" in out and "you vouch that the file is whole" in out
    assert "cannot show lines cut from its end" in out and out.count("[released]") == 1
    assert len(PrivacyLedger.open(path)) == 2  # one run, accepted on the owner's word
    assert LedgerFile(path).reseal() is False  # a head that agrees: nothing to do


def test_reseal_never_replaces_a_head_that_disagrees(path):
    from topicdp.rdp.ledger_file import LedgerFile

    _open(path)
    _spend(path, 1.2)
    lines = _lines(path)
    with open(path, "wb") as fh:
        fh.write(b"".join(lines[:-1]))
    with pytest.raises(LedgerFileError, match="head"):
        LedgerFile(path).reseal()
    with pytest.raises(LedgerFileError, match="head"):
        PrivacyLedger.open(path)


def test_a_new_ledger_never_exists_without_its_head(path, monkeypatch):
    from topicdp.rdp import ledger_file

    written = []

    def crash_on_the_second_write(target, data, **kwargs):
        if written:
            raise OSError("the disk is full")
        written.append(target)
        return atomic_write(target, data, **kwargs)

    atomic_write = ledger_file.atomic_write
    monkeypatch.setattr(ledger_file, "atomic_write", crash_on_the_second_write)
    with pytest.raises(OSError, match="disk"):
        _open(path)
    assert not (os.path.exists(path) and not os.path.exists(path + ".head"))
    monkeypatch.undo()
    _open(path)  # a head left alone is replaced by the ledger's
    assert os.path.exists(path + ".head") and len(PrivacyLedger.open(path)) == 0


# -- what a stopped run leaves in the ledger ------------------------------------------------------------------

SECRET = "alice@example.org wrote: meet me at the clinic"


@pytest.mark.parametrize("fault, status", [(ValueError(f"texts is empty: {SECRET}"), "stopped: refused"),
                                           (RuntimeError(SECRET), "stopped: error (RuntimeError)"),
                                           (KeyboardInterrupt(SECRET), "stopped: interrupted")])
def test_a_stopped_run_leaves_its_category_never_its_message(tmp_path, monkeypatch, fault, status):
    import topicdp.pipeline.run as run_module
    from faults import failing_row
    from topicdp.pipeline import release

    def fails(ledger, n_units):
        raise fault

    monkeypatch.setitem(run_module.MECHANISMS, "dp-vem", failing_row(run_module.MECHANISMS["dp-vem"], fails))
    path = str(tmp_path / "themed.ledger")
    _open(path)
    with pytest.raises((ValueError, KeyboardInterrupt)):
        release(_themed_request(tmp_path, path, epsilon=2.5, mechanism="dp-vem", release_anyway=True),
                echo=lambda line: None)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert "alice" not in text and "clinic" not in text and "texts is empty" not in text
    completed = PrivacyLedger.open(path).file.state().records[-1]
    assert completed["type"] == "completed" and completed["status"] == status


def test_stop_statuses_are_categories():
    from topicdp.pipeline import ReleaseRefused
    from topicdp.pipeline.charge import stop_status

    budget = BudgetExceededError(2.0, 2.0, 4.0, (3.0, 1e-5), "best", ["x"])
    assert stop_status(budget) == "stopped: budget"
    try:
        try:
            raise budget
        except ValueError as exc:
            raise ReleaseRefused(str(exc)) from exc
    except ReleaseRefused as refused:
        assert stop_status(refused) == "stopped: budget"
    try:
        try:
            raise FileNotFoundError(f"/data/{SECRET}.jsonl")
        except OSError as exc:
            raise ReleaseRefused(f"FileNotFoundError: {exc}") from exc
    except ReleaseRefused as refused:
        assert stop_status(refused) == "stopped: error (FileNotFoundError)"
    assert stop_status(ReleaseRefused(SECRET)) == "stopped: refused"


def test_a_reader_racing_an_append_is_not_refused(path, monkeypatch):
    """Read without the lock (``ledger show``) while another run appends: the head, read before the file, never
    names a line the file lacks (read after it, the append's new head refused the whole file read before it)."""
    from topicdp.rdp import ledger_file

    _open(path)
    _spend(path, 1.2)
    read_head = ledger_file._read_head

    def an_append_meanwhile(p):
        monkeypatch.setattr(ledger_file, "_read_head", read_head)
        _spend(path, 1.2)  # another run, just before the reader reads the head
        return read_head(p)

    monkeypatch.setattr(ledger_file, "_read_head", an_append_meanwhile)
    state = ledger_file.read_state(os.path.realpath(path))
    assert len(state.records) == 4 and len(PrivacyLedger.open(path)) == 4

# -- charged step by step: what will run ----------------------------------------------------------------------------

def _document_request(path, **kwargs):
    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy

    return ReleaseRequest(CorpusSource("themed"), VocabularyPolicy.public(themed_vocabulary()), ledger=path,
                          n_jobs=1, seed=3, unit="document", **kwargs)


def _document_ledger(path, epsilon=5.0):
    return PrivacyLedger.open(path, budget=(epsilon, 1e-5), unit="document", neighbours="add-remove")


def _spend_as_planned(path, request, mechanism):
    """Charge ``path`` what ``request`` plans with ``mechanism`` (as a completed run), without reading anything."""
    from topicdp.pipeline.plan import planned_steps
    from topicdp.pipeline.plan import plan_request

    planned = planned_steps(plan_request(request))
    entries = planned.fixed + planned.topics[mechanism]
    ledger = PrivacyLedger.open(path)
    run = ledger.file.reserve(ledger, entries, guarantee={"epsilon": request.epsilon, "delta": request.delta})
    ledger.file.complete(ledger, run, entries)


def test_a_second_release_that_fits_by_the_chosen_mechanism_is_admitted(tmp_path):
    """A new user's case: a document-level ledger of epsilon 5, a first release of 3, a second of 3 without naming
    the mechanism. The plan picks dp-vem, which fits (as with mechanism='dp-vem'); planning the costliest candidate
    (laplace) before reading refused it."""
    from topicdp.pipeline import release

    totals = {}
    for named in (None, "dp-vem"):
        path = str(tmp_path / f"doc-{named}.ledger")
        _document_ledger(path)
        release(_document_request(path, epsilon=3.0), echo=lambda line: None)
        lines: list = []
        result = release(_document_request(path, epsilon=3.0, mechanism=named), echo=lines.append)
        assert result.decision.mechanism == "dp-vem"
        totals[named] = result.release.report.details["ledger"]["spent"]
        if named is None:
            said = next(line for line in lines if line.startswith(f"ledger {path}"))
            assert "the unit count of this run is planned" in said and "with dp-vem, the cheapest" in said
            assert "with laplace, the costliest, 5.506" in said  # what the old plan charged: over 5
    assert totals[None] == pytest.approx(3.748, abs=1e-3) and totals[None] == totals["dp-vem"]


def test_a_run_no_candidate_could_fit_is_refused_before_reading(tmp_path, monkeypatch):
    from topicdp.pipeline import run

    path = str(tmp_path / "doc.ledger")
    _document_ledger(path, epsilon=3.0)
    _spend_as_planned(path, _document_request(path, epsilon=2.5), "dp-vem")

    def no_reading(*args, **kwargs):
        raise AssertionError("the corpus was opened")

    monkeypatch.setattr(run, "open_source", no_reading)
    with pytest.raises(BudgetExceededError) as err:
        run.release(_document_request(path, epsilon=2.5), echo=lambda line: None)
    message = str(err.value)
    assert "no room for this run" in message and "Nothing was read or spent" in message
    assert_facts(message, "Checked before reading", "unit count", "dp-vem, the cheapest",
                 "(dp-vem, gaussian-global, laplace)", ordered=True)  # the cheapest path, of the plan's candidates
    assert "no candidate fits" in message
    assert err.value.requested == pytest.approx(2.1, abs=0.05)  # the cheapest path, not laplace's
    assert len(PrivacyLedger.open(path).file.state().records) == 2  # nothing planned


def test_the_topics_refused_at_their_step_name_the_mechanism_chosen_and_the_figures(tmp_path, monkeypatch):
    from dataclasses import replace

    from topicdp.pipeline import ReleaseRefused, run

    path = str(tmp_path / "doc.ledger")
    _document_ledger(path)
    _spend_as_planned(path, _document_request(path, epsilon=3.0), "dp-vem")
    decide = run.decide
    monkeypatch.setattr(run, "decide", lambda *a, **k: replace(decide(*a, **k), mechanism="laplace",
                                                               reason="chosen for this test"))
    with pytest.raises(ReleaseRefused) as err:
        run.release(_document_request(path, epsilon=3.0, release_anyway=True), echo=lambda line: None)
    message = str(err.value)
    assert_facts(message, "no room for the topics by laplace", "plan chose", "(chosen for this test)",
                 "exact composition", ordered=True)  # the step, the mechanism and why, the account
    assert_facts(message, "spent 2.528", "plans 2.956", "unit count", "together 5.506", ordered=True)
    assert_facts(message, "basic composition", "3 + 3 = 6", ordered=True)
    assert_facts(message, "dp-vem and gaussian-global would fit", "mechanism='dp-vem'", "--mechanism dp-vem",
                 ordered=True)  # the candidates that fit, in both spellings
    assert_facts(message, "only the unit count", "epsilon=0.15", "delta=5e-08", "spent", ordered=True)
    records = PrivacyLedger.open(path).file.state().records
    assert [r["type"] for r in records] == ["planned", "completed", "planned", "completed"]
    assert [e["name"] for e in records[2]["entries"]] == ["unit count"]  # the topics never planned, never drawn
    assert [e["name"] for e in records[3]["entries"]] == ["unit count"] and records[3]["status"].startswith("stopped")


def _killed_at(path, request, point, ready):
    """Run ``request`` in this (forked) process and hang at ``point``, its step planned: killed there."""
    from topicdp.pipeline import charge, release, run

    def hang(*args):
        ready.set()
        signal.pause()

    def after(cls_or_module, name, when=lambda *a: True):
        original = getattr(cls_or_module, name)

        def wrapped(*args, **kwargs):
            out = original(*args, **kwargs)
            if when(*args):
                hang()
            return out
        setattr(cls_or_module, name, wrapped)

    if point == "before reading":  # the first steps planned, the corpus not opened yet
        after(charge.Charge, "reserve")
    elif point == "the count drawn":
        after(run, "gaussian_count")
    elif point == "the topics planned":  # the mechanism chosen, its entries in the file, nothing of it drawn
        after(charge.Charge, "plan_topics")
    elif point == "the topics checked":  # just before the topics' noise
        after(charge.Charge, "before_noise", when=lambda self, ledger, entries: entries[0].name != "unit count")
    release(request, echo=lambda line: None)


@pytest.mark.parametrize("mechanism, point, counted", [
    (None, "before reading", ["unit count"]),
    (None, "the count drawn", ["unit count"]),
    (None, "the topics planned", ["unit count", "dp-vem"]),
    (None, "the topics checked", ["unit count", "dp-vem"]),
    ("dp-vem", "before reading", ["unit count", "dp-vem"]),  # named: its topics are known to run before reading
    ("laplace", "the topics checked", ["unit count", "TopicDP release (planned)"]),
])
def test_a_run_killed_at_each_step_stays_counted_at_what_it_planned(tmp_path, mechanism, point, counted):
    path = str(tmp_path / "doc.ledger")
    _document_ledger(path)
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    request = _document_request(path, epsilon=3.0, mechanism=mechanism, release_anyway=True)
    proc = ctx.Process(target=_killed_at, args=(path, request, point, ready))
    proc.start()
    while not ready.wait(0.2):
        assert proc.is_alive(), f"the run ended before {point}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    ledger = PrivacyLedger.open(path)  # verifies the chain and its head
    assert [e.name for e in ledger.records] == counted
    (run,) = ledger.file.summary(PrivacyLedger)["runs"]
    assert run["status"].startswith("planned (never completed")
