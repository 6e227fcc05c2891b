import csv
import pytest

from topicdp.cli import main

# compare releases one corpus once per mechanism and epsilon by design: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


def test_compare_quick_writes_csv_and_png_and_resumes(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "--quick", "--out", str(out)]) == 0
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert list(out.glob("*.png")), "no plot written"
    panels = {r["panel"] for r in rows}
    assert {"eps", "gamma", "size", "spectral", "table"} <= panels
    mechanisms = {r["mechanism"] for r in rows if r["panel"] == "eps"}
    assert mechanisms == {"topicdp", "mvg", "laplace"}
    # every task has all its metrics, and the report's guarantee kinds are carried
    assert {r["guarantee"] for r in rows if r["mechanism"] == "topicdp"} == {"random-DP"}
    assert "| mechanism | epsilon |" in (out / "table.md").read_text()
    # an interrupted run resumes: a rerun finds every task done and writes nothing
    assert main(["compare", "--quick", "--out", str(out), "--no-table"]) == 0
    assert len(list(csv.DictReader((out / "results.csv").open()))) == len(rows)


def test_store_skips_completed_tasks(tmp_path):
    from topicdp.experiments.store import ResultStore

    s = ResultStore(tmp_path / "r.csv")
    key = dict(panel="eps", corpus="c", mechanism="m", model="x", n_topics=3, epsilon=1.0, gamma=0.1, repeat=0)
    assert not s.has(**key)
    s.write(key, {"l1": 1.0, "rmse": 2.0}, delta=1e-4)
    again = ResultStore(tmp_path / "r.csv")
    assert again.has(**key) and len(again.rows()) == 2


def test_a_killed_append_leaves_no_partial_row(tmp_path):
    """The store appends a task's rows in one write; a last line cut by a kill (no newline) is dropped when the file
    is opened again, so the task reads as absent and is rerun, and later appends start on a clean line."""
    from topicdp.experiments.store import ResultStore

    store = ResultStore(tmp_path / "results.csv")
    store.write({"panel": "a", "epsilon": 1}, {"l1": 0.5, "rmse": 0.1})
    with open(tmp_path / "results.csv", "a") as fh:
        fh.write("b,corpus,mech,model,3,2.0,,0,l1,0.")  # half a row, as a kill mid-write would leave
    reopened = ResultStore(tmp_path / "results.csv")
    assert reopened.has(panel="a", epsilon=1) and not reopened.has(panel="b", corpus="corpus")
    reopened.write({"panel": "c", "epsilon": 2}, {"l1": 0.25})
    rows = reopened.rows()
    assert [r["panel"] for r in rows] == ["a", "a", "c"] and rows[-1]["value"] == "0.25"


def test_the_table_leaves_out_rows_that_do_not_apply_and_footnotes_the_spectral_perplexity():
    from topicdp.experiments.table import format_table

    def row(mech, eps, metric, value, extra=""):
        return {"panel": "table", "mechanism": mech, "epsilon": eps, "metric": metric, "value": value, "extra": extra}

    rows = [row("dp-vem", 3.0, "failed", 0.0), row("dp-vem", 3.0, "c_npmi", 0.05), row("dp-vem", 3.0, "perplexity", 900),
            row("dpsvi", 3.0, "failed", 1.0, '{"reason": "not applicable: dpsvi protects documents under add-remove '
                'neighbours"}'),
            row("spectral-config-1", 3.0, "failed", 1.0, '{"reason": "precondition failed: the gap"}'),
            row("spectral-nonprivate", float("inf"), "failed", 0.0),
            row("spectral-nonprivate", float("inf"), "perplexity", 7638825.0)]
    table = format_table(rows)
    assert "| dpsvi |" not in table and "Left out: dpsvi, not applicable: dpsvi protects documents" in table
    assert "| spectral-config-1 | 3 | failed: precondition failed" in table  # a failure that applies stays a row
    assert "| spectral-nonprivate | inf |  |  | 7638825.000 (*) |" in table and "(*) Not comparable" in table
    assert "| dp-vem | 3 | 0.050 |  | 900.000 |" in table
