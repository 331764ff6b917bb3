"""docs/import.md#input-checks: size, encoding, JSON validity, top level, NaN/Infinity, NUL, secrets, the
name."""

from __future__ import annotations

import json

import pytest

from engine.st_format import ImportRefused, preset_name_from_filename

from .conftest import is_one_sentence, pm_preset, prompt, to_bytes, warned

SMALL = pm_preset([prompt("main", "Be kind."), prompt("chatHistory", marker=True)])


def test_a_file_over_the_limit_is_refused_with_413_before_decoding(refusal) -> None:
    # Invalid UTF-8 and not JSON: only a size check that runs first can produce the size message.
    raw = b"\xff" * 3000
    refused = refusal(raw, max_bytes=2048)
    assert refused.status == 413
    assert "limit" in refused.message and is_one_sentence(refused.message)


def test_a_file_exactly_at_the_limit_is_accepted(parse) -> None:
    raw = to_bytes(SMALL)
    assert parse(raw, max_bytes=len(raw)).nodes


def test_the_default_limit_is_two_mebibytes(refusal) -> None:
    raw = b'{"prompts": [], "pad": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    assert refusal(raw).status == 413


def test_a_bom_is_accepted_and_not_stored(parse) -> None:
    parsed = parse(b"\xef\xbb\xbf" + to_bytes(SMALL))
    assert parsed.nodes[0].content == "Be kind."
    assert not parsed.stored_text.startswith("\ufeff")


def test_invalid_utf8_is_replaced_and_the_warning_counts_the_sequences(parse) -> None:
    raw = to_bytes(SMALL).replace(b"Be kind.", b"Be \xff kind\xfe.")
    parsed = parse(raw)
    assert parsed.nodes[0].content == "Be \ufffd kind\ufffd."
    assert warned(parsed, "2 invalid byte sequences were replaced")


def test_raw_control_characters_inside_strings_are_accepted_with_a_warning(parse) -> None:
    raw = to_bytes(SMALL).replace(b"Be kind.", b"Be\tkind.\nReally.")
    parsed = parse(raw)
    assert parsed.nodes[0].content == "Be\tkind.\nReally."
    assert warned(parsed, "Raw control characters")


def test_a_clean_file_has_no_control_character_warning(parse) -> None:
    assert not warned(parse(SMALL), "control characters")


def test_unparseable_json_is_refused_with_line_and_column(refusal) -> None:
    refused = refusal(b'{\n  "prompts": [\n    {"identifier": "main",}\n  ]\n}')
    assert "line 3, column 27" in refused.message
    assert refused.status == 400 and is_one_sentence(refused.message)


def test_an_empty_file_is_refused(refusal) -> None:
    assert refusal(b"  \n").message == "This file is empty."


def test_a_top_level_list_is_refused(refusal) -> None:
    refused = refusal(b"[1, 2]")
    assert "top level is a list" in refused.message and is_one_sentence(refused.message)


def test_nan_is_refused_with_one_sentence(refusal) -> None:
    refused = refusal(b'{"prompts": [{"identifier": "main", "injection_depth": NaN}]}')
    assert "NaN" in refused.message and is_one_sentence(refused.message)


def test_infinity_is_refused_with_one_sentence(refusal) -> None:
    refused = refusal(b'{"temperature": -Infinity, "prompts": [{"identifier": "main"}]}')
    assert "-Infinity" in refused.message and is_one_sentence(refused.message)


def test_nul_characters_are_removed_from_content_and_stored_text_with_a_warning(parse) -> None:
    data = pm_preset([prompt("main", "Be\u0000 kind.")])
    parsed = parse(data)
    assert parsed.nodes[0].content == "Be kind."
    assert "\x00" not in parsed.stored_text and "\\u0000" not in parsed.stored_text
    assert warned(parsed, "1 NUL character was removed")


def test_secrets_are_blanked_in_the_stored_text_and_named_in_the_summary(parse) -> None:
    data = {
        **SMALL,
        "reverse_proxy": "https://proxy.example/v1",
        "proxy_password": "hunter2",
        "custom_url": "",
    }
    parsed = parse(data)
    stored = json.loads(parsed.stored_text)
    assert stored["reverse_proxy"] == "" and stored["proxy_password"] == ""
    assert "hunter2" not in parsed.stored_text
    assert parsed.summary.secrets_blanked == ("reverse_proxy", "proxy_password")


def test_blanking_secrets_keeps_the_key_order(parse) -> None:
    data = {"temperature": 1, "custom_include_headers": "Authorization: x", **SMALL, "zzz": 1}
    assert list(json.loads(parse(data).stored_text)) == list(data)


def test_without_anything_to_clean_the_stored_text_is_the_upload_as_written(parse) -> None:
    raw = b'{ "prompts" : [ {"identifier":"main","content":"Hi"} ] ,"b":1 }'
    assert parse(raw).stored_text == raw.decode()


def test_the_name_is_the_file_name_without_json_in_any_case() -> None:
    assert preset_name_from_filename("  Lucid Loom v3.0.JSON ") == "Lucid Loom v3.0"


def test_the_name_is_cut_to_100_characters() -> None:
    assert preset_name_from_filename("x" * 150 + ".json") == "x" * 100


def test_the_name_keeps_non_json_extensions_and_drops_folders() -> None:
    assert preset_name_from_filename("C:\\presets\\Default.settings") == "Default.settings"


def test_the_parsed_preset_carries_the_name_from_the_file_name(parse) -> None:
    assert parse(SMALL, filename="【小图书馆】2.1重制版.json").name == "【小图书馆】2.1重制版"


def test_a_file_name_that_is_only_the_extension_gets_a_plain_name() -> None:
    assert preset_name_from_filename(" .JSON") == "Imported preset"


@pytest.mark.parametrize("depth", [980, 5000, 200_000])
def test_absurdly_nested_json_is_refused_or_imported_never_crashes(parse, depth: int) -> None:
    raw = (
        b'{"prompts": [{"identifier": "main", "content": "\\u0000"}], "x": '
        + b"[" * depth
        + b"]" * depth
        + b"}"
    )
    try:
        parsed = parse(raw)
    except ImportRefused as refused:
        assert refused.message == "This file's JSON is nested too deeply to be a SillyTavern preset."
    else:
        assert parsed.nodes[0].identifier == "main"


def test_blanking_a_secret_keeps_the_rest_of_the_file_as_written(parse) -> None:
    raw = b'{\n  "prompts": [{"identifier": "main", "content": "say \\"custom_url\\": \\"x\\""}],\n  "custom_url" :  "http://10.0.0.1/v1"\n}'
    parsed = parse(raw)
    assert parsed.stored_text == raw.decode().replace('"http://10.0.0.1/v1"', '""').replace(
        '"custom_url" :  ""', '"custom_url": ""'
    )
    assert parsed.nodes[0].content == 'say "custom_url": "x"'


def test_a_secret_that_is_not_a_string_is_blanked_by_rewriting_the_file(parse) -> None:
    data = {**SMALL, "custom_include_headers": {"Authorization": "Bearer abc"}}
    parsed = parse(data)
    assert json.loads(parsed.stored_text)["custom_include_headers"] == {}
    assert "Bearer abc" not in parsed.stored_text
