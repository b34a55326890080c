"""What the Test set page keeps between reruns and the table conversions it needs.

The page reads a document, generates a synthetic QA test set (``rageval_core.rag.synth``), lets the user
edit the pairs, answers them with the small RAG (``rageval_core.rag.simple``) and hands the result to the
Dataset page as its working dataset. Everything here is plain data work; the page only renders.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from rageval_core.data import datasets
from rageval_core.scoring.prompts import load_template
from rageval_core.data.documents import DOCUMENT_EXTENSIONS, Document, chunk_document, decode_text, parse_document
from rageval_core.rag.simple import RagRun
from rageval_core.rag.synth import EDITED, QUESTION_TYPES, REJECTED, STATUSES, TestItem, TestSet, review_order, select, set_status
from rageval_ui import data
from rageval_ui.i18n import core, t

# Session-state keys of this page (plain keys, set by the page).
DOCUMENT = "testset.document"  # rageval_core.data.documents.Document being worked on
TESTSET = "testset.testset"  # rageval_core.rag.synth.TestSet (with the user's edits applied)
RAG_RUN = "testset.rag"  # rageval_core.rag.simple.RagRun of the current test set
EDITOR_VERSION = "testset.editor_version"  # bumps the data_editor key when the pairs are replaced
UPLOAD_SEEN = "testset.upload_seen"

DEFAULT_DOCUMENT = "company_policy_ja.md"
EDIT_COLUMNS = ("id", "type", "status", "flags", "twin", "section", "question", "ground_truth", "grounding")
# What the bulk accept / reject acts on: choice id → (flag, question type) for curation.select; ``bulk_label``
# names a choice in the UI language.
BULK_CHOICES: dict[str, tuple[str | None, str | None]] = {
    "flagged": ("any", None),
    "near_duplicate": ("near_duplicate", None),
    "unsupported": ("unsupported", None),
    "answerable_out_of_scope": ("answerable_out_of_scope", None),
    **{f"type:{qt}": (None, qt) for qt in QUESTION_TYPES},
    "every": (None, None),
}


def bulk_label(choice: str) -> str:
    """A bulk choice as the select box shows it ("all flagged pairs", "all pairs of type “Reasoning”")."""
    if choice.startswith("type:"):
        qtype = choice.removeprefix("type:")
        return t("bulk.type", type=type_labels().get(qtype, qtype))
    return {"flagged": t("bulk.flagged"), "near_duplicate": t("bulk.near_duplicate"), "unsupported": t("bulk.unsupported"),
            "answerable_out_of_scope": t("bulk.answerable_out_of_scope"), "every": t("bulk.every")}.get(choice, choice)


def type_labels() -> dict[str, str]:
    """Each question type's name in the UI language (the share inputs, the prompt tabs, the review table)."""
    return {"fact": t("qtype.fact"), "reasoning": t("qtype.reasoning"), "multi_chunk": t("qtype.multi_chunk"),
            "out_of_scope": t("qtype.out_of_scope")}


def status_labels() -> dict[str, str]:
    """Each review status's name in the UI language (the review table shows it; the value kept is the id)."""
    return {"accepted": t("testset.status.accepted"), "edited": t("testset.status.edited"),
            "rejected": t("testset.status.rejected")}


def shipped_prompt(task: str, language: str) -> str:
    """The shipped template text of ``task`` (``synth_qa`` / ``rag_answer``) in ``language``, for editing."""
    return load_template(task, language).source or ""


def prompt_override(edited: str | None, task: str, language: str) -> str | None:
    """The edited template text, or None when it is the shipped one (so runs keep the shipped hash)."""
    if edited is None or edited.strip() == shipped_prompt(task, language).strip():
        return None
    return edited


def sample_documents() -> list[str]:
    """Markdown / text documents shipped in sample_data/ (its README describes the files and is not one)."""
    if not data.SAMPLE_DIR.is_dir():
        return []
    return sorted(
        p.name
        for p in data.SAMPLE_DIR.iterdir()
        if p.is_file() and p.suffix.lower() in DOCUMENT_EXTENSIONS and not p.stem.upper().startswith("README")
    )


def load_sample_document(name: str) -> Document:
    path = data.SAMPLE_DIR / Path(name).name
    return parse_document(decode_text(path.read_bytes(), path.name), path.stem)


def load_uploaded_document(name: str, raw: bytes) -> Document:
    """An uploaded .md / .txt file (UTF-8 or CP932); ``DocumentError`` when it has no text."""
    return parse_document(decode_text(raw, name), Path(name).stem)


def sections_frame(doc: Document, chunk_size: int | None = None, chunk_overlap: int | None = None) -> pd.DataFrame:
    """One row per section: heading, characters and how many chunks the RAG will index from it."""
    chunks = chunk_document(doc, size=chunk_size, overlap=chunk_overlap)
    return pd.DataFrame(
        [
            {
                "#": s.index,
                "section": s.label,
                "characters": len(s.text),
                "chunks": sum(1 for c in chunks if c.section_index == s.index),
            }
            for s in doc.sections
        ],
        columns=["#", "section", "characters", "chunks"],
    )


def report_frame(ts: TestSet) -> pd.DataFrame:
    """Per-section outcome of the generation: status, pairs generated / kept / duplicates, reason."""
    names = type_labels()
    return pd.DataFrame(
        [
            {
                "#": s.index,
                "section": s.heading or t("testset.part", n=s.index + 1),
                "status": s.status,
                "generated": s.generated,
                "kept": s.kept,
                "duplicates": s.duplicates,
                "types (kept/asked)": ", ".join(f"{names.get(q, q)} {s.by_type.get(q, 0)}/{n}" for q, n in s.asked.items()),
                "reason": core(s.reason),
            }
            for s in ts.sections
        ],
        columns=["#", "section", "status", "generated", "kept", "duplicates", "types (kept/asked)", "reason"],
    )


def items_frame(ts: TestSet) -> pd.DataFrame:
    """Every pair for review, flagged first and each set-aside duplicate right after its twin: id, type,
    flags and provenance read-only; status, question and ground truth editable. The type is shown by its name in the
    UI language (read-only: never read back)."""
    types = type_labels()
    return pd.DataFrame(
        [
            {
                "id": i.id,
                "type": types.get(i.question_type or "", i.question_type or ""),
                "status": i.status,
                "flags": ", ".join(i.flags),
                "twin": str(i.metadata.get("duplicate_of") or ""),
                "section": str(i.metadata.get("section") or i.metadata.get("category") or ""),
                "question": i.question,
                "ground_truth": i.ground_truth,
                "grounding": i.metadata.get("grounding"),
            }
            for i in review_order(ts)
        ],
        columns=list(EDIT_COLUMNS),
    )


def flag_notes(ts: TestSet) -> list[str]:
    """One line per flagged pair: what the check saw (for the review's "why flagged" list)."""
    return [f"{i.id}: " + "; ".join(f"{flag} — {core((i.metadata.get('flag_notes') or {}).get(flag, ''))}" for flag in i.flags)
            for i in review_order(ts) if i.flags]


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return " ".join(str(value).split()) if "\n" not in str(value) else str(value).strip()


def apply_item_edits(ts: TestSet, frame: pd.DataFrame, edits: Mapping[str, Any] | None) -> tuple[TestSet, int]:
    """The test set after ``st.data_editor`` edits: changed texts (status ``edited``), changed statuses
    (``rejected`` sets a pair aside, ``accepted`` brings it back), deleted rows, added rows (written by hand).
    Rows left without a question or ground truth are dropped; returns how many. Pairs keep generation order."""
    table = data.apply_editor_state(frame, edits)
    by_id = {i.id: i for i in ts.all_items}
    order = {i.id: n for n, i in enumerate(ts.all_items)}
    kept: list[tuple[int, TestItem]] = []
    dropped = 0
    added = 0
    for row in table.to_dict("records"):
        question, truth = _text(row.get("question")), _text(row.get("ground_truth"))
        if not question or not truth:
            dropped += 1
            continue
        original = by_id.get(_text(row.get("id")))
        status = _text(row.get("status"))
        if original is not None:
            edited = question != original.question or truth != original.ground_truth
            new_status = status if status in STATUSES else original.status
            if edited and new_status != REJECTED:
                new_status = EDITED
            metadata = {**original.metadata, **({"edited": True} if edited else {})}
            if new_status != original.status or "status" in original.metadata or edited:
                metadata["status"] = new_status
            kept.append((order[original.id], TestItem(original.id, question, truth, metadata)))
        else:
            added += 1
            new_id = f"added-{added:02d}"
            while new_id in by_id:
                added += 1
                new_id = f"added-{added:02d}"
            section = _text(row.get("section"))
            kept.append((len(order) + added, TestItem(new_id, question, truth, {
                "category": section or "added", "section": section, "synthetic": False,
                "status": status if status in STATUSES else "accepted", "flags": []})))
    items = [i for _, i in sorted(kept, key=lambda x: x[0])]
    return replace(ts, items=[i for i in items if i.status != REJECTED], rejected=[i for i in items if i.status == REJECTED]), dropped


def bulk(ts: TestSet, choice: str, status: str) -> tuple[TestSet, int]:
    """Accept or reject every pair ``choice`` (a ``BULK_CHOICES`` id) names; returns how many."""
    flag, qtype = BULK_CHOICES[choice]
    ids = select(ts, flag=flag, qtype=qtype)
    return set_status(ts, ids, status), len(ids)


def review_summary(ts: TestSet) -> str:
    """"N in use (fact 10, reasoning 7, …), M set aside; flagged: …" for the review caption."""
    counts = ts.counts()
    names = type_labels()
    types = ", ".join(f"{names.get(qt, qt)} {n}" for qt, n in counts["type"].items()) or t("common.none")
    flags = ", ".join(f"{f} {n}" for f, n in counts["flag"].items()) or t("common.none")
    return t("testset.review_summary", n=len(ts.items), types=types, rejected=len(ts.rejected), flags=flags)


def shares_from_percent(values: Mapping[str, float]) -> dict[str, float] | None:
    """The type shares the page's percent inputs give (None when they are all zero)."""
    total = sum(max(0.0, float(v)) for v in values.values())
    return {t: float(v) / total for t, v in values.items() if v > 0} if total > 0 else None


def rag_frame(run: RagRun) -> pd.DataFrame:
    """The RAG outputs for review: answer, whether the source section was retrieved, chunk ids and scores."""
    rows = []
    for s in run.samples:
        md = s.metadata
        rows.append(
            {
                "id": s.id,
                "question": s.question,
                "answer": s.answer,
                "ground_truth": s.ground_truth,
                "hit": md.get("retrieval_hit"),
                "retrieved": ", ".join(md.get("retrieved_chunk_ids") or []),
                "scores": ", ".join(f"{v:.3f}" for v in md.get("retrieval_scores") or []),
                "error": md.get("rag_error") or "",
            }
        )
    return pd.DataFrame(rows, columns=["id", "question", "answer", "ground_truth", "hit", "retrieved", "scores", "error"])


def dataset_name(ts: TestSet) -> str:
    return f"{ts.document.get('name') or 'testset'}-rag"


def to_workset(run: RagRun, name: str) -> data.Workset:
    """The RAG outputs as the Dataset page's working dataset (validated like any loaded file)."""
    ws = data.load_upload(f"{name}.json", datasets.dumps_dataset(run.samples, "json"))
    ws.source = t("testset.source", name=name, k=run.k, model=f"{run.provider}/{run.model}")
    return ws


def rag_download(run: RagRun, fmt: str) -> bytes:
    return datasets.dumps_dataset(run.samples, fmt)  # type: ignore[arg-type]


def rag_summary_json(ts: TestSet, run: RagRun) -> bytes:
    """Everything in one file: the test set (document, generator, sections, rows) and the RAG outputs."""
    payload = {**ts.to_dict(), "rag": run.summary(), "rag_rows": [s.to_dict() for s in run.samples]}
    return (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
