"""The presets against their sources: rubric5 word for word from seed 000, binary / binary-strict from seed 003.

Needs ../shared/seeds (skipped with a reason in a fresh clone); the parallel-structure checks always run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rageval_core.scoring.metrics.judge import judge_template
from rageval_core.scoring.rubric import load_rubric, render_criterion, render_output_format, render_overview
from rageval_core.core.types import ANSWER_CORRECTNESS, FAITHFULNESS

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
SEED_000 = SEEDS / "000_b23df1dcfde5bc48.txt"
SEED_003 = SEEDS / "003_fa71d643d822b34d.txt"
needs_000 = pytest.mark.skipif(not SEED_000.exists(), reason="../shared/seeds/000 is not present (fresh clone)")
needs_003 = pytest.mark.skipif(not SEED_003.exists(), reason="../shared/seeds/003 is not present (fresh clone)")


def _seed_prompt() -> str:
    """The JUDGE_PROMPT string of seed 000, as the article prints it."""
    text = SEED_000.read_text(encoding="utf-8")
    return text.split('JUDGE_PROMPT="""\\\n', 1)[1].split('"""', 1)[0]


@needs_000
def test_rubric5_ja_renders_every_line_of_the_seed_rubric_verbatim():
    seed = _seed_prompt()
    rubric = load_rubric("rubric5", "ja")
    assert rubric.instructions + "\n" + render_overview(rubric) in seed
    for index, criterion in enumerate(rubric.criteria, 1):
        block = render_criterion(criterion, index, "ja")
        assert block in seed, f"criterion {criterion.id} differs from the seed:\n{block}"
        assert len(criterion.levels) == 5
    # The JSON answer block, key by key and hint by hint.
    assert "{{" + render_output_format(rubric)[1:-1] + "}}" in seed
    # The template's output instruction is the seed's line.
    instruction = "以下のJSON形式のみで回答してください（説明文・コードブロック記号は不要）:"
    assert instruction in seed and instruction in (judge_template("ja").source or "")
    for heading in ("【質問】", "【参照コンテキスト】", "【生成された回答】", "【模範解答】"):
        assert heading in seed and heading in (judge_template("ja").source or "")


def test_rubric5_en_parallels_the_japanese_line_by_line():
    ja, en = load_rubric("rubric5", "ja"), load_rubric("rubric5", "en")
    assert en.ids == ja.ids
    for a, b in zip(ja.criteria, en.criteria, strict=True):
        assert (a.min, a.max, list(a.levels)) == (b.min, b.max, list(b.levels))
        assert a.requires == b.requires
        assert len(a.description.splitlines()) == len(b.description.splitlines()) == 2
        assert b.name in a.name  # "Faithfulness" in "Faithfulness（忠実性）": the seed's English names kept
        assert all(text and text[0].isupper() and not text.endswith(".") for text in b.levels.values())


@needs_003
@pytest.mark.parametrize("preset", ["binary", "binary-strict"])
def test_binary_presets_keep_the_seed_003_criteria(preset):
    seed = SEED_003.read_text(encoding="utf-8")
    rubric = load_rubric(preset, "ja")
    assert rubric.ids == (FAITHFULNESS, ANSWER_CORRECTNESS)
    faith, correct = rubric.criterion(FAITHFULNESS), rubric.criterion(ANSWER_CORRECTNESS)
    # seed 003: 「生成された回答」が「コンテキスト」に含まれる情報のみに基づいているか判定する。
    assert faith.description.splitlines()[0].rstrip("。").replace("かを", "か") in seed
    assert faith.levels[1].startswith("コンテキストにある情報だけで回答が構成されている")
    assert "コンテキストにある情報だけで回答が構成されていれば 1" in seed
    assert faith.levels[0] == "コンテキストにない情報（幻覚や外部知識）が含まれている"
    assert "コンテキストにない情報（幻覚や外部知識）が含まれていれば 0" in seed
    # seed 003: 生成された回答が、正解の意味内容と一致していれば 1 / 矛盾している、または重要な情報が欠けていれば 0
    assert "正解の意味内容と一致" in correct.levels[1] or "中核となる意味内容が正解と一致" in correct.levels[1]
    assert "矛盾" in correct.levels[0] and "重要な情報が欠けている" in correct.levels[0]


@needs_003
def test_strict_is_the_articles_strict_grader_and_lenient_follows_its_advice():
    seed = SEED_003.read_text(encoding="utf-8")
    strict, lenient = load_rubric("binary-strict", "ja"), load_rubric("binary", "ja")
    assert "「あなたは厳格な採点者です」という役割を与え" in seed and strict.instructions == "あなたは厳格な採点者です。"
    assert "あなたはRAGシステムの評価者です。" in seed and lenient.instructions == "あなたはRAGシステムの評価者です。"
    # The article's advice: 「意味が合っていればOKとする」「補足情報は許容する」.
    assert "「意味が合っていればOKとする」「補足情報は許容する」" in seed
    assert "補足情報" in lenient.criterion(ANSWER_CORRECTNESS).levels[1] and "許容" in lenient.criterion(ANSWER_CORRECTNESS).levels[1]
    # Strict spells out what failed the helpful answer in the article: information not in the reference.
    assert "正解にない情報" in strict.criterion(ANSWER_CORRECTNESS).levels[0]
    # The two presets differ only where the article says they should: the correctness wording, not the scale.
    assert [(c.id, c.min, c.max) for c in strict.criteria] == [(c.id, c.min, c.max) for c in lenient.criteria]


@pytest.mark.parametrize("language, line", [
    ("ja", "以下の2つの観点を、それぞれ 0（不合格）か 1（合格）の二値で判定し、理由を述べてください。"),
    ("en", "Judge each of the following 2 criteria as 0 (fail) or 1 (pass), and give a reason for each."),
])
def test_binary_presets_are_worded_as_pass_fail(language, line):
    rubric = load_rubric("binary", language)
    assert render_overview(rubric) == line
    heading = render_criterion(rubric.criteria[0], 1, language).splitlines()[0]
    assert heading.endswith("0 または 1" if language == "ja" else "0 or 1")


@pytest.mark.parametrize("preset, language, line", [
    ("rubric5", "ja", "以下の観点を1〜5点の整数で評価し、理由を述べてください。"),
    ("binary", "ja", "以下の観点を 0（不合格）か 1（合格）の二値で判定し、理由を述べてください。"),
    ("rubric5", "en", "Score the following criterion with an integer from 1 to 5, and give a reason."),
    ("binary-strict", "en", "Judge the following criterion as 0 (fail) or 1 (pass), and give a reason."),
])
def test_one_criterion_overview_reads_as_one(preset, language, line):
    rubric = load_rubric(preset, language)
    assert render_overview(rubric.subset([FAITHFULNESS])) == line
