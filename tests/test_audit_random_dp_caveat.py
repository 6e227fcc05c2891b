"""The random-DP caveat says what gamma is a probability over (jointly: sensitivity sample and pair from P)."""

from pathlib import Path

from topicdp.report import RANDOM_DP_CAVEAT, PrivacyReport

KEY = "jointly over the draw of the sensitivity sample and of the neighbouring pair (D, D') from P"
ROOT = Path(__file__).resolve().parents[1]


def test_caveat_states_the_joint_probability_and_reaches_every_random_dp_report():
    # deliberate pin: the subject is the published caveat's wording (what gamma is a probability over)
    assert KEY in RANDOM_DP_CAVEAT and "not differential privacy" in RANDOM_DP_CAVEAT.replace("\n", " ")
    report = PrivacyReport(mechanism="topicdp", guarantee="random-DP", unit="user",
                           neighbours="replace-one", epsilon=1.0, delta=1e-5, gamma=0.1)
    assert report.notes[0] == RANDOM_DP_CAVEAT


def test_the_old_wording_is_gone_everywhere():
    """gamma is not a probability "over the draw of the sensitivity sample" alone (README, docs, code)."""
    old = "probability at most gamma over the draw of the sensitivity sample"
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "topicdp").rglob("*.py")]
    stale = [str(f.relative_to(ROOT)) for f in files if old in " ".join(f.read_text(encoding="utf-8").split())]
    assert stale == []
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    # deliberate pin: the README must state the caveat in the published words, not a paraphrase
    assert "jointly over the draw of the sensitivity sample and of the neighbouring pair (D, D′) from P" in readme
