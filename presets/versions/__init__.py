"""Preset versions: recorded on every write (services), read back, diffed and exported (selectors),
shown as diffs (display), and the pages that list, compare, download and roll back (views)."""
