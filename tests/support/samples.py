"""Sample rows several metric tests score the same way (so one edit of the fixture text reaches them all)."""

from __future__ import annotations

from rageval_core.core.types import Sample

# A Japanese row with one supporting and one off-topic context, an answer and a reference.
DROPOUT_JA = Sample(
    "ja-1",
    "ドロップアウトとは何ですか？",
    ("ドロップアウトは学習中にユニットをランダムに無効化する手法です。過学習を抑えます。", "パリはフランスの首都です。"),
    "ドロップアウトはユニットを無効化する手法です。過学習を抑えます。",
    "ドロップアウトは学習中にユニットを無効化する。過学習を抑える効果がある。",
)
