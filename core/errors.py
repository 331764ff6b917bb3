"""The root of the apps' refusals: every error a service, selector, form or command raises for the
user to read carries `message`, one sentence shown as is, and a view may catch `UserError` to mean
any of them. The engine's refusals have their own root, `engine.errors.EngineError`."""


class UserError(Exception):
    """A request that cannot be done as asked; `message` is one sentence for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
