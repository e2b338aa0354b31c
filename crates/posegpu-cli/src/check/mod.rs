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

/// GPU-vs-CPU tolerance, relative to the skeleton's size (the tests' and the demo's). A
/// skeleton whose longest chain, straightened, is longer than its size gets it scaled by
/// that ratio: see [`tolerance`].
pub const TOLERANCE: f32 = 1e-4;

/// The tolerance for `skeleton`: [`TOLERANCE`] times the larger of 1 and its reach over its
/// size. The reach is the longest path of bone offsets below a root (the root's own offset
/// is turned by no parent). Why: a joint's f32 rounding in the hierarchy moves every
/// descendant by that rounding times the distance along the chain, so two correct f32
/// implementations (a GPU that contracts `a * b + c` into one rounding and a CPU that does
/// not) drift apart in proportion to the chain's length, not to how curled the pose is. A
/// humanoid's reach is under its size (factor 1); the check's 300-bone chain, 0.01 apart and
/// curled to a size of 1.07, has a reach of 2.99 (factor 2.8).
pub fn tolerance(skeleton: &posegpu::Skeleton) -> f32 {
    let mut path = vec![0.0f32; skeleton.len()];
    for i in 0..skeleton.len() {
        if let Some(p) = skeleton.parent(i) {
            path[i] = path[p] + skeleton.rest()[i].translation.length();
        }
    }
    let reach = path.into_iter().fold(0.0, f32::max);
    TOLERANCE * (reach / skeleton.extent()).max(1.0)
}

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
    /// What `deviation` must not pass: [`tolerance`] of the stage's skeleton.
    pub tolerance: f32,
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
        let row = Row::new(name, measured);
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

#[cfg(test)]
mod tests {
    use posegpu::glam::{Quat, Vec3};
    use posegpu::{Bone, Skeleton, Transform};

    use super::{tolerance, TOLERANCE};

    /// A chain of `n` bones 0.1 apart, each turned by `turn` radians about z.
    fn chain(n: usize, turn: f32) -> Skeleton {
        let bones = (0..n)
            .map(|i| {
                let rest = Transform::new(
                    Vec3::Y * 0.1,
                    Quat::from_rotation_z(if i == 0 { 0.0 } else { turn }),
                    Vec3::ONE,
                );
                Bone::new(format!("b{i}"), i.checked_sub(1), rest)
            })
            .collect();
        Skeleton::new(bones).unwrap()
    }

    #[test]
    fn the_tolerance_grows_with_a_chain_longer_than_the_skeleton() {
        // Straight: the reach (below the root) is shorter than the size.
        assert_eq!(tolerance(&chain(20, 0.0)), TOLERANCE);
        // Curled into a circle of circumference 2: reach 1.9, size about 2 / pi + 0.1.
        let curled = chain(20, std::f32::consts::TAU / 20.0);
        let factor = tolerance(&curled) / TOLERANCE;
        let want = 1.9 / curled.extent();
        assert!(
            (factor - want).abs() < 1e-4 && factor > 2.5,
            "{factor} {want}"
        );
    }
}
