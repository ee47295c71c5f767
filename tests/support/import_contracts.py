"""An import-linter contract type the built-in ones lack: an allowlist of direct imports.

``forbidden`` can only name what a package may not import, so a module nobody thought of
(``datetime``, ``random``) passes it. ``allowlist`` names what the package's modules may import
directly, and every other import breaks it (``render-pure`` in pyproject.toml). What an allowed
module imports in turn is its own contracts' business.
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


class AllowlistContract(Contract):
    """``source_modules`` (packages) import nothing outside themselves but ``allowed_modules``
    (each a package: its submodules are allowed too)."""

    type_name = "allowlist"

    source_modules = fields.ListField(subfield=fields.ModuleField())
    allowed_modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        sources = [m.name for m in self.source_modules]  # type: ignore[attr-defined]
        allowed = [m.name for m in self.allowed_modules]  # type: ignore[attr-defined]
        found = illegal_imports(graph, sources=sources, allowed=allowed)
        return ContractCheck(kept=not found, metadata={"illegal": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer, imported, lines in check.metadata["illegal"]:
            where = ", ".join(f"l.{n}" for n in lines)
            output.print_error(f"{importer} -> {imported} ({where}): not in allowed_modules")
            output.new_line()


def illegal_imports(
    graph: ImportGraph, *, sources: list[str], allowed: list[str]
) -> list[tuple[str, str, tuple[int, ...]]]:
    """Each direct import of a source module outside the sources and the allowlist."""
    inside = [*sources, *allowed]
    found = []
    for source in sources:
        for importer in sorted({source, *graph.find_descendants(source)}):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if any(_within(imported, ok) for ok in inside):
                    continue
                details = graph.get_import_details(importer=importer, imported=imported)
                lines = tuple(d["line_number"] for d in details)
                found.append((importer, imported, lines))
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")
