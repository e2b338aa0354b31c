"""The Python guide's code blocks run: every ```python block of docs/guide/python.md, in order,
in one namespace, from the repository's root; blocks marked `no-run` (Ray, Dask) are skipped,
and those are the only ones; blocks marked `gpu` run where there is an adapter."""

import os
import re

import pytest

from conftest import REPO, has_gpu

GUIDE = REPO / "docs" / "guide" / "python.md"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks():
    text = GUIDE.read_text()
    return [(info.strip(), code) for info, code in FENCE.findall(text)]


def test_the_guide_has_runnable_and_skipped_blocks():
    found = blocks()
    assert sum(1 for info, _ in found if info == "") >= 8
    skipped = [code for info, code in found if info == "no-run"]
    assert len(skipped) == 2 and "import ray" in skipped[0] and "import dask" in skipped[1]
    for code in skipped:  # not run, but valid Python
        compile(code, "no-run block", "exec")
    assert all(info in ("", "no-run", "gpu") for info, _ in found), "unknown block markers"
    assert sum(1 for info, _ in found if info == "gpu") == 1


def test_the_guides_python_blocks_run(monkeypatch):
    monkeypatch.chdir(REPO)
    namespace = {"__name__": "__guide__"}
    for k, (info, code) in enumerate(blocks()):
        if info == "no-run":
            continue
        if info == "gpu" and not has_gpu():
            if os.environ.get("CI") == "true":
                pytest.fail("CI=true but no GPU adapter for the guide's GPU block")
            continue
        try:
            exec(compile(code, f"{GUIDE.name}[block {k}]", "exec"), namespace)
        except Exception as e:  # name the block that failed
            pytest.fail(f"block {k} of {GUIDE}:\n{code}\nraised {type(e).__name__}: {e}")
    assert os.path.exists(REPO / "out" / "dataset" / "report.json")
