"""The HTML report's trust section carries the annotators block: people's kappa with its interval beside each
judge's kappa with every person, and the sentence on the people's range (escaped)."""

from __future__ import annotations

from rageval_core.analysis.report.html import _trust
from rageval_core.analysis.report.words import Words


def test_report_shows_people_beside_the_judge() -> None:
    trust = {"agreement": [], "annotators": {"annotators": ["aiko", "ben<"], "to_settle": 3, "criteria": [{
        "criterion": "faithfulness", "statistic": "kappa", "n_shared": 24, "labelled": {"aiko": 24, "ben<": 24},
        "people": {"value": 0.75, "low": 0.49, "high": 1.0},
        "judges": [{"method": "judge:rubric5", "mean": 0.3, "verdict": "below",
                    "per_annotator": {"aiko": {"kappa": 0.44, "n": 24}, "ben<": {"kappa": 0.17, "n": 24}},
                    "sentence": "faithfulness, judge:rubric5: below the people's range"}]}]}}
    html = _trust(trust, Words())
    assert "Agreement between people</b> (aiko, ben&lt;; 3 disagreement(s) to settle)" in html
    assert "0.750 [0.490, 1.000]" in html and "aiko 0.440, ben&lt; 0.170" in html
    assert "<td>below</td>" in html and "below the people&#x27;s range" in html
    assert "Agreement between people" not in _trust({"agreement": []}, Words())
