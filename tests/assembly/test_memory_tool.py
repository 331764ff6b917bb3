"""The update_short_term_memory tool in the provider body when the bot's model has tools (docs/memory.md)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

HISTORY = [{"role": "user", "name": "Mira", "content": "Remember my ale order."}]


def assemble(client, token, provider, has_tools=True):
    body = {
        "history": HISTORY,
        "provider": provider,
        "stm_context": {"channel": "600", "user": "7001", "has_tools": has_tools},
    }
    response = client.post(
        reverse("assembly:api-assemble", args=[1001]),
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 200, response.content
    return response.json()["provider_payload"]


def test_the_openai_body_declares_the_memory_tool_as_a_function(client, api_token):
    (tool,) = assemble(client, api_token, "openai")["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "update_short_term_memory"
    assert tool["function"]["parameters"]["properties"]["summary"]["maxLength"] == 1500
    assert tool["function"]["parameters"]["required"] == ["summary"]
    assert "1500" in tool["function"]["description"]


def test_the_anthropic_body_declares_the_memory_tool_with_an_input_schema(client, api_token):
    (tool,) = assemble(client, api_token, "anthropic")["tools"]
    assert sorted(tool) == ["description", "input_schema", "name"]
    assert tool["name"] == "update_short_term_memory"
    assert tool["input_schema"]["properties"]["summary"]["maxLength"] == 1500


def test_the_gemini_body_declares_the_memory_tool_as_a_function_declaration(client, api_token):
    (group,) = assemble(client, api_token, "gemini")["tools"]
    (declaration,) = group["functionDeclarations"]
    assert declaration["name"] == "update_short_term_memory"
    assert declaration["parameters"]["properties"]["summary"]["maxLength"] == 1500


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_model_without_tools_gets_no_tool_in_its_body(client, api_token, provider):
    assert "tools" not in assemble(client, api_token, provider, has_tools=False)


def test_the_preview_shows_the_tool_in_the_request_body(client, bob):
    document = {"history": HISTORY, "stm_context": {"channel": 600, "user": 7001, "has_tools": True}}
    client.force_login(bob)
    response = client.post(
        reverse("assembly:preview-render", args=[1001]),
        {"document": json.dumps(document), "provider": "openai"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert "The openai request body" in html
    assert "update_short_term_memory" in html.split("The openai request body", 1)[1]
