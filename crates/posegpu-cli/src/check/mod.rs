//! `posegpu check`: every GPU stage on whatever adapter is found, against the CPU twin on the
//! same inputs, one row per stage. It answers "does posegpu compute right on this GPU and
//! driver?" and is the first step of the real-GPU run (`scripts/gpu-run`). The data is built in
//! code (procedural humanoids, random skeletons, a deep chain), so it needs no files; files
//! given on the command line are checked too.

mod crowd;
mod layers;
mod poses;
mod report;
mod retarget;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use posegpu::{AnimLibrary, Deviation, Error, GpuContext, Poses};

use crate::util::open_gpu;
pub use report::Row;

/// GPU-vs-CPU tolerance, relative to the skeleton's size (the tests' and the demo's).
pub const TOLERANCE: f32 = 1e-4;

/// The environment variable that perturbs one stage's GPU output before its comparison, to
/// show that the check can fail: `1` picks [`CORRUPTED_BY_DEFAULT`], any other value the
/// first stage whose name contains it.
pub const CORRUPT_VAR: &str = "POSEGPU_CHECK_CORRUPT";

/// The stage `POSEGPU_CHECK_CORRUPT=1` perturbs.
pub const CORRUPTED_BY_DEFAULT: &str = "character plan";

#[derive(clap::Args, Clone)]
pub struct CheckArgs {
    /// Instances per stage (a count that is not a multiple of the workgroup size is best; some
    /// stages add their own small counts).
    #[arg(long, default_value_t = 1000, value_parser = crate::util::positive_count)]
    instances: usize,
    /// glTF or BVH files checked too: each file's own clips; with two or more, the first
    /// file's clips retargeted onto each other file (feet IK on) where both are humanoids.
    files: Vec<PathBuf>,
}

/// What a stage hands back: the GPU's and the CPU twin's results on the same inputs.
pub(crate) struct Measured {
    pub instances: usize,
    pub bones: usize,
    /// The largest relative deviation over every compared output.
    pub deviation: f32,
    /// A mismatch that is no number (events or finished lists differ).
    pub note: Option<String>,
}

/// What the stages share: the device, the crowd size, and which stage (if any) is corrupted.
pub(crate) struct Checker {
    pub ctx: GpuContext,
    pub instances: usize,
    corrupt: Option<String>,
    corrupted: std::cell::Cell<bool>,
}

impl Checker {
    /// True (once) when `stage` is the one to perturb.
    fn corrupts(&self, stage: &str) -> bool {
        let hit =
            !self.corrupted.get() && self.corrupt.as_deref().is_some_and(|c| stage.contains(c));
        if hit {
            self.corrupted.set(true);
        }
        hit
    }

    /// Compares `gpu` with `cpu` for `stage`, relative to `lib`'s skeleton size; the GPU's
    /// side perturbed first when `stage` is the corrupted one.
    pub fn compare(&self, stage: &str, lib: &AnimLibrary, mut gpu: Poses, cpu: &Poses) -> f32 {
        let extent = lib.skeleton().extent();
        if self.corrupts(stage) {
            perturb(&mut gpu, extent);
        }
        Deviation::between(&gpu, cpu).relative(extent)
    }
}

/// Moves one bone of the middle instance by a hundredth of the skeleton's size, in every
/// output the read-back holds.
fn perturb(poses: &mut Poses, extent: f32) {
    let at = (poses.instance_count() / 2) * poses.bone_count;
    let shift = 1e-2 * extent.max(1e-3);
    if let Some(x) = poses.component.get_mut(at) {
        x.translation[0] += shift;
    }
    if let Some(x) = poses.locals.get_mut(at) {
        x.translation[0] += shift;
    }
    if let Some(m) = poses.skinning.get_mut(at) {
        m[3] += shift.max(1e-2 * m.iter().fold(1.0f32, |a, v| a.max(v.abs())));
    }
}

/// The name of every stage `posegpu check` runs without files, in the table's order.
pub fn stage_names() -> Vec<&'static str> {
    let poses = poses::STAGES.iter().map(|(name, _)| *name);
    poses
        .chain(crowd::STAGES.iter().map(|(name, _)| *name))
        .collect()
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, Error> {
    // Files are read before the device is opened: a bad path fails at once.
    let files = args
        .files
        .iter()
        .map(|p| Ok((p.clone(), posegpu::import::load(p)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let Some(ctx) = open_gpu()? else {
        println!("posegpu check: no GPU adapter found (not even lavapipe): nothing to check");
        return Ok(ExitCode::FAILURE);
    };
    println!("adapter: {}", ctx.describe());
    let corrupt = std::env::var(CORRUPT_VAR).ok().filter(|v| !v.is_empty());
    let corrupt = corrupt.map(|v| {
        if v == "1" {
            CORRUPTED_BY_DEFAULT.to_string()
        } else {
            v
        }
    });
    if let Some(c) = &corrupt {
        println!("{CORRUPT_VAR}: the GPU output of the first stage named '{c}' is perturbed");
    }
    let checker = Checker {
        ctx,
        instances: args.instances,
        corrupt,
        corrupted: std::cell::Cell::new(false),
    };
    let start = Instant::now();
    println!("{}", report::header());
    let mut rows = Vec::new();
    let mut stage = |name: &str, measured: Result<Measured, Error>| {
        let row = Row::new(name, measured, TOLERANCE);
        println!("{}", row.line());
        rows.push(row);
    };
    for (name, run) in poses::STAGES {
        stage(name, run(&checker));
    }
    for (name, passes) in crowd::STAGES {
        stage(name, crowd::check(&checker, name, passes));
    }
    for (name, measured) in poses::files(&checker, &files) {
        stage(&name, measured);
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| !r.ok)
        .map(|r| r.stage.as_str())
        .collect();
    println!(
        "{} stages in {:.1} s: {}",
        rows.len(),
        start.elapsed().as_secs_f64(),
        if failed.is_empty() {
            "all within tolerance".to_string()
        } else {
            format!("FAILED: {}", failed.join("; "))
        }
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
