//! Retargeting a dataset in one call: every clip of every source onto every target, on every
//! core, written as .glb (and .npz on request) with a per-clip quality report. Work is split by
//! (source, target) pair and clip, results are gathered in a fixed order, and nothing written
//! depends on timing, so the bytes are the same whatever the worker count.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use posegpu::import::expand_paths;
use posegpu::retarget::quality::{self, QualityReport};
use posegpu::retarget::{bake_clip, PlanOptions, RetargetPlan, Rig};
use posegpu::{component_space, Asset, Clip, Error, IkWeights};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::arrays::xform_row;
use crate::errors::{arg_error, guard};
use crate::library::{ik_arg, rest_arg, rig_arg};
use crate::npz::Npz;
use crate::retarget::{convert, ue_method};

/// What one job is asked to do.
struct Options {
    out: PathBuf,
    npz: bool,
    ue: bool,
    rig: Rig,
    ik: IkWeights,
    report_frames: usize,
    skip_existing: bool,
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Refuses two files of one stem: their outputs would overwrite each other.
fn unique_stems(files: &[PathBuf], what: &str) -> PyResult<()> {
    let mut seen = std::collections::BTreeMap::new();
    for f in files {
        if let Some(first) = seen.insert(stem(f), f) {
            return Err(arg_error(format!(
                "{what}: {} and {} have one name; their outputs would overwrite each other",
                first.display(),
                f.display()
            )));
        }
    }
    Ok(())
}

/// A list of paths (str or os.PathLike), or one.
fn paths_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    let one = |o: &Bound<'_, PyAny>| -> PyResult<String> {
        let p: PathBuf = o
            .extract()
            .map_err(|_| arg_error(format!("{name}: expected paths (str or os.PathLike)")))?;
        Ok(p.display().to_string())
    };
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
        return Ok(vec![one(obj)?]);
    }
    obj.try_iter()
        .map_err(|_| arg_error(format!("{name}: expected a list of paths")))?
        .map(|o| one(&o?))
        .collect()
}

/// One record of the report: a clip of a (source, target) pair.
fn record(
    source: &Path,
    target: &Path,
    clip: Option<(usize, &str)>,
) -> serde_json::Map<String, Value> {
    let mut r = serde_json::Map::new();
    r.insert("source".into(), json!(source.display().to_string()));
    r.insert("target".into(), json!(target.display().to_string()));
    r.insert("clip".into(), json!(clip.map(|c| c.1)));
    r.insert("clip_index".into(), json!(clip.map(|c| c.0)));
    r
}

fn add_quality(r: &mut serde_json::Map<String, Value>, q: Option<&QualityReport>) {
    let Some(q) = q else {
        return;
    };
    let fields = [
        ("dir_mean_deg", q.overall.mean),
        ("dir_p95_deg", q.overall.p95),
        ("dir_max_deg", q.overall.max),
        ("hips_height_max", q.hips_height.max),
        ("feet_height_max", q.feet_height.max),
        ("contact_height_max", q.contact_height.max),
        ("travel_max", q.travel.max),
        ("source_sliding", q.source_sliding),
        ("target_sliding", q.target_sliding),
    ];
    for (k, v) in fields {
        r.insert(k.into(), json!(v));
    }
    r.insert("frames".into(), json!(q.frames));
    r.insert("meets_aim".into(), json!(q.meets_aim()));
}

/// Every record of one (source, target) pair, its outputs written.
fn pair(
    source: &Result<Arc<Asset>, String>,
    source_path: &Path,
    target: &Result<(Arc<Asset>, PathBuf), String>,
    target_path: &Path,
    o: &Options,
) -> Vec<serde_json::Map<String, Value>> {
    let fail = |e: String| {
        let mut r = record(source_path, target_path, None);
        r.insert("status".into(), json!("error"));
        r.insert("error".into(), json!(e));
        vec![r]
    };
    let (source, (target, template)) = match (source, target) {
        (Err(e), _) | (_, Err(e)) => return fail(e.clone()),
        (Ok(s), Ok(t)) => (s, t),
    };
    // Reports name outputs relative to the output folder: the same run elsewhere writes the
    // same report.
    let rel = format!("{}/{}", stem(target_path), stem(source_path));
    let dir = o.out.join(stem(target_path));
    let glb = dir.join(format!("{}.glb", stem(source_path)));
    if o.skip_existing && glb.exists() {
        let mut r = record(source_path, target_path, None);
        r.insert("status".into(), json!("skipped"));
        r.insert("output".into(), json!(format!("{rel}.glb")));
        return vec![r];
    }
    if source.clips.is_empty() {
        return fail(format!("{}: no animations", source_path.display()));
    }
    match convert_pair(source, target, template, &dir, &glb, o) {
        Err(e) => fail(e.to_string()),
        Ok((clips, reports, npz)) => clips
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let mut r = record(source_path, target_path, Some((k, c.name())));
                r.insert("status".into(), json!("ok"));
                r.insert("output".into(), json!(format!("{rel}.glb")));
                r.insert("npz".into(), json!(npz.then(|| format!("{rel}.npz"))));
                r.insert("keys".into(), json!(c.key_times().len()));
                r.insert("duration".into(), json!(c.duration()));
                add_quality(&mut r, reports[k].as_ref());
                r
            })
            .collect(),
    }
}

/// The clips converted, their reports, and whether an .npz was written.
type Converted = (Vec<Clip>, Vec<Option<QualityReport>>, bool);

/// Converts every clip of `source` onto `target`, measures it, writes the .glb (and .npz).
fn convert_pair(
    source: &Asset,
    target: &Asset,
    template: &Path,
    dir: &Path,
    glb: &Path,
    o: &Options,
) -> posegpu::Result<Converted> {
    let all: Vec<usize> = (0..source.clips.len()).collect();
    let (clips, reports) = if o.ue {
        (
            convert(source, target, &all, true, &o.rig, o.ik)?,
            vec![None; all.len()],
        )
    } else {
        let plan = RetargetPlan::new(source, target, &PlanOptions::from_rig(&o.rig))?;
        let done: Vec<(Clip, Option<QualityReport>)> = source
            .clips
            .par_iter()
            .map(|c| {
                let baked = bake_clip(&plan, source, c, &target.skeleton, o.ik)?;
                let report = (o.report_frames > 1)
                    .then(|| {
                        let times = quality::frame_times(c, o.report_frames);
                        quality::measure(source, target, &plan, c, &times, o.ik)
                    })
                    .transpose()?;
                Ok((baked, report))
            })
            .collect::<posegpu::Result<_>>()?;
        done.into_iter().unzip()
    };
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let out = posegpu::Asset {
        skeleton: target.skeleton.clone(),
        clips,
        nodes: target.nodes.clone(),
        frame: target.frame.clone(),
    };
    let is_gltf = matches!(
        template
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("glb" | "gltf")
    );
    crate::asset::save(&out, is_gltf.then_some(template), glb)?;
    if o.npz {
        let path = glb.with_extension("npz");
        write_npz(&out, &path).map_err(|source| Error::Io { path, source })?;
    }
    Ok((out.clips, reports, o.npz))
}

/// Per clip its key times and the component-space transforms there, float32 (F, B, 10);
/// with the bones, parents and clip names.
fn write_npz(asset: &Asset, path: &Path) -> std::io::Result<()> {
    let s = &asset.skeleton;
    let mut npz = Npz::default();
    npz.add_strings("bones", s.names());
    npz.add_i32("parents", &[s.len()], s.parents());
    let names: Vec<String> = asset.clips.iter().map(|c| c.name().to_string()).collect();
    npz.add_strings("clip_names", &names);
    for (k, clip) in asset.clips.iter().enumerate() {
        let mut times = clip.key_times();
        if times.is_empty() {
            times.push(0.0);
        }
        let mut flat = Vec::with_capacity(times.len() * s.len() * 10);
        for &t in &times {
            let cs = component_space(s.parents(), &clip.pose_at(s.rest(), t));
            flat.extend(cs.iter().flat_map(xform_row));
        }
        npz.add_f32(&format!("clip{k:03}_times"), &[times.len()], &times);
        npz.add_f32(
            &format!("clip{k:03}_component"),
            &[times.len(), s.len(), 10],
            &flat,
        );
    }
    npz.write(path)
}

/// A progress bar on stderr: pairs done of all, redrawn in place.
struct Progress {
    total: usize,
    done: AtomicUsize,
    shown: bool,
    lock: Mutex<()>,
}

impl Progress {
    fn tick(&self, what: &str) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        if !self.shown {
            return;
        }
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let width = 30;
        let filled = width * done / self.total.max(1);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rretarget [{}{}] {done}/{} {what:<48.48}",
            "#".repeat(filled),
            ".".repeat(width - filled),
            self.total
        );
        if done == self.total {
            let _ = writeln!(err);
        }
        let _ = err.flush();
    }
}

const CSV_COLUMNS: [&str; 20] = [
    "source",
    "target",
    "clip_index",
    "clip",
    "status",
    "error",
    "output",
    "npz",
    "keys",
    "duration",
    "frames",
    "dir_mean_deg",
    "dir_p95_deg",
    "dir_max_deg",
    "hips_height_max",
    "feet_height_max",
    "contact_height_max",
    "travel_max",
    "source_sliding",
    "target_sliding",
];

fn csv_cell(v: Option<&Value>) -> String {
    let s = match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn write_reports(
    records: &[serde_json::Map<String, Value>],
    json_path: &Path,
    csv_path: &Path,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(&Value::Array(
        records.iter().cloned().map(Value::Object).collect(),
    ))
    .map_err(std::io::Error::other)?;
    std::fs::write(json_path, text + "\n")?;
    let mut csv = CSV_COLUMNS.join(",") + ",meets_aim\n";
    for r in records {
        let cells: Vec<String> = CSV_COLUMNS
            .iter()
            .chain(["meets_aim"].iter())
            .map(|c| csv_cell(r.get(*c)))
            .collect();
        csv += &cells.join(",");
        csv.push('\n');
    }
    std::fs::write(csv_path, csv)
}

/// Retargets every clip of every source onto every target: `out_dir/TARGET_STEM/SOURCE_STEM.glb`
/// (the target's meshes and skins with the converted clips), and with `npz=True` beside it
/// `SOURCE_STEM.npz` (per clip `clipNNN_times` and `clipNNN_component`, float32 (F, B, 10) at
/// the clip's key times, with `bones`, `parents`, `clip_names`). A per-clip quality report is
/// written as `report.json` and `report.csv` (`report-I-of-N.*` for a shard) and returned.
///
/// `sources`/`targets`: files, folders (searched recursively) or `@LIST` files, as `posegpu
/// retarget` takes them, sorted. `workers`: threads (default every core); the outputs are the
/// same bytes whatever their number. `shard=(i, n)` converts every n-th source of the sorted
/// list from the i-th, as `--shard I/N` does, so n processes or machines split a dataset
/// without talking. `method`, `rig`, `rest`, `ik` as `posegpu.retarget`; `report_frames`
/// frames per clip are measured (0: no quality report); `skip_existing` leaves pairs whose
/// .glb exists; `progress` draws a bar on stderr. A file that fails is recorded
/// (`status: "error"`) and the others go on.
#[pyfunction]
#[pyo3(signature = (sources, targets, out_dir, npz=false, workers=None, shard=None, method="character", rig=None, rest=None, ik=None, report_frames=400, skip_existing=false, progress=true))]
#[allow(clippy::too_many_arguments)]
pub fn retarget_dataset<'py>(
    py: Python<'py>,
    sources: &Bound<'py, PyAny>,
    targets: &Bound<'py, PyAny>,
    out_dir: PathBuf,
    npz: bool,
    workers: Option<usize>,
    shard: Option<(usize, usize)>,
    method: &str,
    rig: Option<&Bound<'py, PyAny>>,
    rest: Option<&str>,
    ik: Option<&Bound<'py, PyAny>>,
    report_frames: usize,
    skip_existing: bool,
    progress: bool,
) -> PyResult<Bound<'py, PyDict>> {
    guard(|| {
        let ue = ue_method(method)?;
        if let Some((i, n)) = shard {
            if n == 0 || i >= n {
                return Err(arg_error(format!(
                    "shard: ({i}, {n}) is not (i, n) with 0 <= i < n"
                )));
            }
        }
        if workers == Some(0) {
            return Err(arg_error("workers: must be at least 1"));
        }
        let mut rig = match rig.filter(|r| !r.is_none()) {
            Some(r) => rig_arg(r)?,
            None => Rig::default(),
        };
        rig.rest = rest_arg(rest)?.or(rig.rest);
        let options = Options {
            out: out_dir.clone(),
            npz,
            ue,
            rig,
            ik: ik_arg(ik)?,
            report_frames,
            skip_existing,
        };
        let source_args = paths_arg(sources, "sources")?;
        let target_args = paths_arg(targets, "targets")?;
        let mut sources = expand_paths(&source_args).map_err(crate::errors::to_py)?;
        let targets = expand_paths(&target_args).map_err(crate::errors::to_py)?;
        unique_stems(&sources, "sources")?;
        unique_stems(&targets, "targets")?;
        if let Some((i, n)) = shard {
            sources = sources.into_iter().skip(i).step_by(n).collect();
        }
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| arg_error(format!("out_dir: {}: {e}", out_dir.display())))?;
        let suffix = shard.map_or(String::new(), |(i, n)| format!("-{i}-of-{n}"));
        let json_path = out_dir.join(format!("report{suffix}.json"));
        let csv_path = out_dir.join(format!("report{suffix}.csv"));
        let threads =
            workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| arg_error(format!("workers: {e}")))?;
        let bar = Progress {
            total: sources.len() * targets.len(),
            done: AtomicUsize::new(0),
            shown: progress && !sources.is_empty() && !targets.is_empty(),
            lock: Mutex::new(()),
        };
        let records = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| run(&sources, &targets, &options, &bar))
            }))
        });
        let records = records.map_err(|_| {
            crate::errors::Error::new_err(
                "internal error in posegpu (a Rust panic) while retargeting",
            )
        })?;
        write_reports(&records, &json_path, &csv_path)
            .map_err(|e| arg_error(format!("out_dir: writing the report: {e}")))?;
        summary(py, &out_dir, &records, &json_path, &csv_path, threads)
    })
}

/// Loads the targets once, then each source, and converts every pair.
fn run(
    sources: &[PathBuf],
    targets: &[PathBuf],
    o: &Options,
    bar: &Progress,
) -> Vec<serde_json::Map<String, Value>> {
    let loaded: Vec<Result<(Arc<Asset>, PathBuf), String>> = targets
        .par_iter()
        .map(|t| {
            posegpu::import::load(t)
                .map(|a| (Arc::new(a), t.clone()))
                .map_err(|e| e.to_string())
        })
        .collect();
    sources
        .par_iter()
        .flat_map_iter(|s| {
            let source = posegpu::import::load(s)
                .map(Arc::new)
                .map_err(|e| e.to_string());
            let per_target: Vec<Vec<_>> = targets
                .par_iter()
                .zip(&loaded)
                .map(|(t, target)| {
                    let r = pair(&source, s, target, t, o);
                    bar.tick(&format!("{} -> {}", stem(s), stem(t)));
                    r
                })
                .collect();
            per_target.into_iter().flatten()
        })
        .collect()
}

fn summary<'py>(
    py: Python<'py>,
    out_dir: &Path,
    records: &[serde_json::Map<String, Value>],
    json_path: &Path,
    csv_path: &Path,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let json_mod = py.import("json")?;
    let as_py = |r: &serde_json::Map<String, Value>| -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(r).expect("JSON values serialize");
        json_mod.call_method1("loads", (text,))
    };
    let all: Vec<Bound<'py, PyAny>> = records.iter().map(as_py).collect::<PyResult<_>>()?;
    let status = |r: &serde_json::Map<String, Value>| {
        r.get("status").and_then(Value::as_str).map(str::to_owned)
    };
    let failed: Vec<Bound<'py, PyAny>> = records
        .iter()
        .filter(|r| status(r).as_deref() == Some("error"))
        .map(as_py)
        .collect::<PyResult<_>>()?;
    let mut outputs: Vec<String> = records
        .iter()
        .filter(|r| status(r).as_deref() == Some("ok"))
        .filter_map(|r| r.get("output").and_then(Value::as_str))
        .map(|rel| out_dir.join(rel).display().to_string())
        .collect();
    outputs.dedup();
    let d = PyDict::new(py);
    d.set_item("records", all)?;
    d.set_item("failed", failed)?;
    d.set_item("outputs", outputs)?;
    d.set_item("report_json", json_path.display().to_string())?;
    d.set_item("report_csv", csv_path.display().to_string())?;
    d.set_item("workers", threads)?;
    Ok(d)
}
