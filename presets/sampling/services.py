"""Writes for a server's sampling choice: one transaction, an audit entry, the choice's cache stamp
bumped inside it (servers.writes.server_write)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.actors import Actor, user_of
from core.errors import UserError
from engine.sampling import (
    MODES,
    PROVIDERS,
    SETTING_NAMES,
    SamplingChoice,
    SamplingValueError,
    parse_server_value,
)
from servers.audit_actions import AuditAction
from servers.models import AuditEvent, Server
from servers.writes import server_write

from ..models import ServerSampling
from . import cache as sampling_cache
from . import selectors as sampling_selectors


class SamplingError(UserError):
    """A choice that cannot be stored as asked; `message` is one sentence for the user."""


def sampling_set(
    *,
    server: Server,
    mode: str | None = None,
    provider: str | None = None,
    set_values: Mapping[str, str] | None = None,
    unset: Sequence[str] = (),
    replace_values: bool = False,
    by: Actor,
) -> SamplingChoice:
    """Change the server's choice: the mode, the provider, and its own values (`set_values` as typed,
    checked against SillyTavern's ranges; `unset` removes values; `replace_values` starts from none).
    Raises SamplingError with one sentence; nothing is stored then."""
    if mode is not None and mode not in MODES:
        raise SamplingError(f"The sampling mode must be one of {', '.join(MODES)}.")
    if provider is not None and provider not in PROVIDERS:
        raise SamplingError(f"The provider must be one of {', '.join(PROVIDERS)}.")
    for name in unset:
        if name not in SETTING_NAMES:
            raise SamplingError(f"{name!r} is not a sampler setting: use one of {', '.join(SETTING_NAMES)}.")
    try:
        typed = {name: parse_server_value(name, text) for name, text in (set_values or {}).items()}
    except SamplingValueError as exc:
        raise SamplingError(exc.message) from None
    if mode is None and provider is None and not typed and not unset and not replace_values:
        return sampling_selectors.sampling_choice(server.pk)  # nothing asked: nothing written
    with server_write(server_id=server.pk, stamps=(sampling_cache.STAMP,)):
        row, _ = ServerSampling.objects.select_for_update().get_or_create(server=server)
        values = {} if replace_values else dict(row.values or {})
        values.update(typed)
        for name in unset:
            values.pop(name, None)
        row.mode = mode or row.mode
        row.provider = provider or row.provider
        row.values = {name: values[name] for name in SETTING_NAMES if name in values}
        row.updated_by = user_of(by)
        row.save()
        AuditEvent.record(
            server=server,
            actor=by,
            action=AuditAction.SAMPLING_SET,
            detail={"mode": row.mode, "provider": row.provider, "values": row.values},
        )
    return sampling_selectors.sampling_choice(server.pk)
