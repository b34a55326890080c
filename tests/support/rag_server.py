"""A user's RAG system on loopback for the your-RAG tests (tests/rag/test_your_rag.py, tests/project/test_secrets_pipeline.py):
it answers, fails, hangs and echoes what it was sent on demand."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RagServer:
    """Answers {"question"} with {"answer", "contexts"} from the policy document; questions containing FAIL get
    HTTP 500, MOVED a 307 to another host (with credentials in its query), DENY a 401 whose body repeats the Authorization header and request path, HANG never get an
    answer; every answer echoes the Authorization header and the request path (with its query) it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                question = str(body.get("question", ""))
                if "HANG" in question:
                    outer.release.wait(10)
                    return
                if "DENY" in question:
                    data = json.dumps({"error": f"token {self.headers.get('Authorization')} is not allowed ({self.path})"})
                    self.send_response(401)
                    self.end_headers()
                    self.wfile.write(data.encode("utf-8"))
                    return
                if "MOVED" in question:
                    self.send_response(307)
                    self.send_header("Location", "http://other.example:8080/v2/rag?token=SHOULD-NOT-SHOW")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if "FAIL" in question:
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b'{"error": "boom"}')
                    return
                reply = {"answer": f"{question} への回答です。 (auth: {self.headers.get('Authorization')}; url {self.path})",
                         "contexts": [{"text": "第1条 この規程は全従業員に適用する。", "id": "c1"}]}
                data = json.dumps(reply, ensure_ascii=False).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/rag"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def policy_rag(question: str) -> dict:
    """The server's answers as a Python callable (``tests.support.rag_server:policy_rag``); FAIL raises."""
    if "FAIL" in question:
        raise RuntimeError("retriever down")
    return {"answer": f"{question} への回答です。", "contexts": [{"text": "第1条 この規程は全従業員に適用する。", "id": "c1"}]}
