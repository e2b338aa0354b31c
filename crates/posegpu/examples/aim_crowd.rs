//! A crowd in which every instance looks at its own moving target through an aim offset: the
//! embedded humanoid's nine aim poses (yaw −90/0/90 × pitch −45/0/45) as mesh-space additives,
//! blended bilinearly at each instance's (yaw, pitch) and applied over its walk or idle.
//!
//! ```text
//! cargo run --release --example aim_crowd [-- INSTANCES]
//! ```
//! Prints the per-pass GPU times, checks the first instances against the CPU twin, and says how
//! closely the heads point at their targets.

use glam::{Vec2, Vec3};
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::blend::clips::AimOffset;
use posegpu::blend::space::BlendGrid;
use posegpu::procedural::{aim_angles, humanoid_aim_poses, humanoid_asset, AIM_PITCHES, AIM_YAWS};
use posegpu::{
    AdditiveSpace, AnimLibrary, CpuEvaluator, Deviation, Error, GpuContext, GpuEvaluator,
    GpuOptions, PoseBatch, Poses,
};

const FRAMES: usize = 30;

fn main() -> Result<(), Error> {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);

    // The aim poses become mesh-space additives against the reference pose, once, on the host.
    let asset = humanoid_asset();
    let skeleton = &asset.skeleton;
    let mut clips = asset.clips.clone();
    let first = clips.len() as u32;
    for pose in humanoid_aim_poses(skeleton)? {
        let name = format!("{} additive", pose.name());
        let mesh = AdditiveSpace::Mesh;
        clips.push(make_additive(
            &name,
            skeleton,
            &pose,
            AdditiveBase::ReferencePose,
            mesh,
        )?);
    }
    let lib = AnimLibrary::new(skeleton, &clips)?;
    let grid = BlendGrid::new(&AIM_YAWS, &AIM_PITCHES)?;
    let aim = AimOffset::new(&lib, grid.into(), (first..first + 9).collect())?;
    let head = skeleton.find("head").expect("the humanoid has a head");
    let eyes = skeleton.rest_component()[head].translation;

    // Instances stand on a grid facing +Z; each target circles in front of its instance.
    let side = (count as f32).sqrt().ceil() as usize;
    let position = |i: usize| Vec3::new((i % side) as f32 * 2.0, 0.0, (i / side) as f32 * 2.0);
    let target = |i: usize, t: f32| {
        let phase = i as f32 * 0.618 + t * 0.7;
        position(i) + Vec3::new(3.0 * phase.sin(), 1.6 + 1.2 * (1.3 * phase).cos(), 3.0)
    };
    let frame_batch = |t: f32, aimed: bool| {
        let mut batch = PoseBatch::with_capacity(count, 3);
        for i in 0..count {
            let (yaw, pitch) = aim_angles(target(i, t) - position(i) - eyes);
            let clip = (i % 2) as u32; // idle or walk
            let instance = batch.push_clip(clip, t + i as f32 * 0.37, true);
            if aimed {
                instance.aim(&aim, Vec2::new(yaw, pitch), 0.0, 1.0);
            }
        }
        batch
    };

    let ctx = GpuContext::new()?;
    println!("{count} humanoids aiming; adapter: {}", ctx.describe());
    let mut gpu = GpuEvaluator::new(&ctx, &lib, count, &GpuOptions::default())?;
    let mut times = Vec::new();
    for frame in 0..FRAMES {
        if let Some(t) = gpu.evaluate_timed(&frame_batch(frame as f32 / 30.0, true))? {
            times.push(t);
        }
    }
    times.sort_by(|a, b| a.total_ns().total_cmp(&b.total_ns()));
    if let Some(t) = times.get(times.len() / 2) {
        let passes: Vec<String> = (t.passes().iter())
            .map(|(pass, ns)| format!("{} {:.3} ms", pass.label(), ns / 1e6))
            .collect();
        println!("GPU per frame (median): {}", passes.join(", "));
    }

    // The last frame, read back, against the CPU twin on the first instances.
    let t = (FRAMES - 1) as f32 / 30.0;
    let check: Vec<usize> = (0..count.min(256)).collect();
    let gpu_poses = gpu.read_back()?.select(&check);
    let cpu = CpuEvaluator::new(&lib);
    let (mut aimed, mut plain) = (Poses::default(), Poses::default());
    cpu.evaluate(&frame_batch(t, true), &mut aimed)?;
    cpu.evaluate(&frame_batch(t, false), &mut plain)?;
    let deviation = Deviation::between(&gpu_poses, &aimed.select(&check));
    println!(
        "GPU vs CPU on {} instances: {:.2e} of the skeleton's size",
        check.len(),
        deviation.relative(skeleton.extent())
    );

    // How far each head's turn misses its target: the aim offset turns the head by the
    // blended delta; a bilinear blend of nlerped rotations is close to, not exactly, the aim.
    let errors: Vec<f32> = check
        .iter()
        .map(|&i| {
            let turn =
                aimed.component(i, head).rotation * plain.component(i, head).rotation.inverse();
            let wanted = (target(i, t) - position(i) - eyes).normalize();
            (turn * Vec3::Z).angle_between(wanted).to_degrees()
        })
        .collect();
    let mean = errors.iter().sum::<f32>() / errors.len() as f32;
    let max = errors.iter().copied().fold(0.0, f32::max);
    println!("aim error: mean {mean:.2}°, worst {max:.2}° (targets within the grid's range)");
    Ok(())
}
