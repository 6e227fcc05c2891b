"""Tables a corpus can be read from besides JSON Lines: Parquet (``.parquet``/``.pq``, the ``tables`` extra) and CSV
files (``.csv``/``.csv.gz``, every field read as the string written), pandas and polars DataFrames, and a SQL
query's rows (through SQLAlchemy, the ``sql`` extra; ``ORDER BY`` for a reproducible order).

Only field names (:func:`table_fields`) and raw values in order (:func:`table_rows`) are read here; what a value must
be is decided by the one record reader :func:`topicdp.corpus.read_source_records`, so a corpus gives the same
release whichever form it is stored in. Errors name the parameter, the source's fields and the nearest.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from ._extras import require

#: a database URL as SQLAlchemy takes it (``dialect[+driver]://...``)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

#: file name endings -> the format read
FILE_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv"}

#: names data owners give each field, for the suggestion when no field is close in spelling
_USUAL_NAMES = {
    "user_field": ("author", "user_id", "userid", "username", "author_id", "sender", "owner", "account", "speaker",
                   "customer_id", "patient_id", "person", "writer", "poster", "from", "uid", "user"),
    "text_field": ("body", "content", "message", "text", "review", "note", "post", "comment", "document", "abstract"),
    "date_field": ("date", "time", "timestamp", "created", "created_at", "datetime", "day", "published"),
}

#: rows read per batch from a Parquet or CSV file or a database cursor (memory holds one batch of the needed columns)
BATCH_ROWS = 65_536


def is_frame(obj: Any) -> bool:
    """Whether ``obj`` is a pandas or polars DataFrame (recognised by its class' module: neither is imported)."""
    return type(obj).__module__.split(".")[0] in ("pandas", "polars") and hasattr(obj, "columns")


def is_sql_url(path: Any) -> bool:
    """Whether ``path`` is a database URL (``sqlite:///posts.db``) rather than a file."""
    return isinstance(path, str) and _URL.match(path) is not None


def file_format(path: str) -> str:
    """``"parquet"``, ``"csv"`` or ``"jsonl"`` (any other name: JSON Lines, the default) from a file's name."""
    name = os.fspath(path).lower()
    for suffix, kind in FILE_FORMATS.items():
        if name.endswith(suffix):
            return kind
    return "jsonl"


def source_format(path: Any) -> str:
    """The format of a corpus input: ``"frame"``, ``"sql"``, or a file's (:func:`file_format`)."""
    if is_frame(path):
        return "frame"
    if is_sql_url(path):
        return "sql"
    return file_format(path)


def describe(path: Any, query: str | None = None) -> str:
    """How messages name a source: a file's path, a URL without its password (and the query), or the kind of
    DataFrame (never its size or contents: how many rows a private table has is private)."""
    if is_frame(path):
        return f"the {type(path).__module__.split('.')[0]} DataFrame"
    if is_sql_url(path):
        url = _redacted(path)
        return f"{url} (query {query!r})" if query else url
    return os.fspath(path)


def _redacted(url: str) -> str:
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # sqlalchemy missing or a URL it cannot parse: hide everything between :// and @
        return re.sub(r"(://[^/@:]*):[^/@]*@", r"\1:***@", url)


class FieldError(ValueError):
    """A field the request names is not in the source: ``field``, its ``parameter``, the source's ``fields`` and the
    nearest (``suggestion``)."""

    def __init__(self, message: str, *, field: str = "", parameter: str = "", fields: Sequence[str] = (),
                 suggestion: str | None = None):
        super().__init__(message)
        self.field, self.parameter, self.fields, self.suggestion = field, parameter, list(fields), suggestion


def nearest_field(field: str, parameter: str, fields: Sequence[str], taken: Sequence[str] = ()) -> str | None:
    """The field of ``fields`` most likely meant by ``field``: the closest in spelling (case-insensitive), else a usual
    name of that kind of field (``author`` for a user field), never one ``taken`` by another parameter."""
    free = [f for f in fields if f not in taken]
    lowered = {f.lower(): f for f in free}
    close = difflib.get_close_matches(field.lower(), list(lowered), n=1, cutoff=0.6)
    if close:
        return lowered[close[0]]
    for usual in _USUAL_NAMES.get(parameter, ()):
        if usual in lowered:
            return lowered[usual]
    return None


def missing_field_message(where: str, field: str, parameter: str, fields: Sequence[str],
                          taken: Sequence[str] = (), *, noun: str = "source") -> FieldError:
    """The error of a missing field: ``where: missing field 'user' (user_field); the source's fields: author,
    body, date; did you mean 'author'?`` (the command line prints the parameter as its flag, ``--user-field``)."""
    suggestion = nearest_field(field, parameter, fields, taken)
    listed = ", ".join(fields) if fields else "none"
    message = f"{where}: missing field {field!r} ({parameter}); the {noun}'s fields: {listed}"
    if suggestion is not None:
        message += f"; did you mean {suggestion!r}?"
    return FieldError(message, field=field, parameter=parameter, fields=fields, suggestion=suggestion)


def check_fields(where: str, fields: Sequence[str], wanted: Mapping[str, str | None], *,
                 noun: str = "source") -> None:
    """Refuse the first field of ``wanted`` (parameter -> name, or None) not in ``fields``, naming the parameter."""
    given = [f for f in wanted.values() if f is not None]
    for parameter, name in wanted.items():
        if name is not None and name not in fields:
            raise missing_field_message(where, name, parameter, fields, [f for f in given if f != name], noun=noun)


def _needed(module: str, extra: str, where: str):
    """``module``, imported once :func:`~topicdp._extras.require` has found it (reading ``where``)."""
    require(module, extra=extra, purpose=f"reading {where}")
    return importlib.import_module(module)


def _frame_columns(frame) -> dict[str, Any]:
    """A DataFrame's field names (as strings) -> its column keys."""
    return {str(c): c for c in frame.columns}


def _csv_reader(path: str, columns: Sequence[str] | None):
    pa = _needed("pyarrow", "tables", path)
    from pyarrow import csv as pacsv

    convert = (pacsv.ConvertOptions(include_columns=list(columns), column_types={c: pa.string() for c in columns})
               if columns is not None else pacsv.ConvertOptions())
    read = pacsv.ReadOptions(block_size=1 << 22)
    try:
        return pacsv.open_csv(path, read_options=read, convert_options=convert)
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: not a readable CSV file ({exc})") from None


def _parquet_file(path: str):
    pa = _needed("pyarrow", "tables", path)
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from None


def table_fields(path: Any, *, query: str | None = None) -> list[str]:
    """The names of a table's fields, in its order, from its schema alone: a Parquet file's footer, a CSV file's
    header, a DataFrame's columns, or the columns of ``query``'s result (the query is run, no row is fetched)."""
    kind = source_format(path)
    if kind == "frame":
        return list(_frame_columns(path))
    if kind == "parquet":
        return list(_parquet_file(path).schema_arrow.names)
    if kind == "csv":
        with _csv_reader(path, None) as reader:  # closed on leaving
            return list(reader.schema.names)
    if kind == "sql":
        with _sql_result(path, query) as result:
            return [str(k) for k in result.keys()]
    raise ValueError(f"{describe(path)}: not a table (Parquet, CSV, a DataFrame or a database URL)")


def table_rows(path: Any, wanted: Mapping[str, str], *, query: str | None = None) -> Iterator[tuple]:
    """The values of the fields ``wanted`` (parameter -> field name) in each row of a table, in order; one batch of
    those columns in memory at a time, the fields checked (:func:`check_fields`) before the first row.
    """
    kind = source_format(path)
    where = describe(path, query)
    columns = list(wanted.values())
    needed = list(dict.fromkeys(columns))
    if kind == "frame":
        frame_keys = _frame_columns(path)
        check_fields(where, list(frame_keys), wanted)
        yield from zip(*(_column_list(path[frame_keys[c]]) for c in columns))
    elif kind == "parquet":
        parquet = _parquet_file(path)
        check_fields(where, list(parquet.schema_arrow.names), wanted)
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=needed):
            yield from zip(*(batch.column(c).to_pylist() for c in columns))
    elif kind == "csv":
        check_fields(where, table_fields(path), wanted)
        with _csv_reader(path, needed) as reader:
            for batch in reader:
                yield from zip(*(batch.column(c).to_pylist() for c in columns))
    elif kind == "sql":
        with _sql_result(path, query) as result:
            keys = [str(k) for k in result.keys()]
            check_fields(where, keys, wanted)
            index = [keys.index(c) for c in columns]
            for part in result.partitions(BATCH_ROWS):
                for row in part:
                    yield tuple(row[i] for i in index)
    else:
        raise ValueError(f"{where}: not a table (Parquet, CSV, a DataFrame or a database URL)")


def _column_list(column) -> list:
    """A pandas or polars column as a list of Python objects (numpy scalars are turned into Python ones later)."""
    return column.to_list() if hasattr(column, "to_list") else column.tolist()


@contextmanager
def _sql_result(url: str, query: str | None):
    """``with _sql_result(url, query) as result``: the streamed result of ``query``, its connection closed after."""
    where = describe(url)
    sa = _needed("sqlalchemy", "sql", where)
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query: a database ({where}) is read through a SQL query that selects the text and "
                         "user fields, e.g. \"SELECT author AS user, body AS text FROM posts\"")
    try:
        engine = sa.create_engine(url)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise ValueError(f"{where}: not a database URL SQLAlchemy can open ({exc})") from None
    connection = None
    try:
        try:
            connection = engine.connect()
            result = connection.execution_options(stream_results=True).execute(sa.text(query))
        except sa.exc.SQLAlchemyError as exc:
            reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise ValueError(f"query: {where} refused the query {query!r}: {reason}") from None
        yield result
    finally:
        if connection is not None:
            connection.close()
        engine.dispose()
