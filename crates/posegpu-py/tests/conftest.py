"""Shared fixtures: the real data set, the `posegpu` command (the reference the bindings are
checked against), and the GPU (lavapipe where there is no GPU)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import posegpu

REPO = Path(__file__).resolve().parents[3]
DATA = Path(os.environ.get("POSEGPU_DATA", REPO.parent / "shared" / "anim-data"))
ASSIMP = Path("/usr/share/assimp/models/glTF2")

# The eval JSON writes [tx ty tz qx qy qz qw sx sy sz]; the bindings [qx qy qz qw tx ty tz sx sy sz].
JSON_TO_POSE = [3, 4, 5, 6, 0, 1, 2, 7, 8, 9]


def data(rel):
    """A file of ../shared/anim-data; the suite fails loudly without it."""
    path = DATA / rel
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests read the real data set in ../shared/anim-data")
    return str(path)


def cli_path():
    explicit = os.environ.get("POSEGPU_CLI")
    candidates = [Path(explicit)] if explicit else []
    candidates += [REPO / "target" / "release" / "posegpu"]
    found = shutil.which("posegpu")
    if found:
        candidates.append(Path(found))
    for c in candidates:
        if c.is_file():
            return str(c)
    pytest.fail("the posegpu command is missing: cargo build --release -p posegpu-cli (or set POSEGPU_CLI)")


@pytest.fixture(scope="session")
def cli():
    """Runs `posegpu ARGS...`: (exit status, stdout, stderr)."""
    exe = cli_path()

    def run(*args, check=True):
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=600)
        if check and p.returncode != 0:
            raise AssertionError(f"posegpu {' '.join(map(str, args))} failed: {p.stderr}")
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def cli_eval(cli, tmp_path_factory):
    """`posegpu eval ...` as parsed JSON, with the times given."""
    out_dir = tmp_path_factory.mktemp("eval")
    counter = [0]

    def run(model, times, *args):
        counter[0] += 1
        out = out_dir / f"eval{counter[0]}.json"
        t = ",".join(repr(float(x)) for x in times)
        cli("eval", model, f"--times={t}", "--out", out, *args)
        return json.loads(out.read_text())

    return run


def json_poses(doc, key):
    """A JSON document's transforms as (N, B, 10) in the bindings' order."""
    return np.array([f[key] for f in doc["frames"]], dtype=np.float32)[..., JSON_TO_POSE]


def has_gpu():
    return posegpu.gpu_adapter() is not None


def need_gpu():
    """Skips a GPU check where there is no adapter, except under CI=true (as the Rust tests)."""
    if not has_gpu():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no GPU adapter")
        pytest.skip("no GPU adapter (install Mesa's lavapipe)")


@pytest.fixture(params=["cpu", "gpu"])
def backend(request):
    if request.param == "gpu":
        need_gpu()
    return request.param
