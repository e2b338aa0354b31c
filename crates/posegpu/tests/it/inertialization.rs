//! Inertialized transitions: the pose continuous at the start (the old pose), the offset
//! decaying as Bollo's quintic says at chosen times, nothing left at the end; GPU against CPU
//! frame after frame on real clips; crowds switching clips by inertialization and by
//! crossfade; bad transitions as typed errors.

use crate::common;

use posegpu::math::inertia::{decay, offset};
use posegpu::playback::{Agent, Player, Transition};
use posegpu::{
    AnimLibrary, Asset, Clip, ClipSample, CpuEvaluator, Crowd, Deviation, Error, GpuCrowd,
    GpuEvaluator, GpuOptions, InertialStart, PoseBatch, Poses, RootLock,
};

const DT: f32 = 1.0 / 30.0;
const BLEND: f32 = 0.3;

fn knight() -> (Asset, AnimLibrary, u32, u32) {
    let path = common::anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let asset = posegpu::import::load(&path).unwrap();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let clip = |n: &str| Clip::find(&asset.clips, n).unwrap() as u32;
    let (walk, idle) = (clip("Walking_A"), clip("Idle"));
    (asset, lib, walk, idle)
}

/// Frame `k` of instances switching from `old` (at `t_old` when the transition begins) to
/// `new` (from `t_new`), one per start offset in `starts`.
fn frame(old: u32, new: u32, starts: &[f32], k: usize) -> PoseBatch {
    let mut batch = PoseBatch::new();
    for &s in starts {
        let elapsed = k as f32 * DT;
        let start = (k == 0).then(|| InertialStart {
            now: ClipSample::new(old, s, true),
            before: ClipSample::new(old, s - DT, true),
            dt: DT,
            interrupted: None,
        });
        batch
            .push_clip(new, 0.2 + s + elapsed, true)
            .inertialize(BLEND, elapsed, start);
    }
    batch
}

fn plain(clip: u32, time: f32) -> Poses {
    let (_, lib, _, _) = knight();
    let mut poses = Poses::default();
    CpuEvaluator::new(&lib)
        .evaluate(&[ClipSample::new(clip, time, true)], &mut poses)
        .unwrap();
    poses
}

#[test]
fn the_transition_starts_on_the_old_pose_and_ends_on_the_new() {
    let (asset, lib, walk, idle) = knight();
    let cpu = CpuEvaluator::new(&lib);
    let mut poses = Poses::default();
    let extent = asset.skeleton.extent();
    let s = 0.4;
    for k in 0..=10 {
        cpu.evaluate(&frame(walk, idle, &[s], k), &mut poses)
            .unwrap();
        let elapsed = k as f32 * DT;
        if k == 0 {
            // The old pose, exactly where it was: no pop.
            let old = plain(walk, s);
            let d = Deviation::between(&poses, &old).relative(extent);
            assert!(d < 1e-4, "start differs from the old pose by {d:e}");
        }
        if elapsed >= BLEND {
            let new = plain(idle, 0.2 + s + elapsed);
            let d = Deviation::between(&poses, &new).relative(extent);
            assert!(d < 1e-5, "{elapsed}: the new pose differs by {d:e}");
        }
    }
}

#[test]
fn each_bone_moves_as_bollos_quintic_says() {
    // The translation offset of every bone, measured against the new pose, against the quintic
    // of its start written out with the public formulas.
    let (asset, lib, walk, idle) = knight();
    let cpu = CpuEvaluator::new(&lib);
    let s = 0.4;
    let old = plain(walk, s);
    let before = plain(walk, s - DT);
    let new0 = plain(idle, 0.2 + s);
    let mut poses = Poses::default();
    let bones = asset.skeleton.len();
    let mut checked = 0;
    for k in 0..6 {
        cpu.evaluate(&frame(walk, idle, &[s], k), &mut poses)
            .unwrap();
        let elapsed = k as f32 * DT;
        let new = plain(idle, 0.2 + s + elapsed);
        for b in 0..bones {
            let d = old.local(0, b).translation - new0.local(0, b).translation;
            if d.length() < 1e-3 {
                continue;
            }
            let n = d.normalize();
            let d_before = before.local(0, b).translation - new0.local(0, b).translation;
            let [x0, v0, t1] = offset(d.length(), d_before.dot(n), DT, BLEND);
            let want = new.local(0, b).translation + n * decay(x0, v0, t1, elapsed);
            let got = poses.local(0, b).translation;
            assert!(
                got.distance(want) < 1e-5,
                "bone {b} at {elapsed}: {got} against {want}"
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} offsets to check");
}

#[test]
fn transitions_run_the_same_on_the_gpu_frame_after_frame() {
    let Some(ctx) = common::gpu() else { return };
    let (asset, lib, walk, idle) = knight();
    let starts: Vec<f32> = (0..24).map(|i| i as f32 * 0.11).collect();
    let cpu = CpuEvaluator::new(&lib);
    let mut gpu = GpuEvaluator::new(&ctx, &lib, starts.len(), &GpuOptions::default()).unwrap();
    let mut poses = Poses::default();
    for k in 0..12 {
        let batch = frame(walk, idle, &starts, k);
        cpu.evaluate(&batch, &mut poses).unwrap();
        gpu.evaluate(&batch).unwrap();
        let have = gpu.read_back().unwrap();
        let d = Deviation::between(&have, &poses).relative(asset.skeleton.extent());
        assert!(
            d <= common::TOLERANCE,
            "frame {k}: GPU and CPU differ by {d:e}"
        );
    }
}

#[test]
fn bad_transitions_are_typed_errors() {
    let (_, lib, walk, idle) = knight();
    let cpu = CpuEvaluator::new(&lib);
    let check = |batch: PoseBatch, needle: &str| {
        let e = cpu.evaluate(&batch, &mut Poses::default()).unwrap_err();
        assert!(
            matches!(&e, Error::BadInstance { .. }) && e.to_string().contains(needle),
            "{e}"
        );
    };
    let mut b = PoseBatch::new();
    b.push_clip(idle, 0.0, true).inertialize(-0.2, 0.0, None);
    check(b, "blend time -0.2");
    let mut b = PoseBatch::new();
    b.push_clip(idle, 0.0, true)
        .inertialize(0.2, 0.0, None)
        .additive(
            posegpu::AdditiveSpace::Local,
            1.0,
            &[ClipSample::new(walk, 0.0, true)],
        );
    check(b, "it must follow every pose layer");
    let mut b = PoseBatch::new();
    b.push_clip(idle, 0.0, true)
        .inertialize(0.2, f32::NAN, None);
    check(b, "must be finite");
}

/// A crowd of `n` instances walking, with room for transitions; every third in place.
fn walking_crowd(lib: &AnimLibrary, walk: u32, n: usize) -> Crowd {
    let mut crowd = Crowd::new(lib);
    for i in 0..n {
        let player = Player::new(walk).starting_at(i as f32 * 0.07);
        let mut agent = Agent::new(player).with_transitions();
        if i % 3 == 2 {
            agent = agent.with_root_motion(Some(RootLock::RefPose));
        }
        crowd.add(&agent).unwrap();
    }
    crowd
}

fn evaluate_crowd(lib: &AnimLibrary, crowd: &Crowd, poses: &mut Poses) {
    CpuEvaluator::new(lib)
        .evaluate(&crowd.batch(), poses)
        .unwrap();
}

#[test]
fn a_crowd_switches_clips_without_a_pop_by_either_transition() {
    let (asset, lib, walk, idle) = knight();
    let extent = asset.skeleton.extent();
    for kind in [Transition::Inertialize, Transition::Crossfade] {
        let mut crowd = walking_crowd(&lib, walk, 1);
        let mut still_walking = walking_crowd(&lib, walk, 1);
        let mut poses = Poses::default();
        for _ in 0..3 {
            for c in [&mut crowd, &mut still_walking] {
                c.advance(&lib, DT).unwrap();
            }
            evaluate_crowd(&lib, &crowd, &mut poses);
        }
        crowd
            .transition_to(0, Player::new(idle), BLEND, kind)
            .unwrap();
        let mut idling = Crowd::new(&lib);
        idling.add(&Agent::new(Player::new(idle))).unwrap();
        let (mut walking_pose, mut idle_pose) = (Poses::default(), Poses::default());
        for k in 0..14 {
            for c in [&mut crowd, &mut still_walking, &mut idling] {
                c.advance(&lib, DT).unwrap();
            }
            evaluate_crowd(&lib, &crowd, &mut poses);
            evaluate_crowd(&lib, &still_walking, &mut walking_pose);
            evaluate_crowd(&lib, &idling, &mut idle_pose);
            let to_walk = Deviation::between(&poses, &walking_pose).relative(extent);
            let to_idle = Deviation::between(&poses, &idle_pose).relative(extent);
            if k == 0 {
                // The step it begins: still the walk (the crossfade's new weight is 0).
                assert!(
                    to_walk < 1e-4,
                    "{kind:?}: the first frame is off the walk by {to_walk:e}"
                );
            }
            if (k as f32) * DT > BLEND + 1e-4 {
                assert!(
                    to_idle < 1e-5,
                    "{kind:?}, step {k}: off the idle by {to_idle:e}"
                );
            }
        }
        // The outgoing player is gone.
        assert_eq!(crowd.players(0)[1].weight, 0.0);
    }
}

#[test]
fn crowd_transitions_run_the_same_on_the_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let (asset, lib, walk, idle) = knight();
    let mut cpu = walking_crowd(&lib, walk, 10);
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu, &GpuOptions::default()).unwrap();
    let mut poses = Poses::default();
    for step in 0..14 {
        if step == 3 {
            for i in 0..10 {
                let kind = [Transition::Inertialize, Transition::Crossfade][i % 2];
                let blend = [0.2, 0.35, 0.0][i % 3];
                let player = Player::new(idle).starting_at(i as f32 * 0.05);
                cpu.transition_to(i, player, blend, kind).unwrap();
                gpu.transition_to(i, player, blend, kind).unwrap();
            }
        }
        cpu.advance(&lib, DT).unwrap();
        gpu.advance(DT).unwrap();
        evaluate_crowd(&lib, &cpu, &mut poses);
        let have = gpu.evaluator().read_back().unwrap();
        let d = Deviation::between(&have, &poses).relative(asset.skeleton.extent());
        assert!(
            d <= common::TOLERANCE,
            "step {step}: GPU and CPU differ by {d:e}"
        );
    }
}

#[test]
fn bad_crowd_transitions_are_typed_errors_and_change_nothing() {
    let (_, lib, walk, idle) = knight();
    let mut crowd = Crowd::new(&lib);
    crowd.add(&Agent::new(Player::new(walk))).unwrap();
    crowd
        .add(&Agent::new(Player::new(walk)).with_transitions())
        .unwrap();
    let before = crowd.clone();
    let new = Player::new(idle);
    for (instance, blend, needle) in [
        (0, 0.2, "without transitions"),
        (1, -0.1, "blend time -0.1"),
        (1, f32::NAN, "blend time NaN"),
        (5, 0.2, "no such instance"),
    ] {
        let e = crowd
            .transition_to(instance, new, blend, Transition::Inertialize)
            .unwrap_err();
        assert!(e.to_string().contains(needle), "{e}");
        assert_eq!(crowd, before);
    }
    let pair = [Player::new(walk), Player::new(idle)];
    let e = crowd
        .add(&Agent::blend(&pair).with_transitions())
        .unwrap_err();
    assert!(e.to_string().contains("one player"), "{e}");
    let e = crowd
        .add(&Agent::new(pair[0]).synced().with_transitions())
        .unwrap_err();
    assert!(e.to_string().contains("not synced"), "{e}");
}

#[test]
fn an_interrupted_transition_carries_its_offsets_into_the_next() {
    // Walk → idle over 0.4 s, interrupted after 0.1 s by idle → run: on the step the second
    // begins, the pose is the one the first would have shown (no pop), on both backends.
    let (asset, lib, walk, idle) = knight();
    let run = Clip::find(&asset.clips, "Running_A").unwrap() as u32;
    let extent = asset.skeleton.extent();
    let blended = |interrupt: bool| {
        let mut crowd = walking_crowd(&lib, walk, 1);
        let mut poses = Poses::default();
        let mut gpu_crowd = common::gpu()
            .map(|ctx| GpuCrowd::new(&ctx, &lib, &crowd, &GpuOptions::default()).unwrap());
        let mut frames = Vec::new();
        for step in 0..10 {
            let switch = match step {
                2 => Some((idle, 0.4)),
                5 if interrupt => Some((run, 0.3)),
                _ => None,
            };
            if let Some((clip, blend)) = switch {
                let player = Player::new(clip);
                crowd
                    .transition_to(0, player, blend, Transition::Inertialize)
                    .unwrap();
                if let Some(g) = &mut gpu_crowd {
                    g.transition_to(0, player, blend, Transition::Inertialize)
                        .unwrap();
                }
            }
            crowd.advance(&lib, DT).unwrap();
            evaluate_crowd(&lib, &crowd, &mut poses);
            if let Some(g) = &mut gpu_crowd {
                g.advance(DT).unwrap();
                let have = g.evaluator().read_back().unwrap();
                let d = Deviation::between(&have, &poses).relative(extent);
                assert!(
                    d <= common::TOLERANCE,
                    "step {step}: GPU and CPU differ by {d:e}"
                );
            }
            frames.push(poses.clone());
        }
        frames
    };
    let (kept, interrupted) = (blended(false), blended(true));
    // Step 5 is where the second transition begins: still the first one's pose.
    let d = Deviation::between(&interrupted[5], &kept[5]).relative(extent);
    assert!(d < 1e-4, "the interruption pops by {d:e}");
    // And the next steps leave it, toward the run.
    let d = Deviation::between(&interrupted[9], &kept[9]).relative(extent);
    assert!(d > 1e-3, "the second transition changed nothing ({d:e})");
}
