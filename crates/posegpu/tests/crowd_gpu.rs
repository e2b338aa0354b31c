//! Crowd playback on the GPU against its CPU twin: players, finished events, root motion,
//! placements and poses after every step, for a crowd that uses every feature, split over
//! several chunks.

mod common;

use posegpu::playback::Montage;
use posegpu::{
    procedural, Agent, AnimLibrary, Crowd, Deviation, GpuCrowd, GpuOptions, PassPlan, PlayRate,
    Player, RootLock, Segment, Transform,
};

fn along_z(z: f32) -> Transform {
    Transform::new(glam::Vec3::Z * z, glam::Quat::IDENTITY, glam::Vec3::ONE)
}

fn transforms_close(a: &[Transform], b: &[Transform], tol: f32, what: &str) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let d = (x.translation - y.translation)
            .abs()
            .max_element()
            .max((x.scale - y.scale).abs().max_element())
            .max(1.0 - x.rotation.dot(y.rotation).abs());
        assert!(d <= tol, "{what}, instance {i}: GPU {x:?} vs CPU {y:?}");
    }
}

/// A crowd with every kind of player: looping and not, negative, zero and shaped rates,
/// synced and free blends, montages, root motion with and without each root lock.
fn mixed_crowd(lib: &AnimLibrary) -> Crowd {
    let clip = |name: &str| lib.find_clip(name).unwrap() as u32;
    let (idle, walk, run, wave) = (clip("idle"), clip("walk"), clip("run"), clip("wave"));
    let mut crowd = Crowd::new(lib);
    let montage = Montage::new(
        "m",
        &[
            Segment::new(walk, 0.1, 0.9),
            Segment::new(run, 0.0, 0.7),
            Segment::new(wave, 0.5, 1.2),
        ],
    );
    let montage = crowd.add_montage(lib, &montage).unwrap();
    let locks = [
        None,
        Some(RootLock::RefPose),
        Some(RootLock::FirstFrame),
        Some(RootLock::Zero),
    ];
    for i in 0..96u32 {
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
        let looping = i % 5 != 0;
        let track = [walk, run, wave, idle, montage.0][i as usize % 5];
        let length = crowd.track_length(track.into()).unwrap();
        let start = (f * 0.137) % 1.0 * length;
        let player = Player::new(track)
            .starting_at(start)
            .with_rate(rate)
            .looping(looping);
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
            agent = agent.with_root_motion(locks[i as usize % 4]);
        }
        crowd.add(&agent).unwrap();
    }
    crowd
}

#[test]
fn a_crowd_steps_the_same_on_gpu_and_cpu() {
    let Some(ctx) = common::gpu() else { return };
    // The separate passes, and the fused pass (which a crowd without transitions or IK runs
    // on a GPU).
    for passes in [PassPlan::Separate, PassPlan::Fused] {
        steps_the_same(&ctx, passes);
    }
}

fn steps_the_same(ctx: &posegpu::GpuContext, passes: PassPlan) {
    let asset = procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut cpu = mixed_crowd(&lib);
    cpu.set_placement(7, along_z(2.0)).unwrap();
    // Small bindings: the crowd spans several chunks.
    let options = GpuOptions {
        max_binding_size: Some(20 * lib.bone_count() as u64 * 48),
        passes,
        ..GpuOptions::default()
    };
    let mut gpu = GpuCrowd::new(ctx, &lib, &cpu, &options).unwrap();
    assert_eq!(gpu.evaluator().pass_plan(), passes);
    assert!(
        gpu.evaluator().chunks().len() > 1,
        "the test needs several chunks"
    );
    let walk = lib.find_clip("walk").unwrap() as u32;
    let mut finished_any = false;
    for (step, dt) in [0.016, 0.3, 0.0, 2.7, 0.05, 0.9, 0.016, 1.3]
        .into_iter()
        .enumerate()
    {
        if step == 4 {
            // Host writes between steps reach both.
            for c in [&mut cpu as &mut dyn Control, &mut gpu as &mut dyn Control] {
                c.set_player(
                    10,
                    0,
                    Player::new(walk)
                        .starting_at(0.5)
                        .with_rate(PlayRate::new(-2.0)),
                );
                c.set_weights(11, &[0.1, 0.0, 0.9]);
                c.restart(25);
                c.set_placement(26, along_z(-1.0));
            }
        }
        cpu.advance(&lib, dt).unwrap();
        gpu.advance(dt).unwrap();
        let what = format!("{passes:?}, step {step} (dt {dt})");
        let (gp, cp) = (gpu.read_players().unwrap(), cpu.all_players());
        for (k, (g, c)) in gp.iter().zip(cp).enumerate() {
            assert!(
                (g.position - c.position).abs() <= 1e-4,
                "{what}, player {k}: {g:?} vs {c:?}"
            );
            assert_eq!(
                (g.track, g.weight, g.looping),
                (c.track, c.weight, c.looping)
            );
        }
        assert_eq!(gpu.finished().unwrap(), cpu.finished(), "{what}: finished");
        finished_any |= !cpu.finished().is_empty();
        transforms_close(
            &gpu.read_root_motion().unwrap(),
            cpu.root_motion(),
            1e-4,
            &what,
        );
        transforms_close(
            &gpu.read_placements().unwrap(),
            cpu.placements(),
            1e-3,
            &what,
        );
        let cpu_poses = common::cpu_eval_batch(&lib, &cpu.batch());
        let gpu_poses = gpu.evaluator().read_back().unwrap();
        let d = Deviation::between(&gpu_poses, &cpu_poses).relative(lib.skeleton().extent());
        assert!(d <= common::TOLERANCE, "{what}: poses differ by {d:e}");
    }
    assert!(finished_any, "some non-looping player finished");
    assert!(cpu
        .root_motion()
        .iter()
        .any(|m| m.translation.length() > 0.1));
}

#[test]
fn gpu_crowd_rejects_bad_input_and_keeps_its_state() {
    let Some(ctx) = common::gpu() else { return };
    let asset = procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let crowd = mixed_crowd(&lib);
    let mut gpu = GpuCrowd::new(&ctx, &lib, &crowd, &GpuOptions::default()).unwrap();
    gpu.advance(0.1).unwrap();
    let before = gpu.read_players().unwrap();
    assert!(gpu.advance(f32::NAN).is_err());
    assert!(gpu.set_weights(2, &[0.0, 0.0]).is_err());
    assert!(gpu.set_player(0, 0, Player::new(1234u32)).is_err());
    assert!(gpu.set_placement(5000, Transform::IDENTITY).is_err());
    assert_eq!(
        gpu.read_players().unwrap(),
        before,
        "failed calls changed nothing"
    );

    // A crowd made for another library.
    let other = procedural::random_asset(3, 12, 2);
    let other = AnimLibrary::new(&other.skeleton, &other.clips).unwrap();
    let e = GpuCrowd::new(&ctx, &other, &crowd, &GpuOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("another library"), "{e}");
}

/// The host writes both backends take.
trait Control {
    fn set_player(&mut self, i: usize, k: usize, p: Player);
    fn set_weights(&mut self, i: usize, w: &[f32]);
    fn restart(&mut self, i: usize);
    fn set_placement(&mut self, i: usize, t: Transform);
}

impl Control for Crowd {
    fn set_player(&mut self, i: usize, k: usize, p: Player) {
        Crowd::set_player(self, i, k, p).unwrap()
    }
    fn set_weights(&mut self, i: usize, w: &[f32]) {
        Crowd::set_weights(self, i, w).unwrap()
    }
    fn restart(&mut self, i: usize) {
        Crowd::restart(self, i).unwrap()
    }
    fn set_placement(&mut self, i: usize, t: Transform) {
        Crowd::set_placement(self, i, t).unwrap()
    }
}

impl Control for GpuCrowd {
    fn set_player(&mut self, i: usize, k: usize, p: Player) {
        GpuCrowd::set_player(self, i, k, p).unwrap()
    }
    fn set_weights(&mut self, i: usize, w: &[f32]) {
        GpuCrowd::set_weights(self, i, w).unwrap()
    }
    fn restart(&mut self, i: usize) {
        GpuCrowd::restart(self, i).unwrap()
    }
    fn set_placement(&mut self, i: usize, t: Transform) {
        GpuCrowd::set_placement(self, i, t).unwrap()
    }
}
