"""Rubrics: validation, JSON round trip, content hash, normalisation, presets and their rendering."""

import json

import pytest

from rageval_core.scoring.rubric import (
    PRESET_IDS,
    Criterion,
    Rubric,
    RubricError,
    is_preset,
    load_rubric,
    preset_rubrics,
    render_output_format,
    render_overview,
    render_rubric,
    rubric_from_record,
    rubric_record,
)
from rageval_core.core.types import ANSWER_CORRECTNESS, FAITHFULNESS, SEED_METRICS


def _polite(**overrides):
    data = dict(
        id="polite",
        name="丁寧さ",
        description="回答が丁寧な言葉遣いか。",
        min=1,
        max=3,
        levels={3: "丁寧", 2: "普通", 1: "失礼"},
    )
    data.update(overrides)
    return Criterion(**data)


def test_criterion_normalises_onto_unit_interval():
    c = _polite()
    assert [c.normalise(s) for s in (1, 2, 3)] == [0.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="outside"):
        c.normalise(4)  # never clamped


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"id": "Polite"}, "snake_case"),
        ({"id": "cites-sources"}, "snake_case"),
        ({"id": "a__b"}, "snake_case"),
        ({"min": 3, "max": 3, "levels": {3: "x"}}, "below max"),
        ({"min": 5, "max": 1}, "below max"),
        ({"levels": {3: "丁寧", 1: "失礼"}}, r"missing \[2\]"),
        ({"levels": {3: "丁寧", 2: "  ", 1: "失礼"}}, r"missing \[2\]"),
        ({"levels": {3: "丁寧", 2: "普通", 1: "失礼", 4: "とても丁寧"}}, r"outside 1\.\.3"),
        ({"levels": {"three": "丁寧"}}, "not an integer"),
        ({"min": 1.5}, "integer"),
        ({"name": " "}, "name is empty"),
        ({"requires": ("sources",)}, "unknown requirement"),
    ],
)
def test_criterion_validation(overrides, message):
    with pytest.raises(RubricError, match=message):
        _polite(**overrides)


def test_rubric_validation_collects_every_problem():
    with pytest.raises(RubricError) as info:
        Rubric(id="bad id", name="x", language="fr", criteria=())
    assert len(info.value.problems) == 3
    with pytest.raises(RubricError, match="twice"):
        Rubric(id="r", name="r", language="ja", criteria=(_polite(), _polite()))


def test_levels_accept_string_keys_and_sort_highest_first():
    c = _polite(levels={"1": "失礼", "3": "丁寧", "2": "普通"})
    assert list(c.levels) == [3, 2, 1]


def test_json_round_trip_and_content_hash():
    rubric = load_rubric("rubric5", "ja")
    again = Rubric.from_json(rubric.to_json())
    assert again == rubric
    assert again.content_hash == rubric.content_hash
    edited = rubric.with_level(FAITHFULNESS, 3, "半分くらい裏付けられる")
    assert edited.content_hash != rubric.content_hash
    assert rubric.criterion(FAITHFULNESS).levels[3] != "半分くらい裏付けられる"  # the original is untouched


def test_from_dict_reports_problems_of_every_criterion():
    data = load_rubric("rubric5", "en").to_dict()
    del data["criteria"][0]["levels"]["3"]
    data["criteria"][1]["id"] = "Answer-Relevancy"
    with pytest.raises(RubricError) as info:
        Rubric.from_dict(data)
    assert len(info.value.problems) == 2


@pytest.mark.parametrize("language", ["ja", "en"])
def test_presets_exist_in_both_languages(language):
    rubrics = {r.id: r for r in preset_rubrics(language)}
    assert tuple(rubrics) == PRESET_IDS
    assert rubrics["rubric5"].ids == SEED_METRICS
    assert all(c.min == 1 and c.max == 5 for c in rubrics["rubric5"].criteria)
    for binary in ("binary", "binary-strict"):
        assert rubrics[binary].ids == (FAITHFULNESS, ANSWER_CORRECTNESS)
        assert all((c.min, c.max) == (0, 1) for c in rubrics[binary].criteria)
    assert rubrics["binary"].content_hash != rubrics["binary-strict"].content_hash
    assert all(is_preset(r) for r in rubrics.values())


def test_rubric5_ja_keeps_the_seed_wording():
    r = load_rubric("rubric5", "ja")
    assert r.instructions == "あなたはRAGシステムの回答品質を評価する専門家です。"
    assert r.criterion(FAITHFULNESS).levels[5] == "全ての主張がコンテキストで完全に裏付けられる"
    assert r.criterion(ANSWER_CORRECTNESS).levels[1] == "模範解答と大きく食い違う、または重要な事実誤認が複数含まれる"
    assert render_overview(r) == "以下の4つの観点で1〜5点の整数で評価し、それぞれ理由を述べてください。"
    text = render_rubric(r)
    assert text.startswith("## 1. Faithfulness（忠実性）: 1〜5点\n回答に含まれる各主張が")
    assert "## 4. Answer Correctness（回答の正確性）: 1〜5点" in text
    assert '"context_precision_score": <1-5の整数>,' in render_output_format(r)


def test_lenient_and_strict_binary_differ_on_extra_information():
    lenient = load_rubric("binary", "ja").criterion(ANSWER_CORRECTNESS)
    strict = load_rubric("binary-strict", "ja").criterion(ANSWER_CORRECTNESS)
    assert "補足情報" in lenient.levels[1] and "許容" in lenient.levels[1]
    assert "正解にない情報" in strict.levels[0]
    lenient_en = load_rubric("binary", "en").criterion(ANSWER_CORRECTNESS)
    assert "extra information" in lenient_en.levels[1]


def test_custom_criterion_can_be_added_and_mixed_scales_render():
    rubric = load_rubric("rubric5", "ja").with_criterion(_polite())
    assert rubric.ids[-1] == "polite"
    assert rubric.uniform_scale is None
    assert "5つの観点" in render_overview(rubric)
    assert "## 5. 丁寧さ: 1〜3点" in render_rubric(rubric)
    block = json.loads(render_output_format(rubric).replace("<1-5の整数>", "1").replace("<1-3の整数>", "1"))
    assert list(block)[-2:] == ["polite_score", "polite_reason"]
    replaced = rubric.with_criterion(_polite(name="Politeness"))
    assert replaced.ids == rubric.ids and replaced.criterion("polite").name == "Politeness"
    assert rubric.without_criterion("polite").ids == SEED_METRICS


def test_load_rubric_from_file_and_unknown(tmp_path):
    path = tmp_path / "mine.json"
    custom = Rubric(id="mine", name="Mine", language="en", criteria=(_polite(),))
    path.write_text(custom.to_json(), encoding="utf-8")
    assert load_rubric(path) == custom
    assert load_rubric(str(path)) == custom
    with pytest.raises(RubricError, match="not a preset"):
        load_rubric("rubric7")
    with pytest.raises(RubricError, match="language"):
        load_rubric("rubric5", "fr")


def test_renamed_rubric_is_no_longer_the_preset():
    edited = load_rubric("rubric5", "ja").with_level(FAITHFULNESS, 1, "裏付けなし")
    assert not is_preset(edited)
    mine = edited.renamed("rubric5-strict", "厳しめ")
    assert (mine.id, mine.name) == ("rubric5-strict", "厳しめ") and mine.ids == edited.ids
    with pytest.raises(RubricError):
        edited.renamed("judge:x")


def test_recorded_rubric_is_keyed_by_criterion_and_round_trips():
    rubric = load_rubric("rubric5", "en").with_criterion(_polite())
    record = rubric_record(rubric)
    assert record["order"] == list(rubric.ids) and record["criteria"]["polite"]["levels"]["3"] == "丁寧"
    assert rubric_from_record(json.loads(json.dumps(record, sort_keys=True))) == rubric  # key order does not matter
    with pytest.raises(RubricError, match="recorded rubric"):
        rubric_from_record(rubric.to_dict())
