"""A throwaway service-account credentials file whose ``token_uri`` is the fake server's ``/token``, so Vertex AI
runs through google-genai with real application default credentials (google-auth signs a JWT with the key and
exchanges it for the server's access token) and never reaches Google. The RSA key is made per test session
with ``cryptography`` (a google-auth dependency): no key is committed."""

from __future__ import annotations

import functools
import json
from pathlib import Path

PROJECT = "rageval-test-project"
LOCATION = "asia-northeast1"


@functools.lru_cache(maxsize=1)
def _private_key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode("ascii")


def service_account_file(folder: Path, server_url: str, project: str = PROJECT) -> Path:
    """Write the credentials file (what GOOGLE_APPLICATION_CREDENTIALS names) and return its path."""
    path = folder / "vertex-sa.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": project, "private_key_id": "fake-key-1", "private_key": _private_key_pem(),
        "client_email": f"rageval-test@{project}.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": f"{server_url}/token",
    }), encoding="utf-8")
    return path
