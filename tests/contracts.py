"""An import-linter contract type the package's [tool.importlinter] uses: `module_level_forbidden`.

import-linter's own `forbidden` contract cannot tell an import at module level (run when the
importer is imported) from one inside a function (run when the function is called): its graph
holds both. This contract takes the graph's direct imports from each source module to each
forbidden (external) package, with their line numbers (graph.get_import_details), and parses
the importer's source with `ast` to see where each import statement is: at module level (the
module body, or a class body, `if`, `try` or `with` block in it) it breaks the contract; inside
a function (def, async def, lambda) or under `if TYPE_CHECKING:` it does not. So a module may use
pyarrow, torch or PIL in what it does without importing them when it is itself imported.

Options: `source_modules` (fnmatch patterns of module names: `pkg._*` is every module of pkg's
private folders and their descendants), `forbidden_modules`
(top-level names of external packages; [tool.importlinter] needs `include_external_packages = true`).
lint-imports finds this module as `tests.contracts` with the repository root on sys.path
(tasks.py lint puts it there).
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class ModuleLevelForbiddenContract(Contract):
    """Source modules import none of the forbidden packages at module level (in functions they may)."""

    type_name = "module_level_forbidden"

    source_modules = fields.ListField(subfield=fields.StringField())
    forbidden_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        if not self.session_options.get("include_external_packages"):
            raise ValueError(f"{self.type_name} contracts need include_external_packages = true")
        forbidden: list[str] = list(self.forbidden_modules)  # type: ignore[call-overload]
        broken: list[dict[str, Any]] = []
        for importer in sorted(_sources(graph, self.source_modules)):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if imported.split(".")[0] not in forbidden:
                    continue
                details = graph.get_import_details(importer=importer, imported=imported)
                lines = [d["line_number"] for d in details if at_module_level(module_file(importer), d["line_number"])]
                output.verbose_print(verbose, f"{importer} -> {imported}: module level at {lines or 'no line'}")
                if lines:
                    broken.append({"importer": importer, "imported": imported, "line_numbers": lines})
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for found in check.metadata["broken"]:
            lines = ", ".join(f"l.{n}" for n in found["line_numbers"])
            output.print_error(
                f"{found['importer']} imports {found['imported']} at module level ({lines}): "
                "import it inside the function that uses it, or under `if TYPE_CHECKING:`",
                bold=False,
            )
        output.new_line()


def _sources(graph: ImportGraph, patterns: Any) -> Iterator[str]:
    """The modules of the graph's root package that a pattern matches, with their descendants
    (fnmatch patterns: `pkg._*` is every module whose path in pkg starts with an underscore)."""
    for module in graph.modules:
        if not graph.is_module_squashed(module) and any(fnmatch.fnmatchcase(module, p) for p in patterns):
            yield module


def module_file(module: str) -> Path:
    """The source file of a module of the root package, found without importing anything."""
    root, *parts = module.split(".")
    package = _package_dir(root)
    folder = package.joinpath(*parts)
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


@functools.cache
def _package_dir(root: str) -> Path:
    spec = importlib.util.find_spec(root)  # a top-level name: found, not imported
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"cannot find the source of package {root!r}")
    return Path(next(iter(spec.submodule_search_locations)))


def at_module_level(path: Path, line: int) -> bool:
    """Whether an import statement that spans `line` of `path` runs when the module is imported."""
    return any(node.lineno <= line <= (node.end_lineno or node.lineno) for node in module_level_imports(path))


@functools.cache
def module_level_imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module that run when it is imported: not in a function, not
    under `if TYPE_CHECKING:` (an `else:` of that runs, so it counts)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [ast.parse(path.read_text(), str(path))]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, _FUNCTIONS):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING` (any module's attribute of that name)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
