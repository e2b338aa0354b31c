"""Retargeting through Python against the command: the plan's description (`info --against`),
its quality report (`retarget --report`), the baked .glb files byte for byte (`retarget`), and
the compression report (`info --compress`)."""

import numpy as np
import pytest

import posegpu
from conftest import data

PAIRS = [
    ("bvh/makehuman/zombieWalk1.bvh", "gltf/khronos/CesiumMan.glb"),
    ("bvh/cmu_walk_delfem2.bvh", "gltf/kaykit-adventurers/Knight.glb"),
]


def report_of(stdout, source, clip, target):
    """The table `retarget --report` prints for one clip."""
    header = f"{source} [{clip}] on {target}:"
    lines = stdout.splitlines()
    start = lines.index(header) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("sliding in contact")) + 1
    return "\n".join(lines[start:end]) + "\n"


@pytest.mark.parametrize("source,target", PAIRS, ids=["zombie-cesium", "cmu-knight"])
def test_plan_and_report_match_the_command(cli, tmp_path, source, target):
    src, tgt = data(source), data(target)
    s, t = posegpu.load(src), posegpu.load(tgt)
    plan = posegpu.RetargetPlan(s, t)
    _, described, _ = cli("info", tgt, "--against", src)
    assert plan.describe() + "\n" == described
    out = tmp_path / "cli.glb"
    _, printed, _ = cli("retarget", src, "--all", "--target", tgt, "--out", out, "--report")
    clip = s.clip_names[0]
    report = plan.quality(clip)
    assert str(report) == report_of(printed, src, clip, tgt)
    d = report.to_dict()
    assert d["frames"] == report.frames > 0
    assert d["overall"]["max"] >= d["overall"]["p95"] >= 0
    assert {l["limb"] for l in report.limbs} >= {"thigh", "shin"}
    # The library's report is the plan's, at the library's IK weights.
    lib = posegpu.Library(t, sources=[s])
    assert str(lib.quality(lib.find_clip(clip, source=0))) == str(report)
    # Without IK the feet follow the source less closely: the numbers move.
    loose = plan.quality(clip, ik=False)
    assert loose.to_dict()["feet_height"] != d["feet_height"]
    # The baked clips, written over the target's file, are the command's bytes.
    mine = tmp_path / "python.glb"
    plan.bake().save_glb(mine)
    assert mine.read_bytes() == out.read_bytes()
    again = posegpu.retarget(s, t)
    again.save_glb(tmp_path / "again.glb")
    assert (tmp_path / "again.glb").read_bytes() == out.read_bytes()


def test_ue_remap_matches_the_command(cli, tmp_path):
    src, tgt = data("gltf/quaternius/Mech_Mike.glb"), data("gltf/quaternius/Mech_Stan.glb")
    out = tmp_path / "cli.glb"
    cli("retarget", src, "--animation", "Walk", "--target", tgt, "--out", out, "--method", "ue")
    converted = posegpu.retarget(posegpu.load(src), posegpu.load(tgt), clips=["Walk"], method="ue")
    assert converted.clip_names == ["Walk"]
    converted.save_glb(tmp_path / "python.glb")
    assert (tmp_path / "python.glb").read_bytes() == out.read_bytes()
    # What was written loads back, with the target's skeleton.
    back = posegpu.load(tmp_path / "python.glb")
    assert back.bone_names == posegpu.load(tgt).bone_names


def test_baked_clips_play_as_the_plan_at_their_keys():
    s = posegpu.load(data("bvh/cmu_walk_delfem2.bvh"))
    t = posegpu.load(data("gltf/khronos/CesiumMan.glb"))
    baked = posegpu.RetargetPlan(s, t).bake(ik={"feet": 0.0})
    live = posegpu.Library(t, sources=[s], ik={"feet": 0.0})
    times = np.float32([0.0, 0.5, 1.0])  # key times of the 120 fps capture
    want = posegpu.Evaluator(live).evaluate(live.find_clip("cmu_walk_delfem2", source=0), times)
    lib = posegpu.Library(baked)
    got = posegpu.Evaluator(lib).evaluate(lib.find_clip("cmu_walk_delfem2"), times)
    np.testing.assert_allclose(got.component, want.component, atol=1e-4)


def rust_exp(v):
    """Rust's `{:.1e}`: 3.0e-4, where Python writes 3.0e-04."""
    mantissa, exp = f"{v:.1e}".split("e")
    return f"{mantissa}e{int(exp)}"


def test_compression_report_is_info_compress(cli):
    path = data("gltf/khronos/Fox.glb")
    _, printed, _ = cli("info", path, "--compress")
    lib = posegpu.Library(posegpu.load(path), compress=True)
    lines = [
        f"  {r['name']}: keys: {r['raw_bytes']} bytes raw, {r['packed_bytes']} bytes compressed "
        f"({r['ratio']:.1f}:1), largest error {rust_exp(r['worst_error'])} of the skeleton's height"
        for r in lib.compression_report()
    ]
    assert "\n".join(lines) + "\n" == printed
    for r in lib.compression_report():
        assert r["source"] == -1 and r["packed_bytes"] < r["raw_bytes"]
        assert r["ratio"] == pytest.approx(r["raw_bytes"] / r["packed_bytes"])
        assert r["worst_error"] <= posegpu.DEFAULT_TOLERANCE * 1.0001
    # A looser tolerance packs tighter.
    loose = {r["name"]: r["packed_bytes"] for r in lib.compression_report(tolerance=3e-3)}
    for r in lib.compression_report():
        assert loose[r["name"]] <= r["packed_bytes"]
