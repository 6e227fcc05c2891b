"""Count the places where one fact of the release core is written, with file:line for every hit.

Every count reads the source of ``topicdp/`` (``--root DIR``: the package of another checkout) through its syntax
tree (``ast``), so docstrings, comments and strings never count; each prints what it counts, its number, and
one line per hit so that a reader can check it. The counts:

1. planned-entry code: functions (or methods) outside ``topicdp/rdp/`` that construct a ledger entry (any class of
   ``topicdp/rdp/ledger.py`` derived from its labels base, read from that file), and functions named
   ``*planned_entr*``. The issue asks for one protocol: a function named ``planned_entries`` (a mechanism's, a
   road's) or ``*_entries`` (the unit count's, the vocabulary selection's) returning the step's entries, the one
   place its sigma becomes entries. The count is of the functions *outside* that protocol; those inside it are
   listed too. A construction inside a ``.record(`` call is marked ``(records)``;
2. readability forecasting: modules that compute a forecast of overlap, NPMI, contrast or readability, i.e.
   ``topicdp/forecast.py`` (the closed forms) and every module that calls one of its closed forms
   (:data:`CLOSED_FORMS`, resolved through the module's imports of ``topicdp.forecast``) or builds a forecast
   (``ReadabilityForecast(``, ``SpectralForecast(``). A function whose name holds ``forecast`` but that calls none
   of them is listed apart, not counted: it returns a stored forecast (``Decision.forecast``), compares a stored
   forecast with a measurement (the report), asks a road for its forecast (``Road.forecast``, ``decide``), or
   forecasts something that is not readability (the vocabulary's number of words, a private evaluation's error);
3. the neighbour factor: ``sqrt(2)`` (any ``*.sqrt`` of the constant 2) inside a statement that reads the
   neighbour relation (mentions ``neighbour`` or ``replace``), and ``def neighbour_factor``;
4. a user-id hash: ``sha256`` / ``blake2b`` / ``blake2s`` calls (hashlib or imported names) whose statement, or
   the name of whose function, mentions a user, a unit or an id (``user``, ``unit``, ``uid``, ``_id_key``,
   ``ids``); the other hash calls are listed apart;
5. top words: ``argsort(-X)`` (method or ``np.argsort``) where ``X`` is a topic-word matrix or row by its name
   (``W``, ``P``, ``w``, ``row``, ``topic_word``, ``tw``, ``phi``, ``beta``, ``topics``); the other negated
   argsorts (eigenvalues, topic weights, scores) are listed apart;
6. topic matching: calls of ``linear_sum_assignment``;
7. file writes outside ``topicdp/_files.py``'s writers (``atomic_path``, ``atomic_write``, ``append_line``):
   ``open(..., mode)`` (and ``GzipFile(``) with ``w``, ``a`` or ``x`` in the mode,
   ``.write_text(``, ``.write_bytes(``, ``np.save*(``, ``json.dump(`` (to a handle), ``savefig(`` with an argument,
   ``to_parquet(``, ``to_csv(`` with a path;
8. imports in ``topicdp/experiments/`` of private names of ``topicdp.pipeline``: a name starting with ``_``, or a
   name taken from a submodule of ``topicdp.pipeline`` that the package's ``__all__`` does not list;
9. places the release report is composed: calls of ``compose_report(`` and of ``PrivacyReport(``.

Run::

    python benchmarks/refactors/core_counts.py                 # this checkout
    python benchmarks/refactors/core_counts.py --root ../main  # another checkout
    python benchmarks/refactors/core_counts.py --summary       # the counts without the hits
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve()

#: the functions of topicdp/forecast.py that compute a readability forecast (its signals, ``public_init`` and
#: ``mass_per_unit`` are inputs of one, not forecasts)
CLOSED_FORMS = {"expected_topn_overlap", "forecast_readability", "forecast", "forecast_from_sigma",
                "forecast_on_reference", "scaled_noise_model", "on_lda_scale", "verdict_for", "verdict_of_draws"}
FORECAST_CLASSES = {"ReadabilityForecast", "SpectralForecast"}
HASHES = {"sha256", "blake2b", "blake2s"}
WRITE_METHODS = {"write_text", "write_bytes", "to_parquet"}


def _name(func: ast.AST) -> str:
    """The called name: ``f`` of ``f(...)`` and of ``a.b.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(func: ast.AST) -> str:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


class Module:
    """One source file: its tree, with every node's enclosing function and statement."""

    def __init__(self, path: Path, root: Path):
        self.path = path
        self.rel = path.relative_to(root.parent).as_posix()
        self.text = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.text)
        self.function: dict[ast.AST, str] = {}
        self.statement: dict[ast.AST, ast.stmt] = {}
        self.parent: dict[ast.AST, ast.AST] = {}
        self._walk(self.tree, "<module>", None)

    def _walk(self, node, function, statement):
        for child in ast.iter_child_nodes(node):
            self.parent[child] = node
            f = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                f = child.name if function == "<module>" else f"{function}.{child.name}"
            elif isinstance(child, ast.ClassDef):
                f = child.name if function == "<module>" else f"{function}.{child.name}"
            s = child if isinstance(child, ast.stmt) else statement
            self.function[child] = f
            self.statement[child] = s
            self._walk(child, f, s)

    def source(self, node) -> str:
        return ast.get_source_segment(self.text, node) or ""

    def where(self, node) -> str:
        return f"{self.rel}:{node.lineno}"

    def calls(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                yield node

    def inside_with_of(self, node, name: str) -> bool:
        """Whether ``node`` lies in the body of a ``with`` whose items call ``name`` (e.g. ``atomic_path``)."""
        p = self.parent.get(node)
        while p is not None:
            if isinstance(p, ast.With) and any(isinstance(i.context_expr, ast.Call) and _name(i.context_expr.func) == name
                                               for i in p.items):
                return True
            p = self.parent.get(p)
        return False

    def inside_call_named(self, node, name: str) -> bool:
        p = self.parent.get(node)
        while p is not None:
            if isinstance(p, ast.Call) and _name(p.func) == name:
                return True
            p = self.parent.get(p)
        return False


def modules(root: Path) -> list[Module]:
    return [Module(p, root) for p in sorted(root.rglob("*.py"))]


def _line(m: Module, node) -> str:
    return m.text.splitlines()[node.lineno - 1].strip()[:110]


def entry_classes(mods) -> set[str]:
    """The ledger's entry classes: the classes of topicdp/rdp/ledger.py derived from its labels base."""
    ledger = next(m for m in mods if m.rel == "topicdp/rdp/ledger.py")
    return {node.name for node in ledger.tree.body if isinstance(node, ast.ClassDef)
            and any(getattr(b, "id", "") == "_Labels" for b in node.bases)}


def _in_protocol(function: str) -> bool:
    """Whether a function (``Class.method`` or ``name``, maybe nested) is the protocol's: named ``planned_entries``
    or ``*_entries``, or defined inside one."""
    return any(part == "planned_entries" or part.endswith("_entries") for part in function.split("."))


def planned_entries(mods):
    classes = entry_classes(mods)
    hits, functions = [], set()
    for m in mods:
        for node in ast.walk(m.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "planned_entr" in node.name:
                fn = m.function[node]
                functions.add((m.rel, fn))
                hits.append(f"{m.where(node)}  def {fn}")
        if m.rel.startswith("topicdp/rdp/"):
            continue
        for call in m.calls():
            if _name(call.func) in classes:
                fn = m.function[call]
                functions.add((m.rel, fn))
                mark = "  (records)" if m.inside_call_named(call, "record") else ""
                hits.append(f"{m.where(call)}  {_name(call.func)}( in {fn}{mark}")
    inside = sorted(f"{rel}:{fn}" for rel, fn in functions if _in_protocol(fn))
    outside = sorted(f"{rel}:{fn}" for rel, fn in functions if not _in_protocol(fn))
    hits.append(f"-- of the {len(functions)} functions, {len(inside)} are the protocol (planned_entries / *_entries): "
                + ", ".join(inside))
    hits.append(f"-- outside it ({len(outside)}): " + (", ".join(outside) or "none"))
    return len(outside), "functions building ledger entries outside the one protocol (planned_entries or " \
                         "*_entries returning the step's entries)", hits


def _forecast_names(m: Module) -> tuple[set[str], set[str]]:
    """The names ``m`` binds to topicdp/forecast.py's closed forms, and to the module itself."""
    names, modules_ = set(), set()
    for node in ast.walk(m.tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(m, node)
            for alias in node.names:
                if source == "topicdp.forecast" and alias.name in CLOSED_FORMS:
                    names.add(alias.asname or alias.name)
                elif source == "topicdp" and alias.name == "forecast":
                    modules_.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules_ |= {a.asname or a.name for a in node.names if a.name == "topicdp.forecast"}
    return names, modules_


def _computes_forecast(m: Module, call: ast.Call, names: set[str], modules_: set[str]) -> bool:
    func = call.func
    if _name(func) in FORECAST_CLASSES:
        return True
    if isinstance(func, ast.Name):
        return func.id in names or (m.rel == "topicdp/forecast.py" and func.id in CLOSED_FORMS)
    return isinstance(func, ast.Attribute) and func.attr in CLOSED_FORMS and _dotted(func.value) in modules_


def forecasting(mods):
    by_module: dict[str, list[str]] = {}
    computing: set[tuple[str, str]] = set()
    for m in mods:
        names, modules_ = _forecast_names(m)
        for call in m.calls():
            if _computes_forecast(m, call, names, modules_):
                computing.add((m.rel, m.function[call]))
                if m.rel != "topicdp/forecast.py":
                    by_module.setdefault(m.rel, []).append(f"{m.where(call)}  {m.function[call]} calls "
                                                           f"{_name(call.func)}")
    forecast_py = next((m for m in mods if m.rel == "topicdp/forecast.py"), None)
    if forecast_py is not None:
        by_module["topicdp/forecast.py"] = [
            f"{forecast_py.where(node)}  {'class' if isinstance(node, ast.ClassDef) else 'def'} {node.name}"
            for node in forecast_py.tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in CLOSED_FORMS | FORECAST_CLASSES]
    apart = [f"{m.where(node)}  def {m.function[node]}" for m in mods for node in ast.walk(m.tree)
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "forecast" in node.name.lower()
             and (m.rel, m.function[node]) not in computing and m.rel not in by_module]
    hits = [h for mod in sorted(by_module) for h in by_module[mod]]
    hits.append(f"-- functions named *forecast* in other modules that compute none ({len(apart)}, not counted: a "
                "stored forecast, a road's forecast asked for, or not readability):")
    return len(by_module), "modules computing a readability forecast (topicdp/forecast.py, and modules calling " \
                           "its closed forms or building a forecast)", hits + apart


def neighbour_factor(mods):
    hits = []
    for m in mods:
        for node in ast.walk(m.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "neighbour_factor":
                hits.append(f"{m.where(node)}  def {m.function[node]}")
        for call in m.calls():
            if _name(call.func) == "sqrt" and call.args and isinstance(call.args[0], ast.Constant) \
                    and call.args[0].value in (2, 2.0):
                stmt = m.source(m.statement[call]).lower()
                if "neighbour" in stmt or "replace" in stmt:
                    hits.append(f"{m.where(call)}  in {m.function[call]}: {_line(m, call)}")
    return len(hits), "definitions of the neighbour factor (def neighbour_factor; sqrt(2) chosen by the " \
                      "neighbour relation inline)", hits


def user_hash(mods):
    hits, other = [], []
    for m in mods:
        for call in m.calls():
            if _name(call.func) in HASHES:
                low = m.source(m.statement[call]).lower() + " " + m.function[call].lower()
                target = hits if any(w in low for w in ("user", "uid", "_id_key", "ids", " id", "unit")) else other
                target.append(f"{m.where(call)}  in {m.function[call]}: {_line(m, call)}")
    return len(hits), "hashes over a user id (sha256/blake2 calls whose statement or function names a user, unit or id)", \
        hits + ([f"-- other hash calls ({len(other)}, not counted):"] + other if other else [])


TOPIC_WORD_NAMES = {"W", "P", "w", "row", "topic_word", "tw", "phi", "beta", "topics"}


def _operand_name(node: ast.AST) -> str:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def top_words(mods):
    hits, other = [], []
    for m in mods:
        for call in m.calls():
            negated = None
            if _name(call.func) == "argsort" and call.args and isinstance(call.args[0], ast.UnaryOp) \
                    and isinstance(call.args[0].op, ast.USub):
                negated = call.args[0].operand
            elif isinstance(call.func, ast.Attribute) and call.func.attr == "argsort" \
                    and isinstance(call.func.value, ast.UnaryOp) and isinstance(call.func.value.op, ast.USub):
                negated = call.func.value.operand
            if negated is not None:
                target = hits if _operand_name(negated) in TOPIC_WORD_NAMES else other
                target.append(f"{m.where(call)}  in {m.function[call]}: {_line(m, call)}")
    return len(hits), "top-word orders (argsort of a negated topic-word matrix or row)", \
        hits + ([f"-- other negated argsorts ({len(other)}, not counted):"] + other if other else [])


def matching(mods):
    hits = [f"{m.where(c)}  in {m.function[c]}: {_line(m, c)}" for m in mods for c in m.calls()
            if _name(c.func) == "linear_sum_assignment"]
    return len(hits), "topic matchings (calls of linear_sum_assignment)", hits


def _mode(call: ast.Call):
    if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
        return call.args[1].value
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def writes(mods):
    hits = []
    for m in mods:
        if m.rel == "topicdp/_files.py":
            continue
        for call in m.calls():
            name, dotted = _name(call.func), _dotted(call.func)
            what = None
            if name in ("open", "fdopen", "GzipFile") and isinstance(_mode(call), str) and set(_mode(call)) & set("wax"):
                what = f"{dotted}(..., {_mode(call)!r})"
            elif name in WRITE_METHODS:
                what = f".{name}("
            elif dotted in ("np.save", "np.savez", "np.savez_compressed", "numpy.save", "np.savetxt"):
                what = f"{dotted}("
            elif dotted == "json.dump":
                what = "json.dump("
            elif name == "savefig" and (call.args or call.keywords):
                what = "savefig(path"
            elif name == "to_csv" and call.args:
                what = ".to_csv(path"
            through = m.inside_with_of(call, "atomic_path") or "atomic_path(" in m.source(call)
            if what and not through:
                hits.append(f"{m.where(call)}  {what} in {m.function[call]}")
    return len(hits), "file writes outside topicdp/_files.py's writers (not inside `with atomic_path(...)` nor " \
                      "opening its path; append_line for a log)", hits


def _resolve(m: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = m.rel[:-3].split("/")[:-1] if not m.rel.endswith("__init__.py") else m.rel.split("/")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def pipeline_private(mods):
    public = set()
    for m in mods:
        if m.rel == "topicdp/pipeline/__init__.py":
            for node in ast.walk(m.tree):
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                    public = set(ast.literal_eval(node.value))
    hits = []
    for m in mods:
        if not m.rel.startswith("topicdp/experiments/"):
            continue
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(m, node)
                if not (source == "topicdp.pipeline" or source.startswith("topicdp.pipeline.")):
                    continue
                for alias in node.names:
                    private = alias.name.startswith("_")
                    unlisted = source != "topicdp.pipeline" and alias.name not in public
                    if private or unlisted:
                        why = "private name" if private else "not in topicdp.pipeline.__all__"
                        hits.append(f"{m.where(node)}  from {source} import {alias.name}  ({why})")
    return len(hits), "imports in topicdp/experiments/ of private names of topicdp.pipeline", hits


def report_composed(mods):
    hits = []
    for m in mods:
        for call in m.calls():
            if _name(call.func) in ("compose_report", "PrivacyReport"):
                hits.append(f"{m.where(call)}  {_name(call.func)}( in {m.function[call]}")
    return len(hits), "places the release report is composed (calls of compose_report and PrivacyReport)", hits


COUNTS = (planned_entries, forecasting, neighbour_factor, user_hash, top_words, matching, writes,
          pipeline_private, report_composed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE.parents[2],
                        help="a checkout (its topicdp/ is read; default: this one)")
    parser.add_argument("--summary", action="store_true", help="the counts only, without file:line")
    args = parser.parse_args(argv)
    root = args.root.resolve() / "topicdp"
    if not root.is_dir():
        parser.error(f"--root {args.root}: no topicdp/ there")
    mods = modules(root)
    for i, count in enumerate(COUNTS, 1):
        n, what, hits = count(mods)
        print(f"{i}. {n:3d}  {what}")
        if not args.summary:
            for h in hits:
                print(f"        {h}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
