"""Machinery every app shares and no domain owns: the cache codec and the resilient cache, fairness
across servers, the login throttle, upload sizes, names on import, and the JSON management-command base.

A plain package, not a Django app: no models. It sits below `servers` (docs/architecture.md, "Layers")
and imports no app.
"""
