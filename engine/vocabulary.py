"""The words the engine and its callers share, declared once: message roles, SillyTavern's
generation types, the providers a prompt is shaped for, and the depth-injection styles."""

ROLES = ("system", "user", "assistant")  # SillyTavern's role numbers 0, 1, 2, in that order
GENERATION_TYPES = ("normal", "continue", "impersonate", "swipe", "regenerate", "quiet")
PROVIDERS = ("openai", "anthropic", "gemini")
STYLES = ("merge", "standalone")
