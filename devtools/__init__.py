"""What the tests and the benchmarks both use, so that neither imports the other: the web server and
a Celery worker run as processes, Debian's Chromium, preset uploads made by hand or generated, and
the fuzzing strategies with their targets. Never imported by the product."""
