"""What a strict Content-Security-Policy would block in a page: inline scripts, styles and handlers."""

from __future__ import annotations

from html.parser import HTMLParser


class InlineCodeFinder(HTMLParser):
    """Collects what a strict CSP would block: inline script bodies, style attributes, on* handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, _ in attrs:
            if name == "style" or name.startswith("on"):
                self.found.append(f"<{tag} {name}=…>")
        if tag == "style":
            self.found.append("<style> element")
        if tag == "script":
            self._in_script = True
            srcs = [value for name, value in attrs if name == "src"]
            if not srcs:
                self.found.append("<script> without src")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.found.append(f"inline script body {data.strip()[:40]!r}")


def inline_code(html: str) -> list[str]:
    finder = InlineCodeFinder()
    finder.feed(html)
    return finder.found
