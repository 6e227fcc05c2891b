"""The corpus read where it is: JSON Lines, Parquet, CSV, a pandas or polars DataFrame, SQLite and PostgreSQL give
the same records through one reader, hence the same canonical user ids, the same bounds and, with the same seed, a
bit-identical release; a missing field is refused before anything is read, naming the flag (or parameter), every
field of the source and the nearest one."""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import sqlite3
import subprocess
import tempfile

import numpy as np
import pytest

from topicdp.cli import main
from topicdp.corpus import Corpus, read_jsonl_records, read_source_records
from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy, read_records, release
from topicdp.tables import FieldError, missing_field_message, nearest_field

from corpora import three_block_texts
from facts import assert_facts
QUERY = "SELECT author, body, date FROM posts ORDER BY id"


def _rows(n_users=240, docs=3, seed=0):
    """Records with the fields data owners use (author, body, date), three topics of twenty words."""
    rng = np.random.default_rng(seed)
    out = [{"author": u, "body": text, "date": f"2004-0{1 + d}-15"}
           for u, d, text in three_block_texts(n_users, docs, size=25, seed=rng)]
    rng.shuffle(out)  # users interleaved, as in an export
    return out


def _pandas():
    return pytest.importorskip("pandas", reason="pandas is not installed (the dev extra installs it)")


def _pyarrow():
    return pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install \"topicdp[tables]\"")


def _sqlalchemy():
    return pytest.importorskip("sqlalchemy", reason="sqlalchemy is not installed: pip install \"topicdp[sql]\"")


@pytest.fixture(scope="module")
def rows():
    return _rows()


@pytest.fixture(scope="module")
def files(tmp_path_factory, rows):
    """The same records as JSON Lines, Parquet, CSV and a SQLite database."""
    root = tmp_path_factory.mktemp("sources")
    out = {"jsonl": str(root / "posts.jsonl")}
    with open(out["jsonl"], "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    db = root / "posts.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, author TEXT, body TEXT, date TEXT)")
        con.executemany("INSERT INTO posts VALUES (?, ?, ?, ?)",
                        [(i, r["author"], r["body"], r["date"]) for i, r in enumerate(rows)])
    out["sqlite"] = f"sqlite:///{db}"
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq
    except ImportError:
        return out
    table = pa.Table.from_pylist(rows)
    out["parquet"] = str(root / "posts.parquet")
    pq.write_table(table, out["parquet"], row_group_size=100)  # several row groups: read batch by batch
    out["csv"] = str(root / "posts.csv")
    pacsv.write_csv(table, out["csv"])
    shards = root / "shards"  # a directory of Parquet shards, every user's documents in one shard
    shards.mkdir()
    for i in range(3):
        part = [r for r in rows if int(r["author"][1:]) % 3 == i]
        pq.write_table(pa.Table.from_pylist(part), str(shards / f"part-{i}.parquet"))
    out["parquet-shards"] = str(shards)
    cshards = root / "cshards"
    cshards.mkdir()
    for i in range(3):
        pacsv.write_csv(pa.Table.from_pylist([r for r in rows if int(r["author"][1:]) % 3 == i]),
                        str(cshards / f"part-{i}.csv"))
    out["csv-shards"] = str(cshards)
    jshards = root / "jshards"
    jshards.mkdir()
    for i in range(3):
        with open(jshards / f"part-{i}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows if int(r["author"][1:]) % 3 == i)
    out["jsonl-shards"] = str(jshards)
    return out


# -- PostgreSQL: a real server in a temporary directory, on a unix socket ------------------------------------

def _postgres_bin() -> str | None:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    if shutil.which("initdb"):
        candidates.append(os.path.dirname(os.path.realpath(shutil.which("initdb"))))
    for d in candidates:
        if os.access(os.path.join(d, "initdb"), os.X_OK) and os.access(os.path.join(d, "pg_ctl"), os.X_OK):
            return d
    return None


@pytest.fixture(scope="module")
def postgres(rows):
    """The URL of a PostgreSQL server started for these tests (initdb in a temporary directory, a unix socket only,
    trust authentication), holding the records; the server is stopped and its directory removed afterwards. As root,
    the server runs as the ``postgres`` (or ``nobody``) user: PostgreSQL refuses to run as root."""
    pytest.importorskip("psycopg2", reason="psycopg2 is not installed (pip install psycopg2-binary)")
    sa = _sqlalchemy()
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql)")
    prefix: list[str] = []
    root = tempfile.mkdtemp(prefix="topicdp-pg-")
    if os.geteuid() == 0:
        user = next((name for name in ("postgres", "nobody") if _has_user(name)), None)
        runuser = shutil.which("runuser")
        if user is None or runuser is None:
            shutil.rmtree(root)
            pytest.skip("running as root without a postgres or nobody user and runuser: PostgreSQL refuses root")
        prefix = [runuser, "-u", user, "--"]
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    os.chmod(root, 0o700)
    data = os.path.join(root, "data")
    run = dict(check=True, capture_output=True, timeout=120, cwd=root)
    started = False
    try:
        subprocess.run([*prefix, os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "topicdp", "-E",
                        "UTF8", "--locale=C", "-N"], **run)
        subprocess.run([*prefix, os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-l", os.path.join(root, "log"),
                        "-o", f"-k {root} -c listen_addresses='' -F", "start"], **run)
        started = True
        url = f"postgresql+psycopg2://topicdp@/postgres?host={root}"
        engine = sa.create_engine(url)
        with engine.begin() as con:
            con.execute(sa.text("CREATE TABLE posts (id integer PRIMARY KEY, author text, body text, date text)"))
            con.execute(sa.text("INSERT INTO posts VALUES (:id, :author, :body, :date)"),
                        [{"id": i, **r} for i, r in enumerate(rows)])
        engine.dispose()
        yield url
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"could not start PostgreSQL: {exc.stderr.decode(errors='replace').strip()[:300]}")
    finally:
        if started:
            subprocess.run([*prefix, os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"],
                           capture_output=True, timeout=120, cwd=root)
        shutil.rmtree(root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


# -- the same records, whatever the source -------------------------------------------------------------------

def _source(kind, files, rows, postgres_url=None):
    """(path, query) of one source kind."""
    if kind in ("jsonl", "parquet", "csv", "parquet-shards", "jsonl-shards"):
        if kind not in files:
            _pyarrow()
        return files[kind], None
    if kind == "pandas":
        return _pandas().DataFrame(rows), None
    if kind == "polars":
        pl = pytest.importorskip("polars", reason="polars is not installed (the dev extra installs it)")
        return pl.DataFrame(rows), None
    _sqlalchemy()
    return (files["sqlite"] if kind == "sqlite" else postgres_url), QUERY


SOURCES = ["parquet", "csv", "pandas", "polars", "sqlite", "postgresql"]


@pytest.mark.parametrize("kind", SOURCES)
def test_every_source_gives_the_records_of_the_json_lines_file(request, files, rows, kind):
    url = request.getfixturevalue("postgres") if kind == "postgresql" else None
    path, query = _source(kind, files, rows, url)
    expected = list(read_jsonl_records(files["jsonl"], "body", "author"))
    got = list(read_source_records(path, "body", "author", query=query))
    assert got == expected and all(type(a[1]) is type(b[1]) for a, b in zip(got, expected))


def _request(path, query=None, **kwargs):
    source = CorpusSource(path, text_field="body", user_field="author", max_docs_per_user=2, user_fraction=0.9,
                          query=query)
    return ReleaseRequest(source, VocabularyPolicy.dp(max_features=60), epsilon=8.0, delta=1e-5, n_topics=3,
                          release_anyway=True, seed=0, **kwargs)


@pytest.fixture(scope="module")
def jsonl_release(files):
    return release(_request(files["jsonl"]), echo=lambda line: None).release


@pytest.mark.parametrize("kind", SOURCES)
def test_the_same_seed_gives_a_bit_identical_release_from_every_source(request, files, rows, jsonl_release, kind):
    """The DP count, the DP vocabulary, the per-user rule, the bounds and the noise see the same records: the
    topic-word matrix is equal bit for bit, and so is the published file (its report included)."""
    url = request.getfixturevalue("postgres") if kind == "postgresql" else None
    path, query = _source(kind, files, rows, url)
    got = release(_request(path, query), echo=lambda line: None).release
    assert len(jsonl_release.vocabulary) > 10
    assert got.vocabulary == jsonl_release.vocabulary
    assert np.array_equal(got.topic_word, jsonl_release.topic_word)
    assert got.report.to_dict() == jsonl_release.report.to_dict()
    assert got.to_dict() == jsonl_release.to_dict()
    assert got.diagnostics["corpus"] == jsonl_release.diagnostics["corpus"]


@pytest.mark.parametrize("kind", ["parquet-shards", "csv-shards"])
def test_a_directory_of_table_shards_gives_the_release_of_the_json_lines_shards(files, kind):
    """Parquet (or CSV) shards are read shard by shard, as JSON Lines shards are: the same records, the same
    release."""
    _pyarrow()
    a = release(_request(files["jsonl-shards"]), echo=lambda line: None).release
    b = release(_request(files[kind]), echo=lambda line: None).release
    assert b.vocabulary == a.vocabulary and np.array_equal(b.topic_word, a.topic_word)
    assert b.report.to_dict() == a.report.to_dict()
    assert b.diagnostics["corpus"]["n_shards"] == 3


def test_the_command_line_gives_the_same_file_from_sqlite_parquet_and_json_lines(files, tmp_path, capsys):
    _sqlalchemy()
    common = ["--text-field", "body", "--user-field", "author", "--max-docs-per-user", "2", "--topics", "3",
              "--epsilon", "8", "--delta", "1e-5", "--max-features", "60", "--release-anyway", "--seed", "0"]
    outputs = {}
    inputs = {"jsonl": [files["jsonl"]], "sqlite": [files["sqlite"], "--query", QUERY]}
    if "parquet" in files:
        inputs["parquet"] = [files["parquet"]]
    for kind, corpus in inputs.items():
        out = tmp_path / f"{kind}.json"
        assert main(["privatize", *corpus, *common, "--out", str(out)]) == 0, capsys.readouterr().err
        outputs[kind] = json.loads(out.read_text())
    capsys.readouterr()
    for kind in inputs:
        assert outputs[kind] == outputs["jsonl"], kind


def test_ids_are_canonical_whatever_the_source(files, tmp_path):
    """Numbers with an integral value are one user (7 and 7.0), a string is never a number, in every source."""
    pd = _pandas()
    frame = pd.DataFrame({"user": [7, 7, 8], "text": ["a", "b", "c"]})
    floats = pd.DataFrame({"user": [7.0, 7.0, 8.0], "text": ["a", "b", "c"]})
    assert [u for _, u in read_source_records(frame)] == [7, 7, 8] == [u for _, u in read_source_records(floats)]
    assert all(type(u) is int for _, u in read_source_records(floats))
    # CSV has no types: an id is the string written (as "user": "007" in JSON Lines), never turned into a number
    _pyarrow()
    path = tmp_path / "ids.csv"
    path.write_text("user,text\n007,a\n7,b\n")
    assert [u for _, u in read_source_records(str(path))] == ["007", "7"]


def test_corpus_from_frame_and_from_table_equal_from_jsonl(files, rows):
    pd = _pandas()
    a = Corpus.from_jsonl(files["jsonl"], text_field="body", user_field="author", min_df=1)
    b = Corpus.from_frame(pd.DataFrame(rows), text_field="body", user_field="author", min_df=1)
    c = Corpus.from_table(files["sqlite"], query=QUERY, text_field="body", user_field="author", min_df=1)
    for other in (b, c):
        assert other.fingerprint() == a.fingerprint() and other.user_ids == a.user_ids
    with pytest.raises(TypeError, match="pandas or polars DataFrame"):
        Corpus.from_frame(rows)


def test_the_in_memory_records_of_a_frame_are_those_of_its_file(files, rows):
    pd = _pandas()
    frame = read_records(CorpusSource(pd.DataFrame(rows), text_field="body", user_field="author"))
    jsonl = read_records(CorpusSource(files["jsonl"], text_field="body", user_field="author"))
    assert frame.texts == jsonl.texts and frame.users == jsonl.users


# -- errors: early, exact, naming the flag, every field and the nearest ---------------------------------------

def test_the_nearest_field_is_suggested():
    fields = ["author", "body", "date", "id"]
    assert nearest_field("user", "user_field", fields) == "author"  # no close spelling: the usual name of a user
    assert nearest_field("txt", "text_field", ["text", "user"]) == "text"
    assert nearest_field("Author", "user_field", fields) == "author"
    assert nearest_field("text", "text_field", ["body", "author"], taken=["body"]) is None
    error = missing_field_message("posts.parquet", "user", "user_field", fields)
    assert isinstance(error, FieldError) and error.fields == fields and error.suggestion == "author"
    assert_facts(str(error), "posts.parquet", "'user'", "(user_field)", "author, body, date, id", "'author'",
                 ordered=True)  # the source, the field and its parameter, every field, the nearest


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "csv", "pandas", "sqlite"])
def test_a_missing_field_is_refused_before_reading_naming_the_parameter(files, rows, kind, monkeypatch):
    path, query = _source(kind, files, rows)
    if kind == "sqlite":
        query = "SELECT author, body, date FROM posts"

    def never(*args, **kwargs):
        raise AssertionError("a row was read before the fields were checked")

    monkeypatch.setattr("topicdp.corpus.read_jsonl_records", never)
    with pytest.raises(FieldError) as caught:
        CorpusSource(path, query=query).check_fields()  # the defaults: fields 'text' and 'user'
    message = str(caught.value)
    assert "missing field 'text' (text_field)" in message
    assert "author, body, date" in message and "did you mean 'body'?" in message


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "csv", "sqlite"])
def test_the_command_line_names_the_flag_every_field_and_the_nearest(files, rows, kind, capsys, monkeypatch):
    path, query = _source(kind, files, rows)
    monkeypatch.setattr("topicdp.pipeline.sources.read_records",
                        lambda *a, **k: pytest.fail("the corpus was read before its fields were checked"))
    argv = ["privatize", path, "--text-field", "body", "--seed", "0", *(["--query", query] if query else [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "missing field 'user' (--user-field)" in err, err
    assert "author, body, date" in err and "did you mean 'author'?" in err and "Traceback" not in err
    assert "user_field" not in err  # the command line speaks flags


def test_a_reference_without_the_field_names_the_reference(files, tmp_path, capsys):
    reference = tmp_path / "ref.jsonl"
    reference.write_text(json.dumps({"writer": "p1", "body": "public text"}) + "\n")
    argv = ["privatize", files["jsonl"], "--text-field", "body", "--user-field", "author", "--reference",
            str(reference)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--reference" in err and "missing field 'author' (--user-field)" in err and "did you mean 'writer'?" in err


@pytest.mark.parametrize("flag", ["--vocabulary", "--reference", "--stop-words"])
def test_a_missing_input_file_names_its_flag(files, tmp_path, capsys, flag):
    missing = tmp_path / "missing.txt"
    assert main(["privatize", files["jsonl"], "--text-field", "body", "--user-field", "author", flag,
                 str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{flag}: no such file: {missing}" in err, err


def test_a_missing_corpus_file_is_named_as_the_corpus(tmp_path, capsys):
    missing = tmp_path / "posts.parquet"
    assert main(["privatize", str(missing)]) == 2
    assert f"corpus: no such file: {missing}" in capsys.readouterr().err


def test_a_query_goes_with_a_database_and_a_database_with_a_query(files, capsys):
    _sqlalchemy()
    assert main(["privatize", files["sqlite"]]) == 2
    assert "--query" in capsys.readouterr().err
    assert main(["privatize", files["jsonl"], "--query", QUERY]) == 2
    assert "--query" in capsys.readouterr().err
    assert main(["privatize", files["sqlite"], "--query", "SELECT * FROM nowhere"]) == 2
    err = capsys.readouterr().err
    assert "--query" in err and "no such table: nowhere" in err


def test_a_value_of_the_wrong_type_names_the_row_and_the_field(tmp_path):
    pd = _pandas()
    frame = pd.DataFrame({"user": ["a", None, "c"], "text": ["x", "y", "z"]})
    # a missing value is None, or NaN in a pandas string column
    with pytest.raises(TypeError, match=r"row 2: .*'user' \(user_field\).* got (NoneType|nan)") as caught:
        list(read_source_records(frame))
    assert "pandas DataFrame" in str(caught.value)
    frame = pd.DataFrame({"user": ["a", "b"], "text": ["x", 3]})
    with pytest.raises(TypeError, match=r"row 2: field 'text' \(text_field\) must be a string, got int"):
        list(read_source_records(frame))
    with pytest.raises(TypeError, match=r"row 1: .*'user' \(user_field\).* got bool"):
        list(read_source_records(pd.DataFrame({"user": [True], "text": ["x"]})))


def test_a_database_password_is_not_in_messages():
    pytest.importorskip("sqlalchemy", reason="sqlalchemy is not installed: pip install \"topicdp[sql]\"")
    from topicdp.tables import describe

    label = describe("postgresql://owner:s3cret@db.example/posts", "SELECT 1")
    assert "s3cret" not in label and "owner" in label and "SELECT 1" in label


@pytest.mark.parametrize("name, module, extra", [("posts.parquet", "pyarrow", "tables"), ("posts.csv", "pyarrow", "tables"),
                                                 ("sqlite:///posts.db", "sqlalchemy", "sql")])
def test_a_missing_extra_is_named_with_its_install_command_before_reading(tmp_path, monkeypatch, capsys, name, module,
                                                                          extra):
    import sys

    monkeypatch.setitem(sys.modules, module, None)
    path = name if "://" in name else str(tmp_path / name)
    if "://" not in name:
        (tmp_path / name).write_bytes(b"")
    assert main(["privatize", path, *(["--query", QUERY] if "://" in name else [])]) == 2
    err = capsys.readouterr().err
    assert module in err and f'pip install "topicdp[{extra}]"' in err, err


def test_a_release_over_time_of_a_table_is_refused_before_reading(files, tmp_path):
    """Periods are split from a JSON Lines file's date field: another source is refused, with what it needs."""
    _pyarrow()
    from topicdp.pipeline.over_time import PeriodSpec, release_over_time
    from topicdp.rdp import PrivacyLedger

    PrivacyLedger.open(str(tmp_path / "data.ledger"), budget=(3.0, 1e-5), unit="user", neighbours="add-remove")
    request = ReleaseRequest(CorpusSource(files["parquet"], text_field="body", user_field="author"),
                             ledger=str(tmp_path / "data.ledger"))
    with pytest.raises(ValueError, match="reads one JSON Lines file with a date field"):
        release_over_time(request, PeriodSpec("month", "2004-01", "2004-03"))


def test_the_repr_of_a_frame_source_shows_no_row():
    pd = _pandas()
    frame = pd.DataFrame({"user": ["alice-private"], "text": ["a private note"]})
    request = ReleaseRequest(CorpusSource(frame), VocabularyPolicy.public(["private", "note"]), n_topics=1)
    assert "alice" not in repr(request) and "private note" not in repr(request.source)
    assert "the pandas DataFrame" in repr(request.source)


def test_group_by_user_rewrites_a_table_into_shards_that_meet_the_contract(files, tmp_path, rows):
    """A Parquet export split anyhow becomes user-grouped shards whose release is the JSON Lines shards' own."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    from topicdp.pipeline import group_by_user

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for i in range(2):  # every user's documents spread over both files
        pq.write_table(pa.Table.from_pylist(rows[i::2]), str(mixed / f"part-{i}.parquet"))
    parts = group_by_user(sorted(str(p) for p in mixed.iterdir()), tmp_path / "grouped", 3, user_field="author",
                          text_field="body")
    records = [r for p in parts for r in read_jsonl_records(p, "body", "author")]
    assert sorted(records) == sorted((r["body"], r["author"]) for r in rows)
    owners = [{u for _, u in read_jsonl_records(p, "body", "author")} for p in parts]
    assert all(not (a & b) for i, a in enumerate(owners) for b in owners[i + 1:])
    got = release(_request(str(tmp_path / "grouped")), echo=lambda line: None).release  # the contract holds
    assert len(got.vocabulary) > 10


@pytest.mark.cluster
def test_parquet_shards_on_a_local_cluster_give_the_local_release(files):
    """The Parquet shards read by Dask workers (each reads its own shard): bit-identical topics."""
    _pyarrow()
    pytest.importorskip("dask.distributed")
    here = release(_request(files["parquet-shards"]), echo=lambda line: None).release
    there = release(_request(files["parquet-shards"], scheduler="local:2"), echo=lambda line: None).release
    assert np.array_equal(here.topic_word, there.topic_word)
