"""What a browser submits when a form of a page is sent unchanged, read from the page's HTML the way
the HTML parser reads it: text inputs send their value, ticked boxes theirs ("on" without one), a
select its selected option (else its first), and a textarea its text without the one newline that
directly follows its opening tag (the parser drops it, which is why every template writes one), its
line ends sent as CRLF."""

from __future__ import annotations

from html.parser import HTMLParser


class _FormReader(HTMLParser):
    def __init__(self, action: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.action = action
        self.fields: list[tuple[str, str]] = []
        self._in_form = action is None  # a fragment of fields counts as one form
        self._textarea: str | None = None
        self._text: list[str] = []
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []
        self._option: tuple[str | None, bool] | None = None
        self._option_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "form":
            self._in_form = self.action is None or attr.get("action") == self.action
            return
        if not self._in_form:
            return
        name = attr.get("name")
        if tag == "input" and name and "disabled" not in attr:
            kind = (attr.get("type") or "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in attr:
                    self.fields.append((name, attr.get("value") or "on"))
            elif kind not in ("submit", "button", "image", "reset", "file"):
                self.fields.append((name, attr.get("value") or ""))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []
        elif tag == "select" and name:
            self._select, self._options = name, []
        elif tag == "option" and self._select is not None:
            self._option, self._option_text = (attr.get("value"), "selected" in attr), []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)
        elif self._option is not None:
            self._option_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = self.action is None
        elif tag == "textarea" and self._textarea is not None:
            # the parser reads CR and CRLF as LF; the form sends every line end as CRLF
            text = "".join(self._text).replace("\r\n", "\n").replace("\r", "\n")
            text = text[1:] if text.startswith("\n") else text
            self.fields.append((self._textarea, text.replace("\n", "\r\n")))
            self._textarea = None
        elif tag == "option" and self._option is not None:
            value, selected = self._option
            self._options.append((value if value is not None else "".join(self._option_text), selected))
            self._option = None
        elif tag == "select" and self._select is not None:
            chosen = [value for value, selected in self._options if selected] or [
                value for value, _ in self._options[:1]
            ]
            self.fields.extend((self._select, value) for value in chosen[-1:])
            self._select = None


def submitted(html: str, *, action: str | None = None) -> dict[str, list[str]]:
    """The fields the form posting to `action` (every field of the page when None) sends unchanged."""
    reader = _FormReader(action)
    reader.feed(html)
    reader.close()
    fields: dict[str, list[str]] = {}
    for name, value in reader.fields:
        fields.setdefault(name, []).append(value)
    return fields
