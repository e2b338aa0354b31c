//! Recognition of the canonical humanoid on every character of `../shared/anim-data` (a
//! table), on generated skeletons named by other tools' conventions, and refusal of
//! non-humanoids with a typed error.

use glam::{Quat, Vec3};
use posegpu::retarget::{recognise, Character, Role, Side};
use posegpu::retarget::{Digit, Method};
use posegpu::{Asset, AssetFrame, Bone, Error, Skeleton, Transform};

use crate::common::anim_files;
use crate::retarget_characters::data::*;

/// Expected bone names per role; `None`: the role is absent.
struct Expect {
    file: &'static str,
    method: Method,
    hips: &'static str,
    chest: &'static str,
    head: &'static str,
    spine: usize,
    neck: usize,
    clavicle: Option<&'static str>,
    upper_arm: &'static str,
    forearm: &'static str,
    hand: &'static str,
    thigh: &'static str,
    shin: &'static str,
    foot: &'static str,
    toes: Option<&'static str>,
}

const TABLE: &[Expect] = &[
    Expect {
        file: KNIGHT,
        method: Method::Names,
        hips: "hips",
        chest: "chest",
        head: "head",
        spine: 1,
        neck: 0,
        clavicle: None,
        upper_arm: "upperarm.l",
        forearm: "lowerarm.l",
        hand: "wrist.l",
        thigh: "upperleg.l",
        shin: "lowerleg.l",
        foot: "foot.l",
        toes: Some("toes.l"),
    },
    Expect {
        file: MED,
        method: Method::Names,
        hips: "hips",
        chest: "chest",
        head: "head",
        spine: 1,
        neck: 0,
        clavicle: None,
        upper_arm: "upperarm.l",
        forearm: "lowerarm.l",
        hand: "wrist.l",
        thigh: "upperleg.l",
        shin: "lowerleg.l",
        foot: "foot.l",
        toes: Some("toes.l"),
    },
    Expect {
        file: MECH_STAN,
        method: Method::Names,
        hips: "Body",
        chest: "Neck",
        head: "Head",
        spine: 2,
        neck: 0,
        clavicle: Some("Shoulder.L"),
        upper_arm: "UpperArm.L",
        forearm: "LowerArm.L",
        hand: "PalmI.L",
        thigh: "UpperLeg.L",
        shin: "LowerLeg.L",
        foot: "Foot.L",
        toes: None,
    },
    Expect {
        file: SUPERHERO,
        method: Method::Names,
        hips: "pelvis",
        chest: "spine_03",
        head: "Head",
        spine: 2,
        neck: 1,
        clavicle: Some("clavicle_l"),
        upper_arm: "upperarm_l",
        forearm: "lowerarm_l",
        hand: "hand_l",
        thigh: "thigh_l",
        shin: "calf_l",
        foot: "foot_l",
        toes: Some("ball_l"),
    },
    Expect {
        file: UAL,
        method: Method::Names,
        hips: "DEF-hips",
        chest: "DEF-spine.003",
        head: "DEF-head",
        spine: 2,
        neck: 1,
        clavicle: Some("DEF-shoulder.L"),
        upper_arm: "DEF-upper_arm.L",
        forearm: "DEF-forearm.L",
        hand: "DEF-hand.L",
        thigh: "DEF-thigh.L",
        shin: "DEF-shin.L",
        foot: "DEF-foot.L",
        toes: Some("DEF-toe.L"),
    },
    Expect {
        file: CMU_01,
        method: Method::Names,
        hips: "Hips",
        chest: "Spine1",
        head: "Head",
        spine: 2,
        neck: 2,
        clavicle: Some("LeftShoulder"),
        upper_arm: "LeftArm",
        forearm: "LeftForeArm",
        hand: "LeftHand",
        thigh: "LeftUpLeg",
        shin: "LeftLeg",
        foot: "LeftFoot",
        toes: Some("LeftToeBase"),
    },
    Expect {
        file: CMU_WALK,
        method: Method::Names,
        hips: "Hips",
        chest: "Spine1",
        head: "Head",
        spine: 2,
        neck: 2,
        clavicle: Some("LeftShoulder"),
        upper_arm: "LeftArm",
        forearm: "LeftForeArm",
        hand: "LeftHand",
        thigh: "LeftUpLeg",
        shin: "LeftLeg",
        foot: "LeftFoot",
        toes: Some("LeftToeBase"),
    },
    Expect {
        file: ZOMBIE,
        method: Method::Names,
        hips: "Root",
        chest: "Spine3",
        head: "Head",
        spine: 2,
        neck: 1,
        clavicle: Some("Clavicle_L"),
        upper_arm: "UpArm_L",
        forearm: "LoArm_L",
        hand: "Hand_L",
        thigh: "UpLeg_L",
        shin: "LoLeg_L",
        foot: "Foot_L",
        toes: Some("Toe_L"),
    },
    Expect {
        file: TPOSE,
        method: Method::Names,
        hips: "root",
        chest: "spine01",
        head: "head",
        spine: 4,
        neck: 3,
        clavicle: Some("clavicle.L"),
        upper_arm: "upperarm01.L",
        forearm: "lowerarm01.L",
        hand: "wrist.L",
        thigh: "upperleg01.L",
        shin: "lowerleg01.L",
        foot: "foot.L",
        toes: Some("toe3-1.L"),
    },
];

/// `asset`'s character (roles and body frame).
fn character(rel: &str) -> (std::sync::Arc<Asset>, Character) {
    let a = asset(rel);
    let c = Character::measure(&a).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (a, c)
}

#[test]
fn every_character_is_recognised() {
    for e in TABLE {
        let (a, c) = character(e.file);
        let sk = &a.skeleton;
        let h = &c.humanoid;
        let name = |b: usize| sk.names()[b].as_str();
        let l = h.side(Side::Left);
        assert_eq!(h.method, e.method, "{}", e.file);
        assert_eq!(name(h.hips), e.hips, "{} hips", e.file);
        assert_eq!(name(h.chest), e.chest, "{} chest", e.file);
        assert_eq!(name(h.head), e.head, "{} head", e.file);
        assert_eq!(h.spine.len(), e.spine, "{} spine", e.file);
        assert_eq!(h.neck.len(), e.neck, "{} neck", e.file);
        assert_eq!(l.clavicle.map(name), e.clavicle, "{} clavicle", e.file);
        assert_eq!(name(l.upper_arm), e.upper_arm, "{} upper arm", e.file);
        assert_eq!(name(l.forearm), e.forearm, "{} forearm", e.file);
        assert_eq!(name(l.hand), e.hand, "{} hand", e.file);
        assert_eq!(name(l.thigh), e.thigh, "{} thigh", e.file);
        assert_eq!(name(l.shin), e.shin, "{} shin", e.file);
        assert_eq!(name(l.foot), e.foot, "{} foot", e.file);
        assert_eq!(l.toes.map(name), e.toes, "{} toes", e.file);
        // Every role bone has a reason; the right side mirrors the left.
        for (b, r) in h.roles().iter().enumerate() {
            if r.is_some() {
                assert!(
                    !h.reason(b).is_empty(),
                    "{}: no reason for {}",
                    e.file,
                    name(b)
                );
            }
        }
        let r = h.side(Side::Right);
        assert_eq!(r.clavicle.is_some(), l.clavicle.is_some());
        assert_eq!(r.toes.is_some(), l.toes.is_some());
        assert_ne!(r.thigh, l.thigh);
    }
}

#[test]
fn details_of_the_real_rigs() {
    // IK, pole, slot, control and twist bones get no role; their reasons say why.
    let (knight, h) = character(KNIGHT);
    for n in [
        "kneeIK.l",
        "IK-foot.l",
        "control-toe-roll.l",
        "handslot.l",
        "elbowIK.r",
    ] {
        let b = knight.skeleton.find(n).unwrap();
        assert_eq!(h.humanoid.role(b), None, "{n}");
        assert!(
            h.humanoid.reason(b).contains("IK"),
            "{n}: {}",
            h.humanoid.reason(b)
        );
    }
    let root = knight.skeleton.find("root").unwrap();
    assert!(h.humanoid.reason(root).contains("above the hips"));
    // Mech: the feet are IK targets (roots that deform nothing); the palms are hand parts;
    // the pole targets get nothing.
    let (mech_asset, mech) = character(MECH_STAN);
    let sk = &mech_asset.skeleton;
    let foot = sk.find("Foot.L").unwrap();
    assert_eq!(sk.parent(foot), None);
    assert!(mech.humanoid.reason(foot).contains("IK target"));
    assert_eq!(mech.humanoid.role(sk.find("PoleTarget.L").unwrap()), None);
    assert_eq!(
        mech.humanoid.role(sk.find("PalmP.L").unwrap()),
        Some(Role::HandPart(Side::Left))
    );
    assert_eq!(
        mech.humanoid.role(sk.find("Index2.L").unwrap()),
        Some(Role::Finger(Side::Left, Digit::Index, 1))
    );
    // CMU: LeftShoulder (the upper arm hangs below it) is the clavicle; LHipJoint is extra.
    let (cmu_asset, cmu) = character(CMU_01);
    let sk = &cmu_asset.skeleton;
    assert_eq!(cmu.humanoid.role(sk.find("LHipJoint").unwrap()), None);
    assert!(cmu
        .humanoid
        .reason(sk.find("LeftShoulder").unwrap())
        .contains("upper arm below"));
    // MakeHuman: '__' helpers and twist segments get no role; Root (where legs and spine
    // meet) is the hips, not the leg-only bone named Hips.
    let (z_asset, z) = character(ZOMBIE);
    let sk = &z_asset.skeleton;
    assert_eq!(z.humanoid.role(sk.find("__UpLeg_L").unwrap()), None);
    assert_eq!(z.humanoid.role(sk.find("Hips").unwrap()), None);
    let (t_asset, t) = character(TPOSE);
    let sk = &t_asset.skeleton;
    assert_eq!(t.humanoid.role(sk.find("upperarm02.L").unwrap()), None);
    assert_eq!(t.humanoid.role(sk.find("shoulder01.L").unwrap()), None);
    // Superhero: the *_leaf end bones get no role.
    let (s_asset, s) = character(SUPERHERO);
    let b = s_asset.skeleton.find("ball_leaf_l").unwrap();
    assert_eq!(s.humanoid.role(b), None);
}

#[test]
fn unnamed_figures_by_structure() {
    for file in [CESIUM, FIGURE] {
        let (a, c) = character(file);
        let h = &c.humanoid;
        assert_eq!(h.method, Method::Structure, "{file}");
        // The expected joints by index (both figures share one topology).
        assert_eq!((h.hips, h.chest, h.head), (0, 2, 4), "{file}");
        assert_eq!(
            (h.spine.clone(), h.neck.clone()),
            (vec![1], vec![3]),
            "{file}"
        );
        let (l, r) = (h.side(Side::Left), h.side(Side::Right));
        assert_eq!([l.upper_arm, r.upper_arm].iter().copied().min(), Some(5));
        assert_eq!([l.thigh, r.thigh].iter().copied().min(), Some(11));
        assert!(l.toes.is_some() && r.toes.is_some());
        // Left is on the character's left: forward = up × right, and the left thigh lies
        // against `right`.
        let pos: Vec<Vec3> = a
            .skeleton
            .rest_component()
            .iter()
            .map(|t| t.translation)
            .collect();
        assert!(
            (pos[l.thigh] - pos[r.thigh]).dot(c.body.right) < 0.0,
            "{file}"
        );
        assert!(
            (pos[l.hand] - pos[r.hand]).dot(c.body.right) < 0.0,
            "{file}"
        );
        // The toes point forward.
        assert!(
            (pos[l.toes.unwrap()] - pos[l.foot]).dot(c.body.forward) > 0.0,
            "{file}"
        );
        assert!(h.reason(h.hips).starts_with("structure"));
    }
}

#[test]
fn fox_is_refused_with_a_typed_error() {
    let err = recognise(&asset(FOX)).unwrap_err();
    assert!(
        matches!(&err, Error::NotHumanoid { what, why } if what.contains("24 bones") && why.contains("not upright")),
        "{err}"
    );
    assert!(err.to_string().contains("quadruped"), "{err}");
    // Retargeting onto it (or from it) without a rig file is the same error, naming the side.
    let err = posegpu::retarget::RetargetPlan::new(&asset(UAL), &asset(FOX), &Default::default())
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotHumanoid { what, .. } if what.starts_with("target")),
        "{err}"
    );
}

#[test]
fn every_file_is_recognised_or_refused() {
    // The whole folder: each file a humanoid with every limb, or (Fox and the skinned test
    // shapes) a typed refusal.
    let mut refused = Vec::new();
    for path in anim_files() {
        let rel = path
            .strip_prefix(crate::common::anim_data())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let a = asset(&rel);
        match Character::measure(&a) {
            Ok(c) => {
                let h = &c.humanoid;
                assert!(c.body.hip_height > 0.0, "{rel}");
                for side in Side::BOTH {
                    let l = h.side(side);
                    for b in [l.upper_arm, l.forearm, l.hand, l.thigh, l.shin, l.foot] {
                        assert!(h.role(b).is_some(), "{rel}: {side:?} bone {b}");
                    }
                }
                assert!(!h.describe(&a.skeleton).is_empty());
            }
            Err(Error::NotHumanoid { .. }) => refused.push(short(&rel)),
            Err(e) => panic!("{rel}: {e}"),
        }
    }
    assert_eq!(refused, ["Fox", "RiggedSimple", "SimpleSkin"]);
}

// ---------------------------------------------------------------------------------------------
// Generated skeletons in other tools' conventions.

/// A T-pose humanoid, Y-up, facing +Z, in metres, with the given names (in the order of
/// `BONES`); `None` parents come from the table.
const BONES: [(&str, Option<usize>, [f32; 3]); 19] = [
    ("hips", None, [0.0, 1.0, 0.0]),          // 0
    ("spine", Some(0), [0.0, 0.15, 0.0]),     // 1
    ("chest", Some(1), [0.0, 0.2, 0.0]),      // 2
    ("neck", Some(2), [0.0, 0.2, 0.0]),       // 3
    ("head", Some(3), [0.0, 0.1, 0.0]),       // 4
    ("clav_l", Some(2), [0.05, 0.15, 0.0]),   // 5
    ("upper_l", Some(5), [0.12, 0.0, 0.0]),   // 6
    ("fore_l", Some(6), [0.28, 0.0, 0.0]),    // 7
    ("hand_l", Some(7), [0.25, 0.0, 0.0]),    // 8
    ("clav_r", Some(2), [-0.05, 0.15, 0.0]),  // 9
    ("upper_r", Some(9), [-0.12, 0.0, 0.0]),  // 10
    ("fore_r", Some(10), [-0.28, 0.0, 0.0]),  // 11
    ("hand_r", Some(11), [-0.25, 0.0, 0.0]),  // 12
    ("thigh_l", Some(0), [0.1, -0.05, 0.0]),  // 13
    ("shin_l", Some(13), [0.0, -0.45, 0.0]),  // 14
    ("foot_l", Some(14), [0.0, -0.42, 0.0]),  // 15
    ("thigh_r", Some(0), [-0.1, -0.05, 0.0]), // 16
    ("shin_r", Some(16), [0.0, -0.45, 0.0]),  // 17
    ("foot_r", Some(17), [0.0, -0.42, 0.0]),  // 18
];

/// A procedural-like asset of `skeleton`: Y up, no clips, no skin weights.
pub fn y_up(skeleton: Skeleton) -> Asset {
    Asset {
        skeleton,
        clips: Vec::new(),
        nodes: None,
        frame: AssetFrame::Y_UP,
    }
}

fn generated(names: [&str; 19]) -> Skeleton {
    let bones = BONES
        .iter()
        .zip(names)
        .map(|(&(_, parent, t), n)| {
            Bone::new(
                n,
                parent,
                Transform::new(Vec3::from(t), Quat::IDENTITY, Vec3::ONE),
            )
        })
        .collect();
    Skeleton::new(bones).unwrap()
}

fn check_generated(names: [&str; 19], clavicle: bool) {
    let sk = generated(names);
    let h = recognise(&y_up(sk)).unwrap_or_else(|e| panic!("{names:?}: {e}"));
    let l = h.side(Side::Left);
    assert_eq!(h.hips, 0, "{names:?}");
    assert_eq!(h.head, 4);
    assert_eq!(l.clavicle, clavicle.then_some(5), "{names:?}");
    assert_eq!((l.upper_arm, l.forearm, l.hand), (6, 7, 8), "{names:?}");
    assert_eq!((l.thigh, l.shin, l.foot), (13, 14, 15), "{names:?}");
    let r = h.side(Side::Right);
    assert_eq!((r.upper_arm, r.thigh), (10, 16), "{names:?}");
}

#[test]
fn conventions_of_other_tools() {
    // Mixamo.
    check_generated(
        [
            "mixamorig:Hips",
            "mixamorig:Spine",
            "mixamorig:Spine1",
            "mixamorig:Neck",
            "mixamorig:Head",
            "mixamorig:LeftShoulder",
            "mixamorig:LeftArm",
            "mixamorig:LeftForeArm",
            "mixamorig:LeftHand",
            "mixamorig:RightShoulder",
            "mixamorig:RightArm",
            "mixamorig:RightForeArm",
            "mixamorig:RightHand",
            "mixamorig:LeftUpLeg",
            "mixamorig:LeftLeg",
            "mixamorig:LeftFoot",
            "mixamorig:RightUpLeg",
            "mixamorig:RightLeg",
            "mixamorig:RightFoot",
        ],
        true,
    );
    // Daz.
    check_generated(
        [
            "hip", "abdomen", "chest", "neck", "head", "lCollar", "lShldr", "lForeArm", "lHand",
            "rCollar", "rShldr", "rForeArm", "rHand", "lThigh", "lShin", "lFoot", "rThigh",
            "rShin", "rFoot",
        ],
        true,
    );
    // Mocap: LeftShoulder → LeftElbow → LeftWrist, LeftHip → LeftKnee → LeftAnkle; no collar
    // bone, so the 'shoulder' is the upper arm (the elbow-level bone is its child).
    check_generated(
        [
            "Hips",
            "Chest",
            "Chest2",
            "Neck",
            "Head",
            "LeftCollar",
            "LeftShoulder",
            "LeftElbow",
            "LeftWrist",
            "RightCollar",
            "RightShoulder",
            "RightElbow",
            "RightWrist",
            "LeftHip",
            "LeftKnee",
            "LeftAnkle",
            "RightHip",
            "RightKnee",
            "RightAnkle",
        ],
        true,
    );
    // Blender with .L/.R, Rigify DEF- names, and MakeHuman's short names.
    check_generated(
        [
            "DEF-hips",
            "DEF-spine.001",
            "DEF-spine.003",
            "DEF-neck",
            "DEF-head",
            "DEF-shoulder.L",
            "DEF-upper_arm.L",
            "DEF-forearm.L",
            "DEF-hand.L",
            "DEF-shoulder.R",
            "DEF-upper_arm.R",
            "DEF-forearm.R",
            "DEF-hand.R",
            "DEF-thigh.L",
            "DEF-shin.L",
            "DEF-foot.L",
            "DEF-thigh.R",
            "DEF-shin.R",
            "DEF-foot.R",
        ],
        true,
    );
    check_generated(
        [
            "Hips",
            "Spine1",
            "Spine3",
            "Neck",
            "Head",
            "Clavicle_L",
            "UpArm_L",
            "LoArm_L",
            "Hand_L",
            "Clavicle_R",
            "UpArm_R",
            "LoArm_R",
            "Hand_R",
            "UpLeg_L",
            "LoLeg_L",
            "Foot_L",
            "UpLeg_R",
            "LoLeg_R",
            "Foot_R",
        ],
        true,
    );
    // UE-like names with prefixes and a Bip01 one.
    check_generated(
        [
            "Bip01 Pelvis",
            "Bip01 Spine",
            "Bip01 Spine2",
            "Bip01 Neck",
            "Bip01 Head",
            "Bip01 L Clavicle",
            "Bip01 L UpperArm",
            "Bip01 L Forearm",
            "Bip01 L Hand",
            "Bip01 R Clavicle",
            "Bip01 R UpperArm",
            "Bip01 R Forearm",
            "Bip01 R Hand",
            "Bip01 L Thigh",
            "Bip01 L Calf",
            "Bip01 L Foot",
            "Bip01 R Thigh",
            "Bip01 R Calf",
            "Bip01 R Foot",
        ],
        true,
    );
    // Unnamed: by structure (the clavicle, a short first segment, is found too).
    check_generated([""; 19], true);
}

#[test]
fn mocap_shoulder_is_the_upper_arm_without_a_collar() {
    // Drop the collars: LeftShoulder then hangs from the chest and its child is the elbow.
    let mut names: Vec<&str> = vec![
        "Hips",
        "Chest",
        "Chest2",
        "Neck",
        "Head",
        "LeftShoulder",
        "LeftElbow",
        "LeftWrist",
        "RightShoulder",
        "RightElbow",
        "RightWrist",
        "LeftHip",
        "LeftKnee",
        "LeftAnkle",
        "RightHip",
        "RightKnee",
        "RightAnkle",
    ];
    let map = [0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18];
    let mut bones = Vec::new();
    for (i, &src) in map.iter().enumerate() {
        let (_, parent, t) = BONES[src];
        let parent = parent.map(|p| match p {
            5 => 2,
            9 => 2,
            p => map.iter().position(|&m| m == p).unwrap(),
        });
        let t = if src == 6 || src == 10 {
            [t[0] + 0.05 * t[0].signum() * 2.4, 0.15, 0.0]
        } else {
            t
        };
        bones.push(Bone::new(
            names[i],
            parent,
            Transform::new(Vec3::from(t), Quat::IDENTITY, Vec3::ONE),
        ));
    }
    names.clear();
    let sk = Skeleton::new(bones).unwrap();
    let h = recognise(&y_up(sk.clone())).unwrap();
    let l = h.side(Side::Left);
    assert_eq!(sk.names()[l.upper_arm], "LeftShoulder");
    assert_eq!(sk.names()[l.forearm], "LeftElbow");
    assert_eq!(l.clavicle, None);
    assert!(h.reason(l.upper_arm).contains("mocap"));
    assert_eq!(sk.names()[l.thigh], "LeftHip");
}

#[test]
fn a_quadruped_by_structure_is_refused() {
    // Four legs under a horizontal spine, a head in front: not upright.
    let t = |x: f32, y: f32, z: f32| Transform::new(Vec3::new(x, y, z), Quat::IDENTITY, Vec3::ONE);
    let bones = vec![
        Bone::new("", None, t(0.0, 0.6, 0.0)),     // 0 pelvis
        Bone::new("", Some(0), t(0.0, 0.0, 0.4)),  // 1 spine
        Bone::new("", Some(1), t(0.0, 0.1, 0.3)),  // 2 neck
        Bone::new("", Some(2), t(0.0, 0.1, 0.1)),  // 3 head
        Bone::new("", Some(1), t(0.1, -0.1, 0.0)), // 4 front leg
        Bone::new("", Some(4), t(0.0, -0.25, 0.0)),
        Bone::new("", Some(5), t(0.0, -0.25, 0.05)),
        Bone::new("", Some(1), t(-0.1, -0.1, 0.0)),
        Bone::new("", Some(7), t(0.0, -0.25, 0.0)),
        Bone::new("", Some(8), t(0.0, -0.25, 0.05)),
        Bone::new("", Some(0), t(0.1, -0.1, 0.0)), // hind legs
        Bone::new("", Some(10), t(0.0, -0.25, 0.0)),
        Bone::new("", Some(11), t(0.0, -0.25, 0.05)),
        Bone::new("", Some(0), t(-0.1, -0.1, 0.0)),
        Bone::new("", Some(13), t(0.0, -0.25, 0.0)),
        Bone::new("", Some(14), t(0.0, -0.25, 0.05)),
        Bone::new("", Some(0), t(0.0, 0.05, -0.1)), // tail
        Bone::new("", Some(16), t(0.0, 0.0, -0.2)),
    ];
    let sk = Skeleton::new(bones).unwrap();
    let err = recognise(&y_up(sk)).unwrap_err();
    assert!(matches!(err, Error::NotHumanoid { .. }), "{err}");
}
