"""Python's poses against `posegpu eval`'s JSON on real files: the CPU twin must give the very
numbers the command writes (same code, same f32), the GPU the same within 1e-4 of the
skeleton's size."""

import numpy as np
import pytest

import posegpu
from conftest import data, json_poses, need_gpu

# (file, animation name or None for the first, times): every format and tool of the data set.
CASES = [
    ("gltf/khronos/CesiumMan.glb", None, [-0.5, 0.0, 0.37, 1.0, 2.5]),
    ("gltf/khronos/Fox.glb", "Run", [0.0, 0.11, 0.5, 0.93]),  # non-uniform keys
    ("gltf/khronos/RiggedSimple.glb", None, [0.0, 0.02, 0.5, 3.0]),  # keys start at 1/24
    ("gltf/khronos/SimpleSkin.gltf", None, [0.0, 0.6, 1.7]),  # a data-URI buffer
    ("gltf/kaykit-rig-medium/Med_General.glb", None, [0.0, 0.21, 0.8]),  # STEP, decimated keys
    ("gltf/kaykit-rig-medium/manny_med_mod.gltf", None, [0.0, 1.0]),  # no clips: reference pose
    ("bvh/cmu_walk_delfem2.bvh", None, [0.0, 0.5, 1.234, 2.9]),
    ("bvh/makehuman/zombieWalk1.bvh", None, [-0.3, 0.4, 1.1]),
]


def extent(component):
    """The skeleton's size as the poses show it: the farthest joint from the origin."""
    return max(float(np.abs(component[..., 4:7]).max()), 1e-3)


def assert_close_poses(got, want, size, what):
    """Rotations up to sign and 1e-4, translations within 1e-4 of `size`, scales 1e-4."""
    q_err = np.minimum(np.abs(got[..., :4] - want[..., :4]), np.abs(got[..., :4] + want[..., :4]))
    assert q_err.max() <= 1e-4, f"{what}: rotation off by {q_err.max()}"
    t_err = np.abs(got[..., 4:7] - want[..., 4:7]).max()
    assert t_err <= 1e-4 * size, f"{what}: translation off by {t_err} (size {size})"
    s_err = np.abs(got[..., 7:] - want[..., 7:]).max()
    assert s_err <= 1e-4, f"{what}: scale off by {s_err}"


def python_poses(asset, name, times, looping, backend, **library):
    lib = posegpu.Library(asset, **library)
    clip = 0 if name is None else lib.find_clip(name)
    ev = posegpu.Evaluator(lib, backend=backend)
    return lib, ev.evaluate(clip, np.asarray(times, dtype=np.float32), loop=looping)


@pytest.mark.parametrize("rel,name,times", CASES, ids=[c[0].split("/")[-1] for c in CASES])
@pytest.mark.parametrize("looping", [False, True], ids=["clamped", "looped"])
def test_cpu_matches_the_command_exactly(cli_eval, rel, name, times, looping):
    path = data(rel)
    args = (["--animation", name] if name else []) + (["--loop"] if looping else [])
    doc = cli_eval(path, times, *args)
    asset = posegpu.load(path)
    assert asset.bone_names == doc["bones"]
    assert asset.parents.tolist() == doc["parents"]
    lib, pose = python_poses(asset, name, times, looping, "cpu")
    assert lib.bone_names == doc["bones"]
    np.testing.assert_array_equal(pose.component, json_poses(doc, "component"))
    np.testing.assert_array_equal(pose.locals, json_poses(doc, "local"))
    assert pose.skinning.shape == (len(times), len(doc["bones"]), 3, 4)


@pytest.mark.parametrize("rel,name,times", CASES, ids=[c[0].split("/")[-1] for c in CASES])
def test_gpu_matches_the_command(cli_eval, rel, name, times):
    need_gpu()
    path = data(rel)
    doc = cli_eval(path, times, "--loop", *(["--animation", name] if name else []))
    _, pose = python_poses(posegpu.load(path), name, times, True, "gpu")
    want = json_poses(doc, "component")
    assert_close_poses(pose.component, want, extent(want), rel)
    assert_close_poses(pose.locals, json_poses(doc, "local"), extent(want), rel)


def test_gpu_skinning_matches_the_cpu_twin():
    need_gpu()
    lib = posegpu.Library(posegpu.load(data("gltf/khronos/CesiumMan.glb")))
    times = np.linspace(0.0, 2.0, 33, dtype=np.float32)
    cpu = posegpu.Evaluator(lib).evaluate(0, times)
    gpu = posegpu.Evaluator(lib, backend="gpu").evaluate(0, times)
    scale = np.maximum(1.0, np.abs(cpu.skinning).max(axis=(2, 3), keepdims=True))
    assert (np.abs(gpu.skinning - cpu.skinning) / scale).max() <= 1e-4


# Retargeted at run time, compressed, baked: the command's flags and the library's arguments.
RETARGETED = [
    ("gltf/kaykit-adventurers/Knight.glb", "bvh/cmu_walk_delfem2.bvh", "cmu_walk_delfem2", [], {}),
    ("gltf/khronos/CesiumMan.glb", "bvh/makehuman/zombieWalk1.bvh", "zombieWalk1",
     ["--ik-feet", "0.5", "--ik-hands", "1"], {"ik": {"feet": 0.5, "hands": 1.0}}),
    ("gltf/quaternius/Mech_Stan.glb", "gltf/quaternius/Mech_Mike.glb", "Walk",
     ["--rig", "humanoid"], {"rig": "humanoid"}),
    ("gltf/quaternius/Mech_Stan.glb", "gltf/quaternius/Mech_Mike.glb", "Run",
     ["--rig", "animation_scaled", "--rest", "bind"], {"rig": "animation_scaled", "rest": "bind"}),
    ("gltf/kaykit-adventurers/Knight.glb", "bvh/cmu_walk_delfem2.bvh", "cmu_walk_delfem2",
     ["--bake"], {"bake": True}),
    ("gltf/kaykit-adventurers/Knight.glb", "bvh/cmu_walk_delfem2.bvh", "cmu_walk_delfem2",
     ["--rest", "nodes"], {"rest": "nodes"}),
]


@pytest.mark.parametrize("target,source,clip,flags,kwargs", RETARGETED,
                         ids=["knight-cmu", "cesium-zombie-ik", "stan-mike-ue", "stan-mike-scaled", "baked", "rest-nodes"])
def test_retargeted_clips_match_the_command(cli_eval, target, source, clip, flags, kwargs):
    times = [0.0, 0.31, 0.77, 1.2]
    doc = cli_eval(data(target), times, "--animation-from", data(source), "--animation", clip, *flags)
    lib = posegpu.Library(posegpu.load(data(target)), sources=[posegpu.load(data(source))], **kwargs)
    assert lib.bone_names == doc["bones"]
    pose = posegpu.Evaluator(lib).evaluate(lib.find_clip(clip, source=0), np.float32(times))
    np.testing.assert_array_equal(pose.component, json_poses(doc, "component"))
    np.testing.assert_array_equal(pose.locals, json_poses(doc, "local"))


def test_retargeted_on_the_gpu(cli_eval):
    need_gpu()
    times = [0.1, 0.9, 1.6]
    target, source = data("gltf/kaykit-adventurers/Knight.glb"), data("bvh/cmu_walk_delfem2.bvh")
    doc = cli_eval(target, times, "--animation-from", source, "--animation", "cmu_walk_delfem2")
    lib = posegpu.Library(posegpu.load(target), sources=[posegpu.load(source)])
    pose = posegpu.Evaluator(lib, backend="gpu").evaluate("cmu_walk_delfem2", times)
    want = json_poses(doc, "component")
    assert_close_poses(pose.component, want, extent(want), "Knight <- cmu (gpu)")


@pytest.mark.parametrize("backend_name", ["cpu", "gpu"])
def test_compressed_clips_match_the_command(cli_eval, backend_name):
    if backend_name == "gpu":
        need_gpu()
    path, times = data("gltf/khronos/Fox.glb"), [0.0, 0.4, 1.3]
    doc = cli_eval(path, times, "--animation", "Walk", "--compress", "--backend", backend_name)
    lib = posegpu.Library(posegpu.load(path), compress=True)
    assert lib.compress == pytest.approx(posegpu.DEFAULT_TOLERANCE)
    pose = posegpu.Evaluator(lib, backend=backend_name).evaluate("Walk", times)
    want = json_poses(doc, "component")
    if backend_name == "cpu":
        np.testing.assert_array_equal(pose.component, want)
    else:
        assert_close_poses(pose.component, want, extent(want), "Fox compressed (gpu)")
    plain = posegpu.Evaluator(posegpu.Library(posegpu.load(path))).evaluate("Walk", times)
    # Compression moved something, within its tolerance of the skeleton's height.
    assert np.abs(plain.component - pose.component).max() > 0


@pytest.mark.parametrize("rel,fmt", [
    ("gltf/khronos/CesiumMan.glb", "glb"),
    ("gltf/khronos/SimpleSkin.gltf", "gltf"),
    ("bvh/cmu_walk_delfem2.bvh", "bvh"),
])
def test_bytes_load_as_the_file_does(rel, fmt):
    path = data(rel)
    with open(path, "rb") as f:
        blob = f.read()
    a, b = posegpu.load(path), posegpu.load(blob, format=fmt, name="cmu_walk_delfem2")
    assert a.bone_names == b.bone_names and a.clip_names == b.clip_names
    np.testing.assert_array_equal(a.clip_durations, b.clip_durations)
    times = np.linspace(0, float(a.clip_durations[0]), 9, dtype=np.float32)
    pa = posegpu.Evaluator(posegpu.Library(a)).evaluate(0, times)
    pb = posegpu.Evaluator(posegpu.Library(b)).evaluate(0, times)
    np.testing.assert_array_equal(pa.component, pb.component)
    # bytearray and memoryview are bytes too.
    c = posegpu.load(memoryview(bytearray(blob)), format=fmt, name="cmu_walk_delfem2")
    assert c.bone_names == a.bone_names


def test_scalars_broadcast_and_names_resolve():
    lib = posegpu.Library(posegpu.procedural.humanoid())
    ev = posegpu.Evaluator(lib)
    times = np.array([0.1, 0.5, 0.9], dtype=np.float64)
    by_name = ev.evaluate(["walk", "run", "walk"], times)
    by_index = ev.evaluate(np.array([1, 2, 1], dtype=np.int64), times.tolist())
    np.testing.assert_array_equal(by_name.component, by_index.component)
    shared_time = ev.evaluate([1, 2, 1], 0.5)
    np.testing.assert_array_equal(shared_time.component[1], by_index.component[1])
    one = ev.evaluate("run", 0.9)
    assert one.component.shape == (1, 67, 10)
    np.testing.assert_array_equal(one.component[0], ev.evaluate(2, [0.9]).component[0])


def test_curves_match_the_command(cli_eval):
    path = "/usr/share/assimp/models/glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf"
    import os

    if not os.path.exists(path):
        pytest.skip("assimp-testmodels' AnimatedMorphCube is not installed")
    times = [0.0, 0.4, 1.1, 2.0]
    doc = cli_eval(path, times)
    lib = posegpu.Library(posegpu.load(path))
    assert lib.curve_names == doc["curves"] and len(doc["curves"]) > 0
    pose = posegpu.Evaluator(lib).evaluate(0, times)
    np.testing.assert_array_equal(pose.curves, np.array([f["curves"] for f in doc["frames"]], np.float32))
    assert np.ptp(pose.curves) > 0  # the weights move
