"""The design the repository carries: every rule a file cites is on a page in docs/, in our words.

A clone has no copy of the specification the project started from, so nothing may cite it by
section; a citation names a docs/ page and, when it helps, the anchor of one of its headings
(docs/architecture.md, "How code cites the design").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    "var",
    "vendor",
    "staticfiles",
    "test-artifacts",
}
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".html",
    ".txt",
    ".toml",
    ".json",
    ".yml",
    ".yaml",
    ".cfg",
    ".js",
    ".css",
    ".sh",
}
TEXT_NAMES = {"Makefile", "Dockerfile", "run"}
# Written in two pieces so that this file does not cite what it forbids.
OLD_CITATION = re.compile("SPEC" + r"[\s#]*§|SPEC\.md")
# A bare section number in code (a section sign, then digits with a dot). The harness's fold notes keep
# theirs, because the captured expectations in fidelity/expected/ hold them word for word.
BARE_SECTION = re.compile(r"§\d+\.\d+")
HARNESS_NOTE = re.compile(r"\"§11\.1 item \d+: ")
CODE_SUFFIXES = {".py", ".html", ".js"}
PAGE_CITATION = re.compile(r"docs/([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?")
OWN_ANCHOR = re.compile(r"\]\(#([A-Za-z0-9_-]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# A file of ours named in backticks: `engine/assemble/pipeline.py`, `detail.html#thread`, `core/x.py:12`.
CITED_FILE = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|html|md|js|css|yml|toml|sh))(?:[:#][A-Za-z0-9_-]+)?`")
# Files of SillyTavern's (or of a browser's) that the docs name when they say where a rule comes from.
FOREIGN_SUFFIXES = {".js"}


def _repository_files() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if any(part in SKIPPED_DIRS or part.endswith(".egg-info") for part in relative.parts):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES):
            found.append(path)
    return found


FILES = _repository_files()


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, spaces to hyphens, only letters, digits, - and _."""
    text = heading.strip().lower().replace(" ", "-")
    return "".join(ch for ch in text if ch.isalnum() or ch in "-_")


def anchors_of(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in _lines(page):
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = HEADING.match(line)
        if heading and not fenced:
            base = anchor(heading.group(1))
            name, n = base, 0
            while name in found:  # a repeated heading gets -1, -2, … as on GitHub
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def _where(path: Path, number: int) -> str:
    return f"{path.relative_to(ROOT)}:{number}"


def test_the_walk_sees_the_code_the_tests_and_the_docs():
    seen = {path.relative_to(ROOT).as_posix() for path in FILES}
    assert {"engine/assemble/pipeline.py", "tests/test_docs.py", "docs/architecture.md", "README.md"} <= seen


def test_no_file_cites_the_specification_by_section():
    found = []
    for path in FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in OLD_CITATION.finditer(text):  # a citation may break across two lines
            number = text.count("\n", 0, match.start()) + 1
            found.append(f"{_where(path, number)}: {match.group(0)!r}")
    assert found == [], "cite a docs/ page instead:\n" + "\n".join(found)


def test_no_code_cites_a_bare_section_number_except_the_harness_notes_the_captures_hold():
    found = [
        f"{_where(path, number)}: {line.strip()}"
        for path in FILES
        if path.suffix in CODE_SUFFIXES
        for number, line in enumerate(_lines(path), 1)
        if BARE_SECTION.search(HARNESS_NOTE.sub("", line))
    ]
    assert found == [], "cite a docs/ page instead:\n" + "\n".join(found)


def test_every_docs_page_and_heading_a_file_cites_exists():
    pages = {page.name: anchors_of(page) for page in DOCS.glob("*.md")}
    missing = []
    for path in FILES:
        for number, line in enumerate(_lines(path), 1):
            for name, wanted in PAGE_CITATION.findall(line):
                if name not in pages:
                    missing.append(f"{_where(path, number)}: no page docs/{name}")
                elif wanted and wanted not in pages[name]:
                    missing.append(f"{_where(path, number)}: docs/{name} has no heading #{wanted}")
    assert missing == [], "\n".join(missing)


def _cited_file_exists(cited: str, names: set[str], root: Path = ROOT) -> bool:
    if "/" not in cited:
        return cited in names
    roots = [root, root / "templates", *root.glob("*/templates")]
    return any((base / cited).exists() for base in roots)


def missing_cited_files(root: Path, pages: list[Path], names: set[str]) -> list[str]:
    """Every file a page names in backticks (`presets/views.py`, `templates/x.html#part`) that is not
    in the repository at `root` (a bare name: anywhere in `names`)."""
    return [
        f"{page.relative_to(root)}:{number}: {cited}"
        for page in pages
        for number, line in enumerate(_lines(page), 1)
        for cited in CITED_FILE.findall(line)
        if Path(cited).suffix not in FOREIGN_SUFFIXES and not _cited_file_exists(cited, names, root)
    ]


def test_every_file_the_readme_and_docs_name_exists():
    names = {path.name for path in FILES} | {path.name for path in ROOT.glob("*/templates/**/*")}
    missing = missing_cited_files(ROOT, [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], names)
    assert missing == [], "name a path from the repository's root that exists:\n" + "\n".join(missing)


def test_the_cited_file_check_flags_what_alice_plants(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "templates" / "shelf").mkdir(parents=True)
    (tmp_path / "templates" / "shelf" / "list.html").write_text("{% partialdef rows %}{% endpartialdef %}")
    (tmp_path / "shelf").mkdir()
    (tmp_path / "shelf" / "views.py").write_text("")
    page = tmp_path / "guide" / "shelf.md"
    page.write_text(
        "The list (`shelf/views.py`) swaps `templates/shelf/list.html#rows`, or `shelf/list.html`.\n"
        "The detail page is `templates/shelf/detail.html#thread`; its view `shelf/views_detail.py`.\n"
        "SillyTavern's `public/script.js` is theirs.\n",
        encoding="utf-8",
    )

    assert missing_cited_files(tmp_path, [page], {"views.py", "list.html"}) == [
        "guide/shelf.md:2: templates/shelf/detail.html",
        "guide/shelf.md:2: shelf/views_detail.py",
    ]


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda page: page.name)
def test_a_docs_page_links_only_its_own_headings_that_exist(page):
    anchors = anchors_of(page)
    broken = [
        f"{_where(page, number)}: #{wanted}"
        for number, line in enumerate(_lines(page), 1)
        for wanted in OWN_ANCHOR.findall(line)
        if wanted not in anchors
    ]
    assert broken == []


def test_the_anchor_rule_is_githubs():
    assert anchor("Order of work (engine.assemble)") == "order-of-work-engineassemble"
    assert anchor("What SillyTavern 1.18 corrected") == "what-sillytavern-118-corrected"
    assert anchor("Macros 2.0") == "macros-20"
