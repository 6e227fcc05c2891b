"""``topicdp compare --quick``: both units and the random-DP road in one run; a table whose spend comes first, with
each release's top words, a ranking only where the evaluation can tell the roads apart, and a last line naming the
road to use (or none, and why)."""

import json

import pytest

from facts import assert_facts
from topicdp.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``compare --quick`` on the embedded corpus, dp-vem only (the registry's other rows are test_compare's), K = 3,
    seeded. The random-DP road's exchangeable sample is cut to 3 pairs (insecure_testing: its report then states NO
    guarantee) so that the test takes seconds; everything else is the quick grid's own."""
    from dataclasses import replace

    from topicdp.pipeline.roads import RandomDPRoad
    from topicdp.experiments import CompareSettings, compare

    out = tmp_path_factory.mktemp("quick") / "out"
    # an evaluation budget at which the Lee corpus' few held-out documents give intervals (at the quick grid's own
    # budget the forecast refuses them before spending, as test_compare's shows)
    settings = CompareSettings.quick(roads=("dp-vem",), n_topics=3, n_jobs=1, seed=3, evaluation_epsilon=1e4)
    privatizer = RandomDPRoad.estimator

    def cut(*args, **kwargs):
        made = privatizer(*args, **kwargs)
        return made.set_params(sampling=replace(made.sampling, progress=False, n_pairs=3, insecure_testing=True))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RandomDPRoad, "estimator", staticmethod(cut))
        result = compare("embedded", out, settings, reference="embedded", echo=lambda line: None)
    return out, settings, result


def test_quick_runs_both_units_and_the_random_dp_road(quick_run):
    from topicdp.experiments.compare import RANDOM_DP

    out, settings, result = quick_run
    assert settings.units == ("user", "document") and settings.sizing == "exchangeable" and settings.random_dp
    keys = {(r["unit"], r["road"]) for r in result["rows"]}
    # the random-DP road at the first unit only (its sample fits the model on P per unit)
    assert keys == {("user", "dp-vem"), ("document", "dp-vem"), ("user", RANDOM_DP)}
    for r in result["rows"]:
        if r["unit"] == "user":  # no interval at the user level (clipping): refused before it spent
            assert "evaluation" not in r and r["evaluation_refused"].startswith("not made (nothing spent)")
            assert "user level" in r["evaluation_refused"]
        else:  # each unit's evaluation at its own unit and budget
            assert r["evaluation"]["unit"] == r["unit"] and r["evaluation"]["epsilon"] == 1e4
        if r["road"] == "dp-vem":
            assert f"DP at the {r['unit']} level" in r["guarantee"]
    exact = [json.loads(line) for line in (out / "diagnostics.jsonl").read_text().splitlines()]
    assert {(e["unit"], e["road"]) for e in exact} == keys
    diagnostics = (out / "diagnostics.md").read_text()
    assert diagnostics.count("NOT FOR PUBLICATION") == 1 and "user level, K = 3" in diagnostics \
        and "document level, K = 3" in diagnostics


def test_each_evaluation_has_a_forecast_made_before_it_spent(quick_run):
    """The forecast of the evaluation's error is public: P's rates on the released lists, the evaluation's budget
    and a held-out count derived from a DP count (none of the exact sizes)."""
    _, _, result = quick_run
    for r in result["rows"]:
        fc = r["evaluation_forecast"]
        assert fc["probability"] == 0.9 and fc["quantile"] > 0
        assert fc["n_units_from"] in ("the releases' count of training units", "the reference's count")


def test_the_table_states_its_spend_first_with_top_words_and_a_recommendation(quick_run):
    from topicdp.experiments.table import evaluation_total, release_totals

    out, settings, result = quick_run
    lines = (out / "table.md").read_text().splitlines()
    assert lines[0].startswith("# Compare: lee, user and document levels, K = 3")
    head = "\n".join(lines[:12])
    for unit in settings.units:
        mine = [r for r in result["rows"] if r["unit"] == unit]
        k, eps, d = release_totals(mine, settings.delta)["dp"]
        n, total, total_delta = evaluation_total(mine)
        # the composed totals, stated in the headline: the releases' on training units, the evaluations' on held-out
        assert f"the {k} DP releases at the {unit} level together ({eps:.4g}, {d:.2g})-DP" in head
        assert (f"the {n} evaluations at the {unit} level together ({total:.4g}, {total_delta:.2g})-DP" in head
                if n else f"held-out {unit}s: no evaluation was made" in head)
    assert evaluation_total([r for r in result["rows"] if r["unit"] == "user"])[0] == 0  # refused before spending
    assert "-random DP with respect to P" in head and "not one guarantee" in head
    for r in result["rows"]:  # each release's top words, in its own unit's section
        assert f"- top words of {r['road']}, epsilon 3" in "\n".join(lines)
        assert " ".join(r["top_words"][0]) in "\n".join(lines)
    assert [line.startswith("## ") for line in lines].count(True) == 2
    assert lines[-1].startswith("Recommendation: ")
    assert "marginal over the sample" in "\n".join(lines) and "NOT differential privacy" in "\n".join(lines)


def test_a_rerun_of_both_units_resumes(quick_run):
    from topicdp.experiments import compare

    out, settings, _ = quick_run
    before = (out / "results.jsonl").read_text()
    compare("embedded", out, settings, reference="embedded", echo=lambda line: None)
    assert (out / "results.jsonl").read_text() == before  # every (unit, road, epsilon) was done: nothing re-released
    with pytest.raises(ValueError, match="unit"):
        compare("embedded", out, settings.at("user"), reference="embedded", echo=lambda line: None)


def test_the_table_ranks_only_what_its_intervals_tell_apart(quick_run):
    """Whatever the draws: two rows the table puts in order ('>') have disjoint intervals and differ by more than
    both evaluations' forecast errors."""
    from topicdp.experiments.ranking import scored_rows, separable

    out, _, result = quick_run
    text = (out / "table.md").read_text()
    line = next(line for line in text.splitlines() if line.startswith("Ranking"))
    scored = {s.name: s for s in scored_rows(result["rows"], {})}
    if ">" in line:
        names = [g.split(" = ") for g in line.split(": ", 1)[1].split(" > ")]
        for upper, lower in zip(names, names[1:]):
            assert all(separable(scored[a], scored[b])[0] for a in upper for b in lower)
    else:
        assert "cannot rank" in line or "nothing to rank" in line


# -- the ranking and the choice, on rows whose intervals are set ---------------------------------------------


YARDSTICK = {"npmi": 0.2, "contrast": 0.1, "n_topics": 3, "scored_on": "scored on P", "top_words": [["a"]]}


def _row(road, unit, contrast, interval, *, npmi=0.2, forecast=0.01, status="released", kind="approx-DP"):
    guarantee = ("(3, 1e-06, 0.1)-random DP" if road.startswith("random") else f"(3, 1e-06)-DP at the {unit} level")
    return {"road": road, "epsilon": 3.0, "unit": unit, "status": status, "forced": status != "released",
            "kind": kind, "guarantee": guarantee, "entries": [], "top_words": [["w"] * 5],
            "evaluation": {"mean_npmi": npmi, "mean_npmi_interval": [npmi - 0.05, npmi + 0.05],
                           "mean_contrast": contrast, "mean_contrast_interval": list(interval), "level": 0.9,
                           "epsilon": 10.0, "delta": 1e-6, "sigma": 3.0, "sensitivity": 2.0, "unit": unit,
                           "neighbours": "add-remove", "seeded": True, "n_across": 45},
            "evaluation_forecast": {"quantile": forecast, "probability": 0.9}}


def _table(rows, units=("user",)):
    from topicdp.experiments.table import format_table

    info = {"corpus": "c", "unit": units[0], "units": list(units), "n_topics": 3, "n_words": 10, "delta": 1e-6,
            "evaluation": (10.0, 1e-6), "scale": {"yardstick": YARDSTICK, "n_common": None}}
    return format_table(rows, info)


def _ranking(table):
    return next(line for line in table.splitlines() if line.startswith("Ranking"))


def _assert_recommends(table, road, level, *why):
    """The table's last line, 'Recommendation: CHOICE: WHY', chooses ``road`` at ``level`` (epsilon 3) and its
    reasons hold each of ``why``."""
    last = table.splitlines()[-1]
    assert last.startswith("Recommendation: "), last
    choice, _, reason = last.removeprefix("Recommendation: ").partition(": ")
    assert_facts(choice, road, f"{level} level", "epsilon 3")
    assert_facts(reason, *why)


def test_overlapping_intervals_are_not_ranked():
    """A tiny held-out set's intervals: 0.30 [0.05, 0.55] and 0.20 [0.03, 0.38] overlap, so the table says the
    evaluation cannot rank them, and the recommendation (both meet the targets: their lower ends are 0.5x and 0.3x the
    yardstick's 0.1, against 0.25x) names both and says so."""
    table = _table([_row("dp-vem", "user", 0.30, (0.05, 0.55)), _row("laplace", "user", 0.20, (0.03, 0.38))])
    ranking = next(line for line in table.splitlines() if line.startswith("Ranking"))
    assert "cannot rank" in ranking and ">" not in ranking and "0.100 is within their intervals" in ranking
    last = table.splitlines()[-1]
    assert last.startswith("Recommendation: any of dp-vem") and "laplace" in last and "cannot rank" in last


def test_a_difference_below_the_forecast_error_is_not_ranked():
    """Disjoint intervals (0.50 [0.45, 0.55] and 0.30 [0.25, 0.35]) but a forecast error of 0.25 > 0.20: not
    ranked; with a forecast error of 0.05 the same rows are."""
    rows = [_row("dp-vem", "user", 0.50, (0.45, 0.55), forecast=0.25), _row("laplace", "user", 0.30, (0.25, 0.35))]
    assert_facts(_ranking(_table(rows)), "below the error forecast", "(0.250)")
    rows[0]["evaluation_forecast"]["quantile"] = 0.05
    rows[0]["common_words"] = [10, 3, 7]  # two topics flagged (more than 6 of 10)
    table = _table(rows)
    assert_facts(_ranking(table), "contrast", "dp-vem", "user level", ">", "laplace", ordered=True)
    _assert_recommends(table, "dp-vem", "user", "meets")
    assert "2 of its 3 topics flagged as common words" in table.splitlines()[-1]


def test_a_cut_only_where_every_row_above_is_told_from_every_row_below():
    """0.50 [0.45, 0.55] and 0.48 [0.43, 0.53] overlap, both are told from 0.10 [0.05, 0.15]: 'A = B > C'. With the
    middle row at 0.40 [0.30, 0.50] (overlapping both others) no cut holds: the table ranks nothing and names the one
    pair it tells apart."""
    rows = [_row("dp-vem", "user", 0.50, (0.45, 0.55)), _row("laplace", "user", 0.48, (0.43, 0.53)),
            _row("dp-vem", "document", 0.10, (0.05, 0.15))]
    assert_facts(_ranking(_table(rows, ("user", "document"))), "dp-vem", "user", "=", "laplace", "user", ">", "dp-vem",
                 "document", ordered=True)
    rows[1]["evaluation"].update(mean_contrast=0.40, mean_contrast_interval=[0.30, 0.50])
    rows[2]["evaluation"].update(mean_contrast=0.20, mean_contrast_interval=[0.15, 0.35])
    line = next(line for line in _table(rows, ("user", "document")).splitlines() if line.startswith("Ranking"))
    assert "cannot rank these roads" in line
    told = line.split("tells apart", 1)[1]  # the one pair: the user level's dp-vem above the document level's
    assert_facts(told, "dp-vem", "user", ">", "dp-vem", "document", ordered=True)
    assert "laplace" not in told and told.count(">") == 1


def test_a_contrast_interval_holding_zero_cannot_meet_the_targets():
    """0.5x the yardstick's contrast, above the 0.25x target, but its interval [-0.01, 0.11] holds 0: cannot tell;
    the same value with [0.01, 0.09] meets the targets."""
    from topicdp.experiments.ranking import read_targets

    assert read_targets(_row("dp-vem", "user", 0.05, (-0.01, 0.11)), YARDSTICK)[0] == "cannot tell"
    verdict, said = read_targets(_row("dp-vem", "user", 0.05, (0.01, 0.09)), YARDSTICK)
    assert verdict == "met" and "contrast 0.50x [0.10x, 0.90x] against 0.25x" in said
    assert read_targets(_row("dp-vem", "user", 0.01, (0.0, 0.02)), YARDSTICK)[0] == "missed"  # 0.2x < 0.25x


def test_the_choice_prefers_the_stronger_guarantee():
    """Random DP and the document level score higher, but DP at the user level meets the targets too: it is chosen;
    the others are named as meeting them with a weaker guarantee."""
    rows = [_row("dp-vem", "user", 0.05, (0.03, 0.07)), _row("dp-vem", "document", 0.9, (0.8, 1.0)),
            _row("random-dp (TopicDP over gensim LDA)", "user", 0.9, (0.8, 1.0), kind="random-DP")]
    last = _table(rows, ("user", "document")).splitlines()[-1]
    assert last.startswith("Recommendation: dp-vem at the user level") and "DP at the user level" in last
    assert "DP at the document level" in last and "random DP (NOT DP)" in last
    # without the user level's row, DP at the document level is preferred to a higher-scoring random DP
    last = _table(rows[1:], ("user", "document")).splitlines()[-1]
    assert last.startswith("Recommendation: dp-vem at the document level")


def test_none_is_recommended_with_what_would_help():
    """A contrast short of its target whose interval reaches it (0.2x [0.01x, 0.5x] against 0.25x), a refusal, and no
    yardstick."""
    rows = [_row("dp-vem", "user", 0.02, (0.001, 0.05)),
            _row("laplace", "user", 0.5, (0.4, 0.6), status="refused")]
    last = _table(rows).splitlines()[-1]
    assert last.startswith("Recommendation: none") and "cannot tell whether dp-vem" in last
    assert "--evaluation-epsilon" in last and "1 release(s) were refused" in last
    from topicdp.experiments.table import format_table

    bare = format_table(rows[:1], {"corpus": "c", "unit": "user", "n_topics": 3, "n_words": 10, "delta": 1e-6,
                                   "evaluation": (10.0, 1e-6)})
    assert bare.splitlines()[-1].startswith("Recommendation: none") and "--reference" in bare.splitlines()[-1]


def _refused(row, why="too few units for the noise: the mean NPMI's interval spans +-0.84"):
    row["evaluation"].update(interval_refused=why, mean_npmi_interval=[None, None],
                             mean_contrast_interval=[None, None])
    return row


def test_refused_intervals_print_no_score_rank_nothing_and_fall_back_on_the_plan():
    """Every evaluation refused its interval: no score is printed or ranked; the choice names the strongest
    guarantee among the rows the plan forecast readable, and says the evaluation can neither confirm nor rank it. A
    row whose plan forecast was not "readable" is not chosen on it."""
    rows = [_refused(_row("dp-vem", "user", 0.9, (0, 0))), _refused(_row("dp-vem", "document", 0.05, (0, 0))),
            _refused(_row("random-dp (TopicDP over gensim LDA)", "user", 0.9, (0, 0), kind="random-DP"))]
    for r in rows:
        r["forecast"] = "readable"
    table = _table(rows, ("user", "document"))
    assert "0.900" not in table and table.count("not given (interval refused)") == 6
    assert "refused the interval: too few units for the noise" in table
    ranking = next(line for line in table.splitlines() if line.startswith("Ranking"))
    assert "cannot rank" in ranking and ">" not in ranking.split("It tells apart")[0].split(":", 1)[1]
    _assert_recommends(table, "dp-vem", "user", "plan", "readable", "neither confirm nor rank", "+-0.84")
    rows[0]["forecast"] = "common words"  # the user level's plan did not say readable: the document level's did
    _assert_recommends(_table(rows, ("user", "document")), "dp-vem", "document", "plan", "readable")
    for r in rows:
        r["forecast"] = "noise"
    assert _table(rows, ("user", "document")).splitlines()[-1].startswith("Recommendation: none")
    # intervals given but too wide for a verdict: the plan's forecast decides; a row whose interval misses never
    wide, missed = _row("dp-vem", "user", 0.05, (-0.5, 0.6)), _row("laplace", "user", 0.001, (0.0, 0.002))
    wide["forecast"] = missed["forecast"] = "readable"
    _assert_recommends(_table([wide, missed]), "dp-vem", "user", "plan", "readable", "too wide")
    assert "laplace" not in _table([wide, missed]).splitlines()[-1].split(":", 2)[1]
    assert _table([missed]).splitlines()[-1].startswith("Recommendation: none")
    # an evaluation not made (refused before it spent) leaves the plan's forecast to decide too
    unmade = _row("dp-vem", "user", 0.0, (0, 0))
    del unmade["evaluation"]
    unmade.update(forecast="readable", evaluation_refused="not made (nothing spent): its interval would be refused: "
                                                          "user level: clipping ... no public fact bounds")
    _assert_recommends(_table([unmade]), "dp-vem", "user", "plan", "readable", "not made (nothing spent)")
    assert "--evaluation-epsilon" not in _table([unmade]).splitlines()[-1]


@pytest.mark.parametrize("flags, name", [
    (["--quick", "--n-units", "100"], "--n-units"),
    (["--unit", "user,group"], "--unit"),
    (["--sizing", "tiny"], "--sizing"),
])
def test_bad_quick_flags_are_refused_by_name(tmp_path, capsys, flags, name):
    out = tmp_path / "out"
    assert main(["compare", "embedded", "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert name in err and "Traceback" not in err and not out.exists()


def test_the_units_flag_and_the_quick_grid():
    from types import SimpleNamespace

    from topicdp.compare_cli import settings_from

    base = dict(n_jobs=1, max_docs_per_user=20, gamma=0.1, no_random_dp=False, epsilons=None, topics=None,
                max_features=None, n_units=None, seed=None, evaluation_epsilon=None, sizing=None)
    assert settings_from(SimpleNamespace(**base, unit=None, quick=True)).units == ("user", "document")
    assert settings_from(SimpleNamespace(**base, unit=None, quick=False)).units == ("user",)
    stated = settings_from(SimpleNamespace(**{**base, "n_units": "50"}, unit="document", quick=True))
    assert stated.unit == "document" and stated.n_units == 50
    assert settings_from(SimpleNamespace(**base, unit="document,user", quick=False)).units == ("document", "user")
