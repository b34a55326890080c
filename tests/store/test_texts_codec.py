"""Texts stored once and details packed by reference: the pure parts, on hand-made values."""

from __future__ import annotations

import sqlite3

from rageval_core.store import details_codec, packing, texts


def test_segments_cut_after_blank_lines_join_short_pieces_and_give_the_text_back() -> None:
    head = "I" * 70 + "\n\n"
    short = "質問:\n"  # under MIN_SEGMENT: joined to what follows
    block = "<question>\n" + "Q" * 60 + "\n</question>\n\n"
    tail = "A" * 10
    text = head + short + block + tail
    assert texts.segments(text) == [head, short + block, tail]
    for sample in ("", "a", "\n\n\n\n", head * 3, text):
        assert "".join(texts.segments(sample)) == sample


def test_bodies_are_deflated_only_when_that_saves_a_tenth() -> None:
    long_text = "同じ文です。" * 40
    assert isinstance(texts.encode_body(long_text), bytes)
    assert texts.decode_body(texts.encode_body(long_text)) == long_text
    assert texts.encode_body("short") == "short"


def test_a_text_is_stored_once_and_read_back_by_id() -> None:
    conn = sqlite3.connect(":memory:")
    texts.ensure(conn)
    a = texts.put(conn, "x" * 200)
    assert texts.put(conn, "x" * 200) == a  # the same text: the same row
    b = texts.put_segments(conn, "y" * 80 + "\n\n" + "x" * 200)
    assert b[1] == a and conn.execute("SELECT COUNT(*) FROM texts").fetchone()[0] == 2
    assert texts.join(b, texts.get_many(conn, b)) == "y" * 80 + "\n\n" + "x" * 200


def test_pack_takes_out_prompts_responses_and_parsed_answers_and_unpack_puts_them_back_in_order() -> None:
    prompt = "P" * 100
    details = {"judge": "j1", "calls": [{"task": "judge", "prompt": prompt, "response": "R" * 60, "cached": False}],
               "parsed": {"faithfulness_score": 5, "faithfulness_reason": "ok, supported by context 0"},
               "claims": [{"claim": "c", "reason": "short"}], "raw_text": "tiny"}
    skeleton, taken = details_codec.pack(details)
    assert [(p, k) for p, k, _ in taken] == [(("calls", 0, "prompt"), "s"), (("calls", 0, "response"), "t"), (("parsed",), "j")]
    assert skeleton["calls"][0]["prompt"] is None and skeleton["raw_text"] == "tiny"  # under 48 characters: inline
    assert list(skeleton) == list(details)
    conn = sqlite3.connect(":memory:")
    texts.ensure(conn)
    projection, blob = packing.pack_details(conn, details, {})
    assert projection == '{"judge": "j1"}'  # what SQL reads (details_codec.SQL_KEYS)
    restored = details_codec.restore(projection, blob, packing.reader(conn))
    assert restored == details and list(restored) == list(details)
    assert details_codec.restore('{"a": 1}', None, {}) == {"a": 1}  # a result stored before packing
