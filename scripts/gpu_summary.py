#!/usr/bin/env python3
"""The headline table of scripts/gpu-run: summary.md, pipeline.csv and pipeline.png in OUT.

    gpu_summary.py OUT WORK [FAILED_STEP ...]

WORK holds what the run's steps left: device.txt, one CSV and plot per bench run (NAME.csv,
NAME.png, columns as `posegpu bench` writes them), the repeats (repeat-RUN-INSTANCES-ROUND.csv),
the occupancy probe (occupancy-PAD.csv, or occupancy.status saying why not), copy-torch.json
(PyTorch's device copy), the peers (peer-NAME.json, or peer-NAME.status saying why not),
steps.tsv (each step's start and end, epoch seconds) and soft.txt (the soft steps that failed or
did not run). OUT holds check.log, bench.log and clocks.log (nvidia-smi's samples). Standard
library only: it runs on the device machine too.
"""

import csv
import json
import re
import shutil
import statistics
import sys
from datetime import datetime
from pathlib import Path

# The runs in the order gpu-run makes them; the first is the plot kept.
RUNS = ["fused-all", "separate-all", "fused-skinning", "separate-skinning", "fused-component",
        "separate-component", "mesh-layer", "plan-ik", "baked-ik", "plain-skinning", "keys-plain",
        "keys-compressed", "cpu-twin"]
# The headline cells (67 bones), which gpu-run measures three times.
HEADLINE = [("fused-all", 100_000, "full workload, fused, all outputs"),
            ("separate-all", 100_000, "full workload, separate, all outputs"),
            ("fused-component", 100_000, "full workload, fused, component + skinning"),
            ("fused-skinning", 1_000_000, "skinning only, fused"),
            ("separate-skinning", 1_000_000, "skinning only, separate"),
            ("plain-skinning", 1_000_000, "plain workload, fused, skinning")]
# The peers, in the order of the table's columns.
PEERS = [("torch", "PyTorch"), ("torch-compile", "torch.compile"), ("cuda", "CUDA kernel")]
# The copy-bandwidth time of an H100 (device-to-device, bytes read + written), for the
# prediction where a run measured no copy at all.
H100_COPY_GBPS = 3000.0
# nvidia-smi's clocks_event_reasons bits (why the clocks are below their maximum).
REASONS = {0x2: "applications clocks", 0x4: "power cap", 0x8: "hardware slowdown",
           0x10: "sync boost", 0x20: "software thermal", 0x40: "hardware thermal",
           0x80: "power brake", 0x100: "display clocks"}
NAN = float("nan")
SM_SHARED = 228 * 1024  # shared memory an SM, H100 and H200


def read_csv(path):
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def read_text(path):
    return path.read_text().strip() if path.exists() else ""


def soft_note(work, step):
    """Why a soft step did not run or failed, from gpu-run's soft.txt ("" when it ran)."""
    for line in read_text(work / "soft.txt").splitlines():
        if line.startswith(step + " ("):
            return line[len(step) + 2:].rstrip(")")
    return ""


def rows_of(work):
    """Every bench row of the sweep, with the run it came from."""
    out = []
    for run in RUNS:
        for row in read_csv(work / f"{run}.csv"):
            row["run"] = run
            out.append(row)
    return out


def num(row, key):
    try:
        return float((row or {}).get(key) or "nan")
    except ValueError:
        return NAN


def find(rows, run, instances, bones):
    for r in rows:
        if r["run"] == run and int(r["instances"]) == instances and int(r["bones"]) == bones:
            return r
    return None


def fmt(x, spec=".3f"):
    return "–" if x is None or x != x else format(x, spec)


class Copy:
    """The copy reference: the copy kernel of each bench run, PyTorch's device copy once; "of
    copy" is against the higher."""

    def __init__(self, work):
        self.torch = read_json(work / "copy-torch.json")
        self.torch_gbps = self.torch["best_gb_per_s"] if self.torch and self.torch.get("ok") else NAN

    def gbps(self, row):
        kernel = num(row, "copy_gb_per_s")
        both = [x for x in (kernel, self.torch_gbps) if x == x]
        return max(both) if both else NAN


def samples(rows, work, run, n, b=67):
    """GPU ms of a cell: the sweep's run, then the repeats'."""
    out = [num(find(rows, run, n, b), "gpu_ms")]
    for rep in (2, 3):
        out += [num(r, "gpu_ms") for r in read_csv(work / f"repeat-{run}-{n}-{rep}.csv")
                if int(r["instances"]) == n and int(r["bones"]) == b]
    return [x for x in out if x == x]


def cell_ms(rows, work, run, n, b=67):
    """The median over the cell's runs (the sweep's alone where it was not repeated)."""
    s = samples(rows, work, run, n, b)
    return statistics.median(s) if s else NAN


def headline(rows, work, copy, run, instances, bones, what):
    r = find(rows, run, instances, bones)
    if r is None:
        return f"| {what} | {instances:,} × {bones} | not measured | | | | |"
    s = samples(rows, work, run, instances, bones)
    ms, bpb = statistics.median(s) if s else NAN, num(r, "bytes_per_bone")
    gbps = bpb * instances * bones / (ms * 1e-3) / 1e9
    ref = copy.gbps(r)
    predicted = instances * bones * bpb / ((ref if ref == ref else H100_COPY_GBPS) * 1e9) * 1e3
    runs = f" ({len(s)} runs)" if len(s) > 1 else ""
    return (f"| {what} | {instances:,} × {bones} | {fmt(ms)}{runs} | {fmt(bpb, '.1f')} | "
            f"{fmt(gbps, '.0f')} | {fmt(gbps / ref * 100, '.0f')}% | {fmt(predicted)} ({fmt(ms / predicted, '.2f')}×) |")


def repeats_table(rows, work):
    found = set()
    for p in work.glob("repeat-*.csv"):
        m = re.fullmatch(r"repeat-(.+)-(\d+)-(\d+)\.csv", p.name)
        if m:
            found.add((m.group(1), int(m.group(2))))
    if not found:
        return [f"No repeats ran ({soft_note(work, 'repeats') or 'see bench.log'})."]
    order = {(run, n): i for i, (run, n, _) in enumerate(HEADLINE)}
    what = {(run, n): w for run, n, w in HEADLINE}
    lines = ["| workload | instances × bones | runs | min ms | median ms | max ms | max / min |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for run, n in sorted(found, key=lambda c: (order.get(c, 99), c)):
        s = samples(rows, work, run, n)
        if not s:
            continue
        lines.append(f"| {what.get((run, n), run)} | {n:,} × 67 | {len(s)} | {fmt(min(s))} | "
                     f"{fmt(statistics.median(s))} | {fmt(max(s))} | {fmt(max(s) / min(s), '.2f')} |")
    return lines


def occupancy_table(work, copy):
    status = read_text(work / "occupancy.status")
    if status:
        return [f"Not run ({status})."]
    runs = []
    for p in work.glob("occupancy-*.csv"):
        m = re.fullmatch(r"occupancy-(\d+)\.csv", p.name)
        rows = read_csv(p)
        if m and rows:
            runs.append((int(m.group(1)), rows[0]))
    if not runs:
        return [f"No configuration of the probe ran ({soft_note(work, 'occupancy') or 'see bench.log'})."]
    runs.sort(key=lambda x: x[0])
    base = num(runs[0][1], "gpu_ms") if runs[0][0] == 0 else NAN
    r0 = runs[0][1]
    # The fused pipeline's own workgroup memory, from `posegpu bench --shader-stats`.
    stats = re.search(r"^shader (\S*fused\S*): (\d+) SPIR-V instructions, (\d+) bytes of workgroup memory",
                      read_text(work / "shader-stats.txt"), re.M)
    own = int(stats.group(3)) if stats else None
    lines = [f"The fused pass, {int(r0['instances']):,} × {r0['bones']}, full workload, all outputs, "
             "its workgroup memory padded by the override OCCUPANCY_PAD_WORDS"
             + (f" (its own: {own:,} bytes, `{stats.group(1)}`, {int(stats.group(2)):,} SPIR-V "
                "instructions)" if stats else "") + ":", "",
             "| pad (u32 words) | pad KiB | workgroups an SM by memory | GPU ms | over no pad | of copy |",
             "|---:|---:|---:|---:|---:|---:|"]
    for pad, r in runs:
        ms = num(r, "gpu_ms")
        # 228 KiB of shared memory an SM on an H100 or H200, 1 KiB of it reserved per workgroup.
        fit = f"{SM_SHARED // (own + 4 * pad + 1024)}" if own is not None else "–"
        lines.append(f"| {pad:,} | {pad * 4 / 1024:g} | {fit} | {fmt(ms)} | {fmt(ms / base, '.2f')} | "
                     f"{fmt(num(r, 'effective_gb_per_s') / copy.gbps(r) * 100, '.0f')}% |")
    lines += ["", "Each pad leaves fewer workgroups room on an SM. A time that stays flat while that "
              "number falls means occupancy was already held lower by something else, most likely "
              "registers; a time that rises means workgroup memory was the limit at that pad. A pad "
              "missing above failed to build (bench.log: a pad past the device's workgroup memory "
              "limit, 48 KiB on many drivers, is refused)."]
    return lines


def variants_table(rows, work):
    """The fused pass's variants (variant-NAME-RUN-N.csv) against the default at the same cell
    (the median of the sweep's run and its repeats)."""
    status = read_text(work / "variants.status")
    if status:
        return [f"Not run ({status})."]
    lines = ["| workload | instances × bones | variant | default ms | variant ms | variant / default |",
             "|---|---|---|---:|---:|---:|"]
    what = {(run, n): w for run, n, w in HEADLINE}
    found = 0
    for p in sorted(work.glob("variant-*.csv")):
        m = re.fullmatch(r"variant-(skin-at-compose|poses-\d+)-(.+)-(\d+)\.csv", p.name)
        r = read_csv(p)
        if not m or not r:
            continue
        variant, run, n = m.group(1), m.group(2), int(m.group(3))
        ms, default = num(r[0], "gpu_ms"), cell_ms(rows, work, run, n)
        found += 1
        lines.append(f"| {what.get((run, n), run)} | {n:,} × 67 | {variant} | {fmt(default)} | {fmt(ms)} | "
                     f"{fmt(ms / default, '.2f')} |")
    if not found:
        return [f"No variant ran ({soft_note(work, 'fused-variants') or 'see bench.log'})."]
    return lines + ["", "Below 1 favours the variant: `skin-at-compose` is `GpuOptions::skin_at_compose` "
                    "(two barriers and a pass over the poses fewer, stores that coalesce less), `poses-N` is "
                    "`GpuOptions::fused_poses` (more instances a workgroup fill more lanes a level; fewer "
                    "workgroups fit an SM). A missing pose count was past the device's workgroup memory."]


def peers_section(rows, work):
    results = {name: read_json(work / f"peer-{name}.json") for name, _ in PEERS}
    lines = []
    sizes = sorted({(r["instances"], r["bones"]) for res in results.values() if res
                    for r in res.get("rows", [])})
    if sizes:
        head = " | ".join(f"{label} ms" for _, label in PEERS)
        ratios = " | ".join(f"posegpu / {label}" for _, label in PEERS)
        lines += ["posegpu: the plain workload, fused, skinning only (median of its runs where "
                  "repeated). A ratio under 1 is posegpu faster.", "",
                  f"| instances × bones | posegpu ms | {head} | {ratios} |",
                  "|---|---:|" + "---:|" * (2 * len(PEERS))]
        for n, b in sizes:
            mine = cell_ms(rows, work, "plain-skinning", n, b)
            theirs = []
            for name, _ in PEERS:
                res = results[name] or {}
                row = next((r for r in res.get("rows", []) if r["instances"] == n and r["bones"] == b), None)
                theirs.append(row["ms"] if row else NAN)
            lines.append(f"| {n:,} × {b} | {fmt(mine)} | " + " | ".join(fmt(t) for t in theirs) + " | "
                         + " | ".join(fmt(mine / t, ".2f") for t in theirs) + " |")
        lines.append("")
    for name, label in PEERS:
        res, status = results[name], read_text(work / f"peer-{name}.status")
        if res is None:
            why = status or soft_note(work, f"peer-{name}") or "see peer.log"
            lines.append(f"- **{label}:** not run ({why}).")
            continue
        what = [f"on {res.get('device')}"]
        if res.get("torch"):
            what.append(f"torch {res['torch']}")
        if res.get("cupy"):
            what.append(f"CuPy {res['cupy']}")
        k = res.get("kernel")
        if k:
            what.append(f"{k['registers']} registers, {k['warps_per_block']} warps a block, "
                        f"{k['shared_bytes'] / 1024:.1f} KiB shared, {k['blocks_per_sm']} blocks an SM "
                        f"by its own count, {k.get('local_bytes', 0)} B local")
        if res.get("compile_s") is not None:
            what.append(f"compiling (mode {res.get('compile_mode')}) took {res['compile_s']:.1f} s, "
                        "not in its times")
        for key, against in (("selftest", "self-test against the float64 oracle"),
                             ("check", "check against the CPU twin's sample")):
            c = res.get(key)
            if c is not None and c.get("error"):
                what.append(f"{c['error']}")
            elif c is not None:
                what.append(f"{against}: deviation {fmt(c.get('deviation'), '.3g')} "
                            f"(tolerance {fmt(c.get('tolerance'), 'g')}): {'ok' if c.get('ok') else 'FAIL'}")
        skipped = [f"{s['instances']:,}: {s['reason']}" for s in res.get("skipped", [])]
        if skipped:
            what.append("not timed at " + "; ".join(skipped))
        if status:
            what.append(status)
        lines.append(f"- **{label}:** " + "; ".join(what) + ".")
    return lines


def clocks_section(out, work):
    """Per step: SM and memory clocks from clocks.log, between the step's start and end."""
    path = out / "clocks.log"
    if not path.exists():
        return None, []
    text = path.read_text().splitlines()
    if not text:
        return None, []
    fields = [f.strip() for f in text[0].split(",")]
    samples = []
    for line in text[1:]:
        parts = [x.strip() for x in line.split(",")]
        if len(parts) != len(fields):
            continue
        try:
            rec = {"t": datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()}
        except ValueError:
            continue
        for f, v in zip(fields[1:], parts[1:]):
            try:
                rec[f] = int(v, 16) if v.startswith("0x") else float(v)
            except ValueError:
                pass
        samples.append(rec)
    if not samples:
        return "clocks.log holds no sample", []

    def span(recs, key):
        v = [r[key] for r in recs if key in r]
        return f"{fmt(min(v), '.0f')} / {fmt(statistics.median(v), '.0f')} / {fmt(max(v), '.0f')}" if v else "–"

    def reasons(recs):
        mask = 0
        for r in recs:
            mask |= int(r.get("clocks_event_reasons.active", 0)) & ~0x1
        return ", ".join(n for bit, n in REASONS.items() if mask & bit) or "none"

    busy = [r for r in samples if r.get("utilization.gpu", 1) > 0]
    top = samples[0].get("clocks.max.sm")
    line = (f"**Clocks** ({len(samples)} samples every 200 ms, {len(busy)} with the GPU busy; "
            f"min / median / max MHz while busy): SM {span(busy, 'clocks.sm')}"
            + (f" (its maximum {top:.0f})" if top else "") + f", memory {span(busy, 'clocks.mem')}; "
            f"why below the maximum, while busy: {reasons(busy)}.")
    table = ["| step | samples | busy | SM MHz (min / median / max) | memory MHz | power W (median) | below max because |",
             "|---|---:|---:|---|---|---:|---|"]
    for step in read_text(work / "steps.tsv").splitlines():
        parts = step.split("\t")
        if len(parts) != 3:
            continue
        name, t0, t1 = parts[0], float(parts[1]), float(parts[2])
        recs = [r for r in samples if t0 <= r["t"] <= t1]
        if not recs:
            continue
        b = [r for r in recs if r.get("utilization.gpu", 1) > 0]
        power = [r["power.draw"] for r in recs if "power.draw" in r]
        table.append(f"| {name} | {len(recs)} | {len(b)} | {span(recs, 'clocks.sm')} | "
                     f"{span(recs, 'clocks.mem')} | {fmt(statistics.median(power) if power else NAN, '.0f')} | "
                     f"{reasons(b)} |")
    return line, table


def main():
    out, work = Path(sys.argv[1]), Path(sys.argv[2])
    failed = sys.argv[3:]
    rows = rows_of(work)
    copy = Copy(work)

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

    device = read_text(work / "device.txt")
    bench_log = (out / "bench.log").read_text() if (out / "bench.log").exists() else ""
    check_log = (out / "check.log").read_text() if (out / "check.log").exists() else ""
    kernel = re.findall(r"^copy kernel: .*$", bench_log, re.M)
    check_fail = [l for l in check_log.splitlines() if l.rstrip().endswith("FAIL") or " FAIL (" in l]
    check_end = next((l for l in reversed(check_log.splitlines()) if " stages in " in l), "no check ran")
    clocks_line, clocks_table = clocks_section(out, work)

    lines = ["# posegpu on this GPU", "", "```", device, "```", ""]
    lines += [f"**posegpu check:** {check_end}", ""]
    if check_fail:
        lines += ["Failing stages:", "", "```"] + check_fail + ["```", ""]
    lines += [f"**Copy kernel:** {kernel[0] if kernel else 'not measured'}", ""]
    if copy.torch:
        t = copy.torch
        lines += [f"**CUDA copy (PyTorch `copy_`):** {t['bytes'] / 2**20:.0f} MiB read + written, best of "
                  f"{len(t['seconds'])}: {t['best_gb_per_s']:.2f} GB/s (median {t['median_gb_per_s']:.2f} GB/s)"
                  + ("" if t.get("ok") else "; its data was WRONG, so it is not used"), ""]
    else:
        lines += ["**CUDA copy (PyTorch):** not measured.", ""]
    lines += ["\"Of copy\" below is against the higher of the two: each bench run's copy kernel, or "
              "PyTorch's device copy.", ""]
    if clocks_line:
        lines += [clocks_line, ""]
    big = max((int(r["instances"]) for r in rows if r["run"] == "fused-all"), default=0)
    lines += ["## Headline", "",
              "GPU ms: the median over the sweep's run and the repeats (min and max under Repeats).", "",
              "| workload | instances × bones | GPU ms/frame | B/bone (model) | GB/s | of copy | "
              "traffic model's time (measured over it) |",
              "|---|---|---:|---:|---:|---:|---|"]
    lines += [headline(rows, work, copy, run, n, 67, what) for run, n, what in HEADLINE]
    if big and big < 100_000:
        lines += [headline(rows, work, copy, "fused-all", big, 67, "full workload, fused (largest here)"),
                  headline(rows, work, copy, "fused-skinning", big, 67, "skinning only, fused (largest here)")]
    lines += ["", "Aims (issue 38, on an H100): 100k × 67 full workload, component + skinning ≤ 0.35 ms, "
              "all outputs ≤ 0.45 ms; 1M × 67 skinning only ≤ 2.5 ms; 1M × 67 plain workload, skinning "
              "≤ 1.8 ms; at or below the CUDA peer's time from 10k instances.", ""]

    lines += ["## Repeats (each run a process of its own)", ""] + repeats_table(rows, work) + [""]

    # Fused against separate, every size both measured.
    lines += ["## Fused against separate (all outputs)", "",
              "| instances × bones | fused ms | separate ms | separate / fused |", "|---|---:|---:|---:|"]
    for r in rows:
        if r["run"] != "fused-all":
            continue
        n, b = int(r["instances"]), int(r["bones"])
        s = find(rows, "separate-all", n, b)
        f_ms, s_ms = num(r, "gpu_ms"), num(s, "gpu_ms")
        lines.append(f"| {n:,} × {b} | {fmt(f_ms)} | {fmt(s_ms)} | {fmt(s_ms / f_ms, '.2f')} |")
    of_copy = lambda r: num(r, "effective_gb_per_s") / copy.gbps(r)
    bound = [r for r in rows if r["run"] == "fused-all" and of_copy(r) >= 0.6]
    smallest = min(bound, key=lambda r: int(r["instances"]), default=None)
    lines += ["", "Smallest crowd whose frame is bandwidth-bound (fused, all outputs, ≥ 60% of "
              f"copy): {smallest['instances'] + ' × ' + smallest['bones'] if smallest else 'none'}", ""]

    lines += ["## Occupancy probe", ""] + occupancy_table(work, copy) + [""]
    lines += ["## The fused pass's variants", ""] + variants_table(rows, work) + [""]

    # Other workloads.
    lines += ["## Other workloads (GPU ms per frame)", "", "| run | instances × bones | GPU ms | of copy |",
              "|---|---|---:|---:|"]
    for r in rows:
        if r["run"] in ("mesh-layer", "plan-ik", "baked-ik", "plain-skinning"):
            lines.append(f"| {r['run']} | {int(r['instances']):,} × {r['bones']} | "
                         f"{fmt(num(r, 'gpu_ms'))} | {fmt(of_copy(r) * 100, '.0f')}% |")
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

    # The peers.
    lines += ["", "## Peers (same poses, same GPU)", ""] + peers_section(rows, work)

    if clocks_table:
        lines += ["", "## Clocks by step", ""] + clocks_table
    steps = [s.split("\t") for s in read_text(work / "steps.tsv").splitlines()]
    steps = [f"{s[0]} {float(s[2]) - float(s[1]):.0f}" for s in steps if len(s) == 3]
    if steps:
        lines += ["", "Steps' wall seconds: " + ", ".join(steps) + "."]

    lines += ["", "## What failed", ""]
    lines += [f"- {f}" for f in failed] if failed else ["Nothing."]
    soft = read_text(work / "soft.txt").splitlines()
    if soft:
        lines += ["", "Soft steps that failed or did not run (the run's exit status ignores them):", ""]
        lines += [f"- {s}" for s in soft]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
