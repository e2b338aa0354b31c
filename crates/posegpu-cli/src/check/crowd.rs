//! The crowd stage of `posegpu check`: sequence players stepped on the GPU (`GpuCrowd`) and by
//! the CPU twin (`Crowd`) side by side: players, finished lists, root motion, placements,
//! events (notifies, loops, montage segments) and poses after every step.

use glam::{Quat, Vec3};
use posegpu::playback::{PlayRate, Player};
use posegpu::procedural::{humanoid_asset, humanoid_crowd};
use posegpu::{
    AnimLibrary, Clip, CpuEvaluator, Error, FusePolicy, GpuCrowd, GpuOptions, Poses, Transform,
};

use super::{Checker, Measured};

/// The crowd stage under each pass plan.
pub const STAGES: [(&str, FusePolicy); 2] = [
    (
        "crowd: rates, montages, root motion, events (fused)",
        FusePolicy::Fused,
    ),
    (
        "crowd: rates, montages, root motion, events (separate)",
        FusePolicy::Separate,
    ),
];

/// The humanoid's clips, walk with four notifies and run with one.
fn library() -> Result<AnimLibrary, Error> {
    let asset = humanoid_asset();
    let mut clips = asset.clips.clone();
    let walk = Clip::find(&clips, "walk")?;
    let run = Clip::find(&clips, "run")?;
    clips[walk] = clips[walk]
        .clone()
        .with_notify("step_r", 0.75)?
        .with_notify("step_l", 0.25)?
        .with_notify("start", 0.0)?
        .with_notify("end", 1.0)?;
    clips[run] = clips[run].clone().with_notify("step", 0.35)?;
    AnimLibrary::new(&asset.skeleton, &clips)
}

/// The largest difference between two lists of transforms: translations over `extent`,
/// rotations as `1 - |dot|`, scales.
fn transforms(a: &[Transform], b: &[Transform], extent: f32) -> f32 {
    if a.len() != b.len() {
        return f32::NAN;
    }
    a.iter().zip(b).fold(0.0f32, |d, (x, y)| {
        let t = (x.translation - y.translation).abs().max_element() / extent;
        let s = (x.scale - y.scale).abs().max_element();
        d.max(t).max(s).max(1.0 - x.rotation.dot(y.rotation).abs())
    })
}

/// Steps the crowd on both sides through uneven steps (a zero one, steps of several laps),
/// with host writes halfway, and compares everything after each step.
pub fn check(c: &Checker, stage: &str, passes: FusePolicy) -> Result<Measured, Error> {
    let lib = library()?;
    let extent = lib.skeleton().extent();
    let n = c.instances.max(8);
    let mut cpu = humanoid_crowd(&lib, n)?;
    let along_z = |z: f32| Transform::new(Vec3::Z * z, Quat::IDENTITY, Vec3::ONE);
    cpu.set_placement(7, along_z(2.0))?;
    // Room for a dozen events per instance and step (three players, steps of several laps),
    // and bindings small enough for several output chunks, yet large enough for that list and
    // for the library's tables.
    let events = 12 * n + 64;
    let chunk = (n / 3).max(1) * lib.bone_count() * 48;
    let options = GpuOptions {
        max_binding_size: Some((chunk.max(16 * events + 64) as u64).max(lib.asset_bytes())),
        event_capacity: Some(events as u32),
        passes,
        ..GpuOptions::default()
    };
    let mut gpu = GpuCrowd::new(&c.ctx, &lib, &cpu, &options)?;
    let walk = lib.find_clip("walk")?;
    let twin = CpuEvaluator::new(&lib);
    let mut poses = Poses::default();
    let (mut deviation, mut note) = (0.0f32, None);
    let mut events = 0;
    for (step, dt) in [0.016, 0.3, 0.0, 2.7, 0.05, 0.9, 0.016, 1.3]
        .into_iter()
        .enumerate()
    {
        if step == 4 {
            let player = Player::new(walk)
                .starting_at(0.5)
                .with_rate(PlayRate::new(-2.0));
            cpu.set_player(1, 0, player)?;
            gpu.set_player(1, 0, player)?;
            cpu.set_weights(2, &[0.1, 0.9])?;
            gpu.set_weights(2, &[0.1, 0.9])?;
            cpu.restart(5)?;
            gpu.restart(5)?;
            cpu.set_placement(6, along_z(-1.0))?;
            gpu.set_placement(6, along_z(-1.0))?;
        }
        cpu.advance(&lib, dt)?;
        gpu.advance(dt)?;
        let players = gpu.read_players()?;
        for (g, w) in players.iter().zip(cpu.all_players()) {
            deviation = deviation.max((g.position - w.position).abs());
            if (g.track, g.weight, g.looping) != (w.track, w.weight, w.looping) {
                note.get_or_insert(format!("step {step}: players differ"));
            }
        }
        if gpu.finished()? != cpu.finished() {
            note.get_or_insert(format!("step {step}: finished lists differ"));
        }
        if gpu.events()? != cpu.events() {
            note.get_or_insert(format!("step {step}: events differ"));
        }
        events += cpu.events().len();
        let motion = transforms(&gpu.read_root_motion()?, cpu.root_motion(), extent);
        // Placements accumulate the motion in world units: 1e-3 as the tests allow.
        let placed = transforms(&gpu.read_placements()?, cpu.placements(), extent) * 0.1;
        twin.evaluate(&cpu.batch(), &mut poses)?;
        let got = gpu.evaluator().read_back()?;
        let d = c.compare(stage, &lib, got, &poses);
        deviation = [deviation, motion, placed, d]
            .into_iter()
            .fold(0.0, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.max(b)
                }
            });
    }
    if events == 0 {
        note.get_or_insert("no event was passed".into());
    }
    Ok(Measured {
        instances: n,
        bones: lib.bone_count(),
        deviation,
        tolerance: super::tolerance(lib.skeleton()),
        note,
    })
}
