"""The roots of the refusals: every error a service, selector, form or command raises for the
user to read carries `message`, one sentence shown as is. The apps' refusals descend from
`UserError`, the engine's from `engine.errors.EngineError`; `REFUSALS` names both, and each surface
shows them in one place (docs/architecture.md, "Errors"): a page through `core.refusals.show_refusal`,
the API through `servers.api_auth.api_view`, a command through `core.json_command.refuse`."""

from engine import EngineError


class UserError(Exception):
    """A request that cannot be done as asked; `message` is one sentence for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NameClash(UserError):
    """An import (or rename) would reuse a name already taken on the server. Each kind subclasses
    it with its `kind`, the word the sentence names it by. Each surface says how to import anyway
    (the API answers 409; a page asks whether to replace or keep both)."""

    kind = "file"
    status = 409
    # How to import anyway, said after the sentence: by a command, and by the API.
    command_hint = "Use --replace or --keep-both."
    api_hint = "Send replace=true to replace it or keep_both=true to keep both."

    def __init__(self, name: str) -> None:
        super().__init__(f"A {self.kind} named “{name}” already exists on this server.")
        self.name = name


# What a view or command catches to show a refusal: either root, never a per-feature class.
REFUSALS = (UserError, EngineError)
