"""The fake LLM server's sockets: a threading TCP server with TCP_NODELAY on every connection and a listen backlog of
128 (DESIGN.md: without both each answer pays ~45 ms of delayed-ACK stall and bursts lose connections), at most
``max_threads`` connections served at once, and the HTTP/1.1 keep-alive handler that hands each request to its
owner (``server.FakeLLMServer``)."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from rageval_core.testing.fake_llm.anthropic import AnthropicBatches
from rageval_core.testing.fake_llm.batch import FakeBatches


class Owner(Protocol):
    """What answers the requests (``server.FakeLLMServer``)."""

    def handle(self, h: Handler) -> None: ...

    def handle_marked(self, h: Handler) -> None: ...


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128  # listen backlog (DESIGN.md: above 16)

    def __init__(self, owner: Owner, max_threads: int, port: int = 0) -> None:
        self.owner = owner
        self._slots = threading.BoundedSemaphore(max_threads)
        super().__init__(("127.0.0.1", port), Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr

    def process_request(self, request: Any, client_address: Any) -> None:
        # Bounded: at most max_threads connections are served at once; the rest wait in the backlog.
        self._slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    timeout = 15  # idle keep-alive connections close after this many seconds
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if FakeBatches.handles("GET", path) or AnthropicBatches.handles(path):
            self.server.owner.handle(self)
        else:
            self.send_json(404, {"error": {"code": 404, "message": "not found"}})

    def do_POST(self) -> None:
        self.server.owner.handle_marked(self)

    def send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send_raw(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), headers)

    def send_raw(self, status: int, data: bytes, headers: Mapping[str, str] | None = None, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
