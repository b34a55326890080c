"""The judge on the offline provider: heuristic scores on each criterion's scale, custom criteria unsupported."""

import pytest

from rageval_core.offline import provider as offline
from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.rubric import Criterion, load_rubric
from rageval_core.core.types import SEED_METRICS, Sample, Unscored
from tests.support.scripted_llm import HashEmbedder
from tests.scoring.test_judge import seed_samples

CITES = Criterion(
    id="cites_sources",
    name="Cites its sources",
    description="Whether the answer says which context it relies on.",
    min=0,
    max=2,
    levels={2: "cites every source", 1: "cites some", 0: "cites none"},
)


@pytest.fixture(scope="module")
def ctx():
    return EvalContext(llm=offline.OfflineLLM(HashEmbedder()), embedder=HashEmbedder())


def test_offline_judge_scores_the_seed_rows_and_flags_custom_criteria(ctx):
    rubric = load_rubric("rubric5", "ja").with_criterion(CITES)
    scorer = JudgeScorer(rubric)
    for sample in seed_samples():
        results = scorer.score(sample, ctx)
        assert [r.metric for r in results] == [*SEED_METRICS, "cites_sources"]
        for r in results[:4]:
            assert r.scored, (sample.id, r.metric, r.unscored_reason, r.reason)
            assert r.raw_score in {1, 2, 3, 4, 5} and r.provider == "offline"
            # no disclaimer in front of each reason: the result's provider says offline, the UI tags it once
            assert not r.reason.startswith(("オフラインのヒューリスティック判定", "Offline heuristic (not an LLM"))
        custom = results[4]
        assert custom.value is None and custom.unscored_reason == Unscored.OFFLINE_UNSUPPORTED
        assert custom.reason  # the offline judge says why


def test_offline_judge_separates_hallucination_from_correct_rows(ctx):
    rows = {s.id: s for s in seed_samples()}
    if not {"1", "4"} <= set(rows):
        pytest.skip("needs seed rows 1 and 4")
    scorer = JudgeScorer("binary")
    correct = {r.metric: r.raw_score for r in scorer.score(rows["1"], ctx)}
    hallucinated = {r.metric: r.raw_score for r in scorer.score(rows["4"], ctx)}
    assert correct["faithfulness"] == 1 and hallucinated["faithfulness"] == 0


def test_offline_bare_yes_is_not_given_a_score(ctx):
    sample = Sample("y", "Is dropout a regularisation method?", ("Dropout is a regularisation technique.",), "Yes.", "Yes.")
    faithfulness = JudgeScorer("rubric5").score(sample, ctx)[0]
    assert faithfulness.value is None and faithfulness.unscored_reason == Unscored.UNCHECKABLE
