"""The differential harness against SillyTavern 1.18 (docs/fidelity.md#running-it).

`python -m fidelity run` installs SillyTavern from the npm registry into a cache directory outside the
repository, runs it on 127.0.0.1 with a recording OpenAI-compatible endpoint, drives one generation
per case in Debian's Chromium, captures the request's messages, runs our own command-line contracts on
the same inputs and prints, per case, identical or the first difference, with the deliberate
differences of docs/fidelity.md#the-deliberate-differences folded. `python -m fidelity check` compares our
output with the captured expectations kept in `fidelity/expected/` (no SillyTavern needed); the tests do the
same.

Modules: `cases` (what a case is), `sillytavern` (install, configure, start, stop), `endpoint` (the
recording endpoint), `drive` (one generation in SillyTavern), `ours` (our side, through the CLI
contracts), `compare` (folds and the first difference), `__main__` (the commands).
"""
