//! MotionBuilder-named motion capture (built by `mocap`) onto a short-legged character and a
//! Mixamo-named one, measured as a user sees it.

use posegpu::retarget::quality;
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{Asset, IkWeights};

use crate::retarget_characters::data::*;
use crate::retarget_characters::mocap::{mocap, renamed, Variant};

/// UE names (the procedural humanoid's) as Mixamo writes them.
pub fn mixamo_name(n: &str) -> Option<String> {
    let (base, side) = match n.rsplit_once('_') {
        Some((b, "l")) => (b, "Left"),
        Some((b, "r")) => (b, "Right"),
        _ => (n, ""),
    };
    let fingers = ["thumb", "index", "middle", "ring", "pinky"];
    let m = match base {
        "pelvis" => "Hips".to_string(),
        "spine_01" => "Spine".into(),
        "spine_02" => "Spine1".into(),
        "spine_03" => "Spine2".into(),
        "neck_01" => "Neck".into(),
        "Head" | "head" => "Head".into(),
        "clavicle" => format!("{side}Shoulder"),
        "upperarm" => format!("{side}Arm"),
        "lowerarm" => format!("{side}ForeArm"),
        "hand" => format!("{side}Hand"),
        "thigh" => format!("{side}UpLeg"),
        "calf" => format!("{side}Leg"),
        "foot" => format!("{side}Foot"),
        "ball" => format!("{side}ToeBase"),
        "ball_leaf" => format!("{side}Toe_End"),
        b => {
            let (f, i) = b.split_once('_')?;
            let i = i.strip_suffix("_leaf").unwrap_or(i);
            let i: usize = i.parse().ok()?;
            let f = fingers.iter().position(|x| *x == f)?;
            let cap = ["Thumb", "Index", "Middle", "Ring", "Pinky"][f];
            format!("{side}Hand{cap}{i}")
        }
    };
    Some(format!("mixamorig:{m}"))
}

/// `source`'s first clip on `target` with the default plan, measured at 60 of its key times.
fn run(source: &Asset, target: &Asset, ik: IkWeights) -> quality::QualityReport {
    let plan = RetargetPlan::new(source, target, &PlanOptions::default()).unwrap();
    let clip = &source.clips[0];
    let times = quality::frame_times(clip, 60);
    quality::measure(source, target, &plan, clip, &times, ik).unwrap()
}

/// The target's pelvis (mid-thighs) in component space at each of `times`, with feet IK.
fn pelvis_track(source: &Asset, target: &Asset, frames: usize) -> (Vec<glam::Vec3>, f32) {
    let plan = RetargetPlan::new(source, target, &PlanOptions::default()).unwrap();
    let clip = &source.clips[0];
    let th = &plan.target().humanoid;
    let ts = &target.skeleton;
    let track = quality::frame_times(clip, frames)
        .into_iter()
        .map(|t| {
            let locals =
                plan.apply_with_ik(&clip.pose_at(source.skeleton.rest(), t), IkWeights::FEET);
            let cs = posegpu::component_space(ts.parents(), &locals);
            (cs[th.left.thigh].translation + cs[th.right.thigh].translation) * 0.5
        })
        .collect();
    (track, plan.target().body.hip_height)
}

/// The largest distance, in the target's hip heights, between the target's pelvis driven by
/// `a` and by `b` (the same motion written two ways), printed under `what`.
fn pelvis_apart(a: &Asset, b: &Asset, target: &str, what: &str) -> f32 {
    let t = asset(target);
    let (pa, h) = pelvis_track(a, &t, 40);
    let (pb, _) = pelvis_track(b, &t, 40);
    let worst = pa
        .iter()
        .zip(&pb)
        .map(|(a, b)| (*a - *b).length() / h)
        .fold(0.0, f32::max);
    println!(
        "{what} -> {}: pelvis moved {:.2}% of hip height",
        short(target),
        worst * 100.0
    );
    worst
}

#[test]
fn the_rest_offset_of_a_mocap_root_changes_nothing() {
    // A BVH root's position channels replace its OFFSET in every frame, so where the rest pose
    // stands (floating at the origin, or standing at any height) says nothing about the
    // capture's floor: the same motion written with either rest must drive the target alike.
    let floating = mocap(
        CMU_WALK,
        &Variant {
            classic: true,
            ..Default::default()
        },
        "floating",
    );
    for (what, v) in [
        (
            "standing",
            Variant {
                classic: true,
                hips_offset: 0.9,
                ..Default::default()
            },
        ),
        (
            "standing low",
            Variant {
                classic: true,
                hips_offset: 0.8,
                ..Default::default()
            },
        ),
        (
            "standing high",
            Variant {
                classic: true,
                hips_offset: 1.3,
                ..Default::default()
            },
        ),
    ] {
        let standing = mocap(CMU_WALK, &v, what);
        for target in [KNIGHT, MECH_STAN] {
            let worst = pelvis_apart(&floating, &standing, target, what);
            assert!(worst < 0.005, "{what} -> {target}: {worst}");
            let q = run(&standing, &asset(target), IkWeights::FEET);
            assert!(
                q.source_sliding > 0.0,
                "{what}: no contact found: {}",
                q.summary()
            );
        }
    }
}

/// A generated capture (its CMU file and variant), a target, and the ceilings it is held to
/// with feet IK, each about 5% (at least 0.05) over what was measured (60 frames): direction
/// mean and 95th percentile (degrees), pelvis height, ankle lift and travel (% of hip height).
struct MocapPair(&'static str, &'static str, Target, [f32; 5]);

#[derive(Clone, Copy, Debug)]
enum Target {
    Knight,
    MechStan,
    /// The procedural humanoid with Mixamo's names.
    Mixamo,
}

fn variant(name: &str) -> Variant {
    let d = Variant::default();
    match name {
        // 19 bones: Hips, Chest, Chest2, Neck, Head, collars, arms, legs; CMU's rest.
        "mb19" => d,
        // 18 bones, one chest; the hips joint level with the hip joints, legs straight and
        // arms hanging at rest.
        "classic" => Variant {
            classic: true,
            spines: 1,
            ..d
        },
        // The same standing at 0.8 of its hip height at rest (its floor not the capture's).
        "classic standing" => Variant {
            classic: true,
            spines: 1,
            hips_offset: 0.8,
            ..d
        },
        // Z up, in centimetres, far from the origin.
        "z-up cm far" => Variant {
            z_up: true,
            scale: 5.6,
            root_shift: glam::Vec3::new(300.0, 0.0, -200.0),
            ..d
        },
        // The left leg's rest 8° forward of the right's, with toes.
        "asymmetric toes" => Variant {
            left_leg_forward: 8.0,
            toes: true,
            ..d
        },
        _ => panic!("{name}"),
    }
}

const MOCAP_PAIRS: &[MocapPair] = &[
    MocapPair(
        CMU_01,
        "mb19",
        Target::Knight,
        [2.40, 10.67, 1.47, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "mb19",
        Target::MechStan,
        [2.43, 8.35, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "mb19",
        Target::Mixamo,
        [0.32, 1.15, 0.19, 1.08, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "mb19",
        Target::Knight,
        [1.81, 8.60, 0.14, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "mb19",
        Target::MechStan,
        [1.05, 3.61, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "mb19",
        Target::Mixamo,
        [0.27, 1.26, 0.16, 1.19, 0.05],
    ),
    MocapPair(
        CMU_01,
        "classic",
        Target::Knight,
        [2.20, 10.42, 1.41, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "classic",
        Target::MechStan,
        [1.83, 7.66, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "classic",
        Target::Mixamo,
        [0.29, 1.08, 0.14, 1.00, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "classic",
        Target::Knight,
        [1.71, 8.58, 0.12, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "classic",
        Target::MechStan,
        [0.53, 3.23, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "classic",
        Target::Mixamo,
        [0.24, 1.25, 0.14, 1.20, 0.05],
    ),
    MocapPair(
        CMU_01,
        "classic standing",
        Target::Knight,
        [2.20, 10.42, 1.41, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "classic standing",
        Target::MechStan,
        [1.83, 7.66, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "classic standing",
        Target::Mixamo,
        [0.29, 1.08, 0.14, 1.00, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "classic standing",
        Target::Knight,
        [1.71, 8.58, 0.12, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "classic standing",
        Target::MechStan,
        [0.53, 3.23, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "classic standing",
        Target::Mixamo,
        [0.24, 1.25, 0.14, 1.20, 0.05],
    ),
    MocapPair(
        CMU_01,
        "z-up cm far",
        Target::Knight,
        [2.40, 10.67, 1.47, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "z-up cm far",
        Target::MechStan,
        [2.43, 8.35, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "z-up cm far",
        Target::Mixamo,
        [0.32, 1.15, 0.19, 1.08, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "z-up cm far",
        Target::Knight,
        [1.81, 8.60, 0.14, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "z-up cm far",
        Target::MechStan,
        [1.05, 3.61, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "z-up cm far",
        Target::Mixamo,
        [0.27, 1.26, 0.16, 1.19, 0.05],
    ),
    MocapPair(
        CMU_01,
        "asymmetric toes",
        Target::Knight,
        [2.07, 9.23, 1.00, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "asymmetric toes",
        Target::MechStan,
        [2.19, 7.24, 0.05, 2.10, 0.05],
    ),
    MocapPair(
        CMU_01,
        "asymmetric toes",
        Target::Mixamo,
        [0.31, 1.08, 0.52, 0.85, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "asymmetric toes",
        Target::Knight,
        [1.62, 8.01, 0.58, 2.10, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "asymmetric toes",
        Target::MechStan,
        // Measured from Mech_Stan's bind pose since 2026-11-27 (held at 1.05/3.28/1.77 from its
        // nodes).
        [1.15, 4.03, 0.05, 2.07, 0.05],
    ),
    MocapPair(
        CMU_WALK,
        "asymmetric toes",
        Target::Mixamo,
        [0.31, 1.49, 0.60, 0.82, 0.05],
    ),
];

#[test]
fn mocap_pairs_with_feet_ik() {
    let mixamo = renamed(&posegpu::procedural::humanoid_asset(), mixamo_name);
    let mut failures = Vec::new();
    for &MocapPair(src, name, target, ceilings) in MOCAP_PAIRS {
        let s = mocap(src, &variant(name), name);
        let t = match target {
            Target::Knight => asset(KNIGHT),
            Target::MechStan => asset(MECH_STAN),
            Target::Mixamo => std::sync::Arc::new(mixamo.clone()),
        };
        let q = run(&s, &t, IkWeights::FEET);
        let label = format!("{} {name} -> {target:?}", short(src));
        let measured = [
            q.overall.mean,
            q.overall.p95,
            q.hips_height.max * 100.0,
            q.feet_height.max * 100.0,
            q.travel.max * 100.0,
        ];
        println!("{label}: {}", q.summary());
        for ((m, c), what) in measured.iter().zip(ceilings).zip([
            "mean°",
            "p95°",
            "pelvis %",
            "ankle lift %",
            "travel %",
        ]) {
            if *m > c {
                failures.push(format!("{label}: {what} {m:.2} > {c}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_capture_without_toes_drives_the_target_as_with_them() {
    // The same motion written with toe joints and without: a foot whose ankle is its lowest
    // joint still stands on a sole below it, so the hips' height and travel on the target must
    // not change (a hip height taken as thigh + shin alone scales both by the missing ankle).
    let with = mocap(
        CMU_WALK,
        &Variant {
            toes: true,
            ..Default::default()
        },
        "toes",
    );
    let without = mocap(CMU_WALK, &Variant::default(), "no toes");
    for target in [KNIGHT, MECH_STAN, SUPERHERO] {
        // 7.8% on the Knight with the ankle as the floor, 0.65% with the sole below it.
        let worst = pelvis_apart(&with, &without, target, "no toes");
        assert!(worst < 0.02, "no toes -> {target}: {worst}");
    }
}
