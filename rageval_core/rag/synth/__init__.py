"""Synthetic QA test sets: question types and shares (``kinds``), generation (``generate``), curation flags,
statuses and review order (``curation``), and the test set file (``model``)."""

from rageval_core.rag.synth.curation import (
    ANSWERABLE_OUT_OF_SCOPE,
    DEFAULT_DEDUPE_THRESHOLD,
    FLAGS,
    NEAR_DUPLICATE,
    UNSUPPORTED,
    containment,
    flag_item,
    jaccard,
    near_duplicates,
    question_key,
    review_order,
    select,
    set_status,
    source_chunk,
)
from rageval_core.rag.synth.generate import (
    DEFAULT_PER_SECTION,
    MAX_PER_SECTION,
    OFFLINE_NOTE,
    Progress,
    build_request,
    failure_reason,
    generate_testset,
    offline_completion,
    parse_pairs,
    synth_template,
)
from rageval_core.rag.synth.kinds import (
    DEFAULT_SHARES,
    NOT_IN_DOCUMENTS,
    QUESTION_TYPES,
    TASK_OF,
    SharesError,
    allocate,
    parse_shares,
    plan_calls,
)
from rageval_core.rag.synth.model import (
    ACCEPTED,
    EDITED,
    REJECTED,
    STATUSES,
    TESTSET_FORMAT,
    TESTSET_VERSION,
    SectionReport,
    SynthError,
    TestItem,
    TestSet,
    load_testset,
    parse_testset,
)

__all__ = [
    "ACCEPTED", "ANSWERABLE_OUT_OF_SCOPE", "DEFAULT_DEDUPE_THRESHOLD", "DEFAULT_PER_SECTION", "DEFAULT_SHARES", "EDITED",
    "FLAGS", "MAX_PER_SECTION", "NEAR_DUPLICATE", "NOT_IN_DOCUMENTS", "OFFLINE_NOTE", "Progress", "QUESTION_TYPES",
    "REJECTED", "STATUSES", "TASK_OF", "TESTSET_FORMAT", "TESTSET_VERSION", "UNSUPPORTED", "SectionReport",
    "SharesError", "SynthError", "TestItem", "TestSet", "allocate", "build_request", "containment", "failure_reason",
    "flag_item", "generate_testset", "jaccard", "load_testset", "near_duplicates", "offline_completion", "parse_pairs",
    "parse_shares", "parse_testset", "plan_calls", "question_key", "review_order", "select", "set_status",
    "source_chunk", "synth_template",
]
