"""Errors: broken files raise posegpu.Error (every time, with the command's own message), damaged
copies of real files never raise anything else, and bad arguments raise at once naming the
argument."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import posegpu
from conftest import ASSIMP, data

BROKEN_DIRS = ["wrongTypes", "IndexOutOfRange", "RecursiveNodes", "MissingBin", "TestNoRootNode"]


def broken_files():
    if not ASSIMP.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but assimp-testmodels is not installed")
        pytest.skip("Debian's assimp-testmodels is not installed (scripts/setup installs it)")
    files = sorted(p for d in BROKEN_DIRS for p in (ASSIMP / d).rglob("*") if p.suffix in (".gltf", ".glb"))
    assert len(files) >= 5, f"only {len(files)} broken files found"
    return files


def test_broken_gltf_files_raise_the_commands_error_every_time(cli):
    for path in broken_files():
        status, _, stderr = cli("info", path, check=False)
        assert status != 0, f"{path} loads in the command"
        message = stderr.splitlines()[0].removeprefix("error: ")
        for _ in range(2):
            with pytest.raises(posegpu.LoadError) as e:
                posegpu.load(path)
            assert str(e.value) == message
            assert isinstance(e.value, posegpu.Error)
            assert isinstance(e.value.causes, list)
        with pytest.raises(posegpu.Error):
            posegpu.load(path.read_bytes(), format=path.suffix[1:], name=path.stem)


def test_missing_and_unknown_files_carry_the_commands_message(cli, tmp_path):
    for path in [tmp_path / "absent.glb", tmp_path / "model.fbx"]:
        _, _, stderr = cli("info", path, check=False)
        with pytest.raises(posegpu.LoadError) as e:
            posegpu.load(path)
        assert str(e.value) == stderr.splitlines()[0].removeprefix("error: ")
    with pytest.raises(posegpu.LoadError, match="No such file"):
        posegpu.load(str(tmp_path / "absent.bvh"))


def damaged(blob, seed):
    """A deterministic damage: a truncation or a run of flipped bytes."""
    rng = np.random.default_rng(seed)
    b = bytearray(blob)
    if seed % 2 == 0:
        return bytes(b[: int(rng.integers(1, len(b)))])
    start = int(rng.integers(0, len(b)))
    for i in range(start, min(len(b), start + 16)):
        b[i] ^= int(rng.integers(1, 256))
    return bytes(b)


@pytest.mark.parametrize("rel", [
    "bvh/cmu_walk_delfem2.bvh",
    "gltf/khronos/RiggedSimple.glb",
    "gltf/khronos/SimpleSkin.gltf",
    "gltf/khronos/CesiumMan.glb",
])
def test_damaged_files_raise_posegpu_errors_or_load_as_the_command_says(cli, tmp_path, rel):
    src = Path(data(rel))
    blob = src.read_bytes()
    for seed in range(6):
        bad = damaged(blob, seed)
        path = tmp_path / f"damaged{seed}{src.suffix}"
        path.write_bytes(bad)
        status, stdout, stderr = cli("info", path, check=False)
        try:
            asset = posegpu.load(path)
        except posegpu.Error as e:
            assert status != 0, f"{path}: Python raised but the command loaded it"
            assert str(e) == stderr.splitlines()[0].removeprefix("error: ")
        else:
            assert status == 0, f"{path}: the command failed: {stderr}"
            assert stdout.startswith(f"{path}: {asset.bone_count} bones")
        try:
            posegpu.load(bad, format=src.suffix[1:])
        except posegpu.Error:
            pass


def test_assimp_bvh_files_load_or_raise_posegpu_errors():
    root = Path("/usr/share/assimp/models/BVH")
    if not root.is_dir():
        pytest.skip("assimp-testmodels is not installed")
    for path in sorted(root.glob("*.bvh")):
        try:
            asset = posegpu.load(path)
            assert asset.bone_count > 0
        except posegpu.Error:
            pass


@pytest.fixture(scope="module")
def evaluator():
    return posegpu.Evaluator(posegpu.Library(posegpu.procedural.humanoid()))


@pytest.mark.parametrize("clips,times,match", [
    (0, ["a", "b"], "times: expected floats"),
    (0, np.array([0.1, 0.2], dtype=np.complex64), "times: expected floats"),
    (0, np.zeros((2, 2), dtype=np.float32), r"times: expected a scalar or a 1-D array, got shape \(2, 2\)"),
    (0, np.array([0.0, np.nan], dtype=np.float32), r"times\[1\] is NaN"),
    (0, float("inf"), "times is inf"),
    (0, True, "times: expected a number, got a bool"),
    ([0, 1, 2], [0.0, 0.5], "clips has 3 values but times has 2"),
    (np.array([0.5, 1.5]), 0.0, "clips: expected clip indices"),
    (7, 0.0, r"clips\[0\] is 7: the library has 4 clips"),
    (-1, 0.0, r"clips\[0\] is -1"),
    ("sprint", 0.0, r"clips\[0\]: no animation named or numbered 'sprint' \(available: idle, walk, run, wave\)"),
    (["walk", "jog"], [0.1, 0.2], r"clips\[1\]: no animation"),
    (np.zeros((2, 1), dtype=np.int64), 0.0, "clips: expected a scalar or a 1-D array"),
])
def test_bad_arguments_name_the_argument(evaluator, clips, times, match):
    with pytest.raises(posegpu.ArgumentError, match=match) as e:
        evaluator.evaluate(clips, times)
    assert isinstance(e.value, ValueError) and isinstance(e.value, posegpu.Error)


def test_bad_options_name_the_argument():
    asset = posegpu.procedural.humanoid()
    lib = posegpu.Library(asset)
    cases = [
        (lambda: posegpu.Evaluator(lib, backend="tpu"), "backend: 'tpu'"),
        (lambda: posegpu.Crowd(lib, backend="fpga"), "backend: 'fpga'"),
        (lambda: posegpu.Library(asset, compress=-1.0), "compress: tolerance -1"),
        (lambda: posegpu.Library(asset, compress="lots"), "compress: expected"),
        (lambda: posegpu.Library(asset, sources=[asset], rest="pose"), "rest: 'pose'"),
        (lambda: posegpu.Library(asset, sources=[asset], ik={"feet": 2.0}), r"ik\['feet'\] is 2"),
        (lambda: posegpu.Library(asset, sources=[asset], ik={"toes": 1.0}), "ik: unknown key 'toes'"),
        (lambda: lib.find_clip("jump"), "name: no animation named"),
        (lambda: lib.find_clip("walk", source=3), "source: 3 is not a source index"),
        (lambda: asset.find_bone("tail"), "name: no bone named 'tail'"),
        (lambda: posegpu.load(b"HIERARCHY"), "format: loading bytes needs"),
        (lambda: posegpu.load(b"x", format="fbx"), "format: 'fbx'"),
        (lambda: posegpu.load(42), "source: expected a path"),
        (lambda: posegpu.retarget(asset, asset, method="magic"), "method: 'magic'"),
        (lambda: posegpu.retarget_dataset([], [], "/tmp/x", shard=(3, 2)), r"shard: \(3, 2\)"),
        (lambda: posegpu.retarget_dataset([], [], "/tmp/x", workers=0), "workers"),
    ]
    for call, match in cases:
        with pytest.raises(posegpu.ArgumentError, match=match):
            call()
    with pytest.raises(posegpu.RetargetError, match="rig sets? |rig tpose"):
        posegpu.Library(asset, sources=[asset], rig="tpose")


def test_library_errors_keep_their_subject():
    fox = posegpu.load(data("gltf/khronos/Fox.glb"))
    human = posegpu.procedural.humanoid()
    with pytest.raises(posegpu.RetargetError, match="not a humanoid"):
        posegpu.Library(human, sources=[fox])
    with pytest.raises(posegpu.LoadError, match="BVH line"):
        posegpu.load(b"HIERARCHY\nROOT\n", format="bvh", name="broken")


def test_no_adapter_names_the_backend():
    # An API this machine has no driver for: wgpu finds no adapter.
    code = (
        "import posegpu\n"
        "lib = posegpu.Library(posegpu.procedural.humanoid())\n"
        "assert posegpu.gpu_adapter() is None\n"
        "try:\n"
        "    posegpu.Evaluator(lib, backend='gpu')\n"
        "except posegpu.GpuError as e:\n"
        "    print('raised:', e)\n"
    )
    env = dict(os.environ, WGPU_BACKEND="metal")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "raised: backend='gpu': no GPU adapter found" in p.stdout
