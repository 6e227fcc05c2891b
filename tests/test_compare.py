"""``topicdp compare``: every registry mechanism and the random-DP road on the embedded corpus, a publishable table of
private scores, the exact scores in the owner's diagnostics only, and its flags honoured or refused by name."""

import json
import re

import pytest

from facts import assert_facts
from topicdp.cli import main

# compare releases one corpus once per mechanism and epsilon by design: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


@pytest.fixture(scope="module")
def document_run(tmp_path_factory):
    """One run at the document level, epsilon 5, K = 3, P the first half of the Lee corpus. The random-DP road's
    sample is cut to 8 pairs (insecure_testing: its report then states NO guarantee) so that the test takes seconds;
    everything else is the command's own."""
    from dataclasses import replace

    from topicdp.pipeline.roads import RandomDPRoad

    out = tmp_path_factory.mktemp("cmp") / "out"
    argv = ["compare", "embedded", "--reference", "embedded", "--unit", "document", "--epsilons", "5",
            "--topics", "3", "--n-jobs", "1", "--evaluation-epsilon", str(EVALUATION_EPSILON), "--out", str(out)]
    privatizer = RandomDPRoad.estimator

    def cut(*args, **kwargs):
        made = privatizer(*args, **kwargs)
        return made.set_params(sampling=replace(made.sampling, progress=False, n_pairs=8, insecure_testing=True))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RandomDPRoad, "estimator", staticmethod(cut))
        assert main(argv) == 0
    return out, argv


def _table_rows(text: str) -> list[list[str]]:
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in r] for r in rows[1:]]  # without the header


def test_the_table_names_only_registry_mechanisms_and_the_random_dp_road(document_run):
    from topicdp.experiments.compare import RANDOM_DP
    from topicdp.pipeline import MECHANISMS

    out, _ = document_run
    rows = _table_rows((out / "table.md").read_text())
    names = {r[0] for r in rows}
    assert names == set(MECHANISMS) | {RANDOM_DP}  # every row of the registry, each by its one name
    assert {float(r[1]) for r in rows} == {5.0}  # --epsilons
    # the cut sample voids random DP, and the row says so; the road's name says random DP
    assert [r[2].startswith("NO guarantee") for r in rows if r[0] == RANDOM_DP] == [True]
    assert RANDOM_DP.startswith("random-dp") and "is NOT differential privacy" in (out / "table.md").read_text()
    assert all("-DP at the document level" in r[2] for r in rows if r[0] == "dp-vem")
    dpsvi = [r for r in rows if r[0] == "dpsvi"]
    assert dpsvi and all(r[3].startswith(("released", "refused")) for r in dpsvi)  # DP-SVI runs at the document level
    header = (out / "table.md").read_text().splitlines()[0]
    assert "document level, K = 3" in header  # --unit, --topics


def test_the_table_holds_private_scores_and_the_diagnostics_the_exact_ones(document_run):
    out, _ = document_run
    table = (out / "table.md").read_text()
    published = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    exact = {(e["road"], e["epsilon"]): e for e in map(json.loads, (out / "diagnostics.jsonl").read_text().splitlines())}
    scored = [r for r in published if r.get("evaluation")]
    assert scored and {(r["road"], r["epsilon"]) for r in scored} <= set(exact)
    cells = {(r[0], float(r[1])): r for r in _table_rows(table)}
    for r in scored:
        e, x = r["evaluation"], exact[(r["road"], r["epsilon"])]
        assert e["epsilon"] == EVALUATION_EPSILON and e["unit"] == "document" and e["sigma"] > 0  # --evaluation-epsilon
        # the cell is the private value; the noise (sigma > 0, a continuous draw) makes it differ from the exact one
        # a refused interval prints no score (its reason below the table); otherwise the private value
        shown = "not given" if e.get("interval_refused") else f"{e['mean_npmi']:.3f} ["
        assert cells[(r["road"], r["epsilon"])][4].startswith(shown)
        assert not e.get("interval_refused") or "refused the interval" in table
        assert e["mean_npmi"] != x["npmi"] and e["mean_contrast"] != x["contrast"]
        assert f"{x['npmi']:.4f}" not in table and f"{x['contrast']:.4f}" not in table
    diagnostics = (out / "diagnostics.md").read_text()
    assert diagnostics.startswith("# NOT FOR PUBLICATION")
    assert all(f"{x['npmi']:.4f}" in diagnostics and f"{x['contrast']:.4f}" in diagnostics for x in exact.values())
    assert "NOT FOR PUBLICATION" not in table and f"({EVALUATION_EPSILON:g}, 1e-06)-DP at the document level" in table


def test_a_rerun_resumes_and_other_settings_are_refused(document_run, capsys):
    out, argv = document_run
    before = (out / "results.jsonl").read_text()
    assert main(argv) == 0  # every (road, epsilon) is done: nothing is released again
    assert (out / "results.jsonl").read_text() == before
    assert main([a if a != "5" else "3" for a in argv]) == 2
    assert "epsilons" in capsys.readouterr().err


def test_the_user_level_without_a_reference(tmp_path):
    """--unit user: DP-SVI is document level only; without --reference the random-DP road is not run (the private
    corpus as P is noise by construction) and dp-vem starts at random."""
    from topicdp.experiments import CompareSettings, compare
    from topicdp.experiments.compare import RANDOM_DP

    settings = CompareSettings(unit="user", epsilons=(3.0,), n_topics=2, roads=("dp-vem", "dpsvi"), simulate=False,
                               ceiling=False)
    result = compare("embedded", tmp_path / "u", settings, echo=lambda line: None)
    by_road = {r["road"]: r for r in result["rows"]}
    assert set(by_road) == {"dp-vem", "dpsvi", RANDOM_DP}
    assert by_road["dpsvi"]["status"] == "not applicable" and "documents only" in by_road["dpsvi"]["reason"]
    assert "| dpsvi | 3 | document level only |" in (tmp_path / "u" / "table.md").read_text()
    assert by_road[RANDOM_DP]["status"] == "not run" and "--reference" in by_road[RANDOM_DP]["reason"]
    # no interval at the user level (clipping's shift has no public bound): not evaluated, nothing spent
    assert "evaluation" not in by_road["dp-vem"] and "nothing spent" in by_road["dp-vem"]["evaluation_refused"]


@pytest.mark.parametrize("flags, name", [
    (["--unit", "group"], "--unit"),
    (["--epsilons", "1,x"], "--epsilons"),
    (["--epsilons", "0,3"], "--epsilons"),
    (["--epsilons", "inf"], "--epsilons"),
    (["--topics", "1"], "--topics"),
    (["--topics", "three"], "--topics"),
    (["--reference", "missing.jsonl"], "--reference"),
    (["--evaluation-epsilon", "-1"], "--evaluation-epsilon"),
    (["--n-units", "0"], "--n-units"),
    (["--seed", "x"], "--seed"),
    (["--ledger", "missing.ledger"], "--ledger"),
])
def test_bad_values_are_refused_by_name_before_any_work(tmp_path, capsys, flags, name):
    out = tmp_path / "out"
    corpus = ["embedded"] if name != "--reference" else [str(_corpus_file(tmp_path))]
    assert main(["compare", *corpus, "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert re.search(re.escape(name), err) and "Traceback" not in err
    assert not out.exists()  # nothing was written (nor read: the check runs before the corpus is)


def test_a_corpus_file_needs_a_reference(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compare", str(_corpus_file(tmp_path)), "--out", str(out)]) == 2
    assert "--reference" in capsys.readouterr().err and not out.exists()


#: the document_run's evaluation budget: large enough (sigma below 0.1: every count pinned) that the Lee corpus' few held-out documents give intervals
#: (at compare's default of 1 the forecast refuses them before spending)
EVALUATION_EPSILON = 1e4


def _corpus_file(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"user": i % 4, "text": f"words of post {i}"}) + "\n" for i in range(8)))
    return path


def test_the_table_states_refusals_with_their_reason():
    from topicdp.experiments.table import format_table

    info = {"corpus": "c", "unit": "user", "n_topics": 3, "n_words": 10, "delta": 1e-6, "evaluation": (10.0, 1e-6)}
    rows = [{"road": "spectral-config-2", "epsilon": 3.0, "status": "refused", "forced": True,
             "reason": "the forecast says this release would be noise; forced: precondition failed: the gap"},
            {"road": "dpsvi", "epsilon": 3.0, "status": "not applicable", "reason": "dpsvi protects documents only"}]
    table = format_table(rows, info)
    refused = next(row for row in _table_rows(table) if row[0] == "spectral-config-2")
    assert refused[1:3] == ["3", ""] and refused[4:6] == ["", ""]  # its epsilon; no guarantee, no scores
    assert_facts(refused[3], "refused", "noise", "forced", "precondition failed: the gap", ordered=True)
    assert "| dpsvi | 3 | document level only | not applicable" in table
    assert "no evaluation was made" in table and "nothing was spent on held-out users" in table


# -- what the table may publish: a generated corpus and its neighbour -----------------------------------------

def _generated_records(prefix: str, n_users: int, seed: int) -> list[dict]:
    """Users of four themes (twelve letters-only words each), three posts of 30 words per user."""
    import numpy as np

    rng = np.random.default_rng(seed)
    themes = [[f"zq{chr(97 + t)}{chr(97 + j)}" for j in range(12)] for t in range(4)]
    weights = 1.0 / np.arange(1, 13)
    weights /= weights.sum()
    out = []
    for u in range(n_users):
        theme = int(rng.integers(4))
        for _ in range(3):
            words = rng.choice(themes[theme], size=30, p=weights)
            out.append({"user": f"{prefix}{u}", "text": " ".join(words)})
    return out


def _write_jsonl(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _training_users(records) -> set:
    from topicdp.experiments.compare import heldout_user

    return {r["user"] for r in records if not heldout_user(r["user"], 0.2)}


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory):
    """``compare`` (user level, seeded, every release and evaluation charged to a fresh ledger) on a generated corpus
    and on the same corpus with one more training user; and the same corpus with its training count stated."""
    from topicdp.experiments.compare import heldout_user
    from topicdp.rdp import PrivacyLedger

    base = tmp_path_factory.mktemp("neighbours")
    records = _generated_records("u", 60, 0)
    extra = next(f"new{i}" for i in range(100) if not heldout_user(f"new{i}", 0.2))
    added = records + [dict(r, user=extra) for r in _generated_records("x", 1, 9)]
    reference = _write_jsonl(base / "P.jsonl", _generated_records("p", 60, 1))
    flags = ["--reference", reference, "--quick", "--unit", "user", "--topics", "3", "--no-random-dp", "--seed", "5",
             "--n-jobs", "1"]
    runs = {}
    for name, recs, more in (("base", records, []), ("added", added, []),
                             ("stated", records, ["--n-units", str(len(_training_users(records)))])):
        (base / name).mkdir()
        ledger = str(base / name / "dataset.ledger")
        PrivacyLedger.open(ledger, budget=(1e4, 1e-2), unit="user",
                           neighbours="replace-one" if more else "add-remove")
        out = base / name / "out"
        corpus = _write_jsonl(base / name / "private.jsonl", recs)  # one name: the table's title is the file's
        assert main(["compare", corpus, *flags, *more, "--ledger", ledger, "--out", str(out)]) == 0
        runs[name] = {"out": out, "ledger": ledger, "n": len(_training_users(recs)),
                      "table": (out / "table.md").read_text()}
    return runs


def _masked(table: str) -> str:
    """``table`` with its DP figures masked: the private scores' cells, the released top words, and the numbers of the
    prose (the composed totals, which read the DP top words' designs). The guarantee and outcome cells are kept as
    they are."""
    out = []
    for line in table.splitlines():
        if line.startswith("- top words of "):
            line = line.split(":")[0]
        elif line.startswith("| ") and not line.startswith("| road"):
            cells = line.strip("|").split(" | ")
            line = " | ".join(cells[:4] + [re.sub(r"-?\d+\.\d+", "#", c) for c in cells[4:]])
        elif not line.startswith("|"):
            line = re.sub(r"\([\d.e+-]+, [\d.e+-]+(, [\d.e+-]+)?\)-", "(#)-", line)  # a composed total
            line = re.sub(r"-?\d+\.\d+(e-?\d+)?", "#", line)
        out.append(line)
    return "\n".join(out)


def test_neighbouring_corpora_publish_alike_but_for_dp_values(neighbours):
    """One more training user changes table.md only in its DP figures: no exact count of the private corpus is in
    it (the old table printed the spectral rows' Delta2 = c / N of the exact count, which this diff catches)."""
    base, added = neighbours["base"], neighbours["added"]
    assert _masked(base["table"]) == _masked(added["table"])
    for run in (base, added):
        for n in (run["n"], run["n"] + 1, run["n"] - 1):
            assert not re.search(rf"(?<![\d.]){n}(?![\d.])", _masked(run["table"])), n
    rows = _table_rows(base["table"])
    spectral = [r for r in rows if r[0].startswith("spectral-config-")]
    assert len(spectral) == 4 and all(r[3].startswith("not applicable") and "n_units" in r[3] for r in spectral)


def test_the_table_states_the_ledgers_total(neighbours):
    """compare --ledger: every release and evaluation the table holds is charged to the ledger, and the total the
    table states is the ledger's own."""
    from topicdp.experiments.table import composed
    from topicdp.rdp import PrivacyLedger
    from topicdp.rdp.ledger_file import entry_to_json, spent

    run = neighbours["base"]
    published = [json.loads(line) for line in (run["out"] / "results.jsonl").read_text().splitlines()]
    mine = [e for r in published for e in r["entries"] + r.get("evaluation_entries", [])]
    ledger = PrivacyLedger.open(run["ledger"])
    assert ledger.file is not None
    file_entries = [entry_to_json(e) for e in ledger.file.state().effective()]

    def key(e):
        return tuple(sorted((k, v) for k, v in e.items() if k != "name"))

    assert sorted(map(key, file_entries)) == sorted(map(key, mine)) and mine
    delta = ledger.budget[1]
    line = next(line for line in run["table"].splitlines() if line.startswith("- ledger "))
    together, total = re.findall(r"\((\d[\d.e+-]*), ([\d.e-]+)\)-DP", line)
    assert together[0] == total[0] == f"{spent(ledger, delta, 'dp'):.4g}" == f"{composed(mine, delta):.4g}"
    assert float(together[1]) == pytest.approx(delta)


def test_the_owners_files_are_private(neighbours):
    import stat

    out = neighbours["base"]["out"]
    for name in ("diagnostics.md", "diagnostics.jsonl"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600, name
    assert (out / "diagnostics.md").read_text().startswith("# NOT FOR PUBLICATION")
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary left by the atomic writes


def test_spectral_rows_need_a_stated_count(neighbours):
    """Without --n-units the spectral configurations are refused by the plan, as topicdp privatize refuses them;
    with it every row has replace-one neighbours and the spectral rows are released or refused on DP outputs."""
    rows = {r[0]: r for r in _table_rows(neighbours["stated"]["table"])}
    spectral = [r for name, r in rows.items() if name.startswith("spectral-config-")]
    assert len(spectral) == 4
    for r in spectral:
        assert r[3] == "released" or r[3].startswith(("refused: precondition failed", "refused: the forecast")), r
        assert "does not have" not in r[3]
    assert any("replace-one" in r[2] for r in spectral)
    assert all("replace-one" in r[2] for r in rows.values() if r[2] and not r[3].startswith("not applicable"))
    assert rows["dpsvi"][3].startswith("not applicable")  # add/remove only (and documents only)
    assert f"({neighbours['stated']['n']}, --n-units)" in neighbours["stated"]["table"]  # stated: public


# -- how to read the scores -------------------------------------------------------------------------------------


def test_the_table_says_how_to_read_its_scores(document_run):
    """The plan's targets, the contrast's definition and a yardstick (a non-private LDA on the public P, exact, free)
    that each private score is divided by; each scored row counts its topics' common words (P's most common)."""
    from topicdp.forecast import TARGETS
    from topicdp.metrics.readability import CONTRAST_DEFINITION

    out, _ = document_run
    table = (out / "table.md").read_text()
    t = TARGETS["document"]
    assert_facts(table, f"NPMI at least {t.npmi:g}x", f"contrast at least {t.contrast:g}x", "non-private LDA")
    assert f"contrast = {CONTRAST_DEFINITION}: how much more" in table
    line = next(line for line in table.splitlines() if "yardstick (free: public data, exact, no budget)" in line)
    assert "K = 3" in line and "held-out 50% of users" in line and re.search(r"NPMI -?\d\.\d{3}, contrast", line)
    assert "public reference's 100 words found in the most documents" in table
    scored = [r for r in _table_rows(table) if r[4]]
    given = [r for r in scored if not r[4].startswith("not given")]
    ratio = r"(-?\d+\.\d\dx \[|no ratio)"  # a ratio with its interval, or none (the yardstick's is not positive)
    assert scored and all(re.match(ratio, r[6]) and re.match(ratio, r[7]) and r[8] for r in given)
    assert all(r[6] == r[7] == "" and r[8] for r in scored if r not in given)  # no ratio of a score not given


def test_the_table_flags_a_release_of_common_words():
    """A row whose one topic is ten of P's most common words is flagged in its own cell; without a reference the table
    says the flag cannot be computed."""
    from topicdp.experiments.table import format_table

    evaluation = {"mean_npmi": 0.162, "mean_npmi_interval": [0.092, 0.230], "mean_contrast": 0.103,
                  "mean_contrast_interval": [0.05, 0.15], "level": 0.9, "epsilon": 10.0, "delta": 1e-6,
                  "sigma": 3.0, "sensitivity": 2.0, "unit": "user", "neighbours": "add-remove", "seeded": False}
    row = {"road": "dp-vem", "epsilon": 3.0, "status": "released", "guarantee": "(3, 1e-06)-DP", "entries": [],
           "evaluation": evaluation, "common_words": [2, 10, 1]}
    yardstick = {"npmi": 0.2, "contrast": 0.05, "n_topics": 3, "scored_on": "scored on P", "top_words": [["a"]]}
    info = {"corpus": "c", "unit": "user", "n_topics": 3, "n_words": 10, "delta": 1e-6, "evaluation": (10.0, 1e-6),
            "scale": {"yardstick": yardstick, "n_common": 100, "yardstick_common": [1, 3, 0], "note": None}}
    table = format_table([row], info)
    cells = _table_rows(table)[0]
    assert cells[6] == "0.81x [0.46x, 1.15x]" and cells[7] == "2.06x [1.00x, 3.00x]"
    assert cells[8] == "topic 1 (10 of 10)"
    assert "the yardstick LDA's topics: 1, 3, 0 of 10" in table
    bare = format_table([dict(row, common_words=None)], {**info, "scale": None})
    assert_facts(next(line for line in bare.splitlines() if "cannot be flagged" in line), "common words", "--reference")
    assert "yardstick: none without a public reference" in bare and "NPMI at least 0.5x" in bare
