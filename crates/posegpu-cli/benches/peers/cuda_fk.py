#!/usr/bin/env python3
"""A peer for posegpu's benchmark: torch_fk.py's forward kinematics as one hand-written CUDA
kernel, the way a performance engineer would write it (CuPy RawKernel, NVRTC at run time).

- One warp per instance, four instances per 128-thread block, a grid-stride loop over
  instances sized to one wave of resident blocks.
- The skeleton (parents, bones ordered by depth level, inverse bind matrices) goes into shared
  memory once per block.
- Sampling is fused: every lane finds the instance's key pair alike (a uniform-rate guess
  corrected against the clip's key times, so exact for any sorted times: torch_fk.py's
  searchsorted), then lerps translation and scale and nlerps (shorter arc) the rotation of
  its bones, from keys repacked as three aligned float4 per bone.
- The hierarchy composes level by level in the warp's shared matrices, __syncwarp between
  levels; then world x inverse bind in place.
- The skinning matrices (3x4 rows, posegpu's layout) leave as contiguous 16-byte stores: lane
  i writes float4 i, i + 32, ... of the instance's block.

It reads the workload torch_fk.py reads (`posegpu bench --export-peer`) with torch_fk.py's
loader, checks the sample against posegpu's CPU twin, then times crowds of growing size:
CUDA events around each launch, all queued behind a short delay kernel so that the host's
launch overhead is not timed; the median launch.

    cuda_fk.py WORKLOAD_DIR [--instances 10000,100000,1000000] [--frames 20] [--json PATH]
               [--max-seconds 300] [--selftest-first]
    cuda_fk.py --selftest [DIR]   # torch_fk.py's tiny random workload, numpy float64 oracle
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
# No PyTorch here: torch_fk.py's numpy half is all this needs, and PyTorch's own CUDA libraries
# stay out of CuPy's process (and its seconds of import).
sys.modules.setdefault("torch", None)
import torch_fk  # noqa: E402  the loader, the comparison and the self-test's oracle

try:
    import cupy as cp
except Exception as e:  # ImportError, or a CuPy built for another CUDA
    cp, CUPY_ERROR = None, f"{type(e).__name__}: {e}"

WARPS = 4  # instances per 128-thread block
SHARED_LIMIT = 48 * 1024  # dynamic shared memory without the opt-in attribute

SOURCE = r"""
// (row a of A) x B for affine 3x4 matrices, B's implied last row (0 0 0 1).
__device__ __forceinline__ float4 affine_row(const float4 a, const float4 b0, const float4 b1, const float4 b2) {
  return make_float4(a.x * b0.x + a.y * b1.x + a.z * b2.x,
                     a.x * b0.y + a.y * b1.y + a.z * b2.y,
                     a.x * b0.z + a.y * b1.z + a.z * b2.z,
                     a.x * b0.w + a.y * b1.w + a.z * b2.w + a.w);
}

extern "C" __global__ void __launch_bounds__(128)
fk(const float4* __restrict__ keys,          // [K, B, 3]: (t.xyz, s.x), q.xyzw, (s.yz, 0, 0)
   const float* __restrict__ times,          // [K]: every clip's key times in a row
   const int* __restrict__ clip_first, const int* __restrict__ clip_keys,
   const float* __restrict__ clip_duration,
   const float4* __restrict__ inverse_bind,  // [B, 3] rows
   const int* __restrict__ parents,          // [B]
   const int* __restrict__ order,            // [B]: bones by depth level
   const int* __restrict__ level_start,      // [levels + 1] into order
   const int* __restrict__ inst_clip, const float* __restrict__ inst_time,
   float4* __restrict__ out,                 // [N, B, 3]
   int n, int bones, int levels, int looping) {
  extern __shared__ float4 smem[];
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rows = 3 * bones;
  float4* ib = smem;                          // the block's inverse bind matrices
  float4* m = smem + rows * (1 + warp);       // the warp's matrices: local, world, skinning
  int* par = (int*)(smem + rows * (1 + warps));
  int* ord = par + bones;
  int* lvl = ord + bones;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) ib[i] = inverse_bind[i];
  for (int i = threadIdx.x; i < bones; i += blockDim.x) { par[i] = parents[i]; ord[i] = order[i]; }
  for (int i = threadIdx.x; i <= levels; i += blockDim.x) lvl[i] = level_start[i];
  __syncthreads();

  for (int inst = blockIdx.x * warps + warp; inst < n; inst += gridDim.x * warps) {
    // The sample (torch_fk.py's map_time and key search), every lane alike: broadcast loads.
    const int c = __ldg(inst_clip + inst);
    const float t = __ldg(inst_time + inst);
    const float d = __ldg(clip_duration + c);
    const int first = __ldg(clip_first + c), nk = __ldg(clip_keys + c);
    float u;
    if (looping) {
      const float r = t - d * floorf(t / d);
      u = (r >= 0.0f && r < d) ? r : 0.0f;
    } else {
      u = fminf(fmaxf(t, 0.0f), d);
    }
    if (!(d > 0.0f)) u = 0.0f;
    const float* ts = times + first;
    // The last key at or before u (0 when none): a uniform-rate guess, then a walk that makes
    // it exact for any sorted times (one step at most on uniform keys).
    int k0 = d > 0.0f ? min(max((int)(u / d * (float)(nk - 1)), 0), nk - 1) : 0;
    while (k0 > 0 && __ldg(ts + k0) > u) --k0;
    while (k0 + 1 < nk && __ldg(ts + k0 + 1) <= u) ++k0;
    const bool edge = u <= __ldg(ts) || u >= __ldg(ts + nk - 1);
    const int k1 = edge ? k0 : k0 + 1;
    const float a = edge ? 0.0f : (u - __ldg(ts + k0)) / (__ldg(ts + k1) - __ldg(ts + k0));
    const float wa = 1.0f - a;
    const float4* key0 = keys + (long long)(first + k0) * rows;
    const float4* key1 = keys + (long long)(first + k1) * rows;

    for (int b = lane; b < bones; b += 32) {
      const float4 p0 = __ldg(key0 + 3 * b), q0 = __ldg(key0 + 3 * b + 1), s0 = __ldg(key0 + 3 * b + 2);
      const float4 p1 = __ldg(key1 + 3 * b), q1 = __ldg(key1 + 3 * b + 1), s1 = __ldg(key1 + 3 * b + 2);
      const float tx = p0.x * wa + p1.x * a, ty = p0.y * wa + p1.y * a, tz = p0.z * wa + p1.z * a;
      const float sx = p0.w * wa + p1.w * a, sy = s0.x * wa + s1.x * a, sz = s0.y * wa + s1.y * a;
      const float as = (q0.x * q1.x + q0.y * q1.y + q0.z * q1.z + q0.w * q1.w) >= 0.0f ? a : -a;
      float x = q0.x * wa + q1.x * as, y = q0.y * wa + q1.y * as;
      float z = q0.z * wa + q1.z * as, w = q0.w * wa + q1.w * as;
      const float inv = rsqrtf(x * x + y * y + z * z + w * w);
      x *= inv; y *= inv; z *= inv; w *= inv;
      m[3 * b] = make_float4((1.0f - 2.0f * (y * y + z * z)) * sx, 2.0f * (x * y - w * z) * sy,
                             2.0f * (x * z + w * y) * sz, tx);
      m[3 * b + 1] = make_float4(2.0f * (x * y + w * z) * sx, (1.0f - 2.0f * (x * x + z * z)) * sy,
                                 2.0f * (y * z - w * x) * sz, ty);
      m[3 * b + 2] = make_float4(2.0f * (x * z - w * y) * sx, 2.0f * (y * z + w * x) * sy,
                                 (1.0f - 2.0f * (x * x + y * y)) * sz, tz);
    }
    __syncwarp();

    // The hierarchy, level by level: a level's parents are final before it starts.
    for (int l = 1; l < levels; ++l) {
      for (int i = lvl[l] + lane; i < lvl[l + 1]; i += 32) {
        const int b = ord[i], p = par[b];
        const float4 c0 = m[3 * b], c1 = m[3 * b + 1], c2 = m[3 * b + 2];
        const float4 w0 = m[3 * p], w1 = m[3 * p + 1], w2 = m[3 * p + 2];
        m[3 * b] = affine_row(w0, c0, c1, c2);
        m[3 * b + 1] = affine_row(w1, c0, c1, c2);
        m[3 * b + 2] = affine_row(w2, c0, c1, c2);
      }
      __syncwarp();
    }

    // Skinning, in place (each lane its own bones), then the instance's block, coalesced.
    for (int b = lane; b < bones; b += 32) {
      const float4 w0 = m[3 * b], w1 = m[3 * b + 1], w2 = m[3 * b + 2];
      const float4 i0 = ib[3 * b], i1 = ib[3 * b + 1], i2 = ib[3 * b + 2];
      m[3 * b] = affine_row(w0, i0, i1, i2);
      m[3 * b + 1] = affine_row(w1, i0, i1, i2);
      m[3 * b + 2] = affine_row(w2, i0, i1, i2);
    }
    __syncwarp();
    float4* dst = out + (long long)inst * rows;
    for (int i = lane; i < rows; i += 32) dst[i] = m[i];
    __syncwarp();  // the next instance overwrites m
  }
}

// Holds the stream for `ns` nanoseconds, so that the timed launches queue up behind it.
extern "C" __global__ void delay(unsigned long long ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < ns);
}
"""


class Kernel:
    """The workload's tables on the device and the compiled kernel with its launch shape."""

    def __init__(self, path):
        ex = torch_fk.read_export(path)
        self.meta, self.bones, self.clips = ex.meta, ex.bones, ex.clips
        b, v = ex.bones, ex.values
        # Keys as three aligned float4 per bone: (t.xyz, s.x), q.xyzw, (s.y, s.z, 0, 0).
        packed = np.zeros(v.shape[:2] + (12,), np.float32)
        packed[..., 0:3], packed[..., 3] = v[..., 0:3], v[..., 7]
        packed[..., 4:8], packed[..., 8:10] = v[..., 3:7], v[..., 8:10]
        i32 = lambda a: cp.asarray(np.asarray(a, dtype=np.int32))
        self.keys = cp.asarray(packed)
        self.times = cp.asarray(ex.times)
        self.first = i32([c["first_key"] for c in ex.clips])
        self.nkeys = i32([c["keys"] for c in ex.clips])
        self.duration_np = np.array([c["duration"] for c in ex.clips], np.float32)
        self.duration = cp.asarray(self.duration_np)
        self.inverse_bind = cp.asarray(np.ascontiguousarray(ex.inverse_bind))
        self.parents = i32(ex.parents)
        self.levels = max(ex.depth) + 1
        order = sorted(range(b), key=lambda i: (ex.depth[i], i))
        starts = [0] * (self.levels + 1)
        for d in ex.depth:
            starts[d + 1] += 1
        for l in range(self.levels):
            starts[l + 1] += starts[l]
        self.order, self.level_start = i32(order), i32(starts)

        module = cp.RawModule(code=SOURCE)
        self.fk, self.delay = module.get_function("fk"), module.get_function("delay")
        self.warps = WARPS
        while self.warps > 1 and self.shared(self.warps) > SHARED_LIMIT:
            self.warps //= 2
        self.smem = self.shared(self.warps)
        if self.smem > SHARED_LIMIT:  # skeletons of ~900 bones and more
            self.fk.max_dynamic_shared_size_bytes = self.smem
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        attrs = self.fk.attributes  # compiles the module
        regs = int(attrs["num_regs"])
        # One wave of resident blocks: the grid-stride loop covers the rest, and the skeleton
        # is read into shared memory once per block, not once per four instances.
        threads = 32 * self.warps
        per_block_regs = -(-regs * 32 // 256) * 256 * self.warps  # allocated per warp, in 256s
        reserved = props.get("reservedSharedMemPerBlock", 1024)
        resident = min(props.get("maxThreadsPerMultiProcessor", 2048) // threads,
                       props.get("regsPerMultiprocessor", 65536) // max(1, per_block_regs),
                       props.get("sharedMemPerMultiprocessor", 233472) // (self.smem + reserved),
                       props.get("maxBlocksPerMultiProcessor", 32))
        self.resident = max(1, resident)
        self.grid_cap = props["multiProcessorCount"] * self.resident
        self.info = {"registers": regs, "local_bytes": int(attrs["local_size_bytes"]),
                     "warps_per_block": self.warps, "shared_bytes": self.smem,
                     "blocks_per_sm": self.resident, "sms": props["multiProcessorCount"]}

    def shared(self, warps):
        return 16 * 3 * self.bones * (1 + warps) + 4 * (2 * self.bones + self.levels + 1)

    def launch(self, clip, time, out, looping=True):
        n = int(clip.size)
        grid = max(1, min(-(-n // self.warps), self.grid_cap))
        self.fk((grid,), (32 * self.warps,),
                (self.keys, self.times, self.first, self.nkeys, self.duration, self.inverse_bind,
                 self.parents, self.order, self.level_start, clip, time, out, np.int32(n),
                 np.int32(self.bones), np.int32(self.levels), np.int32(1 if looping else 0)),
                shared_mem=self.smem)

    def evaluate(self, clip, time, looping=True):
        """[N, B, 3, 4] skinning matrices, on the host."""
        clip = cp.asarray(np.asarray(clip, dtype=np.int32))
        time = cp.asarray(np.asarray(time, dtype=np.float32))
        out = cp.empty((clip.size, self.bones, 3, 4), cp.float32)
        self.launch(clip, time, out, looping)
        return out.get()


def check(k, path):
    s = k.meta["sample"]
    return torch_fk.compare(k.evaluate(s["clip"], s["time"], s.get("looping", True)), path, k.meta)


def selftest():
    with tempfile.TemporaryDirectory() as d:
        torch_fk.write_selftest(Path(d))
        return check(Kernel(d), d)


def time_size(k, n, frames):
    """(median ms, min ms, launches timed) for a crowd of n instances, or why not."""
    frames = max(1, frames)
    need = n * (k.bones * 48 + 4) + (frames + 1) * n * 4
    if need > 0.9 * cp.cuda.runtime.memGetInfo()[0]:
        return f"would not fit (needs ~{need / 2**30:.1f} GiB)"
    # torch_fk.py's crowd: clip i % clips, phase fract(i * 0.618034) * duration, 60 Hz frames.
    clip_np = (np.arange(n) % len(k.clips)).astype(np.int32)
    phase = np.modf(np.arange(n, dtype=np.float32) * np.float32(0.618034))[0] * k.duration_np[clip_np]
    steps = np.arange(frames + 1, dtype=np.float32) / np.float32(60.0)
    clip = cp.asarray(clip_np)
    times = cp.asarray(phase[None, :] + steps[:, None])  # [frames + 1, N]
    out = cp.empty((n, k.bones, 3, 4), cp.float32)
    k.launch(clip, times[0], out)  # warm-up
    cp.cuda.Device().synchronize()
    events = [cp.cuda.Event() for _ in range(frames + 1)]
    # The launches below queue behind the delay, so the events time the GPU, not the host.
    k.delay((1,), (1,), (np.uint64(5_000_000 + 100_000 * frames),))
    events[0].record()
    for f in range(1, frames + 1):
        k.launch(clip, times[f], out)
        events[f].record()
    events[-1].synchronize()
    ms = [cp.cuda.get_elapsed_time(events[f - 1], events[f]) for f in range(1, frames + 1)]
    del out, times, clip
    cp.get_default_memory_pool().free_all_blocks()
    return statistics.median(ms), min(ms), len(ms)


def run(args):
    if cp is None:
        raise SystemExit(f"cupy missing ({CUPY_ERROR})")
    started = time.perf_counter()
    result = {"cupy": cp.__version__, "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
              "rows": [], "skipped": []}
    if args.selftest_first and not args.selftest:
        print("selftest: a tiny random workload against a float64 numpy oracle")
        result["selftest"] = selftest()
        torch_fk.save(args, result)
    k = Kernel(args.workload)
    result.update(device=k.name, kernel=k.info)
    print(f"device: {k.name}\ncupy: {cp.__version__}\nkernel: {k.info}")
    result["check"] = check(k, args.workload)
    torch_fk.save(args, result)
    if args.selftest:
        return result
    print(f"{'instances':>10} {'bones':>6} {'ms/launch':>10} {'min ms':>9} {'Gbones/s':>9} {'out GB/s':>9}")

    def row(n, r):
        ms, fastest, frames = r
        rate, written = n * k.bones / (ms * 1e-3), n * k.bones * 48 / (ms * 1e-3)
        print(f"{n:>10} {k.bones:>6} {ms:>10.3f} {fastest:>9.3f} {rate / 1e9:>9.3f} {written / 1e9:>9.0f}")
        return {"instances": n, "bones": k.bones, "ms": ms, "min_ms": fastest,
                "bones_per_s": rate, "output_gb_per_s": written / 1e9, "frames": frames}

    measure = lambda n, _deadline: time_size(k, n, args.frames)  # noqa: E731
    return torch_fk.sweep(args, result, k.bones, started, measure, row)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload", nargs="?", help="workload directory (with --selftest: where to write it)")
    p.add_argument("--instances", default="10000,100000,1000000")
    p.add_argument("--frames", type=int, default=20, help="timed launches per size (after one warm-up)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--max-seconds", type=float, default=300.0)
    p.add_argument("--selftest", action="store_true",
                   help="check against a numpy float64 oracle on a tiny random workload")
    p.add_argument("--selftest-first", action="store_true",
                   help="the self-test before the workload, in the same process")
    args = p.parse_args()
    if args.selftest:
        tmp = None if args.workload else tempfile.TemporaryDirectory()
        args.workload = args.workload or tmp.name
        torch_fk.write_selftest(Path(args.workload))
    elif not args.workload:
        p.error("WORKLOAD_DIR is required")
    result = run(args)
    torch_fk.save(args, result)
    ok = result["check"]["ok"] and result.get("selftest", {"ok": True})["ok"]
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
