"""Hypothesis strategies for hostile input and the parsers they are thrown at (tests and bench/fuzz.py)."""
