#!/usr/bin/env python3
"""The headline table of scripts/gpu-run: summary.md, pipeline.csv and pipeline.png in OUT.

    gpu_summary.py OUT WORK [FAILED_STEP ...]

WORK holds what the run's steps left: device.txt, one CSV and plot per bench run (NAME.csv,
NAME.png, columns as `posegpu bench` writes them), peer.json (the PyTorch peer). OUT holds
check.log and bench.log. Standard library only: it runs on the device machine too.
"""

import csv
import json
import re
import shutil
import sys
from pathlib import Path

# The runs in the order gpu-run makes them; the first is the plot kept.
RUNS = ["fused-all", "separate-all", "fused-skinning", "separate-skinning", "fused-component",
        "separate-component", "mesh-layer", "plan-ik", "baked-ik", "plain-skinning", "keys-plain",
        "keys-compressed", "cpu-twin"]
# The copy-bandwidth time of an H100 (device-to-device, bytes read + written), for the
# prediction where a run measured no copy kernel.
H100_COPY_GBPS = 3000.0


def rows_of(work):
    """Every bench row, with the run it came from."""
    out = []
    for run in RUNS:
        path = work / f"{run}.csv"
        if not path.exists():
            continue
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                row["run"] = run
                out.append(row)
    return out


def num(row, key):
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return float("nan")


def find(rows, run, instances, bones):
    for r in rows:
        if r["run"] == run and int(r["instances"]) == instances and int(r["bones"]) == bones:
            return r
    return None


def fmt(x, spec=".3f"):
    return "–" if x != x else format(x, spec)


def headline(rows, run, instances, bones, what):
    r = find(rows, run, instances, bones)
    if r is None:
        return f"| {what} | {instances:,} × {bones} | not measured | | | | |"
    ms, bpb = num(r, "gpu_ms"), num(r, "bytes_per_bone")
    gbps, frac = num(r, "effective_gb_per_s"), num(r, "fraction_of_copy")
    ceiling = num(r, "copy_ceiling_bones_per_s")
    if ceiling != ceiling:
        ceiling = H100_COPY_GBPS * 1e9 / bpb
    predicted = instances * bones / ceiling * 1e3
    return (f"| {what} | {instances:,} × {bones} | {fmt(ms)} | {fmt(bpb, '.1f')} | "
            f"{fmt(gbps, '.0f')} | {fmt(frac * 100, '.0f')}% | {fmt(predicted)} ({fmt(ms / predicted, '.2f')}×) |")


def main():
    out, work = Path(sys.argv[1]), Path(sys.argv[2])
    failed = sys.argv[3:]
    rows = rows_of(work)

    # pipeline.csv: every run's rows, the run named in a first column.
    if rows:
        fields = ["run"] + [k for k in rows[0].keys() if k != "run"]
        with (out / "pipeline.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    for run in RUNS:
        if (work / f"{run}.png").exists():
            shutil.copy(work / f"{run}.png", out / "pipeline.png")
            break

    device = (work / "device.txt").read_text() if (work / "device.txt").exists() else ""
    bench_log = (out / "bench.log").read_text() if (out / "bench.log").exists() else ""
    check_log = (out / "check.log").read_text() if (out / "check.log").exists() else ""
    copy = re.findall(r"^copy kernel: .*$", bench_log, re.M)
    check_fail = [l for l in check_log.splitlines() if l.rstrip().endswith("FAIL") or " FAIL (" in l]
    check_end = next((l for l in reversed(check_log.splitlines()) if " stages in " in l), "no check ran")

    lines = ["# posegpu on this GPU", "", "```", device.strip(), "```", ""]
    lines += [f"**posegpu check:** {check_end}", ""]
    if check_fail:
        lines += ["Failing stages:", "", "```"] + check_fail + ["```", ""]
    lines += [f"**Copy kernel:** {copy[0] if copy else 'not measured'}", ""]
    big = max((int(r["instances"]) for r in rows if r["run"] == "fused-all"), default=0)
    lines += ["## Headline", "",
              "| workload | instances × bones | GPU ms/frame | B/bone (model) | GB/s | of copy | "
              "traffic model's time (measured over it) |",
              "|---|---|---:|---:|---:|---:|---|",
              headline(rows, "fused-all", 100_000, 67, "full workload, fused, all outputs"),
              headline(rows, "separate-all", 100_000, 67, "full workload, separate, all outputs"),
              headline(rows, "fused-skinning", 1_000_000, 67, "skinning only, fused"),
              headline(rows, "separate-skinning", 1_000_000, 67, "skinning only, separate")]
    if big and big < 100_000:
        lines += [headline(rows, "fused-all", big, 67, "full workload, fused (largest here)"),
                  headline(rows, "fused-skinning", big, 67, "skinning only, fused (largest here)")]
    lines += ["", "Aims (issue 28): 100k × 67 full workload ≤ 0.35 ms on an H100; 1M × 67 "
              "skinning only ≤ 3 ms; faster than the peer from 10k instances.", ""]

    # Fused against separate, every size both measured.
    lines += ["## Fused against separate (all outputs)", "",
              "| instances × bones | fused ms | separate ms | separate / fused |", "|---|---:|---:|---:|"]
    for r in rows:
        if r["run"] != "fused-all":
            continue
        n, b = int(r["instances"]), int(r["bones"])
        s = find(rows, "separate-all", n, b)
        f_ms, s_ms = num(r, "gpu_ms"), num(s, "gpu_ms") if s else float("nan")
        lines.append(f"| {n:,} × {b} | {fmt(f_ms)} | {fmt(s_ms)} | {fmt(s_ms / f_ms, '.2f')} |")
    bound = [r for r in rows if r["run"] == "fused-all" and num(r, "fraction_of_copy") >= 0.6]
    smallest = min(bound, key=lambda r: int(r["instances"]), default=None)
    lines += ["", "Smallest crowd whose frame is bandwidth-bound (fused, all outputs, ≥ 60% of "
              f"copy): {smallest['instances'] + ' × ' + smallest['bones'] if smallest else 'none'}", ""]

    # Other workloads.
    lines += ["## Other workloads (GPU ms per frame)", "", "| run | instances × bones | GPU ms | of copy |",
              "|---|---|---:|---:|"]
    for r in rows:
        if r["run"] in ("mesh-layer", "plan-ik", "baked-ik", "plain-skinning"):
            lines.append(f"| {r['run']} | {int(r['instances']):,} × {r['bones']} | "
                         f"{fmt(num(r, 'gpu_ms'))} | {fmt(num(r, 'fraction_of_copy') * 100, '.0f')}% |")
    # Compressed keys against the same clips plain, side by side (issue 31).
    keys = [(r, find(rows, "keys-compressed", int(r["instances"]), int(r["bones"])))
            for r in rows if r["run"] == "keys-plain"]
    if keys:
        lines += ["", "Compressed keys against plain (the retargeted humanoid, fused, all outputs):", "",
                  "| instances × bones | plain ms | compressed ms | compressed / plain | B/bone plain | B/bone compressed |",
                  "|---|---:|---:|---:|---:|---:|"]
        for p, c in keys:
            if c is None:
                continue
            lines.append(f"| {int(p['instances']):,} × {p['bones']} | {fmt(num(p, 'gpu_ms'))} | "
                         f"{fmt(num(c, 'gpu_ms'))} | {fmt(num(c, 'gpu_ms') / num(p, 'gpu_ms'), '.2f')} | "
                         f"{fmt(num(p, 'bytes_per_bone'), '.1f')} | {fmt(num(c, 'bytes_per_bone'), '.1f')} |")
    crowd = [l for l in bench_log.splitlines() if re.match(r"^\s*\d+ instances", l)]
    if crowd:
        lines += ["", "Crowd playback with root motion (advance, root motion, passes):", "", "```"] + crowd + ["```"]

    # The CPU twin.
    lines += ["", "## CPU twin (every core)", "", "| instances × bones | CPU ms | threads |", "|---|---:|---:|"]
    for r in rows:
        if r["run"] == "cpu-twin":
            lines.append(f"| {int(r['instances']):,} × {r['bones']} | {fmt(num(r, 'cpu_ms'))} | {r['cpu_threads']} |")

    # The peer.
    lines += ["", "## PyTorch peer (same poses, same GPU)", ""]
    peer_path = work / "peer.json"
    if peer_path.exists():
        peer = json.loads(peer_path.read_text())
        c = peer.get("check", {})
        lines += [f"Peer on {peer.get('device')} (torch {peer.get('torch')}); its check against the CPU "
                  f"twin: deviation {c.get('deviation')} (tolerance {c.get('tolerance')}): "
                  f"{'ok' if c.get('ok') else 'FAIL'}", "",
                  "| instances × bones | peer ms | posegpu ms (plain, fused, skinning) | posegpu / peer |",
                  "|---|---:|---:|---:|"]
        for p in peer.get("rows", []):
            n, b = p["instances"], p["bones"]
            mine = find(rows, "plain-skinning", n, b)
            m = num(mine, "gpu_ms") if mine else float("nan")
            lines.append(f"| {n:,} × {b} | {fmt(p['ms'])} | {fmt(m)} | {fmt(m / p['ms'], '.2f')} |")
    else:
        lines.append("The peer did not run (see peer.log).")

    lines += ["", "## What failed", ""]
    lines += [f"- {f}" for f in failed] if failed else ["Nothing."]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
