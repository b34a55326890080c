"""Prompt templates as data: declared variables, checked placeholders, delimited untrusted inputs.

A template file (``rageval_core/scoring/prompts/templates/<lang>/<name>.txt``) is a small header of
``# key: value`` lines followed by a body that uses ``{name}`` placeholders and ``{{`` / ``}}`` for
literal braces, exactly like ``str.format``. The body may be split into chat messages with lines
``---system---``, ``---user---`` and ``---assistant---``. See ``rageval_core/scoring/prompts/README.md``.

Why so strict: a template with a typo in a placeholder must fail when it is loaded or edited, not
after a hundred paid calls; and text we did not write (answers, contexts, questions, references)
must never be able to close its delimiter and pose as instructions.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
import string
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval_core.llm.base import Message
from rageval_core.core.errors import ConfigError

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"

# Variables treated as untrusted when a template does not say otherwise: everything that comes from a
# dataset, a model or a document rather than from the template author.
DEFAULT_UNTRUSTED: frozenset[str] = frozenset(
    {
        "question",
        "contexts",
        "context",
        "answer",
        "ground_truth",
        "reference",
        "claims",
        "answer_claims",
        "reference_claims",
        "reference_sentences",
        "sentences",
        "statements",
        "user_input",
        "retrieved_contexts",
        "response",
        "text",
        "document",
        "title",
        "heading",
    }
)

HEADER_KEYS: frozenset[str] = frozenset({"variables", "untrusted", "trusted", "description", "index_base"})
ROLES: tuple[str, ...] = ("system", "user", "assistant")

_HEADER_RE = re.compile(r"^#\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_ROLE_RE = re.compile(r"^---\s*(" + "|".join(ROLES) + r")\s*---\s*$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# "<" (ASCII, full-width, small form) as it may open a delimiter tag once normalised.
_LT = "<\uff1c\ufe64"
_ZERO_WIDTH_RE = re.compile("[\u200b-\u200d\u2060\ufeff]")


class TemplateError(ConfigError):
    """A template that cannot be used: bad header, unknown/undeclared placeholder, missing/unexpected value."""


@dataclass(frozen=True)
class TemplateRef:
    """A template file found on disk."""

    name: str
    language: str
    path: Path


def _split_names(value: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in value.replace(";", ",").split(",") if part.strip())
    for name in names:
        if not _IDENT_RE.match(name):
            raise TemplateError(f"invalid variable name {name!r} in template header")
    return names


def _item_tag(name: str) -> str:
    """Tag of one element of a list variable: ``contexts`` → ``context``, ``claims`` → ``claim``."""
    return name[:-1] if name.endswith("s") and len(name) > 1 else f"{name}_item"


def _placeholders(body: str, where: str) -> list[str]:
    """Placeholder names in order of appearance; anything but a bare ``{identifier}`` is an error."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(body))
    except ValueError as exc:  # unmatched single brace
        raise TemplateError(f"{where}: {exc} (write {{{{ and }}}} for literal braces)") from None
    for _literal, field_name, spec, conversion in parsed:
        if field_name is None:
            continue
        if not field_name or not _IDENT_RE.match(field_name) or spec or conversion:
            shown = "{" + field_name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise TemplateError(
                f"{where}: placeholder {shown} is not a plain {{name}} (write {{{{ and }}}} for literal braces)"
            )
        names.append(field_name)
    return names


def parse_source(source: str) -> tuple[dict[str, str], str]:
    """Split a template file into its header (``# key: value`` lines) and body.

    The header is the run of leading ``# key: value`` lines with a known key; it ends at the first
    other line (a blank line after it is dropped). A key that looks like a misspelt known key is an
    error so a typo cannot go unnoticed.
    """
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header: dict[str, str] = {}
    i = 0
    while i < len(lines):
        match = _HEADER_RE.match(lines[i])
        if not match:
            break
        key = match.group(1).lower()
        if key not in HEADER_KEYS:
            close = difflib.get_close_matches(key, sorted(HEADER_KEYS), n=1, cutoff=0.75)
            if close:  # a typo such as "varaibles" must not silently become prompt text
                raise TemplateError(f"unknown template header key {key!r} on line {i + 1}; did you mean {close[0]!r}?")
            break  # e.g. "# Role: ..." is the body's first line, not a header
        if key in header:
            header[key] = f"{header[key]}, {match.group(2)}" if key != "description" else f"{header[key]} {match.group(2)}"
        else:
            header[key] = match.group(2)
        i += 1
    if header and i < len(lines) and not lines[i].strip():
        i += 1
    return header, "\n".join(lines[i:])


def _split_parts(body: str) -> tuple[tuple[str, str], ...]:
    """Chat parts of a body: ``(role, text)`` pairs; a body without role lines is one user message."""
    parts: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    preamble: list[str] = []
    for line in body.split("\n"):
        match = _ROLE_RE.match(line)
        if match:
            current = (match.group(1), [])
            parts.append(current)
        elif current is None:
            preamble.append(line)
        else:
            current[1].append(line)
    if not parts:
        return (("user", body.strip("\n")),)
    if "".join(preamble).strip():
        raise TemplateError("text before the first ---system---/---user--- line; move it into a part")
    filled = tuple((role, "\n".join(lines).strip("\n")) for role, lines in parts)
    # An empty part (e.g. a system part left blank in the editor) would be an empty message some APIs reject.
    return tuple(p for p in filled if p[1].strip()) or (("user", ""),)


def _neutralise(value: str, tags: Iterable[str]) -> str:
    """Make ``value`` unable to open or close any of ``tags``: ``</answer>`` becomes ``&lt;/answer>``."""
    alternatives = "|".join(re.escape(t) for t in sorted(set(tags), key=len, reverse=True))
    value = _ZERO_WIDTH_RE.sub("", value)  # invisible characters could hide a tag from this check
    if not alternatives:
        return value
    pattern = re.compile(rf"[{_LT}](\s*[/\uff0f]?\s*)({alternatives})(?![A-Za-z0-9_])", re.IGNORECASE)
    return pattern.sub(lambda m: "&lt;" + m.group(1) + m.group(2), value)


def _plain(value: Any) -> str:
    """Scalar text of a value: strings as they are, None as empty, mappings and lists as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


@dataclass(frozen=True)
class PromptTemplate:
    """One step's prompt in one language.

    ``text`` is the body (placeholders, optional role lines); ``variables`` the declared inputs;
    ``untrusted`` the variables wrapped in delimiters (``None`` → ``DEFAULT_UNTRUSTED`` ∩ variables).
    List values render as numbered items starting at ``index_base``.
    """

    name: str
    language: str
    text: str
    variables: tuple[str, ...]
    untrusted: frozenset[str] | None = None
    description: str = ""
    index_base: int = 1
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", tuple(dict.fromkeys(self.variables)))
        for var in self.variables:
            if not _IDENT_RE.match(var):
                raise TemplateError(f"template {self.label}: invalid variable name {var!r}")
        untrusted = (
            DEFAULT_UNTRUSTED & set(self.variables) if self.untrusted is None else frozenset(self.untrusted)
        )
        stray = sorted(untrusted - set(self.variables))
        if stray:
            raise TemplateError(f"template {self.label}: untrusted variable(s) {', '.join(stray)} are not declared")
        object.__setattr__(self, "untrusted", untrusted)
        object.__setattr__(self, "text", self.text.replace("\r\n", "\n").replace("\r", "\n"))
        parts = _split_parts(self.text)
        used: list[str] = []
        for role, part in parts:
            used.extend(_placeholders(part, f"template {self.label} ({role} part)"))
        undeclared = [name for name in dict.fromkeys(used) if name not in self.variables]
        if undeclared:
            raise TemplateError(
                f"template {self.label}: unknown placeholder {{{undeclared[0]}}}"
                + (f" (also {', '.join('{' + n + '}' for n in undeclared[1:])})" if len(undeclared) > 1 else "")
                + f"; declared variables: {', '.join(self.variables) or '(none)'}"
            )
        object.__setattr__(self, "_parts", parts)
        object.__setattr__(self, "_used", tuple(dict.fromkeys(used)))
        if self.source is None:
            object.__setattr__(self, "source", self._generated_source())

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_text(
        cls,
        text: str,
        name: str = "custom",
        language: str = "en",
        *,
        variables: Sequence[str] | None = None,
        untrusted: Iterable[str] | None = None,
    ) -> PromptTemplate:
        """Parse a raw template (header + body), e.g. one edited in the UI.

        ``variables`` is what the calling step can supply: with a header it bounds the declared
        variables (declaring anything else is an error); without a ``# variables:`` header it is
        the declaration. ``untrusted`` is the default when the header names none.
        """
        header, body = parse_source(text)
        where = f"{language}/{name}"
        if "variables" in header:
            declared = _split_names(header["variables"])
            if variables is not None:
                extra = [v for v in declared if v not in variables]
                if extra:
                    raise TemplateError(
                        f"template {where}: unknown variable {extra[0]!r}; this step provides: {', '.join(variables)}"
                    )
        elif variables is not None:
            declared = tuple(variables)
        else:
            raise TemplateError(f"template {where}: no '# variables: ...' header line")
        marked: frozenset[str] | None
        if "untrusted" in header:
            marked = frozenset(_split_names(header["untrusted"]))
        elif untrusted is not None:
            marked = frozenset(untrusted) & set(declared)
        else:
            marked = None
        if "trusted" in header:
            trusted = set(_split_names(header["trusted"]))
            base = marked if marked is not None else DEFAULT_UNTRUSTED & set(declared)
            marked = frozenset(base - trusted)
        index_base = 1
        if "index_base" in header:
            if header["index_base"] not in {"0", "1"}:
                raise TemplateError(f"template {where}: index_base must be 0 or 1, not {header['index_base']!r}")
            index_base = int(header["index_base"])
        return cls(
            name=name,
            language=language,
            text=body,
            variables=declared,
            untrusted=marked,
            description=header.get("description", ""),
            index_base=index_base,
            source=text.replace("\r\n", "\n").replace("\r", "\n"),
        )

    def _generated_source(self) -> str:
        lines = [f"# variables: {', '.join(self.variables)}"]
        assert self.untrusted is not None
        lines.append(f"# untrusted: {', '.join(v for v in self.variables if v in self.untrusted)}")
        if self.description:
            lines.append(f"# description: {self.description}")
        if self.index_base != 1:
            lines.append(f"# index_base: {self.index_base}")
        return "\n".join(lines) + "\n\n" + self.text

    # ----------------------------------------------------------------- properties
    @property
    def label(self) -> str:
        return f"{self.language}/{self.name}"

    @property
    def sha256(self) -> str:
        """Hash of the template source: the version id stored with results and part of cache keys."""
        return hashlib.sha256((self.source or "").encode("utf-8")).hexdigest()

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    @property
    def placeholders(self) -> tuple[str, ...]:
        """Variables the body actually uses, in order of first appearance."""
        return self._used  # type: ignore[attr-defined]

    @property
    def unused_variables(self) -> tuple[str, ...]:
        """Declared but never used (allowed: the step supplies them; the UI may warn)."""
        return tuple(v for v in self.variables if v not in self._used)  # type: ignore[attr-defined]

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(role for role, _ in self._parts)  # type: ignore[attr-defined]

    # ----------------------------------------------------------------- rendering
    def check_values(self, values: Mapping[str, Any]) -> None:
        """Raise ``TemplateError`` for an unexpected value or a missing one the body needs."""
        unexpected = [k for k in values if k not in self.variables]
        if unexpected:
            raise TemplateError(
                f"template {self.label}: unexpected variable {unexpected[0]!r}; declared: {', '.join(self.variables)}"
            )
        missing = [k for k in self._used if k not in values]  # type: ignore[attr-defined]
        if missing:
            raise TemplateError(f"template {self.label}: missing variable {missing[0]!r}")

    def _tags(self) -> set[str]:
        assert self.untrusted is not None
        tags = set(self.untrusted)
        tags.update(_item_tag(v) for v in self.untrusted)
        return tags

    def format_value(self, name: str, value: Any) -> str:
        """How one value appears in the prompt (delimited if untrusted, numbered if a list)."""
        assert self.untrusted is not None
        if name not in self.untrusted:
            if _is_list(value):
                return "\n".join(f"{i}. {_plain(item)}" for i, item in enumerate(value, self.index_base))
            return _plain(value)
        tags = self._tags()
        if _is_list(value):
            item = _item_tag(name)
            inner = "".join(
                f'<{item} index="{i}">\n{_neutralise(_plain(v), tags)}\n</{item}>\n'
                for i, v in enumerate(value, self.index_base)
            )
            return f'<{name} count="{len(value)}">\n{inner}</{name}>'
        return f"<{name}>\n{_neutralise(_plain(value), tags)}\n</{name}>"

    def _render_part(self, part: str, rendered: Mapping[str, str]) -> str:
        out: list[str] = []
        for literal, field_name, _spec, _conv in string.Formatter().parse(part):
            out.append(literal)
            if field_name is not None:
                out.append(rendered[field_name])
        return "".join(out)

    def _rendered_values(self, values: Mapping[str, Any]) -> dict[str, str]:
        self.check_values(values)
        return {k: self.format_value(k, v) for k, v in values.items() if k in self._used}  # type: ignore[attr-defined]

    def to_messages(self, **values: Any) -> tuple[Message, ...]:
        """The chat messages of this template filled with ``values`` (checked first)."""
        rendered = self._rendered_values(values)
        return tuple(
            Message(role=role, content=self._render_part(part, rendered))
            for role, part in self._parts  # type: ignore[attr-defined]
        )

    def render(self, **values: Any) -> str:
        """The whole prompt as one string (parts joined by a blank line), for display and single-message use."""
        return "\n\n".join(m.content for m in self.to_messages(**values))


# --------------------------------------------------------------------- files
def template_path(name: str, language: str, root: Path | None = None) -> Path:
    if not _IDENT_RE.match(name.replace("-", "_")) or not _IDENT_RE.match(language.replace("-", "_")):
        raise TemplateError(f"invalid template name {language}/{name}")
    return (root or TEMPLATES_DIR) / language / f"{name}.txt"


@functools.lru_cache(maxsize=256)
def _load_cached(path: str, mtime_ns: int, size: int, name: str, language: str) -> PromptTemplate:
    text = Path(path).read_bytes().decode("utf-8-sig")
    return PromptTemplate.from_text(text, name=name, language=language)


SHIPPED_RECHECK_S = 1.0
_shipped: dict[tuple[str, str], tuple[float, PromptTemplate]] = {}


def load_template(name: str, language: str, *, root: Path | None = None) -> PromptTemplate:
    """Load ``templates/<language>/<name>.txt``; errors name the template and list what exists.

    A shipped template (``root`` None) is looked at on disk at most once a second: every model call loads
    its template, and the ``stat`` calls were about 4 % of a run's interpreter time (bench/runner.py under
    py-spy). An edited file is still picked up, a second later; other roots are checked on every call."""
    if root is None:
        seen = _shipped.get((name, language))
        if seen is not None and time.monotonic() - seen[0] < SHIPPED_RECHECK_S:
            return seen[1]
        template = _load_from_disk(name, language, None)
        _shipped[(name, language)] = (time.monotonic(), template)
        return template
    return _load_from_disk(name, language, root)


def _load_from_disk(name: str, language: str, root: Path | None) -> PromptTemplate:
    path = template_path(name, language, root)
    if not path.is_file():
        available = [r.name for r in list_templates(language, root=root)]
        raise TemplateError(
            f"no template {language}/{name}"
            + (f" (available for {language}: {', '.join(available)})" if available else f" (no templates for {language})")
        )
    stat = path.stat()
    return _load_cached(str(path), stat.st_mtime_ns, stat.st_size, name, language)


def resolve_template(name: str, language: str, override: PromptTemplate | str | None = None) -> PromptTemplate:
    """The template a step uses: ``override`` when it is one, parsed when it is raw (edited) text, else the
    shipped ``<language>/<name>`` file. Raises ``TemplateError`` like ``load_template``."""
    if isinstance(override, PromptTemplate):
        return override
    if isinstance(override, str):
        return PromptTemplate.from_text(override, name=name, language=language)
    return load_template(name, language)


def list_templates(language: str | None = None, *, root: Path | None = None) -> list[TemplateRef]:
    """Every template file, sorted by language then name."""
    base = root or TEMPLATES_DIR
    if not base.is_dir():
        return []
    refs = [
        TemplateRef(name=p.stem, language=p.parent.name, path=p)
        for p in base.glob("*/*.txt")
        if language is None or p.parent.name == language
    ]
    return sorted(refs, key=lambda r: (r.language, r.name))
