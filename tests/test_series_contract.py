"""The neighbour contract over time: a series in which one period is empty decides, prints, publishes and charges
alike with its neighbour in which that period holds one document, apart from DP outputs.

``topicdp privatize --period month`` releases a stated range of months, each month through the one release core
and every run charged to one persisted ledger. Whether a month holds any document is private: an empty month
goes through the same DP count, decision and mechanism as a month with one document (an estimator fitted on no
document releases noise only), or is refused by a rule that reads only DP outputs and public facts. The helpers
and the masking are the pinned neighbour contract's (:mod:`test_neighbour_contract`): the DP count is pinned to
one value, and only the released top words and the fields whose published status is DP or post-processing are
left out of the comparison. Compared: the exit status, stderr, every printed line, each month's published
non-DP fields and outcome (released, or refused and why), the warnings raised (the command prints them), and the
ledger's entries and totals.

Before, an empty month was refused for being empty ("texts is empty") where a month with one document was released
with ``--release-anyway``, so the ledger's totals (which later releases print and publish) differed, and without
it the two refusals printed different reasons.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest

from test_neighbour_contract import (OOV, SPECTRAL_WORDS, WORDS, _assert_alike, _messages, _non_dp_fields,
                                     _printed, _release, _row, _write_words, pinned)  # noqa: F401 (pinned: a fixture)
from topicdp import RepeatedReleaseWarning
from topicdp._names import MODELS
from topicdp.cli import main
from topicdp.pipeline import MECHANISMS
from topicdp.rdp import PrivacyLedger

pytestmark = pytest.mark.usefixtures("pinned")

#: June is empty in one series and holds one document in its neighbour; July, released after it and charged to the
#: same ledger, prints what the ledger holds (where June's spend would show)
MONTHS = ("2004-06", "2004-07")
EMPTY = "2004-06"
#: every (mechanism, unit) of the registry; a series has add/remove neighbours (each month's count is drawn under
#: DP), so the rows calibrated for replace-one only (a stated count) are refused by the plan, alike
ROWS = [(m, u) for m in MECHANISMS for u in MECHANISMS[m].units]


def test_the_series_contract_covers_every_row_of_the_registry():
    assert {m for m, _ in ROWS} == set(MECHANISMS) and len(ROWS) == 3 * 2 + 4 * 2 + 1


def _dated(records) -> list[dict]:
    """``records`` (user, text) dated in July, none in June."""
    return [{"user": u, "text": t, "date": f"{MONTHS[1]}-0{1 + i % 9}"} for i, (u, t) in enumerate(records)]


#: the neighbour's one document in June: a new unit (user or document) with words of the list
ONE = {"user": "u9999", "text": " ".join(WORDS[:25]), "date": f"{EMPTY}-02"}

#: a period's line in the summary (its released topics follow, one line each, until a blank line)
_PERIOD_HEADLINE = re.compile(r"^\d{4}-\d{2}: (?!refused)")


def _series_printed(out: str) -> list[str]:
    """The printed lines of a series without each released period's top words (DP outputs), otherwise as the
    pinned contract reads a release's lines (:func:`test_neighbour_contract._printed`)."""
    kept, skipping = [], False
    for line in out.splitlines():
        if _PERIOD_HEADLINE.match(line):
            kept.append(line)
            skipping = True
        elif skipping and re.match(r"^\s+\d+  ", line):
            continue
        else:
            skipping = False
            kept.append(line)
    return _printed("\n".join(kept))


def _series(tmp_path, rows: list[dict], flags: list, *, unit: str):
    """Run ``privatize --period month`` over :data:`MONTHS` on ``rows`` with a fresh ledger; both neighbours use the
    same paths (they are printed)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ledger, out = tmp_path / "series.ledger", tmp_path / "release.json"
    for old in [ledger, *tmp_path.glob("release.*.json")]:
        old.unlink(missing_ok=True)
    assert main(["ledger", "create", str(ledger), "--epsilon", "1000", "--delta", "1e-3", "--unit", unit,
                 "--neighbours", "add-remove"]) == 0
    code = main(["privatize", str(corpus), "--seed", "3", "--out", str(out), "--ledger", str(ledger), "--period",
                 "month", "--periods", f"{MONTHS[0]}:{MONTHS[-1]}", "--n-jobs", "1", *map(str, flags)])
    return code, ledger, out


def _run(tmp_path, capsys, rows, flags, unit):
    """What the contract compares of one series: exit status, printed lines, stderr messages, each month's published
    non-DP fields (None where no file was written: refused), and the ledger's entries and totals."""
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as warned:  # the command prints them to stderr
        warnings.simplefilter("always")
        warnings.simplefilter("error", RepeatedReleaseWarning)
        code, ledger, out = _series(tmp_path, rows, flags, unit=unit)
    captured = capsys.readouterr()
    published = {}
    for month in MONTHS:
        path = tmp_path / f"release.{month}.json"
        published[month] = _non_dp_fields(json.loads(path.read_text())) if path.exists() else None
    spent = PrivacyLedger.open(str(ledger))
    # a series' partitioning names its corpus by the SHA-256 of the file's bytes, in the owner's ledger only (never
    # printed or published): two neighbours are two files, so their digests differ; what the totals read of it,
    # whether two runs split the same file, is the same in both worlds (the totals are compared unmasked)
    entries = [(type(e).__name__, {k: _digest_masked(v) for k, v in vars(e).items()}) for e in spent.records]
    summary = spent.file.summary(PrivacyLedger)
    # each run's id and date are the run's own; its corpus is the month's file in a scratch directory whose name is
    # drawn afresh by every series (random, like the id: neither reads the data)
    runs = [{k: re.sub(r"topicdp-periods-[^/]+", "topicdp-periods-*", v) if k == "corpus" else _digest_masked(v)
             for k, v in r.items() if k not in ("run", "date")} for r in summary["runs"]]
    return {"code": code, "printed": _series_printed(captured.out), "messages": _messages(captured.err),
            "warnings": [(w.category.__name__, str(w.message)) for w in warned],
            "published": published, "entries": entries, "totals": summary["dp"], "runs": runs}


def _digest_masked(value):
    """``value`` with the corpus digest of a partitioning key (``"sha256:<hex>"``) masked, anything else as it is."""
    return re.sub(r"sha256:[0-9a-f]{64}", "sha256:*", value) if isinstance(value, str) else value


#: each row forced (``--release-anyway``) and decided by its forecast; DP-SVI has no forecast, so it is released
#: either way and runs once (its 500 steps per month are the file's slowest part)
CASES = [pytest.param(m, u, anyway, id=f"{m}-{u}-{'forced' if anyway else 'decided'}")
         for m, u in ROWS for anyway in (True, False) if anyway or MECHANISMS[m].predict is not None]


@pytest.mark.parametrize("mechanism, unit, release_anyway", CASES)
def test_an_empty_period_is_a_neighbour_like_any_other(mechanism, unit, release_anyway, tmp_path, capsys):
    """Same flags, seed and pinned DP count; June empty in one series and holding one document in the other. Every
    printed line but the released top words, every non-DP field of each month's release, each month's outcome
    and the ledger's entries and totals: identical."""
    words = _write_words(tmp_path / "words.txt", WORDS)
    records, flags = _row(mechanism, unit, tmp_path, words)
    if not release_anyway:
        flags = [f for f in flags if f != "--release-anyway"]
    dated = _dated(records)
    empty = _run(tmp_path, capsys, dated, flags, unit)
    one = _run(tmp_path, capsys, dated + [ONE], flags, unit)
    if "replace-one" not in MECHANISMS[mechanism].neighbours:
        assert empty["code"] == 0, empty["messages"]
        assert len(empty["entries"]) >= len(MONTHS)  # every month drew its count at least
        assert [line for line in empty["printed"] if line.startswith("period ")] == [f"period {m}:" for m in MONTHS]
    if release_anyway and mechanism in ("dp-vem", "gaussian-global", "laplace", "dpsvi"):
        assert all(empty["published"][m] is not None for m in MONTHS), empty["printed"]  # June released: noise
    for key in empty:
        assert empty[key] == one[key], key


#: the neighbour relation of each row's single release; under replace-one the stated count is of units whose texts
#: have no word of the list, one of which has words in the neighbour
SINGLE = [pytest.param(m, u, r, id=f"{m}-{u}-{r}") for m in MECHANISMS for u in MECHANISMS[m].units
          for r in MECHANISMS[m].neighbours]
N_STATED = 3  # the fewest units a spectral configuration takes


@pytest.mark.parametrize("mechanism, unit, relation", SINGLE)
def test_a_corpus_without_a_document_is_released_as_one_with_a_document(mechanism, unit, relation, tmp_path, capsys):
    """One release (forced, count pinned or stated) of a corpus left with no document on the vocabulary (an empty
    file under add/remove; units whose texts have no word of the list under replace-one) and of its neighbour with
    one such document: the pinned contract's comparison (exit status, stderr, printed lines, non-DP fields). Every
    row's estimator fits no document (noise only) or is refused on released quantities, as on one document."""
    words = _write_words(tmp_path / "words.txt", WORDS)
    _, flags = _row(mechanism, unit, tmp_path, words)
    text = " ".join((SPECTRAL_WORDS if mechanism.startswith("spectral") else WORDS)[:25])
    if relation == "replace-one":
        flags += ["--n-units", N_STATED]
        empty = [(f"u{i}", OOV) for i in range(N_STATED)]
        one = [("u0", text)] + empty[1:]
    else:
        empty, one = [], [("u0", text)]
    a = _release(tmp_path, "a", empty, flags, capsys)
    b = _release(tmp_path, "b", one, flags, capsys)
    if not mechanism.startswith("spectral"):  # at 3 units the spectral checks on released quantities fail, alike
        assert a[0] == 0 and a[3] is not None, a[2]
    _assert_alike(a, b)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_model_of_the_agnostic_road_is_defined_on_no_document_and_on_one(model, tmp_path, capsys):
    """gaussian-global's f is the model the owner names: on no document it is the uniform topics, and on one
    document (fewer than the topics; fewer non-zero singular values than topics for LSI; fewer documents than the
    spectral moments need) it must still be defined, or the release would stop on the one corpus and not on its
    neighbour (NMF, LSI and the spectral model did)."""
    words = _write_words(tmp_path / "words.txt", WORDS)
    flags = ["--mechanism", "gaussian-global", "--model", model, "--unit", "document", "--vocabulary", words,
             "--topics", "2", "--epsilon", "2", "--release-anyway"]
    a = _release(tmp_path, "a", [], flags, capsys)
    b = _release(tmp_path, "b", [("u0", " ".join(WORDS[:25]))], flags, capsys)
    assert a[0] == 0, a[2]
    _assert_alike(a, b)
