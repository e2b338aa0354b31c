//! Crowd playback on the CPU twin: sequence players (rates, wraps, ends), sync, blends, root
//! motion (loops, montages, backwards) and in-place root locks, against the spec's formulas.

use crate::common;

use glam::Vec3;
use posegpu::playback::Montage;
use posegpu::playback::{Agent, PlayRate, Player, Segment};
use posegpu::{procedural, AnimLibrary, ClipId, Crowd, Error, RootLock, Transform};

fn humanoid() -> AnimLibrary {
    let asset = procedural::humanoid_asset();
    AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap()
}

fn clip(lib: &AnimLibrary, name: &str) -> ClipId {
    lib.find_clip(name).unwrap()
}

fn close(a: f32, b: f32, what: &str) {
    assert!((a - b).abs() <= 1e-5, "{what}: {a} != {b}");
}

fn assert_transform(a: &Transform, b: &Transform, tol: f32, what: &str) {
    let d = (a.translation - b.translation)
        .abs()
        .max_element()
        .max((a.scale - b.scale).abs().max_element())
        .max(1.0 - a.rotation.dot(b.rotation).abs());
    assert!(d <= tol, "{what}: {a:?} != {b:?} (by {d:e})");
}

/// One instance playing `player`, with root motion.
fn single(lib: &AnimLibrary, player: Player) -> Crowd {
    let mut crowd = Crowd::new(lib);
    crowd
        .add(&Agent::new(player).with_root_motion(None))
        .unwrap();
    crowd
}

#[test]
fn effective_rate_follows_basis_scale_bias_and_clamp() {
    close(PlayRate::new(2.0).effective(), 2.0, "plain");
    close(PlayRate::new(2.0).with_basis(4.0).effective(), 0.5, "basis");
    let scaled = PlayRate::new(2.0)
        .with_basis(4.0)
        .with_scale_bias(3.0, 0.25);
    close(scaled.effective(), 1.75, "scale and bias after the basis");
    close(
        scaled.with_clamp(-1.0, 1.0).effective(),
        1.0,
        "clamped above",
    );
    close(
        PlayRate::new(-3.0).with_clamp(-1.0, 1.0).effective(),
        -1.0,
        "clamped below",
    );
    // UE: a basis of (nearly) zero gives a ratio of 0, and the bias still applies.
    let zero = PlayRate::new(5.0).with_basis(0.0).with_scale_bias(2.0, 0.3);
    close(zero.effective(), 0.3, "zero basis");

    // The player moves by the effective rate.
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let mut crowd = single(&lib, Player::new(walk).starting_at(0.1).with_rate(scaled));
    crowd.advance(&lib, 0.2).unwrap();
    close(crowd.players(0)[0].position, 0.1 + 1.75 * 0.2, "position");
}

#[test]
fn looping_players_wrap_at_both_ends() {
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let l = lib.clip_duration(walk);
    let mut crowd = Crowd::new(&lib);
    crowd
        .add(&Agent::new(Player::new(walk).starting_at(l - 0.1)))
        .unwrap();
    let back = Player::new(walk)
        .starting_at(0.1)
        .with_rate(PlayRate::new(-1.0));
    crowd.add(&Agent::new(back)).unwrap();
    crowd.advance(&lib, 0.3).unwrap();
    close(crowd.players(0)[0].position, 0.2, "forward past the end");
    close(
        crowd.players(1)[0].position,
        l - 0.2,
        "backward past the start",
    );
    // Several loops in one step.
    crowd.advance(&lib, 3.0 * l + 0.05).unwrap();
    close(
        crowd.players(0)[0].position,
        0.25,
        "forward, three loops on",
    );
    close(
        crowd.players(1)[0].position,
        l - 0.25,
        "backward, three loops on",
    );
    assert!(crowd.finished().is_empty(), "looping players never finish");
}

#[test]
fn non_looping_players_stop_at_either_end_and_finish_once() {
    let lib = humanoid();
    let wave = clip(&lib, "wave");
    let l = lib.clip_duration(wave);
    let mut crowd = Crowd::new(&lib);
    let once = Player::new(wave).looping(false);
    crowd.add(&Agent::new(once.starting_at(l - 0.1))).unwrap();
    let back = once.starting_at(0.1).with_rate(PlayRate::new(-2.0));
    crowd.add(&Agent::new(back)).unwrap();
    crowd.add(&Agent::new(once.starting_at(0.5))).unwrap();
    crowd.advance(&lib, 0.04).unwrap();
    assert!(crowd.finished().is_empty());
    crowd.advance(&lib, 0.1).unwrap();
    assert_eq!(crowd.finished(), &[0, 1], "both ends reached in this step");
    close(crowd.players(0)[0].position, l, "stopped at the end");
    close(crowd.players(1)[0].position, 0.0, "stopped at the start");
    crowd.advance(&lib, 0.1).unwrap();
    assert!(crowd.finished().is_empty(), "finished is reported once");
    close(crowd.players(0)[0].position, l, "still at the end");
    // Restarting goes back to the start position.
    crowd.restart(0).unwrap();
    close(crowd.players(0)[0].position, l - 0.1, "restarted");
}

#[test]
fn rate_zero_holds_still() {
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let player = Player::new(walk)
        .starting_at(0.4)
        .with_rate(PlayRate::new(0.0));
    let mut crowd = single(&lib, player);
    let before = crowd.batch();
    crowd.advance(&lib, 0.5).unwrap();
    close(crowd.players(0)[0].position, 0.4, "position");
    assert_eq!(crowd.batch(), before, "the pose does not change");
    assert_eq!(crowd.root_motion()[0], Transform::IDENTITY);
    assert_eq!(crowd.placements()[0], Transform::IDENTITY);
    assert!(crowd.finished().is_empty());
}

#[test]
fn root_motion_is_the_relative_root_transform_between_steps() {
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let mut crowd = single(&lib, Player::new(walk).starting_at(0.2));
    crowd.advance(&lib, 0.3).unwrap();
    let expected = crowd.track_motion(&lib, walk.into(), 0.2, 0.5).unwrap();
    assert_transform(&crowd.root_motion()[0], &expected, 1e-6, "one step");
    // The humanoid's walk moves its root along +Z at 1.4 m/s.
    assert!((expected.translation - Vec3::Z * 1.4 * 0.3).length() < 1e-4);
    assert_transform(&crowd.placements()[0], &expected, 1e-6, "placement");
}

#[test]
fn a_looped_walk_over_n_loops_is_one_loops_delta_composed_n_times() {
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let l = lib.clip_duration(walk);
    let lap = {
        let crowd = Crowd::new(&lib);
        crowd.track_motion(&lib, walk.into(), 0.0, l).unwrap()
    };
    for (n, start, rate) in [(1, 0.0, 1.0), (3, 0.35, 1.0), (5, 0.8, -1.0)] {
        let mut composed = Transform::IDENTITY;
        let one = if rate > 0.0 {
            lap
        } else {
            Crowd::new(&lib)
                .track_motion(&lib, walk.into(), l, 0.0)
                .unwrap()
        };
        for _ in 0..n {
            composed = Transform::compose(&one, &composed);
        }
        // In one step of n loops.
        let player = Player::new(walk)
            .starting_at(start)
            .with_rate(PlayRate::new(rate));
        let mut crowd = single(&lib, player);
        crowd.advance(&lib, n as f32 * l).unwrap();
        let what = format!("{n} loops from {start} at rate {rate}, one step");
        assert_transform(&crowd.root_motion()[0], &composed, 1e-4, &what);
        // In many small steps, accumulated in the placement.
        let mut crowd = single(&lib, player);
        let steps = 37 * n;
        for _ in 0..steps {
            crowd.advance(&lib, n as f32 * l / steps as f32).unwrap();
        }
        let what = format!("{n} loops from {start} at rate {rate}, {steps} steps");
        assert_transform(&crowd.placements()[0], &composed, 1e-4, &what);
    }
    // The walk's lap itself: 1.4 m along +Z.
    assert!((lap.translation - Vec3::Z * 1.4 * l).length() < 1e-4);
}

#[test]
fn a_montages_root_motion_is_its_segments_composed() {
    let lib = humanoid();
    let (walk, run) = (clip(&lib, "walk"), clip(&lib, "run"));
    let segments = [
        Segment::new(walk, 0.0, 0.6),
        Segment::new(run, 0.1, 0.5),
        Segment::new(walk, 0.25, 1.0),
    ];
    let mut crowd = Crowd::new(&lib);
    let montage = crowd
        .add_montage(&lib, &Montage::new("walk-run-walk", &segments))
        .unwrap();
    let length = crowd.track_length(montage).unwrap();
    close(length, 0.6 + 0.4 + 0.75, "montage length");
    let pieces: Vec<Transform> = segments
        .iter()
        .map(|s| {
            crowd
                .track_motion(&lib, s.clip.into(), s.start, s.end)
                .unwrap()
        })
        .collect();
    let forward = pieces
        .iter()
        .fold(Transform::IDENTITY, |acc, p| Transform::compose(p, &acc));
    let whole = crowd.track_motion(&lib, montage, 0.0, length).unwrap();
    assert_transform(&whole, &forward, 1e-6, "the montage's range");

    // Played through once without looping: the whole montage's motion, and it finishes.
    let once = Player::new(montage).looping(false);
    crowd.add(&Agent::new(once).with_root_motion(None)).unwrap();
    // Played backwards from its end: each segment reversed, last segment first.
    let back = once.starting_at(length).with_rate(PlayRate::new(-1.0));
    crowd.add(&Agent::new(back).with_root_motion(None)).unwrap();
    // Looping, twice over.
    crowd
        .add(&Agent::new(Player::new(montage)).with_root_motion(None))
        .unwrap();
    crowd.advance(&lib, length + 0.5).unwrap();
    assert_transform(
        &crowd.root_motion()[0],
        &forward,
        1e-6,
        "montage played through",
    );
    let reversed = segments.iter().rev().fold(Transform::IDENTITY, |acc, s| {
        let p = crowd
            .track_motion(&lib, s.clip.into(), s.end, s.start)
            .unwrap();
        Transform::compose(&p, &acc)
    });
    assert_transform(
        &crowd.root_motion()[1],
        &reversed,
        1e-6,
        "montage backwards",
    );
    assert_eq!(crowd.finished(), &[0, 1]);
    let past = crowd.track_motion(&lib, montage, 0.0, 0.5).unwrap();
    let looped = Transform::compose(&past, &forward);
    assert_transform(&crowd.root_motion()[2], &looped, 1e-5, "montage looped");

    // The pose samples the segment the position lies in, at its clip time.
    crowd
        .set_player(2, 0, Player::new(montage).starting_at(0.8))
        .unwrap();
    let batch = crowd.batch();
    let sample = batch
        .layers(2)
        .next()
        .unwrap()
        .unwrap()
        .samples()
        .next()
        .unwrap();
    assert_eq!(sample.clip, run);
    close(
        sample.time,
        0.1 + (0.8 - 0.6),
        "clip time in the second segment",
    );
}

#[test]
fn synced_players_follow_the_leaders_phase() {
    let lib = humanoid();
    let (walk, run) = (clip(&lib, "walk"), clip(&lib, "run"));
    let (lw, lr) = (lib.clip_duration(walk), lib.clip_duration(run));
    let players = [
        Player::new(walk).with_weight(0.3),
        Player::new(run)
            .with_weight(0.7)
            .with_rate(PlayRate::new(1.5)),
    ];
    let mut crowd = Crowd::new(&lib);
    crowd.add(&Agent::blend(&players).synced()).unwrap();
    crowd.add(&Agent::blend(&players)).unwrap();
    crowd.advance(&lib, 0.2).unwrap();
    // The run leads (the higher weight) at its own rate; the walk takes its phase.
    let run_pos = 1.5 * 0.2;
    close(crowd.players(0)[1].position, run_pos, "leader");
    close(crowd.players(0)[0].position, run_pos / lr * lw, "follower");
    // Without sync each keeps its own rate.
    close(crowd.players(1)[0].position, 0.2, "unsynced walk");
    close(crowd.players(1)[1].position, run_pos, "unsynced run");
    // The walk takes the lead when its weight is higher; the run then follows it.
    crowd.set_weights(0, &[0.9, 0.1]).unwrap();
    crowd.advance(&lib, 0.1).unwrap();
    let walk_pos = run_pos / lr * lw + 0.1;
    close(crowd.players(0)[0].position, walk_pos, "new leader");
    close(
        crowd.players(0)[1].position,
        walk_pos / lw * lr,
        "new follower",
    );
}

#[test]
fn blend_weights_are_renormalized_and_blend_root_motion() {
    let lib = humanoid();
    let (walk, run) = (clip(&lib, "walk"), clip(&lib, "run"));
    let blend = |w: [f32; 2]| {
        let players = [
            Player::new(walk).with_weight(w[0]),
            Player::new(run).with_weight(w[1]),
        ];
        Agent::blend(&players).synced().with_root_motion(None)
    };
    let mut crowd = Crowd::new(&lib);
    crowd.add(&blend([0.25, 0.75])).unwrap();
    crowd.add(&blend([1.0, 3.0])).unwrap();
    crowd.add(&blend([0.0, 1.0])).unwrap();
    crowd.advance(&lib, 0.1).unwrap();
    let poses = common::cpu_eval_batch(&lib, &crowd.batch());
    let n = lib.bone_count();
    assert_eq!(
        poses.locals[..n],
        poses.locals[n..2 * n],
        "[1, 3] is [0.25, 0.75]"
    );
    // Root motion blends the players' translations by weight (both move along +Z).
    let run_only = crowd.root_motion()[2].translation;
    let walk_part = crowd.track_motion(&lib, walk.into(), 0.0, crowd.players(0)[0].position);
    let expected = 0.25 * walk_part.unwrap().translation + 0.75 * run_only;
    assert!((crowd.root_motion()[0].translation - expected).length() < 1e-6);
    assert!(
        (crowd.root_motion()[0].translation - crowd.root_motion()[1].translation).length() < 1e-6
    );
}

#[test]
fn degenerate_weights_are_clear_errors_and_change_nothing() {
    let lib = humanoid();
    let (walk, run) = (clip(&lib, "walk"), clip(&lib, "run"));
    let two = |a: f32, b: f32| {
        Agent::blend(&[
            Player::new(walk).with_weight(a),
            Player::new(run).with_weight(b),
        ])
    };
    let mut crowd = Crowd::new(&lib);
    let e = crowd.add(&two(0.0, 0.0)).unwrap_err();
    assert!(matches!(e, Error::BadInstance { instance: 0, .. }), "{e}");
    assert!(e.to_string().contains("all at or below"), "{e}");
    let e = crowd.add(&two(0.5, f32::NAN)).unwrap_err();
    assert!(e.to_string().contains("player 1: weight NaN"), "{e}");
    let e = crowd.add(&two(-0.5, 1.0)).unwrap_err();
    assert!(e.to_string().contains("player 0: weight -0.5"), "{e}");
    assert!(crowd.is_empty(), "nothing was added");

    crowd.add(&two(0.5, 0.5)).unwrap();
    let before = crowd.clone();
    assert!(crowd.set_weights(0, &[0.0, 0.0]).is_err());
    assert!(crowd.set_weights(0, &[f32::NAN, 1.0]).is_err());
    assert!(crowd
        .set_weights(0, &[1.0])
        .unwrap_err()
        .to_string()
        .contains("1 weights for 2 players"));
    let zero = Player::new(run).with_weight(0.0);
    assert!(crowd.set_weights(0, &[0.0, 1.0]).is_ok());
    assert!(
        crowd.set_player(0, 1, zero).is_err(),
        "would leave all weights at 0"
    );
    crowd.set_weights(0, &[0.5, 0.5]).unwrap();
    assert_eq!(crowd, before, "failed calls changed nothing");
}

#[test]
fn bad_players_montages_and_steps_are_clear_errors() {
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let l = lib.clip_duration(walk);
    let mut crowd = Crowd::new(&lib);
    let cases: [(Player, &str); 5] = [
        (Player::new(99u32), "track 99 does not exist"),
        (
            Player::new(walk).starting_at(l + 1.0),
            "outside the track's range",
        ),
        (
            Player::new(walk).starting_at(-0.5),
            "outside the track's range",
        ),
        (
            Player::new(walk).with_rate(PlayRate::new(f32::NAN)),
            "not finite",
        ),
        (
            Player::new(walk).with_rate(PlayRate::new(1.0).with_clamp(2.0, -2.0)),
            "minimum above its maximum",
        ),
    ];
    for (player, expected) in cases {
        let e = crowd.add(&Agent::new(player)).unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
    }
    assert!(crowd
        .add(&Agent::blend(&[]))
        .unwrap_err()
        .to_string()
        .contains("no players"));

    let montage = |segments: &[Segment]| Montage::new("m", segments);
    for (segments, expected) in [
        (vec![], "no segments"),
        (vec![Segment::new(walk, 0.5, 0.2)], "not a non-empty range"),
        (
            vec![Segment::new(walk, 0.0, l + 1.0)],
            "not a non-empty range",
        ),
        (vec![Segment::new(42, 0.0, 1.0)], "clip 42 does not exist"),
    ] {
        let e = crowd.add_montage(&lib, &montage(&segments)).unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
    }

    crowd.add(&Agent::new(Player::new(walk))).unwrap();
    for dt in [f32::NAN, -0.1, f32::INFINITY] {
        let e = crowd.advance(&lib, dt).unwrap_err();
        assert!(matches!(e, Error::Playback { .. }), "{e}");
    }
    let e = crowd.set_player(3, 0, Player::new(walk)).unwrap_err();
    assert!(e.to_string().contains("no such instance"), "{e}");
    let e = crowd.set_player(0, 2, Player::new(walk)).unwrap_err();
    assert!(e.to_string().contains("no player 2"), "{e}");
}

#[test]
fn in_place_playback_locks_the_root_and_keeps_the_motion() {
    let lib = humanoid();
    let walk = clip(&lib, "walk");
    let player = Player::new(walk).starting_at(0.3);
    let mut crowd = Crowd::new(&lib);
    crowd
        .add(&Agent::new(player).with_root_motion(None))
        .unwrap();
    for lock in [RootLock::RefPose, RootLock::FirstFrame, RootLock::Zero] {
        crowd
            .add(&Agent::new(player).with_root_motion(Some(lock)))
            .unwrap();
    }
    crowd.advance(&lib, 0.25).unwrap();
    let poses = common::cpu_eval_batch(&lib, &crowd.batch());
    let n = lib.bone_count();
    let root = |i: usize| Transform::from(poses.locals[i * n]);
    let rest = lib.skeleton().rest()[0];
    // The animated root has moved along +Z; the locked ones have not.
    assert!((root(0).translation - rest.translation).z > 0.5);
    assert_transform(&root(1), &rest, 1e-6, "reference-pose lock");
    assert_transform(&root(3), &Transform::IDENTITY, 0.0, "zero lock");
    let frame0 = {
        let mut at0 = Crowd::new(&lib);
        at0.add(&Agent::new(Player::new(walk))).unwrap();
        Transform::from(common::cpu_eval_batch(&lib, &at0.batch()).locals[0])
    };
    assert_transform(&root(2), &frame0, 1e-6, "first-frame lock");
    // Every other bone is as animated, and the motion is extracted all the same.
    for i in 1..4 {
        assert_eq!(poses.locals[i * n + 1..(i + 1) * n], poses.locals[1..n]);
        assert_transform(
            &crowd.root_motion()[i],
            &crowd.root_motion()[0],
            0.0,
            "motion",
        );
    }
}
