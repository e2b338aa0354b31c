"""The package as Python sees it: stubs and docstrings for the whole API, dtypes and shapes,
arrays handed over without a copy, and the GIL released while posegpu evaluates."""

import ast
import importlib.resources
import inspect
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import posegpu
from conftest import data


def stub():
    files = importlib.resources.files("posegpu")
    assert files.joinpath("py.typed").is_file(), "py.typed is missing from the package"
    text = files.joinpath("__init__.pyi").read_text()
    return ast.parse(text)


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_the_stubs_describe_every_public_name():
    tree = stub()
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    values = {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    runtime = public(posegpu) - {"posegpu"}  # the extension module itself
    described = set(classes) | functions | values
    assert runtime - described == set(), "public names without stubs"
    for name, node in classes.items():
        if name.startswith("_"):
            continue
        members = {m.name for m in node.body if isinstance(m, ast.FunctionDef)} - {"__init__", "__len__"}
        missing = members - public(getattr(posegpu, name)) - {m for m in members if m.startswith("__")}
        assert missing == set(), f"{name}: stubbed but absent at run time: {missing}"
        stubbed = members | {m.target.id for m in node.body if isinstance(m, ast.AnnAssign)}
        extra = public(getattr(posegpu, name)) - stubbed - set(public(Exception))
        assert extra == set(), f"{name}: public at run time but not stubbed: {extra}"
    proc = classes["_Procedural"]
    assert {m.name for m in proc.body if isinstance(m, ast.FunctionDef)} == public(posegpu.procedural)


def test_every_public_item_has_a_docstring():
    undocumented = []
    for name in public(posegpu) - {"posegpu", "DEFAULT_TOLERANCE"}:
        obj = getattr(posegpu, name)
        if not isinstance(obj, str) and not (obj.__doc__ or "").strip():
            undocumented.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in public(obj):
                if not (getattr(obj, member).__doc__ or "").strip():
                    undocumented.append(f"{name}.{member}")
    for name in public(posegpu.procedural):
        if not (getattr(posegpu.procedural, name).__doc__ or "").strip():
            undocumented.append(f"procedural.{name}")
    assert undocumented == []
    assert "quaternion" in posegpu.Pose.__doc__ and "clamp(scale" in posegpu.Player.__doc__
    assert inspect.signature(posegpu.Evaluator.evaluate).parameters["loop"].default is False


def test_submodule_imports():
    import posegpu.procedural as proc

    assert proc.humanoid().bone_count == 67
    assert proc.humanoid_variant(7).bone_names == proc.humanoid().bone_names
    assert proc.random_asset(3, 40, 2).bone_count == 40


def test_dtypes_and_shapes():
    fox = posegpu.load(data("gltf/khronos/Fox.glb"))
    assert fox.parents.dtype == np.int32 and fox.parents.shape == (24,)
    assert fox.clip_durations.dtype == np.float32 and fox.clip_names == ["Survey", "Walk", "Run"]
    assert fox.rest.shape == (24, 10) and fox.rest.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fox.rest[:, :4], axis=1), 1.0, atol=1e-5)
    assert fox.find_bone(fox.bone_names[5]) == 5 and len(fox) == 3
    lib = posegpu.Library(fox)
    assert lib.clip_sources.tolist() == [-1, -1, -1] and lib.clip_count == 3
    np.testing.assert_array_equal(lib.clip_durations, fox.clip_durations)
    pose = posegpu.Evaluator(lib).evaluate([0, 1, 2, 1], [0.0, 0.2, 0.4, 0.6])
    assert len(pose) == pose.instance_count == 4 and pose.bone_count == 24
    assert pose.component.shape == pose.locals.shape == (4, 24, 10)
    assert pose.skinning.shape == (4, 24, 3, 4) and pose.curves.shape == (4, 0)
    for a in (pose.component, pose.locals, pose.skinning):
        assert a.dtype == np.float32 and a.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(pose.component[..., :4], axis=-1), 1.0, atol=1e-4)


def test_arrays_are_handed_over_without_a_copy():
    lib = posegpu.Library(posegpu.procedural.humanoid())
    pose = posegpu.Evaluator(lib).evaluate(1, np.linspace(0, 1, 100, dtype=np.float32))
    skinning = pose.skinning
    # NumPy does not own the buffer: the evaluator's Rust allocation is behind it.
    assert not skinning.flags.owndata and skinning.base is not None
    assert pose.skinning is skinning and pose.component is pose.component
    # skinning = component matrix x inverse bind, the inverse bind fixed per bone: so between
    # two instances S_a S_b^-1 = C_a C_b^-1, with C built by hand from (quaternion, t, s).
    s_a, s_b = homogeneous(skinning[10]), homogeneous(skinning[70])
    c_a, c_b = matrices(pose.component[10]), matrices(pose.component[70])
    np.testing.assert_allclose(s_a @ np.linalg.inv(s_b), c_a @ np.linalg.inv(c_b), atol=2e-4)


def homogeneous(rows):
    """(B, 3, 4) rows as (B, 4, 4) matrices."""
    out = np.zeros((len(rows), 4, 4))
    out[:, :3] = rows
    out[:, 3, 3] = 1.0
    return out


def matrices(xforms):
    """(B, 10) transforms (quaternion x y z w, translation, scale) as (B, 4, 4) matrices."""
    x, y, z, w = (xforms[:, i].astype(np.float64) for i in range(4))
    r = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)
    out = np.zeros((len(xforms), 4, 4))
    out[:, :3, :3] = r * xforms[:, None, 7:10]
    out[:, :3, 3] = xforms[:, 4:7]
    out[:, 3, 3] = 1.0
    return out


def test_the_gil_is_released_while_evaluating():
    lib = posegpu.Library(posegpu.procedural.humanoid())
    ev = posegpu.Evaluator(lib)
    clips = np.arange(20000, dtype=np.int32) % 4
    times = np.linspace(0, 3, 20000, dtype=np.float32)
    ev.evaluate(clips, times)  # warm
    done = threading.Event()
    ticks = [0]

    def work():
        for _ in range(3):
            ev.evaluate(clips, times)
        done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks[0] += 1
    t.join()
    elapsed = time.perf_counter() - start
    assert ev.rust_seconds > 0 and ev.rust_seconds <= elapsed
    # Held, the GIL would leave this loop a switch interval (5 ms) per evaluation at most.
    assert ticks[0] > 10000, f"the main thread ran {ticks[0]} loops in {elapsed:.3f} s"


def test_rust_seconds_measure_the_call():
    lib = posegpu.Library(posegpu.procedural.humanoid())
    ev = posegpu.Evaluator(lib)
    assert ev.rust_seconds == 0.0 and ev.backend == "cpu" and ev.library is not None
    start = time.perf_counter()
    ev.evaluate(np.zeros(5000, dtype=np.int32), np.zeros(5000, dtype=np.float32))
    wall = time.perf_counter() - start
    assert 0 < ev.rust_seconds <= wall


def test_reprs_name_what_they_hold():
    asset = posegpu.procedural.humanoid()
    assert "67 bones, 4 clips" in repr(asset)
    lib = posegpu.Library(asset, compress=1e-3)
    assert "compressed" in repr(lib) and lib.compress == pytest.approx(1e-3)
    p = posegpu.Player("walk", rate=-2.0, clamp=(-1.0, 1.0), loop=False)
    assert p.effective_rate == -1.0 and p.loop is False and p.clamp == (-1.0, 1.0)
    assert "Player('walk'" in repr(p).replace('"', "'")
    assert posegpu.Player(0).clamp is None


def test_ik_weights_reach_retargeted_instances():
    s = posegpu.load(data("bvh/cmu_walk_delfem2.bvh"))
    t = posegpu.load(data("gltf/kaykit-adventurers/Knight.glb"))
    lib = posegpu.Library(t, sources=[s])
    assert lib.ik == {"feet": 1.0, "hands": 0.0} and len(lib.sources) == 1
    assert lib.target.bone_names == t.bone_names
    ev = posegpu.Evaluator(lib)
    clip = lib.find_clip("cmu_walk_delfem2", source=0)
    with_ik = ev.evaluate(clip, [0.4, 1.1])
    without = ev.evaluate(clip, [0.4, 1.1], ik={"feet": 0.0})
    assert np.abs(with_ik.component - without.component).max() > 1e-3
    desc = lib.plan(0).describe()
    assert "driven by" in desc and Path(data("bvh/cmu_walk_delfem2.bvh")).name in desc


def test_recycled_buffers_never_touch_live_arrays():
    lib = posegpu.Library(posegpu.procedural.humanoid())
    ev = posegpu.Evaluator(lib)
    fresh = posegpu.Evaluator(lib)
    a_times = np.linspace(0, 1, 500, dtype=np.float32)
    b_times = a_times[::-1].copy()
    first = ev.evaluate(1, a_times)
    kept_skinning, kept_component = first.skinning, first.component
    saved = kept_skinning.copy(), kept_component.copy()
    del first  # its poses go back to the evaluator; the arrays still hold their buffers
    for times in (b_times, a_times, b_times):
        pose = ev.evaluate(2, times)
        want = fresh.evaluate(2, times)
        np.testing.assert_array_equal(pose.component, want.component)
        np.testing.assert_array_equal(pose.skinning, want.skinning)
        np.testing.assert_array_equal(pose.locals, want.locals)
        del pose
    np.testing.assert_array_equal(kept_skinning, saved[0])
    np.testing.assert_array_equal(kept_component, saved[1])
    # A smaller frame in recycled buffers has its own shape.
    small = ev.evaluate([0, 3], [0.5, 0.25])
    assert small.component.shape == (2, 67, 10) and small.skinning.shape == (2, 67, 3, 4)
    np.testing.assert_array_equal(small.component, fresh.evaluate([0, 3], [0.5, 0.25]).component)
