"""Line ends a browser cannot carry back. A textarea's text reaches the page with every CR and CRLF
read as LF, and returns with every line end as CRLF, so a stored text with CRs (common in imported
files) cannot survive a form untouched. A text sent back whose only difference from the stored one is
its line ends is the stored text, byte for byte; a changed text is stored as it came."""

from __future__ import annotations


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def as_typed(posted: str, *, stored: str) -> str:
    """What to store for a text posted over `stored`: `stored` itself when only the line ends differ."""
    return stored if _lf(posted) == _lf(stored) else posted
