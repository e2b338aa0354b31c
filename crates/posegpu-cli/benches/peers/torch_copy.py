#!/usr/bin/env python3
"""The device's copy bandwidth through PyTorch (a CUDA device-to-device copy, `dst.copy_(src)`),
beside posegpu's own copy kernel: scripts/gpu-run quotes "of copy" against the higher of the
two, since a driver's copy can beat a compute shader's.

Bandwidth = 2 x bytes / time (each byte read once and written once), as `posegpu bench`'s copy
kernel counts it; CUDA events around each copy, all queued before the first wait.

    torch_copy.py [--mib 1024] [--repetitions 20] [--json PATH]
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

try:
    import torch
except ImportError:
    torch = None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=1024, help="MiB copied per repetition")
    p.add_argument("--repetitions", type=int, default=20)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        print("torch copy: no CUDA device through PyTorch: not measured")
        return 3
    size = args.mib << 20
    src = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):  # warm-up: first touch, clocks up
        dst.copy_(src)
    reps = max(1, args.repetitions)
    events = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    events[0].record()
    for i in range(reps):
        dst.copy_(src)
        events[i + 1].record()
    torch.cuda.synchronize()
    seconds = [events[i].elapsed_time(events[i + 1]) * 1e-3 for i in range(reps)]
    ok = bool(torch.equal(dst[:: 1 << 16], src[:: 1 << 16]))
    best, median = 2 * size / min(seconds) / 1e9, 2 * size / statistics.median(seconds) / 1e9
    name = torch.cuda.get_device_name()
    print(f"torch copy: {args.mib:.1f} MiB read + {args.mib:.1f} MiB written per copy_, best of {reps}: "
          f"{best:.2f} GB/s (median {median:.2f} GB/s), CUDA events, {name}, torch {torch.__version__}"
          + ("" if ok else "; the copy's data is WRONG"))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "device": name, "torch": torch.__version__, "bytes": size, "seconds": seconds,
            "best_gb_per_s": best, "median_gb_per_s": median, "ok": ok}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
