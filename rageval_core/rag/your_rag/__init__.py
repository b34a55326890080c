"""The user's own RAG system (an HTTP endpoint or a Python callable) answering a test set, through the same
provider stack as judge calls. ``mapping`` is pure; ``systems`` does the calls; ``answer`` runs a test set."""

from rageval_core.rag.your_rag.answer import SystemRun, answer_with_system, latency_summary, system_stack, try_one
from rageval_core.rag.your_rag.mapping import MappingError, RagMapping, RagReply, build_body, load_mapping, read_reply
from rageval_core.rag.your_rag.systems import CallableRAG, EndpointRAG, parse_header, safe_url, system_request

__all__ = [
    "CallableRAG", "EndpointRAG", "MappingError", "RagMapping", "RagReply", "SystemRun", "answer_with_system",
    "build_body", "latency_summary", "load_mapping", "parse_header", "read_reply", "safe_url", "system_request",
    "system_stack", "try_one",
]
