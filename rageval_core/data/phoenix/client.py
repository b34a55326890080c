"""Phoenix's REST API (``/v1``) as this workbench uses it: a project, its spans (cursor pages), span annotations
(list and upsert). The standard library's ``urllib`` only: no new dependency, a timeout on every request.

The API key comes from the environment (``PHOENIX_API_KEY``, as Phoenix's own clients read it) and nowhere else:
no flag, no sidebar field, never stored. It is handed to the redaction step as soon as it is read, so an error
body or a URL that echoes it prints ``***``. Redirects are refused rather than followed, so the key is never
sent on to another host.

Routes as Phoenix 20.26 serves them (``phoenix/server/api/routers/v1/``): ``GET /v1/projects/{name or id}``,
``GET /v1/projects/{p}/spans`` (``limit`` ≤ 1000, ``cursor`` = the previous page's ``next_cursor``, filters
``trace_id`` / ``parent_id=null`` / ``start_time`` / ``end_time``), ``GET /v1/projects/{p}/span_annotations``
(``span_ids`` and / or ``identifier``, ``limit`` ≤ 10000), ``POST /v1/span_annotations?sync=true`` (an insert or
an update on (name, span, identifier): sending the same annotation twice leaves one).
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rageval_core.core import redact
from rageval_core.data.phoenix.config import API_KEY_ENV, DEFAULT_TIMEOUT_S, DEFAULT_URL, PhoenixError, normalize_url

MAX_SPAN_PAGE = 1000  # the server's cap on ``limit`` for spans
MAX_ANNOTATION_PAGE = 10000
IDS_PER_REQUEST = 100  # trace or span ids in one query string (about 4 KB of URL)
USER_AGENT = "rageval-workbench"

__all__ = ["PhoenixClient", "PhoenixError", "Project", "chunks"]


@dataclass(frozen=True)
class Project:
    """A Phoenix project: its id (the UI's ``/projects/{id}``) and name."""

    id: str
    name: str


def chunks(items: Sequence[str], size: int = IDS_PER_REQUEST) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None  # the 30x reaches the caller as an HTTPError, with the key sent to no other host


class PhoenixClient:
    """One Phoenix server. ``repr`` and messages show its URL without credentials; the key is not an attribute
    anyone prints."""

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.base = normalize_url(url)
        redact.remember_url(self.base)
        self.shown = redact.redact_url(self.base) or self.base
        parts = urllib.parse.urlsplit(self.base)
        self.public_url = urllib.parse.urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, "", ""))
        self.timeout = float(timeout)
        key = (os.environ.get(API_KEY_ENV) or "").strip()
        redact.remember(key)
        self._headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self.has_key = bool(key)
        self._opener = urllib.request.build_opener(_NoRedirect())

    def __repr__(self) -> str:
        return f"PhoenixClient({self.shown!r})"

    # ---- HTTP ---------------------------------------------------------------------------------------------------
    def get(self, path: str, params: Sequence[tuple[str, Any]] = ()) -> Any:
        return self._request("GET", path, params, None)

    def post(self, path: str, body: Any, params: Sequence[tuple[str, Any]] = ()) -> Any:
        return self._request("POST", path, params, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def _request(self, method: str, path: str, params: Sequence[tuple[str, Any]], data: bytes | None) -> Any:
        query = urllib.parse.urlencode([(k, str(v)) for k, v in params if v is not None])
        url = f"{self.base}{path}" + (f"?{query}" if query else "")
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        where = f"Phoenix at {self.shown}"
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise self._refused(exc, path) from None
        except (socket.timeout, TimeoutError):
            raise PhoenixError(f"{where} did not answer {method} {path} within {self.timeout:g} s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason if not isinstance(exc.reason, BaseException) else (getattr(exc.reason, "strerror", None) or exc.reason)
            raise PhoenixError(f"cannot reach {where}: {redact.redact(reason)} (is `phoenix serve` running there?)") from None
        except OSError as exc:
            raise PhoenixError(f"cannot reach {where}: {redact.redact(exc.strerror or exc)}") from None
        try:
            return json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, ValueError):
            raise PhoenixError(f"{where} answered {method} {path} with something that is not JSON: is this the Phoenix "
                               f"server's base URL (e.g. {DEFAULT_URL})?") from None

    def _refused(self, exc: urllib.error.HTTPError, path: str) -> PhoenixError:
        detail = _detail(exc)
        where = f"Phoenix at {self.shown}"
        if exc.code in (401, 403):
            hint = (f"{API_KEY_ENV} was refused: is it a key of this Phoenix, with access to the project?" if self.has_key
                    else f"this Phoenix needs an API key: set {API_KEY_ENV} in the environment (a system or user key "
                    "from Settings → API keys)")
            return PhoenixError(f"{where} refused {path} (HTTP {exc.code}: {detail}); {hint}")
        if 300 <= exc.code < 400:
            target = redact.redact_url(exc.headers.get("Location") or "") or "?"
            return PhoenixError(f"{where} redirects {path} to {target}; give that server's base URL instead")
        return PhoenixError(f"{where}: {path} answered HTTP {exc.code}: {detail}")

    # ---- resources ----------------------------------------------------------------------------------------------
    def project(self, name: str) -> Project:
        """The project named ``name`` (or with that id); ``PhoenixError`` naming the projects there are."""
        try:
            data = self.get(f"/v1/projects/{_segment(name)}")
        except PhoenixError as exc:
            if "HTTP 404" not in str(exc) and "HTTP 422" not in str(exc):
                raise
            names = [p.get("name") for p in self._projects()][:20]
            raise PhoenixError(f"no project {name!r} on Phoenix at {self.shown}; its projects: "
                               f"{', '.join(map(str, names)) or 'none'}") from None
        item = (data or {}).get("data") or {}
        return Project(str(item.get("id") or name), str(item.get("name") or name))

    def _projects(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for page in self.pages("/v1/projects", [], page_size=100):
            out.extend(page)
        return out

    def pages(self, path: str, params: Sequence[tuple[str, Any]], *, page_size: int,
              max_items: int | None = None) -> Iterator[list[dict[str, Any]]]:
        """Each page's ``data`` list, following ``next_cursor`` until the last page (or ``max_items``)."""
        cursor: str | None = None
        seen = 0
        while True:
            size = page_size if max_items is None else max(1, min(page_size, max_items - seen))
            page = self.get(path, [*params, ("limit", size), ("cursor", cursor)])
            items = (page or {}).get("data")
            if not isinstance(items, list):
                raise PhoenixError(f"Phoenix at {self.shown}: {path} answered without a data list")
            yield items
            seen += len(items)
            cursor = (page or {}).get("next_cursor")
            if not cursor or not items or (max_items is not None and seen >= max_items):
                return

    def spans(self, project: Project, params: Sequence[tuple[str, Any]], *, page_size: int = MAX_SPAN_PAGE,
              max_items: int | None = None) -> Iterator[dict[str, Any]]:
        """The project's spans matching ``params`` (Phoenix's filters), newest first, page after page."""
        for page in self.pages(f"/v1/projects/{_segment(project.id)}/spans", params, page_size=page_size,
                               max_items=max_items):
            yield from (span for span in page if isinstance(span, Mapping))

    def span_annotations(self, project: Project, span_ids: Sequence[str], identifiers: Sequence[str] = (),
                         *, page_size: int = MAX_ANNOTATION_PAGE) -> list[dict[str, Any]]:
        """Annotations on these spans (only those with one of ``identifiers`` when given)."""
        out: list[dict[str, Any]] = []
        for ids in chunks(list(dict.fromkeys(span_ids))):
            params = [("span_ids", i) for i in ids] + [("identifier", i) for i in identifiers]
            for page in self.pages(f"/v1/projects/{_segment(project.id)}/span_annotations", params, page_size=page_size):
                out.extend(page)
        return out

    def annotate_spans(self, annotations: Sequence[Mapping[str, Any]], *, batch: int = 500) -> list[str]:
        """Insert or update span annotations, synchronously (ids of the stored annotations, in order)."""
        ids: list[str] = []
        for start in range(0, len(annotations), batch):
            got = self.post("/v1/span_annotations", {"data": list(annotations[start:start + batch])}, [("sync", "true")])
            ids.extend(str(item.get("id")) for item in (got or {}).get("data") or [])
        return ids


def _segment(text: str) -> str:
    return urllib.parse.quote(str(text), safe="")


def _detail(exc: urllib.error.HTTPError) -> str:
    """The server's short reason (FastAPI's ``detail`` or the plain body), redacted and cut to one line."""
    try:
        raw = exc.read(2000).decode("utf-8", "replace")
    except OSError:
        raw = ""
    try:
        parsed = json.loads(raw)
        raw = parsed.get("detail", raw) if isinstance(parsed, Mapping) else raw
    except ValueError:
        pass
    text = " ".join(str(raw or exc.reason or "").split())
    return redact.redact(text[:200] + ("…" if len(text) > 200 else ""))
