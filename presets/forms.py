"""The preset upload, read one way for the dashboard page and the bot API.

Both take the same options (name, activate, what to do on a name clash) and the same file, and both
refuse an oversized file with the same sentence before reading more than the limit. The API also
accepts the preset's JSON as the raw request body.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.http import HttpRequest

from core.errors import UserError
from core.uploads import declared_size, too_large, upload_body_bytes
from servers.imports import OnClash, on_clash_from

TRUE_WORDS = ("1", "true", "yes", "on")


def max_upload_body() -> int:
    """The largest request body a preset upload can need (the middleware answers 413 above it)."""
    return upload_body_bytes(settings.PRESET_MAX_BYTES)


def too_large_message(size: int | None = None) -> str:
    return too_large(size, limit=settings.PRESET_MAX_BYTES, what="preset")


class UploadRefused(UserError, ValueError):
    """The upload cannot be read; `message` is one sentence, `status` the HTTP status to answer,
    `options` the options read before the refusal (None when the body was never read)."""

    def __init__(self, message: str, status: int = 400, *, options: UploadOptions | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.options = options


@dataclass(frozen=True, slots=True)
class UploadOptions:
    name: str = ""
    activate: bool = True
    on_clash: OnClash = "ask"


@dataclass(frozen=True, slots=True)
class PresetUpload:
    raw: bytes
    filename: str
    options: UploadOptions


class PresetUploadForm(forms.Form):
    """The upload's options; `replace` / `keep_both` are the API's spelling of `on_clash`."""

    name = forms.CharField(required=False, max_length=200)
    activate = forms.CharField(required=False)
    on_clash = forms.CharField(required=False)
    replace = forms.CharField(required=False)
    keep_both = forms.CharField(required=False)

    def __init__(self, data, *, default_activate: bool) -> None:
        super().__init__(data)
        self.default_activate = default_activate

    def options(self) -> UploadOptions:
        """The options as given; raises UploadRefused when replace and keep_both are both asked for."""
        data = self.cleaned_data if self.is_valid() else {}
        replace, keep_both = _true(data.get("replace")), _true(data.get("keep_both"))
        if replace and keep_both:
            raise UploadRefused("Send either replace=true or keep_both=true, not both.")
        on_clash = on_clash_from(data.get("on_clash"))
        if replace or keep_both:
            on_clash = "replace" if replace else "keep_both"
        given = data.get("activate", "")
        return UploadOptions(
            name=(data.get("name") or "").strip(),
            activate=_true(given) if given or not self.default_activate else True,
            on_clash=on_clash,
        )


def upload_options(request: HttpRequest, *, default_activate: bool) -> UploadOptions:
    """The options from the query string, then the form fields (the form wins)."""
    data = {**request.GET.dict(), **(request.POST.dict() if request.method == "POST" else {})}
    return PresetUploadForm(data, default_activate=default_activate).options()


def read_preset_upload(
    request: HttpRequest, *, default_activate: bool, allow_raw_body: bool = False
) -> PresetUpload:
    """The uploaded file, read to at most the size limit, with its options; raises UploadRefused."""
    declared = declared_size(request)
    if declared is not None and declared > max_upload_body():
        raise UploadRefused(too_large_message(declared), 413)
    options = upload_options(request, default_activate=default_activate)
    if request.content_type == "multipart/form-data" or not allow_raw_body:
        upload = request.FILES.get("file")
        if upload is None:
            missing = (
                "Send the preset as a multipart field named 'file' or as a JSON body."
                if allow_raw_body
                else "Choose a SillyTavern preset file (.json) to upload."
            )
            raise UploadRefused(missing, options=options)
        if upload.size is not None and upload.size > settings.PRESET_MAX_BYTES:
            raise UploadRefused(too_large_message(upload.size), 413, options=options)
        return PresetUpload(upload.read(settings.PRESET_MAX_BYTES + 1), upload.name or "preset.json", options)
    raw = request.read(settings.PRESET_MAX_BYTES + 1)
    if len(raw) > settings.PRESET_MAX_BYTES:  # the body is the file: its declared length is its size
        raise UploadRefused(too_large_message(declared), 413, options=options)
    if not raw:
        raise UploadRefused(
            "The request body is empty: send the preset's JSON, or a multipart field named 'file'.",
            options=options,
        )
    return PresetUpload(raw, f"{options.name or 'preset'}.json", options)


def _true(value: object) -> bool:
    return str(value or "").strip().lower() in TRUE_WORDS
