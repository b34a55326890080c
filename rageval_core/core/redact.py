"""One redaction step for everything that leaves memory: the run store, the response and embedding caches,
the call log, record logs, the spill file, exports, the crash log and every CLI line.

Why one module: a secret can show up anywhere — in an SDK error, in a 401 body, echoed by a model inside a
*successful* answer, or in a base URL the user typed — and the same rule must hold for every sink. What is
redacted (replaced by ``***``):

- the *known* secret values of this process: keys from the provider environment variables, keys typed in
  the sidebar or handed to ``ProviderConfig``, RAG endpoint header values, and the credentials of any base
  URL in use (``remember`` / ``remember_url``), also in their URL-encoded form;
- anything shaped like a well-known key (``sk-…``, ``AIza…``) even when its value is not known;
- ``Authorization`` / ``x-goog-api-key`` / ``x-api-key`` / ``api-key`` header or field values and bearer /
  basic tokens;
- URL userinfo (``http://user:secret@host`` → ``http://***@host``) and secret-looking query parameters
  (``?key=``, ``api_key``, ``token``, ``access_token``, ``sig``, … → ``?key=***``).

Known values shorter than ``MIN_SECRET_LENGTH`` are not searched for as bare text (they would redact ordinary
words); their URL and header forms are still caught by the patterns.

Where two credentialed URLs must still be told apart (the response and embedding cache keys),
``url_identity`` gives the redacted URL plus an HMAC-SHA256 of the credentials under a random salt kept in the
database: different credentials get different cache entries, the same ones the same entry, and the stored key
material cannot be checked against a guessed password without the salt.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeGuard
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from rageval_core.core.key_env import KEY_ENV_VARS as _PROVIDER_KEY_VARS, OTHER_SECRET_ENV_VARS

REDACTED = "***"
MIN_SECRET_LENGTH = 8
MIN_EXTRA_LENGTH = 4
# Values that sit where a key goes but are not secrets (local servers ignore the key).
NOT_SECRET = frozenset({"not-needed", "none", "null", "placeholder"})
SECRET_QUERY_PARAMS = frozenset({
    "key", "api_key", "apikey", "api-key", "token", "access_token", "id_token", "refresh_token", "auth",
    "auth_token", "sig", "signature", "secret", "client_secret", "password", "passwd", "pwd", "x-goog-api-key",
    "credential", "credentials",
})
# Mapping keys whose entries are dropped from stored settings (``*tokens`` counts stay: they are usage).
SECRET_FIELD_HINTS = ("api_key", "apikey", "secret", "token", "password", "authorization")
# Every provider key variable (core.key_env, also what llm.keys reads), and the other secrets read from the environment.
KEY_ENV_VARS = tuple(dict.fromkeys(n for names in _PROVIDER_KEY_VARS.values() for n in names))
SECRET_ENV_VARS = KEY_ENV_VARS + OTHER_SECRET_ENV_VARS

_PARAMS = "|".join(re.escape(p) for p in sorted(SECRET_QUERY_PARAMS, key=len, reverse=True))
_TOKEN = r"[A-Za-z0-9._~+/=\-]"
# (triggers, pattern, replacement): a pattern runs only when one of its trigger strings is in the lowered text,
# so ordinary text pays a few substring checks instead of seven regex scans.
_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str], str], ...] = (
    # URL userinfo: scheme://anything-without-slash@ → scheme://***@
    (("://",), re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@'\"<>]+@"), r"\1" + REDACTED + "@"),
    (("=",), re.compile(rf"(?i)([?&;](?:{_PARAMS})=)[^&#\s'\"<>)\]}},;]+"), r"\1" + REDACTED),
    # A header or field: the scheme word and token after it, or a value of 8+ characters holding a digit.
    (("authorization", "api-key", "api_key", "apikey"),
     re.compile(rf"(?i)\b((?:authorization|x-goog-api-key|x-api-key|api[_-]?key)['\"]?\s*[:=]\s*['\"]?)"
                rf"(?:(?:bearer|basic|token)\s+{_TOKEN}+|(?=[^\s'\",}}]*\d)[^\s'\",}}]{{8,}})"), r"\1" + REDACTED),
    # A bearer token anywhere: 8+ token characters with a digit (prose "bearer of news" stays).
    (("bearer",), re.compile(rf"(?i)\b(bearer\s+)(?={_TOKEN}*\d){_TOKEN}{{8,}}"), r"\1" + REDACTED),
    (("sk-",), re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (("aiza",), re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), REDACTED),
)
# "Basic <base64>" only when the base64 decodes to user:password (prose "basic approach" stays).
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{6,}={0,2})")

_lock = threading.Lock()
_known: set[str] = set()


def _usable(secret: str | None) -> TypeGuard[str]:
    text = "" if secret is None else str(secret).strip()
    return len(text) >= MIN_SECRET_LENGTH and text.lower() not in NOT_SECRET


def remember(*secrets: str | None) -> None:
    """Add secret values to what is always redacted, for the life of the process (memory only)."""
    with _lock:
        _known.update(str(s).strip() for s in secrets if _usable(s))


def forget_all() -> None:
    """Forget every remembered value (tests use it so one test's planted key cannot hide another's leak)."""
    with _lock:
        _known.clear()


def remember_url(url: str | None) -> None:
    """Remember the credentials of a URL (userinfo, its Basic-auth form, secret query values) as secrets."""
    remember(*url_secrets(url))


def known_secrets() -> list[str]:
    """Every known secret value, longest first (a secret that contains another is replaced whole)."""
    with _lock:
        values = set(_known)
    values.update(v.strip() for v in (os.environ.get(n) for n in SECRET_ENV_VARS) if _usable(v))
    return sorted(values, key=len, reverse=True)


def _basic(match: re.Match[str]) -> str:
    try:
        decoded = base64.b64decode(match.group(2), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(1) + REDACTED if ":" in decoded else match.group(0)


def redactor() -> Callable[[str], str]:
    """``redact`` of one string (no ``extra``) under the secrets known now, for a caller with many strings at once
    (a batch of call-log entries, a result and its details): the environment is read once for all of them
    (``known_secrets`` read it for every string: most of redaction's CPU in a run)."""
    return _memos(_values_pattern(frozenset(known_secrets()))).redact


def redact(text: Any, extra: Iterable[str | None] = ()) -> str:
    """``text`` with known secrets, ``extra`` and anything secret-shaped replaced by ``***``. ``extra`` are
    values the caller knows to be secrets right here (a header value it just sent), searched for from
    ``MIN_EXTRA_LENGTH`` characters."""
    given = {str(s).strip() for s in extra if s and len(str(s).strip()) >= MIN_EXTRA_LENGTH}
    values = _values_pattern(frozenset(given | set(known_secrets())))
    return _memos(values).redact(str(text)) if not given else _redact_with(str(text), values)


def _redact_with(out: str, values: re.Pattern[str] | None) -> str:
    if values is not None:
        out = values.sub(REDACTED, out)
    lowered = out.lower()
    if not _any_trigger(lowered):  # most text: no pattern can match, nothing to scan
        return out
    for triggers, pattern, replacement in _PATTERNS:
        for t in triggers:
            if t in lowered:
                out = pattern.sub(replacement, out)
                break
    return _BASIC.sub(_basic, out) if "basic" in lowered else out


_TRIGGERS = tuple(dict.fromkeys([t for triggers, _, _ in _PATTERNS for t in triggers] + ["basic"]))


def _any_trigger(lowered: str) -> bool:
    """Whether any pattern's trigger (or "basic") is in the lowered text: a pattern only runs on such text."""
    for t in _TRIGGERS:
        if t in lowered:
            return True
    return False


@functools.lru_cache(maxsize=64)
def _values_pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    """One alternation of every secret in its plain and URL-encoded forms, longest first (a secret that
    contains another is replaced whole); compiled once per set of secrets."""
    forms = {f for s in secrets for f in (s, quote(s, safe=""), quote(s, safe="/:"))}
    if not forms:
        return None
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)))


def redact_optional(text: str | None, redactor: Callable[[str], str] | None = None) -> str | None:
    """``redact`` that keeps None as None (nullable store columns); ``redactor`` one from ``redactor()`` to reuse."""
    if text is None:
        return None
    return redact(text) if redactor is None else redactor(str(text))


def redact_data(value: Any, *, drop_secret_fields: bool = False, redactor: Callable[[str], str] | None = None) -> Any:
    """A JSON-like value with every string (keys included) redacted; tuples become lists. With
    ``drop_secret_fields`` (run settings and versions, where a field named ``api_key`` can only be a
    mistake) credential-named entries are dropped; not elsewhere, where such a name may be data. The known
    secrets are read once for the whole value (a stored result's details hold hundreds of strings), or not at all
    with ``redactor`` (one from ``redactor()``, shared by the caller's other strings)."""
    text = redactor or _memos(_values_pattern(frozenset(known_secrets()))).redact

    def walk(item: Any) -> Any:
        kind = type(item)
        if kind is str:
            return text(item)
        if kind in _SCALARS:  # the exact types only: a subclass takes the general checks below
            return item
        if kind is dict or isinstance(item, Mapping):
            out = {}
            for k, v in item.items():
                if drop_secret_fields and _secret_field(str(k)):
                    continue
                key = text(k) if isinstance(k, str) else k
                kv = type(v)  # leaves inline: most entries are strings and numbers
                out[key] = text(v) if kv is str else v if kv in _SCALARS else walk(v)
            return out
        if kind is list or isinstance(item, (list, tuple)):
            return [
                text(v) if type(v) is str else v if type(v) in _SCALARS else walk(v) for v in item
            ]
        if isinstance(item, str):
            return text(item)
        return item

    return walk(value)


_SCALARS = frozenset({int, float, bool, type(None)})


_MEMO_MAX_CHARS = 256
_SHORT_MEMO_CHARS = 262_144  # about 5,000 short strings (about 1 MB); a 1,200-row run of distinct rows met 15,000
_LONG_MEMO_CHARS = 1_000_000  # about 50 rows of judge answers and prompts (a few MB)


class _Budget:
    """Redacted strings up to a budget of characters, then started over: bounded by the bytes its strings take,
    not by a count (a count of 16,384 short strings had no end on distinct rows but 4 million characters, and
    filled up within 1,300 rows of a run, never to be emptied)."""

    def __init__(self) -> None:
        self.memo: dict[str, str] = {}
        self.used = 0

    def get(self, text: str) -> str | None:
        return self.memo.get(text)

    def put(self, text: str, done: str, chars: int) -> None:
        if self.used + len(text) > chars:
            self.memo = {}
            self.used = 0
        self.memo[text] = done
        self.used += len(text)


class _Memos:
    """Redacted strings for one set of known secrets: short ones (a result's details repeat the same few
    dozen keys, labels and verdicts; the rows' evidence sentences recur across metrics) and long ones (a
    judge's raw answer, a prompt), each up to a budget of characters: the same text is redacted at the
    provider boundary, in the call log, in each result that quotes it (one row's results hold a judge's
    answer eight times) and in the export."""

    def __init__(self, values: re.Pattern[str] | None) -> None:
        self._values = values
        self._short = _Budget()
        self._long = _Budget()

    def redact(self, text: str) -> str:
        long = len(text) > _MEMO_MAX_CHARS
        memo = self._long if long else self._short
        done = memo.get(text)
        if done is None:
            done = _redact_with(text, self._values)
            memo.put(text, done, _LONG_MEMO_CHARS if long else _SHORT_MEMO_CHARS)
        return done


@functools.lru_cache(maxsize=8)
def _memos(values: re.Pattern[str] | None) -> _Memos:
    return _Memos(values)


def _secret_field(name: str) -> bool:
    lowered = name.lower()
    return any(h in lowered for h in SECRET_FIELD_HINTS) and not lowered.endswith("tokens")


def url_secrets(url: str | None) -> list[str]:
    """The credentials inside a URL: the userinfo password, ``user:password`` and its Basic-auth (base64) form
    as an HTTP client sends it, and secret query parameter values. A user name alone is not a secret value
    (it would redact ordinary words); ``redact_url`` still hides the whole userinfo."""
    if not url:
        return []
    try:
        parts = urlsplit(str(url))
        password, username = parts.password, parts.username
    except ValueError:
        return []
    found: list[str] = []
    if password:
        pair = f"{unquote(username or '')}:{unquote(password)}"
        found += [password, unquote(password), pair, base64.b64encode(pair.encode("utf-8")).decode("ascii")]
    found += [v for k, v in parse_qsl(parts.query) if k.lower() in SECRET_QUERY_PARAMS]
    return list(dict.fromkeys(found))


def redact_url(url: str | None) -> str | None:
    """The URL without credentials: userinfo becomes ``***`` and secret query values ``***``."""
    if not url:
        return url
    return redact(_url_without_credentials(str(url)))


@functools.lru_cache(maxsize=64)
def _url_without_credentials(url: str) -> str:
    """``url`` with its userinfo and secret query values replaced (the same for the same URL: memoised, a run
    redacts its base URL at every cache write); an unparsable URL as it is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
    pairs = []
    for pair in (p for p in parts.query.split("&") if p):
        name, sep, value = pair.partition("=")
        pairs.append(f"{name}={REDACTED}" if sep and unquote(name).lower() in SECRET_QUERY_PARAMS else pair)
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(pairs), parts.fragment))


def url_identity(url: str | None, salt: bytes, extra: Iterable[str] = ()) -> str:
    """What cache keys hold for a base URL: the redacted URL, plus a keyed digest of its credentials (and of
    ``extra`` credentials, e.g. literal header values) when there are any — so two users of one host with
    different credentials never share cached answers. A URL without credentials is returned as it is."""
    if not url:
        return ""
    shown = redact_url(url) or ""
    extra = [e for e in extra if e]
    if shown == url and not extra:
        return shown
    netloc = urlsplit(str(url)).netloc
    material = [netloc.rsplit("@", 1)[0] if "@" in netloc else "", *url_secrets(url), *extra]
    digest = hmac.new(salt, "\x00".join(material).encode("utf-8"), hashlib.sha256).hexdigest()[:32]
    return f"{shown}#credentials={digest}"
