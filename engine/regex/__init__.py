"""JavaScript regular expressions and SillyTavern regex scripts (docs/regex.md). Pure: no Django.

Patterns run in an embedded QuickJS (the `quickjs-ng` wheel), one context per thread; a pattern is
compiled once per thread and kept. Every run is bounded (`RUN_LIMIT_SECONDS`, 50 ms of CPU).

Core API (also used by World Info for `/regex/flags` keys):
- `parse_find_regex(s) -> (pattern, flags)`: `/pattern/flags` with distinct flags from `gimsu`;
  any other string (or another flag letter) is the pattern itself with no flags.
- `compile_js_regex(pattern, flags) -> JsRegex`, raising `RegexCompileError` (`.message`, one sentence).
- `JsRegex.search(text) -> bool`; `JsRegex.spans(text) -> [(start, end)]` (Python indices; every
  match with `g`, the first without); `JsRegex.replace(text, replacement) -> str`. Each raises
  `RegexTimeout` (a `RegexError`) when the run passes the bound.
- `compile_replacement(template, trims) -> Replacement`: `{{match}}`, `$n`, `$<name>` insert groups
  (missing → ""), every other `$` form is literal, trim strings are removed from inserted values.
- `replace_many(texts, runs) -> BatchResult`: ordered `Run(regex, replacement, targets)` over a list
  of texts in one trip into the engine; a run stopped by the bound is skipped and reported.

Scripts (docs/regex.md#scripts-and-their-engine):
- `parse_scripts(data) -> [RegexScript]` (a SillyTavern export: one object or a list; `ScriptError`),
  `parse_script(obj)`; `RegexScript.to_json()` gives the export shape back.
- `read_export(raw_bytes) -> [RegexScript]` (an uploaded export, bounded); `scripts_of_preset(data)
  -> PresetScripts` (a preset file's `extensions.regex_scripts` and reasoning prefix/suffix);
  `script_keys(scripts)` (id, or `#position`) and `switched(compiled, switches)` (a server's on/off
  choices over the file's `disabled`).
- `compile_scripts(scripts) -> (CompiledScript, ...)`: compiled once (store/cache time), never raises;
  `CompiledScript.inactive` is the reason a script never runs (e.g. a pattern JavaScript rejects).

Where they run (docs/regex.md#where-they-run), each taking compiled scripts in running order and a
`RegexRequest` (seed, names, macro env, variables):
- `apply_to_history(scripts, [(role, text)], request) -> PromptResult` (promptOnly, by placement and
  depth; `changed_by[index]` lists the scripts that changed message `index`; `failures`);
- `apply_to_entries(scripts, [(text, depth or None)], request) -> PromptResult` (World Info, placement 5);
- `clean_reply(scripts, reply, request, reasoning=, impersonate=, reasoning_prefix=, reasoning_suffix=)`
  and `clean_user_message(scripts, text, request)` -> `Cleaned(stored, display, reasoning, applied, errors)`;
- `transform_source(script)` is the `{"kind": "regex", "script", "id"}` a changed part records.
"""

from .apply import (
    DEFAULT_REASONING_PREFIX,
    DEFAULT_REASONING_SUFFIX,
    Applied,
    Cleaned,
    CleanedJson,
    PromptResult,
    RegexRequest,
    ScriptFailure,
    apply_to_entries,
    apply_to_history,
    clean_reply,
    clean_user_message,
    split_reasoning,
    transform_source,
)
from .budget import RegexBudget, default_budget_ms, set_default_budget_ms
from .find import parse_find_regex
from .js import (
    RUN_LIMIT_SECONDS,
    BatchResult,
    JsRegex,
    RegexBudgetSpent,
    RegexCompileError,
    RegexError,
    RegexTimeout,
    Replacement,
    Run,
    compile_js_regex,
    replace_many,
)
from .replacement import compile_replacement
from .scripts import (
    MAX_EXPORT_BYTES,
    MAX_PRESET_SCRIPTS,
    CompiledScript,
    Placement,
    PresetScripts,
    RegexScript,
    ScriptError,
    SubstituteRegex,
    compile_script,
    compile_scripts,
    parse_script,
    parse_scripts,
    preset_scripts_refused,
    read_export,
    script_keys,
    scripts_of_preset,
    switched,
)

__all__ = [
    "DEFAULT_REASONING_PREFIX",
    "DEFAULT_REASONING_SUFFIX",
    "MAX_EXPORT_BYTES",
    "MAX_PRESET_SCRIPTS",
    "RUN_LIMIT_SECONDS",
    "Applied",
    "BatchResult",
    "Cleaned",
    "CleanedJson",
    "CompiledScript",
    "JsRegex",
    "Placement",
    "PresetScripts",
    "PromptResult",
    "RegexBudget",
    "RegexBudgetSpent",
    "RegexCompileError",
    "RegexError",
    "RegexRequest",
    "RegexScript",
    "RegexTimeout",
    "Replacement",
    "Run",
    "ScriptError",
    "ScriptFailure",
    "SubstituteRegex",
    "apply_to_entries",
    "apply_to_history",
    "clean_reply",
    "clean_user_message",
    "compile_js_regex",
    "compile_replacement",
    "compile_script",
    "compile_scripts",
    "default_budget_ms",
    "parse_find_regex",
    "parse_script",
    "parse_scripts",
    "preset_scripts_refused",
    "read_export",
    "replace_many",
    "script_keys",
    "scripts_of_preset",
    "set_default_budget_ms",
    "split_reasoning",
    "switched",
    "transform_source",
]
