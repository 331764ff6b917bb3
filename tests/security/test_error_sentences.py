"""Sizes in refusals are the file's real size (issue 25: "This file is 2.0 MiB, over the 2.0 MiB limit")."""

from __future__ import annotations

import pytest
from django.urls import reverse

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


@pytest.mark.django_db
def test_the_preset_api_names_the_real_size_of_a_body_over_the_limit(client, lantern, api_token):
    body = b" " * int(2.3 * 1024 * 1024)
    response = client.post(
        reverse("presets:api-list", args=[lantern.pk]),
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert response.status_code == 413
    assert response.json()["error"] == "This file is 2.3 MiB, over the 2.0 MiB limit for a preset."


@pytest.mark.django_db
def test_the_lorebook_api_names_the_real_size_of_a_body_over_the_limit(client, lantern, api_token, settings):
    settings.LOREBOOK_MAX_BYTES = 1024 * 1024
    body = b" " * int(1.04 * 1024 * 1024)  # within the multipart slack, so it is read
    response = client.post(
        reverse("lorebooks:api-list", args=[lantern.pk]),
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert response.status_code == 413
    assert (
        response.json()["error"]
        == "This file is 1,090,519 bytes, over the 1,048,576-byte (1.0 MiB) limit for a lorebook."
    )
