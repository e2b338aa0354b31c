//! Notifies and the other markers a step passes (loops, montage segments): hand-computed
//! crossings forward, backward, across wraps, over several laps and in montages, each exactly
//! once; GPU against CPU on a mixed crowd; bad notifies as typed errors.

use crate::common;

use posegpu::playback::Montage;
use posegpu::playback::{Agent, Event, EventKind, PlayRate, Player, Segment, TrackId};
use posegpu::{procedural, AnimLibrary, Clip, ClipId, Crowd, Error, GpuCrowd, GpuOptions};

/// The humanoid's clips (idle 2 s, walk 1 s, run 0.7 s, wave), walk with notifies at 0
/// (`start`), 0.25 (`step_l`), 0.75 (`step_r`) and 1 (`end`), run with one at 0.35
/// (`step`).
fn library() -> AnimLibrary {
    let asset = procedural::humanoid_asset();
    let mut clips = asset.clips.clone();
    let walk = Clip::find(&clips, "walk").unwrap();
    let run = Clip::find(&clips, "run").unwrap();
    clips[walk] = clips[walk]
        .clone()
        .with_notify("step_r", 0.75)
        .and_then(|c| c.with_notify("step_l", 0.25))
        .and_then(|c| c.with_notify("start", 0.0))
        .and_then(|c| c.with_notify("end", 1.0))
        .unwrap();
    clips[run] = clips[run].clone().with_notify("step", 0.35).unwrap();
    AnimLibrary::new(&asset.skeleton, &clips).unwrap()
}

fn clip(lib: &AnimLibrary, name: &str) -> ClipId {
    lib.find_clip(name).unwrap()
}

/// The notify of `clip` named `name`.
fn notify(lib: &AnimLibrary, clip_name: &str, name: &str) -> EventKind {
    let c = clip(lib, clip_name);
    let (id, _) = lib.clip_notifies(c).find(|(_, n)| n.name == name).unwrap();
    EventKind::Notify(id)
}

/// The kinds instance 0 passed, stepping one player by each of `steps`.
fn kinds_per_step(lib: &AnimLibrary, player: Player, steps: &[f32]) -> Vec<Vec<EventKind>> {
    let mut crowd = Crowd::new(lib);
    crowd.add(&Agent::new(player)).unwrap();
    steps
        .iter()
        .map(|&dt| {
            crowd.advance(lib, dt).unwrap();
            crowd.events().iter().map(|e| e.kind).collect()
        })
        .collect()
}

fn sorted(mut kinds: Vec<EventKind>) -> Vec<EventKind> {
    kinds.sort();
    kinds
}

#[test]
fn notifies_are_sorted_by_time_and_named_by_the_library() {
    let lib = library();
    let walk = clip(&lib, "walk");
    let names: Vec<(&str, f32)> = lib
        .clip_notifies(walk)
        .map(|(_, n)| (n.name.as_str(), n.time))
        .collect();
    assert_eq!(
        names,
        [
            ("start", 0.0),
            ("step_l", 0.25),
            ("step_r", 0.75),
            ("end", 1.0)
        ]
    );
    let EventKind::Notify(id) = notify(&lib, "run", "step") else {
        unreachable!()
    };
    assert_eq!(lib.notify(id).unwrap().clip, clip(&lib, "run"));
}

#[test]
fn forward_steps_pass_each_notify_once_including_the_one_they_land_on() {
    let lib = library();
    let walk = Player::new(clip(&lib, "walk"));
    let (l, r) = (
        notify(&lib, "walk", "step_l"),
        notify(&lib, "walk", "step_r"),
    );
    // 0 → 0.25 lands on step_l (passed: from < x <= to), 0.25 → 0.5 passes nothing.
    let steps = kinds_per_step(&lib, walk, &[0.25, 0.25, 0.3]);
    assert_eq!(steps, [vec![l], vec![], vec![r]]);
    // Many small steps over one lap: every notify exactly once.
    let small = kinds_per_step(&lib, walk.starting_at(0.1), &[0.01; 100]);
    let all: Vec<EventKind> = small.into_iter().flatten().collect();
    let (start, end) = (notify(&lib, "walk", "start"), notify(&lib, "walk", "end"));
    assert_eq!(
        sorted(all),
        sorted(vec![l, r, end, start, EventKind::Looped])
    );
}

#[test]
fn a_wrap_passes_the_loop_and_the_notifies_at_both_ends() {
    let lib = library();
    let walk = Player::new(clip(&lib, "walk")).starting_at(0.9);
    let kinds = |name: &str| notify(&lib, "walk", name);
    let steps = kinds_per_step(&lib, walk, &[0.4]);
    assert_eq!(
        sorted(steps[0].clone()),
        sorted(vec![
            EventKind::Looped,
            kinds("end"),
            kinds("start"),
            kinds("step_l")
        ])
    );
    // Several laps in one step: once per lap.
    let steps = kinds_per_step(&lib, walk.starting_at(0.1), &[2.5]);
    let count = |k: EventKind| steps[0].iter().filter(|x| **x == k).count();
    assert_eq!(count(EventKind::Looped), 2);
    assert_eq!(count(kinds("step_l")), 3);
    assert_eq!(count(kinds("step_r")), 2);
}

#[test]
fn backward_play_passes_markers_from_the_other_side() {
    let lib = library();
    let back = Player::new(clip(&lib, "walk"))
        .starting_at(0.375)
        .with_rate(PlayRate::new(-1.0));
    let kinds = |name: &str| notify(&lib, "walk", name);
    // 0.375 → 0.25 lands on step_l, which is passed (to <= x < from) ...
    let steps = kinds_per_step(&lib, back, &[0.125, 0.125, 0.25]);
    assert_eq!(steps[0], [kinds("step_l")]);
    // ... and not again from there: 0.25 → 0.125 passes nothing; 0.125 → -0.125 wraps
    // through start (0) and end (1 ≡ 0).
    assert_eq!(steps[1], []);
    assert_eq!(
        sorted(steps[2].clone()),
        sorted(vec![EventKind::Looped, kinds("start"), kinds("end")])
    );
}

#[test]
fn a_clip_played_once_passes_its_last_notify_and_then_nothing() {
    let lib = library();
    let once = Player::new(clip(&lib, "walk"))
        .starting_at(0.9)
        .looping(false);
    let steps = kinds_per_step(&lib, once, &[0.5, 0.5]);
    assert_eq!(steps, [vec![notify(&lib, "walk", "end")], vec![]]);
}

#[test]
fn a_montage_passes_its_segments_and_the_notifies_inside_their_ranges() {
    let lib = library();
    let (walk, run) = (clip(&lib, "walk"), clip(&lib, "run"));
    let mut crowd = Crowd::new(&lib);
    // Track 0..0.5: walk 0..0.5 (start, step_l); 0.5..0.75: run 0.375..0.625 (its step at
    // 0.35 is outside); 0.75..1.25: walk 0.5..1 (step_r at 1, end at 1.25).
    let montage = Montage::new(
        "m",
        &[
            Segment::new(walk, 0.0, 0.5),
            Segment::new(run, 0.375, 0.625),
            Segment::new(walk, 0.5, 1.0),
        ],
    );
    let track = crowd.add_montage(&lib, &montage).unwrap();
    let length = crowd.track_length(track).unwrap();
    assert_eq!(length, 1.25);
    let player = Player::new(track).starting_at(0.125).looping(false);
    crowd.add(&Agent::new(player)).unwrap();
    let back = player.starting_at(length).with_rate(PlayRate::new(-1.0));
    crowd.add(&Agent::new(back)).unwrap();
    crowd.advance(&lib, length).unwrap();
    let of = |i: u32| -> Vec<EventKind> {
        crowd
            .events()
            .iter()
            .filter(|e| e.instance == i)
            .map(|e| e.kind)
            .collect()
    };
    let walk_notify = |name: &str| notify(&lib, "walk", name);
    assert_eq!(
        sorted(of(0)),
        sorted(vec![
            walk_notify("step_l"),
            EventKind::Segment(1),
            EventKind::Segment(2),
            walk_notify("step_r"),
            walk_notify("end"),
        ])
    );
    // Backwards from the end to 0: not the end it starts on, the earlier segments entered,
    // and the walk's start, where it lands.
    assert_eq!(
        sorted(of(1)),
        sorted(vec![
            walk_notify("step_r"),
            EventKind::Segment(1),
            EventKind::Segment(0),
            walk_notify("step_l"),
            walk_notify("start"),
        ])
    );
}

#[test]
fn players_of_weight_zero_pass_nothing() {
    let lib = library();
    let walk = Player::new(clip(&lib, "walk"));
    let mut crowd = Crowd::new(&lib);
    let silent = walk.with_weight(0.0);
    let run = Player::new(clip(&lib, "run"));
    crowd.add(&Agent::blend(&[silent, run])).unwrap();
    crowd.advance(&lib, 0.5).unwrap();
    assert_eq!(
        crowd.events(),
        [Event {
            instance: 0,
            player: 1,
            kind: notify(&lib, "run", "step")
        }]
    );
}

#[test]
fn bad_notifies_are_typed_errors() {
    let asset = procedural::humanoid_asset();
    let walk = &asset.clips[Clip::find(&asset.clips, "walk").unwrap()];
    for time in [1.5, -0.1, f32::NAN] {
        let e = walk.clone().with_notify("late", time).unwrap_err();
        assert!(
            matches!(&e, Error::Notify { clip, what } if clip == "walk" && what.contains("late")),
            "{e}"
        );
    }
}

/// Instances of every kind: forward, backward, fast (several laps), clamped, synced blends,
/// montages forwards and backwards.
fn mixed_crowd(lib: &AnimLibrary) -> Crowd {
    let (idle, walk, run) = (clip(lib, "idle"), clip(lib, "walk"), clip(lib, "run"));
    let mut crowd = Crowd::new(lib);
    let montage = Montage::new(
        "m",
        &[
            Segment::new(walk, 0.1, 0.9),
            Segment::new(run, 0.0, 0.7),
            Segment::new(walk, 0.2, 1.0),
        ],
    );
    let montage = crowd.add_montage(lib, &montage).unwrap();
    for i in 0..64u32 {
        let rate = [1.0, -1.3, 7.5, 0.6, -0.4, 2.0][i as usize % 6];
        let track: TrackId = [walk.into(), run.into(), montage, idle.into()][i as usize % 4];
        let length = crowd.track_length(track).unwrap();
        let player = Player::new(track)
            .starting_at((i as f32 * 0.137) % 1.0 * length)
            .with_rate(PlayRate::new(rate))
            .looping(i % 5 != 0);
        let agent = if i % 3 == 0 {
            let other = Player::new(run).starting_at(0.2).with_weight(0.4);
            Agent::blend(&[player.with_weight(0.6), other]).synced()
        } else {
            Agent::new(player)
        };
        crowd.add(&agent).unwrap();
    }
    crowd
}

#[test]
fn events_on_the_gpu_match_the_cpu_twin() {
    let Some(ctx) = common::gpu() else { return };
    let lib = library();
    let mut cpu = mixed_crowd(&lib);
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu, &GpuOptions::default()).unwrap();
    let mut total = 0;
    for step in 0..12 {
        let dt = [1.0 / 30.0, 0.25, 0.0, 0.9][step % 4];
        cpu.advance(&lib, dt).unwrap();
        gpu.advance(dt).unwrap();
        assert_eq!(gpu.events().unwrap(), cpu.events(), "step {step}");
        total += cpu.events().len();
    }
    assert!(total > 100, "the crowd passed only {total} markers");

    // A list too small for a step is an error naming both numbers, not a short list.
    let options = GpuOptions {
        event_capacity: Some(3),
        ..GpuOptions::default()
    };
    let mut small = GpuCrowd::new(&ctx, &lib, &cpu, &options).unwrap();
    small.advance(0.9).unwrap();
    let e = small.events().unwrap_err();
    assert!(
        matches!(&e, Error::Playback { what } if what.contains("over the event list's 3")),
        "{e}"
    );
}

/// A scratch folder of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("posegpu-notifies-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn notifies_come_from_gltf_extras_and_sidecar_files() {
    let source = common::anim_data().join("gltf/khronos/SimpleSkin.gltf");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&source).unwrap()).unwrap();
    let write = |name: &str, extras: serde_json::Value| {
        let mut json = json.clone();
        json["animations"][0]["extras"] = extras;
        let path = scratch(name);
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        path
    };
    // Notifies in an animation's extras, beside keys of other tools.
    let good = write(
        "extras.gltf",
        serde_json::json!({"notifies": [{"name": "tick", "time": 1.0}], "author": "someone"}),
    );
    let mut asset = posegpu::import::load(&good).unwrap();
    let notifies = asset.clips[0].notifies().to_vec();
    assert_eq!(notifies.len(), 1);
    assert_eq!((notifies[0].name.as_str(), notifies[0].time), ("tick", 1.0));
    // A time past the clip, or extras that are not notifies, are errors naming the file.
    for (name, extras) in [
        (
            "late.gltf",
            serde_json::json!({"notifies": [{"name": "late", "time": 1e6}]}),
        ),
        ("bad.gltf", serde_json::json!({"notifies": "tick"})),
    ] {
        let path = write(name, extras);
        let e = posegpu::import::load(&path).unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
    }

    // A sidecar adds to the clips it names.
    let clip = asset.clips[0].name().to_string();
    let sidecar = scratch("notifies.json");
    let body = serde_json::json!({ clip.as_str(): [{"name": "tock", "time": 0.5}] });
    std::fs::write(&sidecar, body.to_string()).unwrap();
    posegpu::import::apply_sidecar(&mut asset, &sidecar).unwrap();
    let names: Vec<&str> = asset.clips[0]
        .notifies()
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, ["tock", "tick"]);
    // A clip it does not have, a bad time or malformed JSON: an error naming the file, and the
    // asset as it was.
    let before = asset.clone();
    for (body, needle) in [
        (r#"{"Nope": [{"name": "x", "time": 0}]}"#, "no such clip"),
        (
            &*format!(r#"{{"{clip}": [{{"name": "x", "time": -1}}]}}"#),
            "outside the clip's range",
        ),
        (r#"{"a": [{"name": "x"}]}"#, "not a map from clip name"),
    ] {
        std::fs::write(&sidecar, body).unwrap();
        let e = posegpu::import::apply_sidecar(&mut asset, &sidecar).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::InFile { .. }) && text.contains("notifies.json"),
            "{text}"
        );
        assert!(format!("{e:?}").contains(needle), "{e:?}");
        assert_eq!(asset.clips, before.clips);
    }
}

#[test]
fn footsteps_on_real_clips_fire_the_same_on_the_gpu() {
    // The Knight's walk and run with footsteps at their contacts: a crowd of walkers, runners
    // and blends of both, stepped at frame rate, reports the same footsteps on both backends.
    let Some(ctx) = common::gpu() else { return };
    let path = common::anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let knight = posegpu::import::load(&path).unwrap();
    let mut clips = knight.clips.clone();
    for name in ["Walking_A", "Running_A"] {
        let k = Clip::find(&clips, name).unwrap();
        let d = clips[k].duration();
        clips[k] = clips[k]
            .clone()
            .with_notify("footstep_l", d * 0.25)
            .and_then(|c| c.with_notify("footstep_r", d * 0.75))
            .unwrap();
    }
    let lib = AnimLibrary::new(&knight.skeleton, &clips).unwrap();
    let (walk, run) = (clip(&lib, "Walking_A"), clip(&lib, "Running_A"));
    let mut cpu = Crowd::new(&lib);
    for i in 0..40u32 {
        let start = (i as f32 * 0.031) % 0.7;
        let agent = match i % 3 {
            0 => Agent::new(Player::new(walk).starting_at(start)),
            1 => Agent::new(
                Player::new(run)
                    .starting_at(start)
                    .with_rate(PlayRate::new(1.3)),
            ),
            _ => Agent::blend(&[
                Player::new(walk).starting_at(start).with_weight(0.5),
                Player::new(run).with_weight(0.5),
            ])
            .synced(),
        };
        cpu.add(&agent).unwrap();
    }
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu, &GpuOptions::default()).unwrap();
    let mut footsteps = 0;
    for step in 0..45 {
        cpu.advance(&lib, 1.0 / 30.0).unwrap();
        gpu.advance(1.0 / 30.0).unwrap();
        assert_eq!(gpu.events().unwrap(), cpu.events(), "step {step}");
        footsteps += cpu
            .events()
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Notify(_)))
            .count();
    }
    // 1.5 s of walking and running: every instance steps a few times.
    assert!(footsteps >= 80, "{footsteps} footsteps");
}
