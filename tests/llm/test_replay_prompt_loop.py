"""The committed prompt-loop recording (a real small model judging the labelled sample's Japanese dev rows with two
rubric versions, sample_data/replay/trust_labelled_ja_*) replays through the vs-people path to the recorded
figures: no server, no key, no network.

A replay miss means a prompt, template, rubric rendering or schema changed since the recording, and the test FAILS
with the command that records it again (bench/record_prompt_loop.py, which needs the local model server, so it is
run by hand, never in CI).
"""

import json
from pathlib import Path

from rageval_core.analysis.trust.run_report import merged_labels
from rageval_core.session.versus_run import dataset_split, recorded_loop, run_versus
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.store.runs import Store

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ROOT / "sample_data" / "replay" / "trust_labelled_ja_qwen2.5-coder-1.5b.versions.json"
RERECORD = ("python bench/record_prompt_loop.py --base-url http://127.0.0.1:8080/v1  (needs the llama.cpp server with "
            "Qwen2.5-Coder-1.5B: docs/providers.md, 'A real small model (llama.cpp)')")


def test_the_recorded_prompt_loop_replays_to_its_figures(tmp_path):
    recorded = json.loads(VERSIONS.read_text(encoding="utf-8"))
    loop = recorded_loop(VERSIONS)
    assert loop is not None and len(loop.versions) >= 2
    ds = load_dataset(ROOT / loop.dataset)
    assert ds.content_hash == loop.dataset_hash, "the labelled sample changed since the recording: " + RERECORD
    labels = merged_labels(ds.samples, {})
    store = Store(tmp_path / "store.sqlite")
    split = dataset_split(store, ds.content_hash, ds.samples, labels)
    assert (split.seed, split.fractions) == (recorded["split"]["seed"], recorded["split"]["fractions"])
    got = run_versus(ds.samples, labels, loop.versions[0], loop.versions[1], store=store, assignment=split.assignment,
                     config=ProviderConfig(provider="replay", replay_log=loop.log, cache=False), dataset_name=ds.name,
                     dataset_digest=ds.content_hash, iterations=100, language="ja", calibrate=False)
    assert got.rows == list(loop.rows), "the default split's dev rows moved since the recording: " + RERECORD
    results = {label: {f"{r.sample_id}|{r.metric}": [r.value, r.unscored_reason] for r in run.results}
               for label, run in got.runs.items()}
    missed = sorted(k for per in results.values() for k, (_, why) in per.items() if why == "replay_miss")
    assert not missed, f"{len(missed)} results not in the recording, e.g. {missed[:3]}. Record it again: {RERECORD}"
    assert results == recorded["results"]
    # The same scores give the same point figures (the intervals, a function of the scores, fewer resamples here).
    points = [{k: v["value"] for k, v in d.items() if isinstance(v, dict)} for d in recorded["report"]["differences"]]
    assert [{k: v["value"] for k, v in d.to_dict().items() if isinstance(v, dict)} for d in got.report.differences] == points
    assert all(run.provider == "replay" and run.model == loop.model for run in got.runs.values())
