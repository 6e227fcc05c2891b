"""Bad input to the CLI: an early, clear error naming the file, line or flag; never a
traceback and never a silently weaker release."""

import gzip
import json

import pytest

from topicdp.cli import build_parser, main
from topicdp.corpus import Corpus, read_jsonl_records

ROWS = [{"user": f"u{i % 4}", "text": f"market energy price trade contract meeting {i}"} for i in range(12)]


def _write(path, rows=ROWS, *, compress=False, prefix=b"", extra=b""):
    data = prefix + b"".join(json.dumps(r).encode() + b"\n" for r in rows) + extra
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _privatize(capsys, *args):
    """Run ``topicdp privatize`` with a cheap configuration; return (exit code, stderr)."""
    code = main(["privatize", "--guarantee", "random-dp", "--min-df", "1", "--max-df", "1.0", "--model", "sklearn-nmf", "--topics", "2",
                 "--n-jobs", "1", "--n-pairs", "4", "--insecure-testing", "--private-oracle", *map(str, args)])  # later flags win
    return code, capsys.readouterr().err


@pytest.fixture
def never_read(monkeypatch):
    """Fail the test if the corpus is read: the checks must come first."""
    def boom(*args, **kwargs):
        raise AssertionError("the corpus was read before the arguments were checked")

    monkeypatch.setattr("topicdp.corpus.read_jsonl_records", boom)
    monkeypatch.setattr("topicdp.corpus.embedded_corpus", boom)
    monkeypatch.setattr("topicdp.corpus.embedded_texts", boom)


# -- silent weakening ---------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--max-docs-per-user", "--max-tokens-per-doc"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_zero_bound_is_refused_not_treated_as_no_bound(tmp_path, capsys, never_read, flag, value):
    code, err = _privatize(capsys, _write(tmp_path / "c.jsonl"), flag, value)
    assert code == 2 and flag in err and "no bound" in err
    assert "Traceback" not in err


# -- late checks: every parameter is checked before the corpus is read --------------------------------


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--epsilon", "0"], "--epsilon"),
        (["--epsilon", "nan"], "--epsilon"),
        (["--delta", "1"], "--delta"),
        (["--gamma", "0.5"], "--gamma"),
        (["--model", "gensim-ldaa"], "--model"),
        (["--n-jobs", "0"], "--n-jobs"),
        (["--topics", "0"], "--topics"),
        (["--user-fraction", "0"], "--user-fraction"),
        (["--min-df", "0"], "--min-df"),
        (["--max-df", "1.5"], "--max-df"),
        (["--max-features", "0"], "--max-features"),
        (["--seed", "-1"], "--seed"),
        (["--n-pairs", "0"], "--n-pairs"),
    ],
)
def test_every_parameter_is_checked_before_the_corpus_is_read(tmp_path, capsys, never_read, args, flag):
    code, err = _privatize(capsys, _write(tmp_path / "c.jsonl"), *args)
    assert code == 2 and flag in err, err


def test_an_unwritable_out_path_is_refused_before_work(tmp_path, capsys, never_read):
    code, err = _privatize(capsys, _write(tmp_path / "c.jsonl"), "--out", tmp_path / "missing" / "r.json")
    assert code == 2 and "--out" in err


def test_demo_checks_its_arguments_before_loading(capsys, never_read):
    assert main(["demo", "--guarantee", "random-dp", "--model", "nope"]) == 2
    assert "--model" in capsys.readouterr().err


def test_compare_checks_its_arguments_before_loading(tmp_path, capsys, never_read):
    assert main(["compare", "embedded", "--out", str(tmp_path), "--max-docs-per-user", "0"]) == 2
    assert "--max-docs-per-user" in capsys.readouterr().err
    assert main(["compare", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


# -- tracebacks before the fix --------------------------------------------------------------------------


def test_a_directory_as_the_corpus(tmp_path, capsys):
    code, err = _privatize(capsys, tmp_path)
    assert code == 2 and str(tmp_path) in err and "directory" in err


def test_a_missing_corpus_file(tmp_path, capsys):
    code, err = _privatize(capsys, tmp_path / "nope.jsonl")
    assert code == 2 and "nope.jsonl" in err


def test_a_plain_file_named_gz(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl.gz")
    code, err = _privatize(capsys, path)
    assert code == 2 and str(path) in err and "not gzip" in err


def test_a_truncated_gzip_file(tmp_path, capsys):
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in ROWS * 20))[:-30])
    code, err = _privatize(capsys, path)
    assert code == 2 and str(path) in err and "gzip" in err


@pytest.mark.parametrize("users_flag", [[], ["--user-fraction", "0.5"]])
def test_a_record_missing_its_user_field(tmp_path, capsys, users_flag):
    rows = ROWS[:3] + [{"text": "no user here"}] + ROWS[3:]
    path = _write(tmp_path / "c.jsonl", rows)
    code, err = _privatize(capsys, path, *users_flag)
    assert code == 2 and f"{path}:4:" in err and "'user'" in err and "user_field" in err


def test_a_custom_user_field_that_does_not_exist(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl")
    code, err = _privatize(capsys, path, "--user-field", "author")
    assert code == 2 and f"{path}:1:" in err and "'author'" in err


# -- vague errors before the fix ------------------------------------------------------------------------


@pytest.mark.parametrize("compress", [False, True])
def test_invalid_json_names_file_and_line(tmp_path, capsys, compress):
    path = _write(tmp_path / ("c.jsonl.gz" if compress else "c.jsonl"), extra=b'{"user": "u9", "text": "cut\n',
                  compress=compress)
    code, err = _privatize(capsys, path)
    assert code == 2 and f"{path}:{len(ROWS) + 1}:" in err and "invalid JSON" in err


def test_a_non_utf8_byte_names_file_and_line(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl", extra=b'{"user": "u9", "text": "caf\xe9"}\n')
    code, err = _privatize(capsys, path)
    assert code == 2 and f"{path}:{len(ROWS) + 1}:" in err and "UTF-8" in err and "0xe9" in err


def test_a_record_that_is_not_an_object(tmp_path, capsys):
    path = _write(tmp_path / "c.jsonl", extra=b'["u9", "text"]\n')
    code, err = _privatize(capsys, path)
    assert code == 2 and f"{path}:{len(ROWS) + 1}:" in err and "object" in err


@pytest.mark.parametrize("user", [["a"], {"a": 1}, None, True])
def test_a_user_that_is_not_a_string_or_number(tmp_path, user):
    path = _write(tmp_path / "c.jsonl", [{"user": user, "text": "market energy"}])
    with pytest.raises(TypeError, match=f"{path}:1: field 'user'"):
        list(read_jsonl_records(path))


@pytest.mark.parametrize("compress", [False, True])
def test_a_utf8_bom_is_accepted(tmp_path, compress):
    plain = Corpus.from_jsonl(_write(tmp_path / "plain.jsonl"), min_df=1)
    bom = Corpus.from_jsonl(_write(tmp_path / ("b.jsonl.gz" if compress else "b.jsonl"), prefix=b"\xef\xbb\xbf",
                                   compress=compress), min_df=1)
    assert bom.fingerprint() == plain.fingerprint() and bom.user_ids == plain.user_ids


def test_gzip_is_recognised_by_content(tmp_path):
    """A gzip file whose name does not say so is read, not misread as text."""
    path = _write(tmp_path / "c.jsonl", compress=True)
    assert [u for _, u in read_jsonl_records(path)] == [r["user"] for r in ROWS]


def test_first_n_users_is_one_pass_and_keeps_file_order(tmp_path):
    path = _write(tmp_path / "c.jsonl")
    c = Corpus.from_jsonl(path, n_users=2, min_df=1)
    assert c.user_ids == ("u0", "u1") and c.n_docs == 6
    with pytest.raises(ValueError, match="n_users"):
        Corpus.from_jsonl(path, n_users=0)


def test_a_good_file_is_loaded_with_the_bounds_and_the_user_subset(tmp_path):
    from topicdp.cli import check_arguments
    from topicdp.pipeline import read_records, user_selected
    from topicdp.pipeline.run import build_corpus

    args = build_parser().parse_args(["privatize", str(_write(tmp_path / "c.jsonl")), "--guarantee", "random-dp",
                                      "--private-oracle", "--min-df", "1", "--max-df", "1", "--max-docs-per-user", "1",
                                      "--max-tokens-per-doc", "2", "--user-fraction", "0.6"])
    check_arguments(args)
    records = read_records(args.request.source)
    kept = tuple(u for u in dict.fromkeys(r["user"] for r in ROWS) if user_selected(u, 0.6))
    assert 0 < len(kept) < 4, "the fixture should keep some users and drop others"
    corpus = build_corpus(records, None, args.request)
    assert corpus.user_ids == kept and corpus.n_docs == len(kept) and corpus.n_tokens == 2 * len(kept)
    assert corpus.log.max_docs_per_user == 1 and corpus.log.max_tokens_per_doc == 2


def test_the_user_subset_is_a_per_user_rule():
    """Whether a user is kept depends on their id alone: adding users never evicts one (unlike 'the first N')."""
    from topicdp.pipeline import user_selected

    ids = [f"user{i}" for i in range(2000)]
    kept = {u for u in ids if user_selected(u, 0.3)}
    more = {u for u in ids + [f"new{i}" for i in range(500)] if user_selected(u, 0.3)}
    assert kept == {u for u in more if u.startswith("user")}
    assert 0.25 < len(kept) / len(ids) < 0.35  # 3.5 standard deviations of Binomial(2000, 0.3) / 2000 is 0.036


@pytest.mark.parametrize("load", ["compare", "audit", "streaming"])
def test_every_reader_goes_through_the_one_reader(tmp_path, load):
    """compare, the audit and the streaming corpus read JSON Lines through read_jsonl_records, so they
    report a bad line the same way."""
    path = _write(tmp_path / "c.jsonl", extra=b"{not json}\n")
    where = f"{path}:{len(ROWS) + 1}: invalid JSON"
    with pytest.raises(ValueError, match=where):
        if load == "compare":
            from topicdp.experiments.compare import read_split

            read_split(str(path), None, 0.2)
        elif load == "audit":
            from topicdp.audit.setups import CorpusChoice, SetupOptions, load_corpus as audit_load

            audit_load(CorpusChoice.from_options(SetupOptions(corpus=str(path), n_users=3)))
        else:
            from topicdp.streaming import StreamingCorpus

            StreamingCorpus.from_jsonl(str(path))
