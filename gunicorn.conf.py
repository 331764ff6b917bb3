"""gunicorn settings for every way the project is served (make run, docker compose, the benchmarks).

gunicorn reads this file from the working directory. The application is loaded once in the master
and warmed there before the listening socket opens (assembly/warmup.py); workers are forked from
it, so even a worker's first request finds the views imported, the token tables loaded and the
active presets compiled.
"""

import gc

preload_app = True


def on_starting(server) -> None:  # type: ignore[no-untyped-def]
    from assembly.warmup import warm_process

    warm_process()
    # Everything the warm-up made (views, token tables, compiled presets) lives as long as the
    # process: moved out of the collector's reach, so collections triggered by a request's
    # allocations no longer walk it, and forked workers do not touch (copy) those pages.
    gc.freeze()
