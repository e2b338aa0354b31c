"""Times `Evaluator.evaluate` through Python on 10,000 procedural humanoids (67 bones) against
the Rust side of the same call, on the CPU twin and the GPU (lavapipe where there is no GPU).

    python crates/posegpu-py/bench/evaluate.py [--instances N] [--runs R] [--backend cpu|gpu|both]

Per backend, medians over R calls:
- python: the wall time of `ev.evaluate(clips, times, loop=True)` (argument checks, the call,
  the Pose object), the previous frame's pose dropped before the call, as a frame loop does;
- rust: `ev.rust_seconds` of the same calls, the time inside posegpu's evaluator;
- overhead = python / rust;
- arrays: the time to read `pose.component` and `pose.skinning` (the one copy the bindings make:
  component transforms compacted from 12 floats to 10; skinning is handed over as it is);
and, where `cargo build --release --example evaluate` was run in crates/posegpu-py, the same
evaluation in a Rust program (examples/evaluate.rs), with a fresh and a reused `Poses`.
"""

import argparse
import gc
import json
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

import posegpu

HERE = Path(__file__).resolve().parent


def measure(backend, n, runs):
    lib = posegpu.Library(posegpu.procedural.humanoid())
    ev = posegpu.Evaluator(lib, backend=backend)
    clips = (np.arange(n) % 4).astype(np.int32)
    times = (np.arange(n) * 0.013).astype(np.float32)
    py_times, rust_times, array_times = [], [], []
    pose = ev.evaluate(clips, times, loop=True)  # warm: pipelines, pools
    for _ in range(runs):
        del pose  # a frame loop drops the last frame's pose (its buffers are reused)
        gc.collect()
        start = time.perf_counter()
        pose = ev.evaluate(clips, times, loop=True)
        py_times.append(time.perf_counter() - start)
        rust_times.append(ev.rust_seconds)
        start = time.perf_counter()
        pose.component
        pose.skinning
        array_times.append(time.perf_counter() - start)
    py, rust = statistics.median(py_times), statistics.median(rust_times)
    return {
        "backend": backend,
        "instances": n,
        "bones": lib.bone_count,
        "python_ms": py * 1e3,
        "rust_ms": rust * 1e3,
        "overhead": py / rust,
        "arrays_ms": statistics.median(array_times) * 1e3,
    }


def rust_example(n, runs, backend):
    exe = HERE.parent / "target" / "release" / "examples" / "evaluate"
    if not exe.is_file():
        return []
    out = subprocess.run([str(exe), str(n), str(runs), backend], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--backend", choices=["cpu", "gpu", "both"], default="both")
    args = ap.parse_args()
    backends = ["cpu", "gpu"] if args.backend == "both" else [args.backend]
    if "gpu" in backends and posegpu.gpu_adapter() is None:
        print("no GPU adapter: the GPU is skipped")
        backends.remove("gpu")
    print(f"posegpu {posegpu.__version__}; GPU: {posegpu.gpu_adapter()}")
    for b in backends:
        r = measure(b, args.instances, args.runs)
        print(
            f"{b}: {r['instances']} x {r['bones']} bones: python {r['python_ms']:.2f} ms, "
            f"rust {r['rust_ms']:.2f} ms, overhead {r['overhead']:.3f}x; "
            f"reading component + skinning {r['arrays_ms']:.2f} ms"
        )
    for r in rust_example(args.instances, args.runs, args.backend):
        if r["backend"] == "cpu":
            print(
                f"rust example, cpu: fresh Poses {r['fresh_poses_s'] * 1e3:.2f} ms, "
                f"reused Poses {r['reused_poses_s'] * 1e3:.2f} ms"
            )
        else:
            print(f"rust example, gpu ({r['adapter']}): evaluate + read back {r['evaluate_read_back_s'] * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
