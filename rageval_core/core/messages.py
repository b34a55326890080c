"""Messages the core shows people (validation issues, trust notes), each with a stable code and parameters.

The core speaks English: ``say(code, **params)`` returns the English text, a ``str`` (so the CLI prints it,
JSON stores it and old callers compare it as before) that also carries ``code`` and ``params``. Its Japanese lives
beside it (``messages_ja.json``, code → template with the same placeholders), so every surface says the same thing:
``render(text, "ja")`` puts a message (a ``Text``, or the plain string it became on disk, recognised by ``parse``)
in Japanese for the UI, the HTML report written from the CLI and anything else. The UI's own words stay in its
catalogue (rageval_ui/locales).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

# code → English template (``str.format``: placeholders in braces). A code, once shipped, keeps its meaning
# and placeholders: messages_ja.json translates it under the same code.
ENGLISH: dict[str, str] = {
    # datasets: whole-file problems
    "file.not_text": "not a text dataset: this is {what}",
    "file.bad_bom": "starts with a {codec} byte order mark but byte {byte} is not {codec}",
    "file.no_bom": "read as {codec} without a byte order mark — please save as UTF-8",
    "file.control_bytes": "not a text file (it is full of control bytes): expected JSON, JSONL or CSV text",
    "file.shift_jis": "not UTF-8; read as Shift_JIS (cp932) — please save as UTF-8",
    "file.not_utf8": "not UTF-8 text (byte {byte} is invalid) and not Shift_JIS either; save the file as UTF-8",
    "file.no_rows": "the dataset has no rows",
    "file.none_loaded": "none of the {total} row(s) could be loaded (see the row errors)",
    "file.too_big": "the file is {size} MB, over the {limit} MB limit; {hint}",
    "file.split": "split it into smaller files",
    "file.json_whole": "a JSON document is read whole; save the rows as JSON Lines (.jsonl, one row a line), which is read row by row up to {limit} MB, or split the file",
    "file.stream_utf8": "files this large are read row by row and must be UTF-8 text; save it as UTF-8 (up to {limit} MB) or split it",
    "file.stream_not_utf8": "line {line} is not UTF-8 text; a file over {limit} MB is read row by row and must be UTF-8: save it as UTF-8",
    # JSON and CSV
    "json.invalid_at": "invalid JSON at line {line}, column {column}: {error}",
    "json.too_deep": "JSON nested far deeper than the limit of {depth} levels",
    "json.invalid": "invalid JSON: {error}",
    "json.no_rows": "JSON object holds no list of rows (expected a list or a key like {keys})",
    "json.top_level": "JSON top level is a {kind}, expected a list of rows",
    "json.line": "line {line}: {problem}",
    "csv.semicolons": "columns separated by semicolons (no comma in the header)",
    "csv.data_row": "data row {row}, line {line}",
    "csv.header_line": "header, line {line}",
    "csv.open_quote": "a quote opens a cell and never closes, so every later line would shift into it",
    "csv.bad_quoting": "malformed quoting ({error})",
    "csv.quotes": "CSV {where}: {hint}; fix the quotes (a \" inside a quoted cell is written \"\"). Nothing loaded",
    "csv.no_header": "the file has no header row",
    "csv.duplicate_column": "column {column} appears more than once; the last one is used",
    "csv.no_question": "no question column: the header is {header}; name one column question (or user_input, query, input), or map one (--map question=COLUMN; the Dataset page's column map)",
    "csv.too_many_cells": "{cells} cells but the header has {columns} columns (an unquoted comma?)",
    "csv.unnamed_column": "cells under a column with no header name (column {column}) are ignored",
    "csv.too_few_cells": "{cells} cells but the header has {columns} columns; the missing cells are empty",
    "file.loader_bug": "could not be read: unexpected {error} in the loader (please report this file)",
    "file.unreadable": "cannot read the file: {error}",
    "file.empty": "the file is empty",
    # datasets: one row
    "row.duplicate_id": "duplicate id {id} (first used on row {first}); row skipped",
    "row.duplicate_key": "key {key} appears more than once in this row's object; the last value is used",
    "row.bad_record": "{problem}; row skipped",
    "row.not_object": "row is {kind}, expected an object with question, contexts, answer; row skipped",
    "row.missing_question": "missing question; row skipped",
    "row.empty_question": "the question is empty; row skipped",
    "row.no_answer": "no answer; answer metrics will be unscored (empty_answer)",
    "row.references_joined": "{n} references given; joined with newlines",
    "row.bad_field_name": "the field name held invalid characters (lone surrogates / NUL); replaced",
    "row.too_deep": "nested deeper than {depth} levels (the limit); row skipped",
    "row.surrogates": "{n} invalid character(s) (lone UTF-16 surrogates) replaced with U+FFFD",
    "row.nuls": "{n} NUL character(s) removed",
    "row.non_finite_core": "NaN / Infinity is not a valid {field} value; row skipped",
    "row.label_not_score": "label {word} is not a score (0/1 or a number); label dropped",
    "row.label_text": "label {value} is not a number (0/1 or a score); kept as text",
    "row.contexts_flattened": "{lists} nested list(s) in contexts flattened into {n} contexts",
    "row.context_empty": "context {i} is empty; dropped",
    "row.context_no_text": "context {i} is an object without text/content/page_content; dropped",
    "row.context_as_text": "context {i} is {kind}; read as text",
    "row.non_finite": "{n} NaN / Infinity value(s) replaced with null",
    "row.both_aliases": "both {chosen} and {other} are given; using {chosen}, {other} kept in metadata",
    "row.bad_id": "id must be a string or number, got {kind}; row skipped",
    "row.id_control": "id contains a control character ({char}); row skipped",
    "row.not_text": "{field} must be text, got {kind}; row skipped",
    "row.read_as_text": "{field} is {kind}; read as text",
    "row.no_contexts": "no contexts; context metrics will be unscored (missing_field)",
    "row.contexts_json": "contexts given as a JSON string; parsed as a list",
    "row.contexts_string": "contexts is a plain string; loaded as a one-element list",
    "row.contexts_object": "contexts is one object, not a list; loaded as a one-element list",
    "row.contexts_keys": "contexts must be a list of strings, got an object (keys {keys}); row skipped",
    "row.contexts_type": "contexts must be a list of strings, got {kind}; row skipped",
    "row.contexts_python": "contexts given as a Python list in a string; parsed as a list",
    "row.contexts_bad_list": "contexts is written as a list but cannot be read as a list of strings ({problem}); row skipped",
    "row.missing_mapped": "no {column} column (the column map's {field}); row skipped",
    "row.deepeval_context": "no retrieval_context; DeepEval's context (its ideal context) is kept as metadata: map contexts=context to evaluate against it",
    "row.bad_score": "{column} is not a score ({value}); dropped",
    "file.map_unused": "the column map's {field} column {column} is in no row; the columns are {columns}",
    "csv.no_mapped_question": "no {column} column (the column map's question): the header is {header}",
    # trust: repeats, stability, probes, which row to label next
    "repeats.offline": "offline heuristic: deterministic (it ignores seed and temperature), so every repeat gives the same score and the spread is 0 by construction; this says nothing about an LLM judge's stability",
    "repeats.replay": "replay: answers come from the recorded log; repeats 1+ carry new seeds and are unscored replay_miss unless the log was recorded with the same repeats",
    "repeats.temperature": "temperature {temperature} on every repeat",
    "repeats.own_temperature": "each request's own temperature (0 by default: many providers then repeat themselves; set a repeat temperature to measure sampling spread)",
    "repeats.seeds": "repeats 1+ send seed + {stride}·repeat and bypass the response cache; {temperature}",
    "stability.one_repeat": "one repeat only (run with repeats=K, K >= 2, to measure spread); {note}",
    "probes.offline": "offline heuristic: deterministic and prompt-blind; shifts show how its heuristics react, not an LLM judge",
    "probes.labelled_correct": "rows labelled correct (human labels)",
    "probes.category_correct": "rows of category correct / faithful",
    "probes.every_row": "every row (no labels or categories say which answers are correct)",
    "probes.shuffled": "contexts shuffled with seed {seed}",
    "probes.answer_injection": "instruction appended to the answer",
    "probes.context_injection": "a context quoting the answer, added last",
    "probes.language": "rows paired by id with their '{suffix}' parallel row",
    "rank.near_threshold": "near the threshold",
    "rank.methods_disagree": "methods disagree",
    "rank.repeats_differ": "repeats differ",
    "rank.settled": "settled (far from the threshold, methods agree)",
    # trust: label splits
    "split.test_hidden": "test figures are hidden (opened {looks} time(s) so far): look only once the prompt is final; every look is counted",
    "compare.sign": "the judge's difference ({judge}) and the corrected one ({corrected}) point in opposite directions: the judge's preferences, not the answers' quality, may drive its difference",
    "compare.significance": "the judge's difference and the corrected one disagree in significance: {detail}",
    "compare.judge_only_significant": "only the judge's excludes 0 (a bias of the judge can make that difference)",
    "compare.corrected_only_significant": "only the corrected one excludes 0 (the judge hides a difference people see)",
    "compare.no_shared_labels": "no row is labelled in both runs, so nothing corrects the judge's difference",
    "against.no_shared_method": "the runs share no metric × method, so nothing is compared: A scored {a}; B scored {b}",
    "against.no_shared_rows": "the runs share no row (A has {a}, B has {b}): different datasets? Nothing is compared",
    "against.some_rows": "compared on the {shared} rows both runs scored; {only_a} row(s) only in A and {only_b} only in B are left out",
    "against.other_judge": "{method} was judged by {a} in A and by {b} in B: its judge-only difference compares the judges as much as the answers",
    "against.one_sided": "scored in one run only, not compared: A {a}; B {b}",
    "note.every_row_labelled": "every row is labelled: the corrected figure is the labels' own, and the judge adds no information to it",
    "note.small_n": "only {n} labelled rows (fewer than 10): intervals are wide and approximate",
    "note.one_class": "people gave one verdict only on these rows ({verdict}): AUROC, balanced accuracy and kappa carry no information here",
    "rg.one_class": "people's labels hold one class only here, so sensitivity or specificity cannot be measured: the Rogan-Gladen correction is undefined",
    "rg.undefined": "undefined: sensitivity {sensitivity} + specificity {specificity} <= 1, so the verdict is no better than chance",
    # a judge version against people on dev rows (the Prompts page's "vs people" panel)
    "versus.small_n": "{criterion}: only {n} paired row(s), fewer than {small}: the intervals are wide and a difference rarely excludes 0",
    "versus.one_class": "{criterion}: all {n} paired row(s) carry one label: AUROC and one of TPR / TNR are undefined, kappa says nothing and balanced accuracy is the hit rate on that one class",
    "versus.other_language": "{n} dev row(s) in another language than the {language} rubric left out (answers are judged in their own language)",
    "versus.example_rows": "{n} dev row(s) are the rubric's few-shot examples and are left out (a model judging its own examples says nothing)",
    "versus.zero_width": "{criterion}: the difference in {stats} has a zero-width interval: every resample of the {n} rows gave the same difference (one version right on every row where they differ), which is not certainty at this n",
    "versus.no_dev": "no labelled dev rows to judge: split the labels first (train / dev / test)",
    # provider settings (check_config; ``field`` is how the front end names the setting)
    "config.unknown_provider": "Unknown provider '{provider}'. Choose one of: {choices}.",
    "config.no_offline": "The offline provider is not available in this installation (rageval_core.offline.provider is missing).",
    "config.need_base_url": "OpenAI-compatible needs a base URL ({field}), e.g. http://localhost:11434/v1 (Ollama) or http://127.0.0.1:8000/v1 (llama.cpp server).",
    "config.need_model": "OpenAI-compatible needs the model name your server serves ({field}), e.g. qwen2.5:7b.",
    "config.need_azure_endpoint": "Azure OpenAI needs the resource endpoint ({field} or AZURE_OPENAI_ENDPOINT), e.g. https://my-resource.openai.azure.com.",
    "config.need_deployment": "Azure OpenAI needs the chat deployment name ({field}): the name you gave the deployment in Azure, not the model's.",
    "config.need_vertex_project": "Vertex AI needs a Google Cloud project ({field} or GOOGLE_CLOUD_PROJECT) with application default credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS), or a Vertex API key in GOOGLE_API_KEY.",
    "config.no_claude_embeddings": "Anthropic has no embedding model: use --embeddings auto or offline (the bundled encoder), or a judge configuration whose provider has embeddings.",
    "config.bad_url": "{field} must start with http:// or https:// (got '{url}').",
    "config.need_replay_log": "Replay needs a replay log ({field}): a JSON Lines call log recorded earlier.",
    "config.no_replay_log": "Replay log not found: {path}",
    "config.bad_timeout": "{field} must be a positive number of seconds.",
    "config.bad_retries": "{field} cannot be negative.",
    "config.bad_concurrency": "{field} must be at least 1.",
    "config.bad_limit": "{field} must be positive (leave it empty for no limit).",
    "config.bad_embeddings": "embeddings must be one of {choices} (got {got}).",
    "config.bad_fail_fast": "{field} must be at least 1 (connection failures in a row before a host is given up).",
    # why a result is unscored (stored with the result: the CLI and exports keep this English)
    "judge.blank_answer": "the answer is blank",
    "judge.needs": "{criterion} needs {fields}, which this row lacks",
    "judge.offline_unsupported": "the offline heuristic judge cannot score this criterion",
    "judge.declared": "the judge declared this row {reason} for {criterion}",
    "judge.score_missing": "{criterion}_score is missing from the response",
    "judge.not_integer": "{criterion}_score {value} is not an integer",
    "judge.out_of_range": "{criterion}_score {score} is outside {min}..{max}",
    "claims.none": "no claims could be extracted from the answer",
    "claims.no_reference": "the ground truth has no sentences",
    # rubrics and judge templates (the Prompts page's editor)
    "rubric.criterion": "criterion {id}",
    "rubric.bad_id": "{where}: id must be snake_case (a-z, 0-9, single underscores, starting with a letter)",
    "rubric.no_name": "{where}: name is empty",
    "rubric.bound_not_int": "{where}: {bound} must be an integer, not {value}",
    "rubric.level_not_int": "{where}: level {level} is not an integer",
    "rubric.min_max": "{where}: min ({min}) must be below max ({max})",
    "rubric.too_long": "{where}: a scale of {n} levels is too long to describe",
    "rubric.undescribed": "{where}: describe every level of the scale; missing {levels}",
    "rubric.outside": "{where}: levels {levels} are outside {min}..{max}",
    "rubric.unknown_requirement": "{where}: unknown requirement(s) {unknown}; known: {known}",
    "rubric.bad_rubric_id": "rubric id {id}: use letters, digits, '_', '-' or '.' (no spaces or ':')",
    "rubric.no_criteria": "rubric {id}: add at least one criterion",
    "rubric.twice": "rubric {id}: criterion id {criterion} appears twice",
    "template.unknown_variables": "unknown variable(s) {unknown}; a judge template can use {known}",
    "template.no_answer": "the template never shows the answer: add {{answer}}",
    "template.needs": "criterion {criterion} needs {need} but the template has no {placeholder}",
    # synthetic test sets: why a pair is flagged, why a section has none
    "synth.answerable": "chunk {chunk} holds {share} of the question's content words (heuristic)",
    "synth.unsupported": "claim support {support} < {threshold} against its source chunks (heuristic)",
    "synth.repeats": "repeats {twin}: {question}",
    "synth.cancelled": "cancelled before this section was sent",
    "synth.empty": "the model returned no usable question/answer pair",
    # documents for synthetic test sets
    "document.encoding": "{name}: not UTF-8 or CP932 text",
    "document.kind": "{name}: expected a Markdown or text file ({extensions})",
    "document.unreadable": "{name}: cannot read the file: {error}",
    "document.empty": "{name}: the document is empty",
    "document.no_text": "{name}: the document has headings but no text under them",
    "document.too_large": "{name}: {size} bytes; a document holds at most {limit} bytes (split it, or pass its parts)",
    "document.binary": "{name}: holds NUL bytes: a binary file, not Markdown or text",
    # judge configurations (judges files, the app's saved judges)
    "judges.not_list": "{source}: expected a non-empty list of judge configurations (or {{judges: [...]}})",
    "judges.not_mapping": "{source}: judge {n}: expected a mapping, got {type}",
    "judges.secret_key": "{source}: judge {n}: {keys}: keys never go in a judges file; name the environment variable with api_key_env",
    "judges.unknown_fields": "{source}: judge {n}: unknown field(s) {fields}; known: {known}",
    "judges.duplicate_id": "{source}: judge id given twice: {ids} (set a distinct id on each)",
    "judges.unknown_provider": "{source}: judge {n}: unknown provider {provider}; known: {known}",
    "judges.decomposed_needs_metrics": "{source}: judge {n}: method decomposed needs metrics (e.g. [faithfulness, answer_relevancy])",
    "judges.metrics_only_decomposed": "{source}: judge {n}: metrics are for method decomposed; a rubric judge scores its own criteria",
    "judges.bad_id": "{source}: judge {n}: id {id}: use letters, digits, '-', '_', '.', '/' (it labels the results)",
    "judges.not_number": "{source}: judge {n}: {name} must be a number",
    "judges.not_number_got": "{source}: judge {n}: {name} must be a number, got {value}",
    "judges.not_valid": "{path}: not valid {format}: {error}",
    "judges.neither": "{name}: neither JSON nor YAML: {error}",
    "judges.too_large": "{source}: {size} bytes; a judges file holds at most {limit} bytes",
    "judges.too_deep": "{source}: nested deeper than {depth} levels or more than {nodes} values; a judges file is a list of flat entries",
    "judges.bad_env_name": "{source}: judge {n}: api_key_env {name} is not an environment variable name (capital letters, digits and _, e.g. OPENAI_API_KEY)",
    "judges.not_text": "{source}: judge {n}: {name} must be text, got {type}",
    # annotators: where the judge stands among the people (rageval_core.analysis.trust.annotator_report)
    "annotators.within": "{criterion}, {method}: within the people's range: its kappa with each annotator averages {judge}, people agree with each other at {people} [{low}, {high}]",
    "annotators.below": "{criterion}, {method}: below the people's range: its kappa with each annotator averages {judge}, people agree with each other at {people} [{low}, {high}], so people agree with each other more than with the judge",
    "annotators.above": "{criterion}, {method}: above the people's range: its kappa with each annotator averages {judge}, people agree with each other at {people} [{low}, {high}]; check it is not echoing one annotator",
    "annotators.unknown": "{criterion}, {method}: too few rows labelled by two people and scored to place the judge among them",
    # label files: values that are not labels, and what an import keeps (rageval_core.analysis.trust.label_import)
    "labels.where": "row {row} (record {record})",
    "labels.not_a_label": "{where}: {column} = {value} is not a label (0/1, true/false, pass/fail, or a whole column on the 1–5 scale)",
    "labels.mixed_column": "column {column} mixes 0/1 ({binary}) with 2–5 ({scale}); it is not read as a 1–5 scale: write 0/1 throughout, or 1–5 throughout",
    "labels.ambiguous_column": "column {column} holds 1 ({binary}) and only one value from 2–5 ({scale}): a 0/1 column with a stray value, or a 1–5 column where 1 fails? Refused: write 0/1 throughout, or 1–5 throughout",
    "labels.duplicate": "{where}: {annotator} labels {criterion} more than once ({values}); kept {kept}",
    "labels.conflict": "{where}: {annotator} labels {criterion} both ways ({values}); kept {kept}, the last in the file",
    "labels.plain_vs_named": "{where}: {criterion}: a label naming nobody ({plain}) disagrees with {annotator}'s {named}; {annotator}'s is kept, the other is not imported",
    "labels.unknown_rows": "{n} labelled row id(s) are not rows of run {run} and are skipped: {ids}",
    "labels.no_known_rows": "none of the {n} labelled row id(s) are rows of run {run}: {ids} (is it the run of this dataset?)",
    "labels.no_annotator": "no label names an annotator (an annotator column, or label_x@name columns); {plain} label(s) name nobody",
    "labels.plain_skipped": "{n} label(s) name no annotator and are not imported (a person's own label needs a name: an annotator column or label_x@name)",
    "labels.refused_values": "{n} value(s) are not labels (listed above); nothing imported: fix them, or skip those rows",
    "labels.skipped_values": "{n} value(s) that are not labels skipped (listed above)",
    "labels.refused_mixed": "nothing imported: a label column is neither 0/1 nor 1–5 throughout (above)",
    # the state folder and the store: faults a user fixes outside the program (exit 2 on the CLI)
    "home.not_folder": "the state folder {path} (RAGEVAL_HOME, or ./.rageval when it is unset) is a file, not a folder: point RAGEVAL_HOME at a folder (made if missing), or move the file away",
    "home.cannot_create": "cannot make the state folder {path} (RAGEVAL_HOME, or ./.rageval when it is unset): {error}. Point RAGEVAL_HOME at a folder you can write",
    "store.corrupt": "the store {path} is not a readable SQLite database ({error}); rageval does not repair or overwrite it. Move it aside or restore it from a backup (a new store is made in its place on the next run), or point RAGEVAL_HOME (or --db) at another folder",
    "store.read_only": "the store {path} is read-only ({why}), so this could not be saved ({what}). Make the file and its folder writable (chmod u+w), or point RAGEVAL_HOME (or --db) at a writable folder",
    "store.cannot_run": "the store {path} is read-only ({why}): {command} keeps its results there, so nothing was run. Make the file and its folder writable (chmod u+w), or point RAGEVAL_HOME (or --db) at a writable folder",
    "store.read_only_note": "the store {path} is read-only ({why}): runs and labels are shown, nothing can be saved",
    "store.why_file": "the file is not writable",
    "store.why_folder": "its folder is not writable",
    # JSON words for a value's type
    "kind.boolean": "a boolean",
    "kind.number": "a number",
    "kind.object": "an object",
    "kind.list": "a list",
    "kind.other": "a {type}",
    "kind.none": "none",
}


class Text(str):
    """An English message that remembers its ``code`` and ``params`` (see ``say``)."""

    code: str
    params: Mapping[str, Any]

    def __new__(cls, code: str, params: Mapping[str, Any]) -> Text:
        self = super().__new__(cls, ENGLISH[code].format(**params))
        self.code, self.params = code, dict(params)
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # pickling (st.cache_data, multiprocessing) keeps code and params
        return (Text, (self.code, self.params))


def say(code: str, **params: Any) -> Text:
    """The English message ``code`` filled with ``params``; a KeyError for a code not in ``ENGLISH``."""
    return Text(code, params)


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _literal(template: str) -> str:
    return "".join(literal for literal, _, _, _ in string.Formatter().parse(template))


@cache
def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Each template as an anchored regex with a named group per placeholder, the most literal text first (so
    "a list" is ``kind.list``, not ``kind.other`` with type "list")."""
    out = []
    for code, template in sorted(ENGLISH.items(), key=lambda kv: -len(_literal(kv[1]))):
        seen: set[str] = set()
        regex = ""
        for literal, name, _, _ in string.Formatter().parse(template):
            regex += re.escape(literal)
            if name:
                regex += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
                seen.add(name)
        out.append((code, re.compile(f"^{regex}$", re.S)))
    return out


def parse(text: str) -> tuple[str, dict[str, str]] | None:
    """``(code, params)`` of a message the core wrote (a ``Text``, or the plain string it became on disk), else None."""
    if isinstance(text, Text):
        return text.code, dict(text.params)
    for code, pattern in _patterns():
        match = pattern.match(text)
        if match:
            return code, match.groupdict()
    return None


_TRANSLATIONS = Path(__file__).resolve().parent


@cache
def templates(language: str) -> Mapping[str, str]:
    """Code → template in ``language``: "ja" from ``messages_ja.json``, the English for any other language."""
    if language == "ja":
        return dict(json.loads((_TRANSLATIONS / "messages_ja.json").read_text(encoding="utf-8")))
    return ENGLISH


def render(text: Any, language: str) -> str:
    """A message the core wrote, in ``language``: its template there filled with its parameters, each of them
    rendered the same way (a parameter may be a message too); any other text, and a code with no template, as it
    is (the core's English). None is ""."""
    if not isinstance(text, str):
        return "" if text is None else str(text)
    found = parse(text)
    if found is None:
        return str(text)
    code, params = found
    template = templates(language).get(code)
    if template is None:
        return str(text)
    return template.format(**{k: render(v, language) if isinstance(v, str) else v for k, v in params.items()})
