"""The docs stand on their own: links resolve, section references name real sections, and
nothing in docs/ or syncagent/ points at the background files a reader of the repository lacks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINKED = [
    *sorted(DOCS.glob("*.md")),
    ROOT / "README.md",
    ROOT / "tests/README.md",
    ROOT / "bench/README.md",
    ROOT / "packaging/README.md",
    ROOT / "helm/syncagent/README.md",
]
CODE_DIRS = ("syncagent", "tests", "bench", "helm")
CODE_SUFFIXES = {".py", ".md", ".yaml", ".tpl", ".txt", ".sh"}

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
# A file name, then its section numbers: `docs/<file>.md §3`, `docs/<file>.md` §1, §2 or, inside
# docs/, `<file>.md §4.1`.
FILE_SECTION = re.compile(
    r"(?P<path>(?:docs/)?(?P<file>[a-z0-9-]+\.md))`?,? "
    r"(?P<nums>§\s?\d+(?:\.\d+)*(?:,\s*§\s?\d+(?:\.\d+)*)*)"
)
NUMBER = re.compile(r"§\s?(\d+(?:\.\d+)*)")
DOCS_FILE = re.compile(r"\bdocs/(?P<file>[a-z0-9-]+\.md)\b")
# A bare §N inside a doc names a section of that same doc.
BARE_SECTION = re.compile(r"(?<![\w.`])§\s?(?P<num>\d+(?:\.\d+)*)")
FORBIDDEN = re.compile(r"\.\./shared/(?:design\.md|spec|seeds)|\bspec/[a-z-]+\.md|shared/seeds")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: the rendered text lowercased, punctuation other than
    hyphens and underscores dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(path: Path) -> list[str]:
    found, fenced = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            found.append(match.group(2))
    return found


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in headings(path):
        base = anchor(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def sections(path: Path) -> set[str]:
    """The section numbers of a doc: headings written `N. Title`, `N.M Title` or `§N Title`."""
    numbers = set()
    for heading in headings(path):
        if match := re.match(r"§?\s?(\d+(?:\.\d+)*)\.?(?:\s|$)", heading):
            numbers.add(match.group(1))
    return numbers


def prose(path: Path) -> str:
    """The text of a markdown file without its fenced code blocks."""
    kept, fenced = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def broken_links(path: Path) -> list[str]:
    problems = []
    for target in LINK.findall(INLINE_CODE.sub("", prose(path))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        file_part, _, fragment = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            problems.append(f"{target}: no file {resolved}")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            problems.append(f"{target}: no heading with anchor #{fragment} in {resolved.name}")
    return problems


def code_files() -> list[Path]:
    files = []
    for top in CODE_DIRS:
        files += [
            p
            for p in (ROOT / top).rglob("*")
            if p.suffix in CODE_SUFFIXES and "third_party" not in p.parts and p.is_file()
        ]
    return sorted(files)


def section_problems(text: str, *, inside_docs: Path | None) -> list[str]:
    """Every `<file>.md §N` must name a doc of docs/ and a section it has. Outside docs/ only
    references spelled `docs/<file>.md` are ours; inside docs/ every file name is."""
    problems = []
    for match in FILE_SECTION.finditer(text):
        if inside_docs is None and not match.group("path").startswith("docs/"):
            continue
        target = DOCS / match.group("file")
        if not target.exists():
            problems.append(f"{match.group(0)}: no docs/{match.group('file')}")
        else:
            missing = set(NUMBER.findall(match.group("nums"))) - sections(target)
            problems += [
                f"{match.group(0)}: docs/{target.name} has no section {n}" for n in missing
            ]
    for match in DOCS_FILE.finditer(text):
        if not (DOCS / match.group("file")).exists():
            problems.append(f"{match.group(0)}: no such doc")
    if inside_docs is not None:
        own = sections(inside_docs)
        for match in BARE_SECTION.finditer(FILE_SECTION.sub("", text)):
            if match.group("num") not in own:
                problems.append(f"{match.group(0)}: {inside_docs.name} has no such section")
    return problems


@pytest.mark.parametrize("path", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_section_references_in_docs_exist() -> None:
    problems = {
        str(p.relative_to(ROOT)): found
        for p in LINKED
        if (found := section_problems(prose(p), inside_docs=p if p.parent == DOCS else None))
    }
    assert problems == {}


def test_section_references_in_code_exist() -> None:
    problems = {
        str(p.relative_to(ROOT)): found
        for p in code_files()
        if (found := section_problems(p.read_text(), inside_docs=None))
    }
    assert problems == {}


def test_docs_and_code_stand_without_the_background_files() -> None:
    files = sorted(DOCS.glob("*.md")) + [
        p for p in code_files() if p.parts[len(ROOT.parts)] == "syncagent"
    ]
    mentions = {
        str(p.relative_to(ROOT)): FORBIDDEN.findall(p.read_text())
        for p in files
        if FORBIDDEN.search(p.read_text())
    }
    assert mentions == {}


def test_every_doc_is_in_the_index() -> None:
    index = DOCS / "README.md"
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(index.read_text())}
    missing = sorted(
        p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p.name not in linked
    )
    assert missing == []


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("1. Layout", "1-layout"),
        (
            "`syncagent plan -o json`: output schema (stable)",
            "syncagent-plan--o-json-output-schema-stable",
        ),
        ("D1. Worker names carry the worker hash", "d1-worker-names-carry-the-worker-hash"),
        ("`-o json` / `-o yaml`: the document (stable)", "-o-json---o-yaml-the-document-stable"),
    ],
)
def test_anchor_follows_github(heading: str, expected: str) -> None:
    assert anchor(heading) == expected
