//! Crowd playback on the GPU against its CPU twin: players, finished events, root motion,
//! placements and poses after every step, for a crowd that uses every feature, split over
//! several chunks.

use crate::common;

use posegpu::playback::{PlayRate, Player};
use posegpu::{
    procedural, AnimLibrary, Crowd, Deviation, FusePolicy, GpuCrowd, GpuOptions, Transform,
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

#[test]
fn a_crowd_steps_the_same_on_gpu_and_cpu() {
    let Some(ctx) = common::gpu() else { return };
    // The separate passes, and the fused pass (which a crowd without transitions or IK runs
    // on a GPU).
    // Plain keys, and every clip compressed (root motion read from packed keys).
    for passes in [FusePolicy::Separate, FusePolicy::Fused] {
        for compressed in [false, true] {
            steps_the_same(&ctx, passes, compressed);
        }
    }
}

fn steps_the_same(ctx: &posegpu::GpuContext, passes: FusePolicy, compressed: bool) {
    use posegpu::compress::{Compression, DEFAULT_TOLERANCE};
    let asset = procedural::humanoid_asset();
    let mut builder = AnimLibrary::builder(&asset.skeleton);
    builder.compress(compressed.then(|| Compression::all(DEFAULT_TOLERANCE).unwrap()));
    builder.add_clips(&asset.clips).unwrap();
    let lib = builder.build();
    let mut cpu = procedural::humanoid_crowd(&lib, 96).unwrap();
    cpu.set_placement(7, along_z(2.0)).unwrap();
    // Small bindings: the crowd spans several chunks.
    let options = GpuOptions {
        max_binding_size: Some(20 * lib.bone_count() as u64 * 48),
        passes,
        ..GpuOptions::default()
    };
    let mut gpu = GpuCrowd::new(ctx, &lib, &cpu, &options).unwrap();
    assert_eq!(gpu.evaluator().fuse_policy(), passes);
    assert!(
        gpu.evaluator().chunks().len() > 1,
        "the test needs several chunks"
    );
    let walk = lib.find_clip("walk").unwrap();
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
        let what = format!("{passes:?}, compressed {compressed}, step {step} (dt {dt})");
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
    let crowd = procedural::humanoid_crowd(&lib, 96).unwrap();
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
