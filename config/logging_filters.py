"""Logging filters named in `settings.LOGGING`."""

from __future__ import annotations

import logging


class ForbiddenOnOneLine(logging.Filter):
    """A 403 is an expected answer (a role or a CSRF check said no), not a crash: log its one line,
    never the traceback Django attaches (issue 25)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
