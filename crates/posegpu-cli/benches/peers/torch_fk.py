#!/usr/bin/env python3
"""A peer for posegpu's benchmark: batched forward kinematics in plain PyTorch.

This is the code a performance researcher would write instead of posegpu: sample every
instance's clip (key search, lerp / nlerp), build local TRS matrices, walk the hierarchy one
depth level at a time with batched gathers and matmuls, and multiply by the inverse bind
matrices. Tensor ops only, no custom kernels; CUDA when present, else the CPU.

It reads a workload directory written by posegpu's exporter (format "posegpu-peer-1":
workload.json, inverse_bind.f32, times.f32, values.f32, sample_skinning.f32), first checks
its skinning matrices against posegpu's CPU twin on the sample instances, then times crowds
of growing size (median ms per frame, bones per second).

`--compile` runs the same function through torch.compile (dynamic shapes, so one
compilation serves the sample and every crowd size); the compiling first call, like every
size's first frame, is left out of the timings, and the compile time is reported apart. `--selftest-first` checks the code against the numpy oracle
on a tiny random workload before the workload (eager: it checks the code, not the compiler).
cuda_fk.py imports the loading, the comparison and the self-test's oracle from here.

    torch_fk.py WORKLOAD_DIR [--instances 10000,100000,1000000] [--frames 20]
                [--device auto|cuda|cpu] [--json PATH] [--max-seconds 300]
                [--compile [--compile-mode MODE]] [--selftest-first]
    torch_fk.py --selftest [DIR] [--device cpu]   # tiny random workload, numpy float64 oracle
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

try:
    import torch
except ImportError:  # the numpy oracle below still works without torch
    torch = None

FLOATS_PER_BONE = 100  # rough peak of live float32 intermediates per (instance, bone)


# ------------------------------------------------- the exporter's files (shared with cuda_fk.py)


def read_export(path):
    """The exporter's files as numpy float32 arrays: meta (workload.json), bones, parents,
    clips, times [K] (every clip's key times in a row), values [K, B, 10] (translation,
    rotation x y z w, scale), inverse_bind [B, 3, 4] (rows), depth [B] (0 for roots)."""
    path = Path(path)
    meta = json.loads((path / "workload.json").read_text())
    if meta.get("format") != "posegpu-peer-1":
        raise SystemExit(f"{path}: not a posegpu-peer-1 workload")
    b, k = meta["bones"], meta["key_count"]
    read = lambda name: np.fromfile(path / name, dtype="<f4")
    times, values = read("times.f32"), read("values.f32")
    assert times.size == k and values.size == k * b * 10, "file sizes disagree with json"
    parents = meta["parents"]
    depth = []
    for i, p in enumerate(parents):
        assert p < i, "parents must come first"
        depth.append(0 if p < 0 else depth[p] + 1)
    return SimpleNamespace(meta=meta, bones=b, parents=parents, clips=meta["clips"], times=times,
                           values=values.reshape(k, b, 10),
                           inverse_bind=read("inverse_bind.f32").reshape(b, 3, 4), depth=depth)


def compare(got, path, meta):
    """Prints and returns how far `got` ([S, B, 3, 4], the sample's skinning) is from the
    sample_skinning.f32 beside the workload, as the largest deviation over each matrix's
    size against the workload's tolerance."""
    s = meta["sample"]
    n, b, tol = s["instances"], meta["bones"], meta["tolerance"]
    expected = np.fromfile(Path(path) / "sample_skinning.f32", dtype="<f4").astype(np.float64)
    expected = expected.reshape(n, b, 12)
    got = np.asarray(got, dtype=np.float64).reshape(n, b, 12)
    scale = np.maximum(1.0, np.abs(expected).max(-1))
    deviation = float((np.abs(got - expected).max(-1) / scale).max()) if n else 0.0
    ok = bool(deviation <= tol)  # False on NaN
    against = meta.get("reference", "posegpu's CPU twin")
    print(f"check: {n} instances x {b} bones against {against}: "
          f"largest deviation {deviation:.3g} (tolerance {tol:g}): {'ok' if ok else 'FAIL'}")
    return {"deviation": deviation, "tolerance": tol, "ok": ok}


# ---------------------------------------------------------------------------- the peer


class Workload:
    """The exporter's files, as float32 / int64 tensors on `device`."""

    def __init__(self, path, device):
        ex = read_export(path)
        self.meta, self.bones = ex.meta, ex.bones
        b, clips, times, parents = ex.bones, ex.clips, ex.times, ex.parents
        kmax = max(c["keys"] for c in clips)
        padded = np.full((len(clips), kmax), np.inf, np.float32)  # +inf never counts as <= u
        for i, c in enumerate(clips):
            padded[i, : c["keys"]] = times[c["first_key"] : c["first_key"] + c["keys"]]
        dev = lambda a, dtype=torch.float32: torch.as_tensor(a, dtype=dtype, device=device)
        self.inverse_bind = dev(ex.inverse_bind)
        self.values = dev(ex.values)
        self.times = dev(padded)
        self.duration = dev([c["duration"] for c in clips])
        self.first_key = dev([c["first_key"] for c in clips], torch.int64)
        self.keys = dev([c["keys"] for c in clips], torch.int64)
        self.clip_count, self.kmax = len(clips), kmax
        # Depth levels: every bone of level d has its parent in a level < d.
        depth = ex.depth
        self.levels = []
        for d in range(1, max(depth) + 1):
            bones = [i for i in range(b) if depth[i] == d]
            self.levels.append((dev(bones, torch.int64), dev([parents[i] for i in bones], torch.int64)))


def map_time(w, clip, t, looping):
    d = w.duration[clip]
    if looping:
        r = t - d * torch.floor(t / d)
        u = torch.where((r >= 0) & (r < d), r, 0.0)
    else:
        u = torch.minimum(t.clamp(min=0.0), d)
    return torch.where(d > 0, u, 0.0)


def local_matrices(w, clip, t, looping):
    """[N, B, 3, 4] local matrices T * R * S of clip `clip[i]` at time `t[i]`."""
    u = map_time(w, clip, t, looping)
    times, n = w.times[clip], w.keys[clip]  # [N, Kmax] (inf-padded), [N]
    k0 = (torch.searchsorted(times, u[:, None], right=True)[:, 0] - 1).clamp(min=0)
    k0 = torch.minimum(k0, n - 1)
    last = times.gather(1, (n - 1)[:, None])[:, 0]
    edge = (u <= times[:, 0]) | (u >= last)
    k1 = torch.where(edge, k0, k0 + 1)
    t0, t1 = times.gather(1, k0[:, None])[:, 0], times.gather(1, k1[:, None])[:, 0]
    a = torch.where(edge, 0.0, (u - t0) / (t1 - t0))[:, None, None]  # NaN on edges is masked
    v0, v1 = w.values[w.first_key[clip] + k0], w.values[w.first_key[clip] + k1]  # [N, B, 10]
    tr = v0[..., 0:3] * (1 - a) + v1[..., 0:3] * a
    sc = v0[..., 7:10] * (1 - a) + v1[..., 7:10] * a
    q0, q1 = v0[..., 3:7], v1[..., 3:7]
    sign = torch.where((q0 * q1).sum(-1, keepdim=True) >= 0, 1.0, -1.0)  # shorter arc
    q = q0 * (1 - a) + q1 * (a * sign)
    q = q * torch.rsqrt((q * q).sum(-1, keepdim=True))
    del v0, v1, q0, q1
    x, y, z, qw = q.unbind(-1)
    sx, sy, sz = sc.unbind(-1)
    tx, ty, tz = tr.unbind(-1)
    m = [
        (1 - 2 * (y * y + z * z)) * sx, 2 * (x * y - qw * z) * sy, 2 * (x * z + qw * y) * sz, tx,
        2 * (x * y + qw * z) * sx, (1 - 2 * (x * x + z * z)) * sy, 2 * (y * z - qw * x) * sz, ty,
        2 * (x * z - qw * y) * sx, 2 * (y * z + qw * x) * sy, (1 - 2 * (x * x + y * y)) * sz, tz,
    ]
    return torch.stack(m, -1).unflatten(-1, (3, 4))


def compose(a, b):
    """Affine 3x4 product a * b (implied last rows 0 0 0 1), broadcast over leading dims."""
    out = a[..., :3] @ b
    out[..., 3] += a[..., 3]
    return out


def forward_kinematics(w, clip, t, looping=True):
    """[N, B, 3, 4] skinning matrices for instance i playing clip[i] at time t[i]."""
    world = local_matrices(w, clip, t, looping)  # becomes world, level by level, in place
    for bones, parents in w.levels:
        world[:, bones] = compose(world[:, parents], world[:, bones])
    return compose(world, w.inverse_bind)


def check(w, path, device, fk=forward_kinematics):
    s = w.meta["sample"]
    clip = torch.tensor(s["clip"], dtype=torch.int64, device=device)
    t = torch.tensor(s["time"], dtype=torch.float32, device=device)
    got = fk(w, clip, t, s.get("looping", True)).double().cpu().numpy()
    return compare(got, path, w.meta)


def selftest(device):
    """The self-test's workload (write_selftest) checked on `device`, eagerly."""
    with tempfile.TemporaryDirectory() as d:
        write_selftest(Path(d))
        return check(Workload(d, device), d, device)


def free_bytes(device):
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 1 << 62


def time_size(w, n, frames, device, deadline, fk=forward_kinematics):
    """(median ms per frame, frames timed, seconds of the untimed first frame) for a crowd of
    n instances, or a string saying why not. The first frame warms up (under torch.compile
    it compiles when the shape is new)."""
    need = n * (w.bones * FLOATS_PER_BONE + w.kmax + 8) * 4
    if need > 0.9 * free_bytes(device):
        return f"would not fit (needs ~{need / 2**30:.1f} GiB)"
    i = torch.arange(n, device=device)
    clip = i % w.clip_count
    phase = torch.frac(i.to(torch.float32) * 0.618034) * w.duration[clip]  # as posegpu's crowd
    del i
    cuda = device.type == "cuda"
    ms, out, oom, first = [], None, False, 0.0
    try:
        for f in range(max(1, frames) + 1):  # frame 0 warms up
            t = phase + f / 60.0
            out = None
            wall = time.perf_counter()
            if cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                out = fk(w, clip, t)
                end.record()
                torch.cuda.synchronize()
                elapsed = start.elapsed_time(end)
            else:
                t0 = time.perf_counter()
                out = fk(w, clip, t)
                elapsed = (time.perf_counter() - t0) * 1e3
            if f == 0:
                first = time.perf_counter() - wall
            assert out.shape == (n, w.bones, 3, 4) and out.dtype == torch.float32
            if f > 0:
                ms.append(elapsed)
                if len(ms) >= 3 and time.perf_counter() > deadline:
                    break  # out of time: keep the frames measured so far
    except getattr(torch.cuda, "OutOfMemoryError", MemoryError):
        oom = True  # handled out here, once the failed frame's tensors are released
    out = None
    if cuda:
        torch.cuda.empty_cache()
    return "out of memory" if oom else (statistics.median(ms), len(ms), first)


def save(args, result):
    """The JSON so far: written after every step, so a run stopped by a timeout leaves what it
    measured."""
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


def run(args):
    if torch is None:
        raise SystemExit("torch is not importable")
    started = time.perf_counter()
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"device: {name}\ntorch: {torch.__version__}")
    result = {"device": name, "torch": torch.__version__, "mode": "eager", "rows": [], "skipped": []}
    if args.selftest_first and not args.selftest:
        print("selftest: a tiny random workload against a float64 numpy oracle")
        result["selftest"] = selftest(device)
    w = Workload(args.workload, device)
    fk = forward_kinematics
    if args.compile:
        result.update(mode="torch.compile", compile_mode=args.compile_mode)
    save(args, result)
    first = time.perf_counter()
    try:
        if args.compile:
            # Dynamic shapes: one compilation for every crowd size and the sample, not one each.
            mode = None if args.compile_mode == "default" else args.compile_mode
            fk = torch.compile(forward_kinematics, mode=mode, dynamic=True)
        result["check"] = check(w, args.workload, device, fk)
    except Exception as e:  # under torch.compile: no triton, no C compiler, a dynamo limit...
        if not args.compile:
            raise
        import traceback
        traceback.print_exc()
        why = (str(e).strip().splitlines() or [""])[0][:300]
        result["error"] = f"torch.compile failed: {type(e).__name__}: {why}"
        result["check"] = {"ok": False, "error": result["error"]}
        print(result["error"])
        save(args, result)
        return result
    if args.compile:
        result["compile_s"] = time.perf_counter() - first
        print(f"compile: the first call (compiling, then the sample) took {result['compile_s']:.1f} s, "
              "not in the timings")
    save(args, result)
    if args.selftest:
        return result
    print(f"{'instances':>10} {'bones':>6} {'ms/frame':>10} {'Gbones/s':>9}")

    def row(n, r):
        ms, frames, warmup = r
        rate = n * w.bones / (ms * 1e-3)
        extra = f"   (first frame {warmup:.1f} s, not timed)" if args.compile else ""
        print(f"{n:>10} {w.bones:>6} {ms:>10.3f} {rate / 1e9:>9.3f}{extra}")
        if args.compile:
            result["compile_s"] += max(0.0, warmup - ms * 1e-3)  # a new shape may compile again
        return {"instances": n, "bones": w.bones, "ms": ms, "bones_per_s": rate,
                "frames": frames, "first_frame_s": warmup}

    measure = lambda n, deadline: time_size(w, n, args.frames, device, deadline, fk)  # noqa: E731
    return sweep(args, result, w.bones, started, measure, row)


def sweep(args, result, bones, started, measure, row):
    """Each size of --instances until --max-seconds from `started`: `measure(n, deadline)` times
    it (a reason string where it cannot), `row(n, measured)` prints it and gives its JSON row.
    The JSON is saved after every size. Shared with cuda_fk.py."""
    deadline = started + args.max_seconds
    for n in (int(x) for x in args.instances.split(",") if x):
        if time.perf_counter() > deadline:
            print(f"{n:>10} {bones:>6}  skipped: past --max-seconds {args.max_seconds:g}")
            result["skipped"].append({"instances": n, "reason": "max-seconds"})
            continue
        r = measure(n, deadline)
        if isinstance(r, str):
            print(f"{n:>10} {bones:>6}  {r}")
            result["skipped"].append({"instances": n, "reason": r})
            continue
        result["rows"].append(row(n, r))
        save(args, result)
    return result


# ---------------------------------------------------------------- selftest: numpy oracle


def ref_rotate(q, v):
    """Rotates v by the unit quaternion q = (x, y, z, w)."""
    u, w = q[:3], q[3]
    return v + 2 * w * np.cross(u, v) + 2 * np.cross(u, np.cross(u, v))


def ref_trs(t, q, s):
    m = np.eye(4)
    m[:3, :3] = np.column_stack([ref_rotate(q, e) for e in np.eye(3)]) * s  # columns scaled
    m[:3, 3] = t
    return m


def ref_skinning(meta, inverse_bind, times, values):
    """Expected [S, B, 3, 4] skinning of meta's sample: float64, one instance at a time."""
    sample, parents = meta["sample"], meta["parents"]
    out = np.zeros((sample["instances"], meta["bones"], 3, 4))
    ib = [np.vstack([m.reshape(3, 4), [0, 0, 0, 1]]) for m in inverse_bind.astype(np.float64)]
    for s, (c, t) in enumerate(zip(sample["clip"], sample["time"])):
        clip = meta["clips"][c]
        d, first, n = clip["duration"], clip["first_key"], clip["keys"]
        if d <= 0:
            u = 0.0
        elif sample["looping"]:
            r = t - d * np.floor(t / d)
            u = r if 0 <= r < d else 0.0
        else:
            u = min(max(t, 0.0), d)
        T = [float(x) for x in times[first : first + n]]
        if u <= T[0]:
            k0 = k1 = 0
        elif u >= T[-1]:
            k0 = k1 = n - 1
        else:
            k0 = max(k for k in range(n) if T[k] <= u)
            k1 = k0 + 1
        a = 0.0 if k0 == k1 else (u - T[k0]) / (T[k1] - T[k0])
        world = []
        for b, p in enumerate(parents):
            v0 = values[first + k0, b].astype(np.float64)
            v1 = values[first + k1, b].astype(np.float64)
            q0, q1 = v0[3:7], v1[3:7]
            if np.dot(q0, q1) < 0:
                q1 = -q1
            q = q0 + (q1 - q0) * a
            local = ref_trs(v0[:3] + (v1[:3] - v0[:3]) * a, q / np.linalg.norm(q),
                            v0[7:] + (v1[7:] - v0[7:]) * a)
            world.append(local if p < 0 else world[p] @ local)
            out[s, b] = (world[b] @ ib[b])[:3]
    return out


def write_selftest(path, seed=7):
    """A tiny random workload in the exporter's format, with the oracle's skinning."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    b = int(rng.integers(3, 6))
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, b)]
    leaves = set(range(b)) - set(parents)
    unit = lambda v: v / np.linalg.norm(v)
    clips, times, values = [], [], []
    for name, d, n, t0 in (("walk", 1.0, int(rng.integers(3, 7)), 0.0), ("wave", 0.75, int(rng.integers(1, 4)), 0.1)):
        ts = np.sort(rng.uniform(t0, d * 0.9, n))
        ts[0] = t0
        clips.append({"name": name, "duration": d, "first_key": len(times), "keys": n})
        times += list(ts)
        for _ in range(n):
            for bone in range(b):
                q = unit(rng.normal(size=4)) * rng.choice([-1, 1])  # sign flips
                s = rng.uniform(0.5, 1.5, 3) if bone in leaves else np.ones(3)
                values.append(np.concatenate([rng.uniform(-1, 1, 3), q, s]))
    ib = np.stack([ref_trs(rng.uniform(-1, 1, 3), unit(rng.normal(size=4)), np.ones(3))[:3]
                   for _ in range(b)])
    count = 48
    clip = [int(c) for c in rng.integers(0, 2, count)]
    t = rng.uniform(-2.5, 3.5, count)
    t[:4] = [0.0, -0.75, 1.5, 0.1]  # loop boundaries and key times
    for i in range(4, 8):  # exactly on keys
        c = clips[clip[i]]
        t[i] = times[c["first_key"] + int(rng.integers(0, c["keys"]))]
    t = [float(x) for x in t.astype(np.float32)]
    meta = {"format": "posegpu-peer-1", "bones": b, "parents": parents, "extent": 1.0,
            "tolerance": 1e-5, "reference": "a float64 numpy oracle", "clips": clips,
            "key_count": len(times),
            "sample": {"instances": count, "clip": clip, "time": t, "looping": True}}
    (path / "workload.json").write_text(json.dumps(meta, indent=1))
    arrays = {"inverse_bind.f32": ib, "times.f32": np.array(times), "values.f32": np.stack(values)}
    for name, a in arrays.items():
        a.astype("<f4").tofile(path / name)
    # The oracle reads the files back, so it sees exactly the float32 inputs the peer sees.
    read = lambda name: np.fromfile(path / name, dtype="<f4")
    expected = ref_skinning(meta, read("inverse_bind.f32").reshape(b, 12), read("times.f32"),
                            read("values.f32").reshape(-1, b, 10))
    expected.astype("<f4").tofile(path / "sample_skinning.f32")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload", nargs="?", help="workload directory (with --selftest: where to write it)")
    p.add_argument("--instances", default="10000,100000,1000000")
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--max-seconds", type=float, default=300.0)
    p.add_argument("--selftest", action="store_true",
                   help="check against a numpy float64 oracle on a tiny random workload")
    p.add_argument("--selftest-first", action="store_true",
                   help="the self-test (eager) before the workload, in the same process")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the peer; compile time is reported apart")
    p.add_argument("--compile-mode", default="default", metavar="MODE",
                   help="torch.compile's mode: default, reduce-overhead, max-autotune, ...")
    args = p.parse_args()
    if args.selftest:
        tmp = None if args.workload else tempfile.TemporaryDirectory()
        args.workload = args.workload or tmp.name
        write_selftest(Path(args.workload))
    elif not args.workload:
        p.error("WORKLOAD_DIR is required")
    result = run(args)
    save(args, result)
    ok = result["check"]["ok"] and result.get("selftest", {"ok": True})["ok"]
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
