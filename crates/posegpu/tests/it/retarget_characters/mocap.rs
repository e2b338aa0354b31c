//! Motion capture as MotionBuilder-style files name it (`Hips`, `Chest`, `Chest2`, `Neck`,
//! `Head`, `LeftCollar`, `LeftShoulder` = the upper arm, `LeftElbow`, `LeftWrist`, `LeftHip` =
//! the thigh, `LeftKnee`, `LeftAnkle`), written as BVH text from the CMU captures: the removed
//! joints' rotations are baked into the kept ones per frame (each kept joint turns as its CMU
//! joint does, then by the swing that points it at its child's CMU joint), so the limbs move in
//! the world as the capture's do. Variants: the rest pose's legs straight down and arms
//! level (or one leg turned), a standing hips offset, Z-up, another unit, a root far from the
//! origin.

use glam::{EulerRot, Quat, Vec3};
use posegpu::component_space;
use posegpu::math::find_between_normals;
use posegpu::Asset;
use posegpu::Transform;

use crate::retarget_characters::data::asset;

/// How the generated file differs from the CMU skeleton it comes from.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// Spine joints between the hips and the neck (`Chest`, `Chest2`): 1 or 2.
    pub spines: usize,
    /// Toe joints (`LeftToe`) below the ankles.
    pub toes: bool,
    /// The rest pose's legs straight down and arms level (T-pose), as MotionBuilder writes
    /// them; otherwise CMU's (legs splayed 20°, arms level).
    pub straight: bool,
    /// Degrees the left leg's rest points forward (an asymmetric rest), after `straight`.
    pub left_leg_forward: f32,
    /// The hips' OFFSET in hip heights above the floor (a standing rest pose); 0: CMU's zero
    /// offset (the rest pose floats).
    pub hips_offset: f32,
    /// Z up instead of Y up.
    pub z_up: bool,
    /// Length unit: every offset and position times this.
    pub scale: f32,
    /// Added to every frame's root position (before `z_up`, in CMU units): a capture volume
    /// whose origin is far away.
    pub root_shift: Vec3,
    /// Keep every `step`th frame of the capture.
    pub step: usize,
    /// The classic Biovision layout: the hips joint between the hip joints (which sit level
    /// with it), legs straight down and arms hanging at rest.
    pub classic: bool,
}

impl Default for Variant {
    fn default() -> Self {
        Self {
            spines: 2,
            toes: false,
            straight: false,
            left_leg_forward: 0.0,
            hips_offset: 0.0,
            z_up: false,
            scale: 1.0,
            root_shift: Vec3::ZERO,
            step: 4,
            classic: false,
        }
    }
}

/// Where a kept joint sits: a CMU joint, or part of the way from one to another.
#[derive(Clone, Copy)]
enum At {
    Joint(&'static str),
    Between(&'static str, &'static str, f32),
}

/// A kept joint: name, parent (kept name), where it sits, the CMU joint whose rotation it
/// takes, the kept child it points at.
struct Kept {
    name: String,
    parent: Option<usize>,
    at: At,
    driver: &'static str,
    aim: Option<usize>,
}

fn layout(v: &Variant) -> Vec<Kept> {
    let mut out: Vec<Kept> = Vec::new();
    let mut add = |name: String, parent: Option<usize>, at: At, driver: &'static str| {
        out.push(Kept {
            name,
            parent,
            at,
            driver,
            aim: None,
        });
        out.len() - 1
    };
    let hips_at = if v.classic {
        At::Between("LeftUpLeg", "RightUpLeg", 0.5)
    } else {
        At::Joint("Hips")
    };
    let hips = add("Hips".into(), None, hips_at, "Hips");
    let mut kept = Vec::new();
    for (side, cmu) in [("Left", "Left"), ("Right", "Right")] {
        let [up, leg, foot, toe]: [&'static str; 4] = match cmu {
            "Left" => ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
            _ => ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
        };
        let h = add(format!("{side}Hip"), Some(hips), At::Joint(up), up);
        let k = add(format!("{side}Knee"), Some(h), At::Joint(leg), leg);
        let a = add(format!("{side}Ankle"), Some(k), At::Joint(foot), foot);
        kept.push((h, k));
        kept.push((k, a));
        if v.toes {
            let t = add(format!("{side}Toe"), Some(a), At::Joint(toe), toe);
            kept.push((a, t));
        }
    }
    let c1 = add("Chest".into(), Some(hips), At::Joint("Spine"), "Spine");
    let chest = if v.spines >= 2 {
        let c2 = add("Chest2".into(), Some(c1), At::Joint("Spine1"), "Spine1");
        kept.push((c1, c2));
        c2
    } else {
        c1
    };
    let neck = add("Neck".into(), Some(chest), At::Joint("Neck1"), "Neck1");
    kept.push((chest, neck));
    let head = add("Head".into(), Some(neck), At::Joint("Head"), "Head");
    kept.push((neck, head));
    for side in ["Left", "Right"] {
        let [sh, arm, fore, hand]: [&'static str; 4] = match side {
            "Left" => ["LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand"],
            _ => ["RightShoulder", "RightArm", "RightForeArm", "RightHand"],
        };
        let c = add(
            format!("{side}Collar"),
            Some(chest),
            At::Between("Spine1", arm, 0.2),
            sh,
        );
        let s = add(format!("{side}Shoulder"), Some(c), At::Joint(arm), arm);
        let e = add(format!("{side}Elbow"), Some(s), At::Joint(fore), fore);
        let w = add(format!("{side}Wrist"), Some(e), At::Joint(hand), hand);
        kept.extend([(c, s), (s, e), (e, w)]);
    }
    for (p, c) in kept {
        out[p].aim = Some(c);
    }
    out
}

fn point(at: At, cs: &[Transform], find: &impl Fn(&str) -> usize) -> Vec3 {
    match at {
        At::Joint(j) => cs[find(j)].translation,
        At::Between(a, b, f) => cs[find(a)].translation.lerp(cs[find(b)].translation, f),
    }
}

/// A MotionBuilder-named BVH of `source` (a CMU capture under anim-data), as text.
pub fn mocap_bvh(source: &str, v: &Variant) -> String {
    let full = asset(source);
    let sk = &full.skeleton;
    let find = |n: &str| sk.find(n).unwrap_or_else(|| panic!("no {n} in {source}"));
    let kept = layout(v);
    let rest_cs = sk.rest_component();
    let rest_at: Vec<Vec3> = kept.iter().map(|k| point(k.at, &rest_cs, &find)).collect();
    // Rest offsets: CMU's, or re-aimed (same lengths).
    let mut offsets: Vec<Vec3> = kept
        .iter()
        .enumerate()
        .map(|(i, k)| k.parent.map_or(Vec3::ZERO, |p| rest_at[i] - rest_at[p]))
        .collect();
    for (i, k) in kept.iter().enumerate() {
        let Some(p) = k.parent else { continue };
        let pname = kept[p].name.as_str();
        let len = offsets[i].length();
        let leg = pname.ends_with("Hip") || pname.ends_with("Knee");
        if (v.straight || v.classic) && leg {
            offsets[i] = Vec3::new(0.0, -len, 0.0);
        }
        if v.straight && (pname.ends_with("Shoulder") || pname.ends_with("Elbow")) {
            offsets[i] = Vec3::new(len * offsets[i].x.signum(), 0.0, 0.0);
        }
        if v.classic && (pname.ends_with("Shoulder") || pname.ends_with("Elbow")) {
            offsets[i] = Vec3::new(0.0, -len, 0.0);
        }
        if leg && pname.starts_with("Left") && v.left_leg_forward != 0.0 {
            let turn = Quat::from_rotation_x(-v.left_leg_forward.to_radians());
            offsets[i] = turn * offsets[i];
        }
    }
    // Hip height of the generated rest (for the standing offset).
    let legs = |s: &str| {
        ["Hip", "Knee"]
            .iter()
            .map(|j| {
                let i = kept
                    .iter()
                    .position(|k| k.name == format!("{s}{j}"))
                    .unwrap();
                let c = kept[i].aim.unwrap();
                offsets[c].length()
            })
            .sum::<f32>()
    };
    let h = 0.5 * (legs("Left") + legs("Right"));
    let hips_offset = Vec3::new(0.0, v.hips_offset * h, 0.0);

    let clip = &full.clips[0];
    let times: Vec<f32> = clip_times(clip)
        .into_iter()
        .step_by(v.step.max(1))
        .collect();
    let up = if v.z_up {
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)
    } else {
        Quat::IDENTITY
    };
    let mut rows = Vec::with_capacity(times.len());
    for &t in &times {
        let cs = component_space(sk.parents(), &clip.pose_at(sk.rest(), t));
        let at: Vec<Vec3> = kept.iter().map(|k| point(k.at, &cs, &find)).collect();
        let mut world = vec![Quat::IDENTITY; kept.len()];
        let mut row = Vec::new();
        for (i, k) in kept.iter().enumerate() {
            let r = cs[find(k.driver)].rotation;
            world[i] = match k.aim {
                Some(c) => {
                    let cmu_rest = (rest_at[c] - rest_at[i]).normalize();
                    let to_cmu = find_between_normals(offsets[c].normalize(), cmu_rest);
                    let now = (at[c] - at[i]).normalize();
                    let swing = find_between_normals(r * cmu_rest, now);
                    (swing * r * to_cmu).normalize()
                }
                None => r,
            };
            let local = match k.parent {
                Some(p) => world[p].inverse() * world[i],
                None => {
                    let pos = (at[0] + v.root_shift) * v.scale;
                    row.extend((up * pos).to_array());
                    world[i]
                }
            };
            let (z, x, y) = (up * local * up.inverse()).to_euler(EulerRot::ZXY);
            row.extend([z, x, y].map(f32::to_degrees));
        }
        rows.push(row);
    }

    // The text.
    let mut s = String::from("HIERARCHY\n");
    let children = |i: usize| -> Vec<usize> {
        (0..kept.len())
            .filter(|&c| kept[c].parent == Some(i))
            .collect()
    };
    fn write(
        s: &mut String,
        i: usize,
        depth: usize,
        kept: &[Kept],
        offsets: &[Vec3],
        children: &dyn Fn(usize) -> Vec<usize>,
        f: &dyn Fn(Vec3) -> String,
    ) {
        let pad = "  ".repeat(depth);
        let word = if depth == 0 { "ROOT" } else { "JOINT" };
        s.push_str(&format!("{pad}{word} {}\n{pad}{{\n", kept[i].name));
        s.push_str(&format!("{pad}  OFFSET {}\n", f(offsets[i])));
        let ch = if depth == 0 {
            "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
        } else {
            "CHANNELS 3 Zrotation Xrotation Yrotation"
        };
        s.push_str(&format!("{pad}  {ch}\n"));
        let cs = children(i);
        if cs.is_empty() {
            let end = match kept[i].parent {
                Some(_) if kept[i].name.ends_with("Ankle") => Vec3::new(0.0, -1.5, 3.5),
                Some(_) => offsets[i].normalize_or_zero() * 2.0,
                None => Vec3::Y,
            };
            s.push_str(&format!(
                "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET {}\n{pad}  }}\n",
                f(end)
            ));
        }
        for c in cs {
            write(s, c, depth + 1, kept, offsets, children, f);
        }
        s.push_str(&format!("{pad}}}\n"));
    }
    let fmt = |o: Vec3| {
        let o = up * (o * v.scale);
        format!("{:.5} {:.5} {:.5}", o.x, o.y, o.z)
    };
    offsets[0] = hips_offset;
    write(&mut s, 0, 0, &kept, &offsets, &children, &fmt);
    let dt = times.get(1).map_or(1.0 / 30.0, |t1| t1 - times[0]);
    s.push_str(&format!(
        "MOTION\nFrames: {}\nFrame Time: {dt:.7}\n",
        rows.len()
    ));
    for row in rows {
        let words: Vec<String> = row.iter().map(|x| format!("{x:.5}")).collect();
        s.push_str(&words.join(" "));
        s.push('\n');
    }
    s
}

/// The key times of `clip` (its first bone's rotation keys).
fn clip_times(clip: &posegpu::Clip) -> Vec<f32> {
    clip.tracks()
        .iter()
        .find_map(|t| t.rotation.as_ref().map(|c| c.times.clone()))
        .unwrap_or_default()
}

/// [`mocap_bvh`] parsed.
pub fn mocap(source: &str, v: &Variant, name: &str) -> Asset {
    let text = mocap_bvh(source, v);
    if let Ok(dir) = std::env::var("POSEGPU_WRITE_MOCAP") {
        std::fs::write(format!("{dir}/{name}.bvh"), &text).unwrap();
    }
    posegpu::import::parse_bvh(&text, std::path::Path::new(&format!("{name}.bvh"))).unwrap()
}

/// `asset` with its bones renamed by `rename` (name → new name; `None` keeps it).
pub fn renamed(asset: &Asset, rename: impl Fn(&str) -> Option<String>) -> Asset {
    let sk = &asset.skeleton;
    let bones = (0..sk.len())
        .map(|i| {
            let name = rename(&sk.names()[i]).unwrap_or_else(|| sk.names()[i].clone());
            posegpu::Bone {
                inverse_bind: sk.inverse_bind()[i],
                ..posegpu::Bone::new(name, sk.parent(i), sk.rest()[i])
            }
        })
        .collect();
    let skeleton = posegpu::Skeleton::new(bones).unwrap();
    let clips = asset
        .clips
        .iter()
        .map(|c| posegpu::Clip::new(c.name(), &skeleton, c.tracks().to_vec()).unwrap())
        .collect();
    Asset {
        skeleton,
        clips,
        nodes: asset.nodes.clone(),
        frame: asset.frame.clone(),
    }
}
