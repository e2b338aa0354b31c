"""retarget_dataset: every clip of every source onto every target, the same bytes whatever the
worker count or sharding, the command's .glb bytes, .npz arrays that are the written clips'
poses, and a per-clip report that goes on past a broken file."""

import json
from pathlib import Path

import numpy as np
import pytest

import posegpu
from conftest import data

FRAMES = 60


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    broken = root / "broken.bvh"
    broken.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    sources = [data("bvh/cmu_walk_delfem2.bvh"), data("bvh/makehuman/zombieWalk1.bvh"), str(broken)]
    targets = [data("gltf/khronos/CesiumMan.glb"), data("gltf/kaykit-adventurers/Knight.glb")]
    return sources, targets


def files_of(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def full(inputs, tmp_path_factory):
    sources, targets = inputs
    out = tmp_path_factory.mktemp("full")
    summary = posegpu.retarget_dataset(sources, targets, out, npz=True, workers=1,
                                       report_frames=FRAMES, progress=False)
    return out, summary


def test_every_pair_is_written_and_the_broken_file_is_reported(full, inputs):
    out, summary = full
    sources, targets = inputs
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.glb"))
    assert written == sorted(f"{Path(t).stem}/{Path(s).stem}.glb" for t in targets for s in sources[:2])
    assert len(summary["outputs"]) == 4
    failed = summary["failed"]
    # Sources and targets are taken sorted by path, as the command takes them.
    assert [(Path(f["source"]).name, f["target"]) for f in failed] == [
        ("broken.bvh", t) for t in sorted(targets)]
    assert all("BVH" in f["error"] for f in failed)
    records = json.loads(Path(summary["report_json"]).read_text())
    assert records == summary["records"]
    ok = [r for r in records if r["status"] == "ok"]
    assert len(ok) == 4  # one clip per source, on each target
    csv = Path(summary["report_csv"]).read_text().splitlines()
    assert len(csv) == 1 + len(records) and csv[0].startswith("source,target,clip_index,clip,status")


def test_the_same_bytes_whatever_the_workers(full, inputs, tmp_path):
    sources, targets = inputs
    out, _ = full
    posegpu.retarget_dataset(sources, targets, tmp_path, npz=True, workers=2,
                             report_frames=FRAMES, progress=False)
    assert files_of(tmp_path) == files_of(out)


def test_shards_split_the_sources(full, inputs, tmp_path, capfd):
    sources, targets = inputs
    out, _ = full
    for i in range(2):
        s = posegpu.retarget_dataset(sources, targets, tmp_path, npz=True, shard=(i, 2),
                                     report_frames=FRAMES)
        assert Path(s["report_json"]).name == f"report-{i}-of-2.json"
    err = capfd.readouterr().err
    assert "retarget [" in err and "4/4" in err and "2/2" in err  # shard 0: 2 sources x 2 targets
    whole = {k: v for k, v in files_of(out).items() if k.suffix in (".glb", ".npz")}
    shards = {k: v for k, v in files_of(tmp_path).items() if k.suffix in (".glb", ".npz")}
    assert shards == whole
    # Shard i takes every second source of the sorted list from the i-th.
    for i in range(2):
        rec = json.loads((tmp_path / f"report-{i}-of-2.json").read_text())
        assert sorted({r["source"] for r in rec}) == sorted(sources)[i::2]


def test_glb_bytes_are_the_commands(full, cli, tmp_path):
    out, _ = full
    mine = out / "Knight" / "cmu_walk_delfem2.glb"
    theirs = tmp_path / "cli.glb"
    cli("retarget", data("bvh/cmu_walk_delfem2.bvh"), "--all", "--target",
        data("gltf/kaykit-adventurers/Knight.glb"), "--out", theirs)
    assert mine.read_bytes() == theirs.read_bytes()


def test_npz_holds_the_written_clips_poses(full):
    out, _ = full
    arrays = np.load(out / "CesiumMan" / "zombieWalk1.npz")
    written = posegpu.load(out / "CesiumMan" / "zombieWalk1.glb")
    assert arrays["bones"].tolist() == written.bone_names
    assert arrays["parents"].tolist() == written.parents.tolist()
    assert arrays["clip_names"].tolist() == written.clip_names == ["zombieWalk1"]
    times, component = arrays["clip000_times"], arrays["clip000_component"]
    assert component.shape == (len(times), written.bone_count, 10) and len(times) > 2
    pose = posegpu.Evaluator(posegpu.Library(written)).evaluate(0, times)
    np.testing.assert_allclose(component, pose.component, atol=1e-5)


def test_report_values_are_the_plans_quality(full):
    _, summary = full
    rec = next(r for r in summary["records"]
               if r["status"] == "ok" and Path(r["target"]).name == "Knight.glb"
               and r["clip"] == "cmu_walk_delfem2")
    s = posegpu.load(data("bvh/cmu_walk_delfem2.bvh"))
    t = posegpu.load(data("gltf/kaykit-adventurers/Knight.glb"))
    q = posegpu.RetargetPlan(s, t).quality("cmu_walk_delfem2", frames=FRAMES).to_dict()
    assert rec["frames"] == q["frames"]
    assert rec["dir_mean_deg"] == pytest.approx(q["overall"]["mean"], rel=1e-6)
    assert rec["feet_height_max"] == pytest.approx(q["feet_height"]["max"], rel=1e-6)
    assert rec["meets_aim"] == q["meets_aim"]
    assert rec["output"] == "Knight/cmu_walk_delfem2.glb" and rec["npz"] == "Knight/cmu_walk_delfem2.npz"


def test_skip_existing_leaves_what_is_there(full, inputs, tmp_path):
    sources, targets = inputs
    s = posegpu.retarget_dataset(sources[:1], targets[:1], tmp_path, report_frames=0, progress=False)
    first = s["outputs"][0]
    before = Path(first).stat().st_mtime_ns
    again = posegpu.retarget_dataset(sources[:1], targets[:1], tmp_path, skip_existing=True, progress=False)
    assert [r["status"] for r in again["records"]] == ["skipped"]
    assert Path(first).stat().st_mtime_ns == before
