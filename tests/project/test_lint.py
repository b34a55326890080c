"""The tree passes ruff (configured in pyproject.toml): unused imports, undefined names, bug patterns."""

import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def test_ruff_is_clean():
    # The interpreter's own ruff (requirements-dev.txt), whether or not its scripts folder is on PATH.
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
