"""The root of the engine's refusals: every error the engine raises for a caller to show carries
`message`, one sentence for the user, and callers may catch `EngineError` to mean any of them."""


class EngineError(Exception):
    """Something the engine refuses; `message` is one sentence to show the user as is."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
