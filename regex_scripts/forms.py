"""The form for adding or editing one of the server's own scripts (SillyTavern's fields,
docs/regex.md#scripts-and-their-engine)."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.regex import RegexScript, ScriptError, parse_script

from .selectors import PLACEMENT_LABELS

MAX_FIELD = 20_000


class ScriptForm(forms.Form):
    scriptName = forms.CharField(label="Name", max_length=200, required=False)
    findRegex = forms.CharField(
        label="Find (/pattern/flags, or a bare pattern)",
        max_length=MAX_FIELD,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    replaceString = forms.CharField(
        label="Replace with",
        max_length=MAX_FIELD,
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    trimStrings = forms.CharField(
        label="Trim out (one per line)",
        max_length=MAX_FIELD,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    placement = forms.TypedMultipleChoiceField(
        choices=sorted(PLACEMENT_LABELS.items()), coerce=int, widget=forms.CheckboxSelectMultiple
    )
    markdownOnly = forms.BooleanField(label="Display only (markdownOnly)", required=False)
    promptOnly = forms.BooleanField(label="Prompt only (promptOnly)", required=False)
    substituteRegex = forms.TypedChoiceField(
        label="Macros in the pattern",
        choices=[(0, "none"), (1, "substituted raw"), (2, "substituted, escaped")],
        coerce=int,
        initial=0,
    )
    minDepth = forms.IntegerField(label="Min depth", required=False, min_value=0)
    maxDepth = forms.IntegerField(label="Max depth", required=False, min_value=0)

    def to_script(self, *, script_id: str = "") -> RegexScript:
        """The cleaned fields as a script (call after `is_valid()`)."""
        data: dict[str, Any] = dict(self.cleaned_data)
        data["trimStrings"] = [line for line in data["trimStrings"].splitlines() if line]
        data["id"] = script_id
        try:
            return parse_script(data)
        except ScriptError as exc:  # pragma: no cover - the form's fields already make a valid object
            raise forms.ValidationError(exc.message) from None

    @classmethod
    def initial_for(cls, script: RegexScript) -> dict[str, Any]:
        data = script.to_json()
        data["trimStrings"] = "\n".join(script.trim_strings)
        return data


class UploadForm(forms.Form):
    file = forms.FileField(label="SillyTavern regex export (.json)")


class TesterForm(forms.Form):
    text = forms.CharField(
        label="Model reply", strip=False, max_length=100_000, widget=forms.Textarea(attrs={"rows": 8})
    )
    kind = forms.ChoiceField(
        choices=[("reply", "a model reply"), ("user_message", "a user message")], initial="reply"
    )
    preset = forms.ChoiceField(required=False, label="Preset", choices=[("", "the active preset")])
    impersonate = forms.BooleanField(required=False, label="Impersonation (the reply speaks as the user)")
    seed = forms.IntegerField(required=False, min_value=0, label="Seed")

    def __init__(self, *args: Any, preset_names: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        preset = self.fields["preset"]
        assert isinstance(preset, forms.ChoiceField)
        preset.choices = [("", "the active preset"), *((name, name) for name in preset_names)]
