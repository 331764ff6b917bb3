"""Sizes in refusals are the file's real size (issue 25: "This file is 2.0 MiB, over the 2.0 MiB limit")."""

from __future__ import annotations

import pytest

from engine.st_format import ImportRefused, parse_preset


def test_a_file_one_byte_over_the_limit_says_its_size_in_bytes():
    limit = 2 * 1024 * 1024
    with pytest.raises(ImportRefused) as refused:
        parse_preset(b" " * (limit + 1), filename="big.json", max_bytes=limit)
    assert refused.value.message == (
        "This file is 2,097,153 bytes, over the 2,097,152-byte (2.0 MiB) limit for a preset."
    )


def test_a_file_well_over_the_limit_says_its_size_in_mib():
    limit = 2 * 1024 * 1024
    with pytest.raises(ImportRefused) as refused:
        parse_preset(b" " * (3 * limit), filename="big.json", max_bytes=limit)
    assert refused.value.message == "This file is 6.0 MiB, over the 2.0 MiB limit for a preset."
