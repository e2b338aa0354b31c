//! The crowd stage of `posegpu check`: sequence players stepped on the GPU (`GpuCrowd`) and by
//! the CPU twin (`Crowd`) side by side: players, finished lists, root motion, placements,
//! events (notifies, loops, montage segments) and poses after every step.

use glam::{Quat, Vec3};
use posegpu::playback::Montage;
use posegpu::procedural::humanoid_asset;
use posegpu::{
    Agent, AnimLibrary, Clip, CpuEvaluator, Crowd, Error, GpuCrowd, GpuOptions, PassPlan, PlayRate,
    Player, Poses, RootLock, Segment, Transform,
};

use super::{Checker, Measured};

/// The crowd stage under each pass plan.
pub const STAGES: [(&str, PassPlan); 2] = [
    (
        "crowd: rates, montages, root motion, events (fused)",
        PassPlan::Fused,
    ),
    (
        "crowd: rates, montages, root motion, events (separate)",
        PassPlan::Separate,
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

/// `n` agents of every kind: looping and not, negative, zero and shaped rates (a rate basis,
/// scale, bias, clamp), synced and free blends, a montage, root motion with each root lock.
fn mixed_crowd(lib: &AnimLibrary, n: usize) -> Result<Crowd, Error> {
    let clip = |name: &str| lib.find_clip(name).map(|c| c as u32);
    let (idle, walk, run, wave) = (clip("idle")?, clip("walk")?, clip("run")?, clip("wave")?);
    let mut crowd = Crowd::new(lib);
    let segments = [
        Segment::new(walk, 0.1, 0.9),
        Segment::new(run, 0.0, 0.7),
        Segment::new(wave, 0.5, 1.2),
    ];
    let montage = crowd.add_montage(lib, &Montage::new("m", &segments))?;
    let locks = [
        None,
        Some(RootLock::RefPose),
        Some(RootLock::FirstFrame),
        Some(RootLock::Zero),
    ];
    for i in 0..n {
        let f = i as f32;
        let rate = match i % 6 {
            0 => PlayRate::new(1.0),
            1 => PlayRate::new(-1.3),
            2 => PlayRate::new(0.0),
            3 => PlayRate::new(150.0).with_basis(100.0),
            4 => PlayRate::new(2.0)
                .with_scale_bias(0.5, 0.25)
                .with_clamp(-0.5, 1.1),
            _ => PlayRate::new(-4.0).with_basis(2.0).with_clamp(-1.5, 1.5),
        };
        let track = [walk, run, wave, idle, montage.0][i % 5];
        let length = crowd.track_length(track.into()).unwrap_or(1.0);
        let player = Player::new(track)
            .starting_at((f * 0.137) % 1.0 * length)
            .with_rate(rate)
            .looping(i % 5 != 0);
        let mut agent = match i % 4 {
            0 | 1 => Agent::new(player),
            2 => {
                let other = Player::new(run)
                    .starting_at(0.2)
                    .with_weight(0.3 + 0.1 * (f % 7.0));
                Agent::blend(&[player.with_weight(0.6), other]).synced()
            }
            _ => {
                let other = Player::new(walk).with_weight(0.0);
                let third = Player::new(run)
                    .with_rate(PlayRate::new(0.7))
                    .with_weight(0.5);
                Agent::blend(&[player.with_weight(0.5), other, third])
            }
        };
        if i % 3 != 0 {
            agent = agent.with_root_motion(locks[i % 4]);
        }
        crowd.add(&agent)?;
    }
    Ok(crowd)
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
pub fn check(c: &Checker, stage: &str, passes: PassPlan) -> Result<Measured, Error> {
    let lib = library()?;
    let extent = lib.skeleton().extent();
    let n = c.instances.max(8);
    let mut cpu = mixed_crowd(&lib, n)?;
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
    let walk = lib.find_clip("walk")? as u32;
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
        twin.evaluate_batch(&cpu.batch(), &mut poses)?;
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
        note,
    })
}
