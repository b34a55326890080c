"""Texts stored once and details packed by reference: the pure parts, on hand-made values."""

from __future__ import annotations

import sqlite3

from rageval_core.store import details_codec, migrations, packing, texts


def test_segments_are_runs_of_data_lines_and_of_frame_lines_and_give_the_text_back() -> None:
    heading = "[user]\n質問:\n"
    frame = "<question>\n"
    question = "Q" * 60 + "\n" + "second line of the same question\n"
    between = "</question>\n\n<answer>\n"  # blank lines and lone tags: one frame run
    answer = "A" * 10 + "\n"
    text = heading + frame + question + between + answer + "</answer>"
    assert texts.segments(text) == [heading, frame, question, between, answer, "</answer>"]
    for sample in ("", "a", "\n\n\n\n", heading * 3, text, "a\r\nb\r\n<t>\r\n", "x\u2028<y>\n"):
        assert "".join(texts.segments(sample)) == sample


def test_the_same_data_under_another_heading_is_the_same_segment() -> None:
    answer = "同じ回答です。二行目もあります。\n"
    one = texts.segments("主張に分解する回答:\n<answer>\n" + answer + "</answer>")
    two = texts.segments("【生成された回答】\n<answer>\n" + answer + "</answer>\n\n")
    assert answer in one and answer in two


def test_bodies_are_deflated_only_when_that_saves_a_tenth() -> None:
    long_text = "同じ文です。" * 40
    assert isinstance(texts.encode_body(long_text), bytes)
    assert texts.decode_body(texts.encode_body(long_text)) == long_text
    assert texts.encode_body("short") == "short"


def test_a_text_is_stored_once_and_read_back_by_id() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrations.migrate(conn, ":memory:")
    a = texts.put(conn, "x" * 200 + "\n")
    assert texts.put(conn, "x" * 200 + "\n") == a  # the same text: the same row
    prompt = "y" * 80 + "\n\n" + "x" * 200 + "\n"
    b = texts.put_segments(conn, prompt)
    assert len(b) == 1 and conn.execute("SELECT COUNT(*) FROM texts").fetchone()[0] == 4  # x, y, "\n", the composite
    body = conn.execute("SELECT body FROM texts WHERE id = ?", b).fetchone()[0]
    assert texts.composite_ids(body) is not None and a in texts.composite_ids(body)
    assert texts.put_segments(conn, prompt) == b and texts.join(b, texts.get_many(conn, b)) == prompt
    assert texts.put_segments(conn, "") == [] and texts.put_segments(conn, "one line") == [texts.put(conn, "one line")]


def test_a_composite_may_name_an_earlier_composite_and_ids_survive_the_varints() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrations.migrate(conn, ":memory:")
    prompt = "<a>\n" + "data\n"  # two segments: a composite
    [prompt_id] = texts.put_segments(conn, prompt)
    assert texts.put(conn, prompt) == prompt_id  # a response equal to a stored prompt: the same row, read whole
    [tail] = texts.put_segments(conn, "end")
    nested = conn.execute("INSERT INTO texts (digest, body) VALUES (?, ?)",
                          (texts.digest(prompt + "end"), texts.encode_composite([prompt_id, tail]))).lastrowid
    assert texts.get_many(conn, [nested, prompt_id]) == {nested: prompt + "end", prompt_id: prompt}
    for ids in ([0], [127, 128, 16383, 16384, 2**40]):
        assert texts.composite_ids(texts.encode_composite(ids)) == ids
    assert texts.composite_ids("plain") is None and texts.composite_ids(texts.encode_body("x" * 300)) is None


def test_pack_takes_out_prompts_responses_and_parsed_answers_and_unpack_puts_them_back_in_order() -> None:
    prompt = "P" * 100
    details = {"judge": "j1", "calls": [{"task": "judge", "prompt": prompt, "response": "R" * 60, "cached": False}],
               "parsed": {"faithfulness_score": 5, "faithfulness_reason": "ok, supported by context 0"},
               "claims": [{"claim": "c", "reason": "short"}], "raw_text": "tiny"}
    skeleton, taken = details_codec.pack(details)
    assert [(p, k) for p, k, _ in taken] == [(("calls", 0, "prompt"), "s"), (("calls", 0, "response"), "t"), (("parsed",), "j")]
    assert skeleton["calls"][0]["prompt"] is None and skeleton["raw_text"] == "tiny"  # under 48 characters: inline
    assert list(skeleton) == list(details)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrations.migrate(conn, ":memory:")
    projection, blob = packing.pack_details(conn, details, {})
    assert projection == '{"judge": "j1"}'  # what SQL reads (details_codec.SQL_KEYS)
    restored = details_codec.restore(projection, blob, packing.reader(conn))
    assert restored == details and list(restored) == list(details)
    assert details_codec.restore('{"a": 1}', None, {}) == {"a": 1}  # a result stored before packing


def test_pack_with_a_redactor_is_pack_of_the_redacted_details() -> None:
    """The one-walk redaction (what the store writes) keeps exactly what ``redact_data`` then ``pack`` kept: values,
    keys, tuples made lists, parsed answers, and two keys that redact to one."""
    from rageval_core.core import redact

    secret = "sk-test-pack-0123456789abcdef"
    redact.remember(secret)
    try:
        for details in (
            {"prompt": "p" * 60 + secret, "calls": [{"response": "r" * 70, "parsed": {"k": secret * 2}}],
             "t": ("a", 1, None, 2.5, True), "n": {"raw_text": "short " + secret}, "parsed": [secret]},
            {secret: "a", "***": "b", "reason": secret},
        ):
            assert details_codec.pack(details, redact.redactor()) == details_codec.pack(redact.redact_data(details))
    finally:
        redact.forget_all()
