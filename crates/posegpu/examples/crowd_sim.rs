//! A crowd simulation driven by root motion on the GPU: agents walk and run (a synced blend of
//! the embedded humanoid's walk and run, weighted by a 1D blend space over speed), their root
//! motion is extracted on the GPU with the root locked in place, and their placements are
//! integrated from it there too. Every second a few agents change speed (sparse weight
//! writes); nothing else crosses the bus.
//!
//! ```text
//! cargo run --release --example crowd_sim [-- AGENTS [FRAMES]]
//! ```
//! Prints the per-pass GPU times, then checks the first agents' placements against the CPU
//! twin stepped alongside.

use glam::{Quat, Vec3};
use posegpu::blend::space::BlendSpace1D;
use posegpu::playback::{Agent, Player};
use posegpu::procedural::humanoid_asset;
use posegpu::PassTimes;
use posegpu::{AnimLibrary, Crowd, Error, GpuContext, GpuCrowd, GpuOptions, RootLock, Transform};

const DT: f32 = 1.0 / 30.0;
/// Agents stepped on the CPU twin as well.
const CHECKED: usize = 64;

/// A small deterministic generator (no extra dependency for an example).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().ok());
    let agents = args.next().flatten().unwrap_or(100_000);
    let frames = args.next().flatten().unwrap_or(90);

    let asset = humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let walk = lib.find_clip("walk")?;
    let run = lib.find_clip("run")?;
    // Speed picks the weights: walk at 1.4 m/s, run at 3.5 m/s (their root speeds).
    let speeds = BlendSpace1D::new(&[1.4, 3.5])?;
    let weights = |speed: f32| {
        let mut w = [0.0; 2];
        for s in speeds.weights(speed) {
            w[s.sample] = s.weight;
        }
        w
    };

    let mut rng = Rng(7);
    let mut crowd = Crowd::new(&lib);
    let side = (agents as f32).sqrt().ceil() as usize;
    for i in 0..agents {
        let w = weights(1.4 + 2.1 * rng.unit());
        let phase = rng.unit();
        let players = [
            Player::new(walk)
                .starting_at(phase * lib.clip_duration(walk))
                .with_weight(w[0]),
            Player::new(run)
                .starting_at(phase * lib.clip_duration(run))
                .with_weight(w[1]),
        ];
        let agent = Agent::blend(&players)
            .synced()
            .with_root_motion(Some(RootLock::RefPose));
        crowd.add(&agent)?;
        let at = Vec3::new((i % side) as f32 * 2.0, 0.0, (i / side) as f32 * 2.0);
        let heading = Quat::from_rotation_y(rng.unit() * std::f32::consts::TAU);
        crowd.set_placement(i, Transform::new(at, heading, Vec3::ONE))?;
    }

    let ctx = GpuContext::new()?;
    println!("device: {}", ctx.describe());
    println!(
        "{agents} agents, {} bones, {frames} frames of {DT:.4} s",
        lib.bone_count()
    );
    let mut gpu = GpuCrowd::new(&ctx, &lib, &crowd, &GpuOptions::default())?;
    // The CPU twin steps the first agents alongside.
    let mut twin = Crowd::new(&lib);
    for i in 0..CHECKED.min(agents) {
        twin.add(
            &Agent::blend(crowd.players(i))
                .synced()
                .with_root_motion(Some(RootLock::RefPose)),
        )?;
        twin.set_placement(i, crowd.placements()[i])?;
    }

    let mut total = PassTimes::default();
    let mut timed = 0;
    for frame in 0..frames {
        // Once a second, one agent in a hundred picks a new speed.
        if frame % 30 == 29 {
            for i in (frame % 100..agents).step_by(100) {
                let w = weights(1.4 + 2.1 * rng.unit());
                gpu.set_weights(i, &w)?;
                if i < twin.len() {
                    twin.set_weights(i, &w)?;
                }
            }
        }
        twin.advance(&lib, DT)?;
        if let Some(t) = gpu.advance_timed(DT)? {
            total.accumulate(&t);
            timed += 1;
        }
    }
    if timed > 0 {
        let ms = |ns: f64| ns / timed as f64 / 1e6;
        let passes: Vec<String> = (total.passes().iter())
            .map(|(pass, ns)| format!("{} {:.3} ms", pass.label(), ms(*ns)))
            .collect();
        println!(
            "GPU per frame: {}, total {:.3} ms",
            passes.join(", "),
            ms(total.total_ns())
        );
        println!(
            "  {:.1} M bones/s",
            (agents * lib.bone_count()) as f64 / (total.total_ns() / timed as f64) * 1e3
        );
    } else {
        println!("(this adapter has no timestamp queries)");
    }

    let placements = gpu.read_placements()?;
    let mut worst = 0.0f32;
    for (g, c) in placements.iter().zip(twin.placements()) {
        worst = worst.max((g.translation - c.translation).length());
    }
    let travelled: f32 = placements
        .iter()
        .zip(crowd.placements())
        .map(|(now, start)| (now.translation - start.translation).length())
        .sum::<f32>()
        / agents as f32;
    let seconds = frames as f32 * DT;
    println!(
        "mean speed {:.2} m/s over {seconds:.1} s; first {} agents: GPU placements within {worst:.2e} m of the CPU twin",
        travelled / seconds,
        twin.len()
    );
    Ok(())
}
