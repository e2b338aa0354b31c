//! A canonical humanoid and its recognition on any skeleton, from the naming conventions users
//! bring (Mixamo, UE Mannequin, Blender/Rigify, Quaternius/KayKit, CMU and mocap BVH, Daz,
//! MakeHuman) and, where names are absent or ambiguous, from structure and rest positions.
//!
//! Recognition runs in two ways:
//! - **by names**: each bone name is split into lower-case tokens (`mixamorig:LeftUpLeg` →
//!   `left up leg`, `DEF-upper_arm.L` → `upper arm` + side L, `lShldr` → side l + `shldr`), a side
//!   and a kind are read from them, and per side the limb bones are chosen along the chain
//!   (the root-most candidate of each kind, so twist segments such as `upperarm02.L` and extra
//!   bones such as Knight's `hand.l` under `wrist.l` get no role). A `shoulder` is a clavicle
//!   when an upper arm hangs below it, and the upper arm itself (mocap's `LeftShoulder` →
//!   `LeftElbow`) when none does. The torso comes from structure: hips = where the two legs
//!   and the head meet, chest = where the arms leave the hips→head path, spine and neck = the
//!   bones between.
//! - **by structure** (unnamed glTF such as CesiumMan): the head is the highest extremity, the
//!   legs the two lowest, branching from the hips; the arms the two largest branches above the
//!   hips; left and right from the facing direction (the toes point forward).
//!
//! Bones that deform nothing (no skin weights in them or below them), IK targets, poles,
//! controls, slots, twist, helper (`__`) and end (`_end`, `_leaf`) bones get no role. A
//! skeleton that is not an upright biped with arms (a quadruped: Fox) is refused with
//! [`Error::NotHumanoid`].

mod names;
mod structure;

use std::fmt;

use glam::Vec3;

use super::tree::Tree;
use crate::error::{Error, Result};
use crate::model::{Asset, AssetFrame, Skeleton};
use crate::Transform;
use names::{by_names, parse_name, Kind, NameInfo};
use structure::by_structure;

/// A side of the body, the character's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The character's left.
    Left,
    /// The character's right.
    Right,
}

impl Side {
    /// Both sides, left first.
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];

    /// `left` or `right`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Right => "right",
        }
    }
}

/// A finger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // the five fingers
pub enum Digit {
    Thumb,
    Index,
    Middle,
    Ring,
    Pinky,
}

impl Digit {
    /// The five, thumb first.
    pub const ALL: [Digit; 5] = [
        Digit::Thumb,
        Digit::Index,
        Digit::Middle,
        Digit::Ring,
        Digit::Pinky,
    ];

    /// `thumb`, `index`, `middle`, `ring` or `pinky`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Thumb => "thumb",
            Self::Index => "index",
            Self::Middle => "middle",
            Self::Ring => "ring",
            Self::Pinky => "pinky",
        }
    }
}

/// A role of the canonical humanoid. Chains (spine, neck, fingers) are numbered from the root
/// outwards, from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // the body parts they name
pub enum Role {
    Hips,
    /// A bone between the hips and the chest.
    Spine(u8),
    /// Where the arms leave the spine.
    Chest,
    /// A bone between the chest and the head.
    Neck(u8),
    Head,
    Clavicle(Side),
    UpperArm(Side),
    Forearm(Side),
    Hand(Side),
    /// A second bone at the hand's joint that moves with the hand (Mech's four palm bones).
    HandPart(Side),
    /// A finger bone: side, digit, place along the finger.
    Finger(Side, Digit, u8),
    Thigh(Side),
    Shin(Side),
    Foot(Side),
    Toes(Side),
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hips => write!(f, "hips"),
            Self::Spine(i) => write!(f, "spine {}", i + 1),
            Self::Chest => write!(f, "chest"),
            Self::Neck(i) => write!(f, "neck {}", i + 1),
            Self::Head => write!(f, "head"),
            Self::Clavicle(s) => write!(f, "{} clavicle", s.name()),
            Self::UpperArm(s) => write!(f, "{} upper arm", s.name()),
            Self::Forearm(s) => write!(f, "{} forearm", s.name()),
            Self::Hand(s) => write!(f, "{} hand", s.name()),
            Self::HandPart(s) => write!(f, "{} hand (part)", s.name()),
            Self::Finger(s, d, i) => write!(f, "{} {} {}", s.name(), d.name(), i + 1),
            Self::Thigh(s) => write!(f, "{} thigh", s.name()),
            Self::Shin(s) => write!(f, "{} shin", s.name()),
            Self::Foot(s) => write!(f, "{} foot", s.name()),
            Self::Toes(s) => write!(f, "{} toes", s.name()),
        }
    }
}

/// The limb bones of one side (bone indices).
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)] // the bones they name
pub struct SideLimbs {
    pub clavicle: Option<usize>,
    pub upper_arm: usize,
    pub forearm: usize,
    pub hand: usize,
    /// Other bones at the hand's joint that move with it.
    pub hand_parts: Vec<usize>,
    /// Per [`Digit`] (in [`Digit::ALL`] order), the finger's bones from the hand outwards.
    pub fingers: [Vec<usize>; 5],
    pub thigh: usize,
    pub shin: usize,
    /// The foot: below the shin, or (IK-style rigs) elsewhere, even a skeleton root.
    pub foot: usize,
    pub toes: Option<usize>,
}

/// How the roles were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// From the bone names (the torso from where the named limbs meet).
    Names,
    /// From the hierarchy and the rest pose alone (unnamed joints).
    Structure,
}

/// A recognised humanoid: the bone of each role, with the reason for each assignment.
#[derive(Clone, Debug, PartialEq)]
pub struct Humanoid {
    /// Where the legs and the head meet.
    pub hips: usize,
    /// Bones strictly between hips and chest, from the hips up.
    pub spine: Vec<usize>,
    /// Where the arms leave the hips→head path.
    pub chest: usize,
    /// Bones strictly between chest and head, from the chest up.
    pub neck: Vec<usize>,
    /// The head.
    pub head: usize,
    /// The left limbs.
    pub left: SideLimbs,
    /// The right limbs.
    pub right: SideLimbs,
    /// The up direction used, in component space (the world's up for glTF; the axis closest to
    /// feet→head for BVH).
    pub up: Vec3,
    /// How the roles were found.
    pub method: Method,
    roles: Vec<Option<Role>>,
    reasons: Vec<String>,
}

impl Humanoid {
    /// The limbs of `side`.
    pub fn side(&self, side: Side) -> &SideLimbs {
        match side {
            Side::Left => &self.left,
            Side::Right => &self.right,
        }
    }

    /// The role of `bone`, if it has one.
    pub fn role(&self, bone: usize) -> Option<Role> {
        self.roles.get(bone).copied().flatten()
    }

    /// The bone playing `role`, if any (the first, for [`Role::HandPart`]).
    pub fn bone(&self, role: Role) -> Option<usize> {
        self.roles.iter().position(|r| *r == Some(role))
    }

    /// Why `bone` has its role, or why it has none.
    pub fn reason(&self, bone: usize) -> &str {
        self.reasons.get(bone).map_or("", String::as_str)
    }

    /// Every bone's role (`None`: no role), indexed by bone.
    pub fn roles(&self) -> &[Option<Role>] {
        &self.roles
    }

    /// The torso chain from hips to head: hips, spine…, chest, neck…, head.
    pub fn torso(&self) -> Vec<usize> {
        let mut t = vec![self.hips];
        t.extend(&self.spine);
        t.push(self.chest);
        t.extend(&self.neck);
        t.push(self.head);
        t
    }

    /// The pelvis of a pose (`cs`, component space): the midpoint of the two hip joints.
    pub fn pelvis(&self, cs: &[Transform]) -> Vec3 {
        (cs[self.left.thigh].translation + cs[self.right.thigh].translation) * 0.5
    }

    /// The base of the neck: the first neck bone whose joint is away from the chest's joint
    /// (CMU's `Neck` sits on the chest joint, its `Neck1` at the neck's base), or the head
    /// when there is no such neck bone. `positions` are component-space joint positions.
    pub fn neck_base(&self, positions: &[Vec3]) -> usize {
        let chest = positions[self.chest];
        let head = positions[self.head];
        let tol = 0.05 * (head - chest).length();
        self.neck
            .iter()
            .copied()
            .find(|&b| (positions[b] - chest).length() > tol)
            .unwrap_or(self.head)
    }

    /// A table of every bone, its role and the reason, one line per bone.
    pub fn describe(&self, skeleton: &Skeleton) -> String {
        let mut out = String::new();
        for (b, name) in skeleton.names().iter().enumerate() {
            let role = self
                .role(b)
                .map_or_else(|| "-".to_string(), |r| r.to_string());
            out.push_str(&format!(
                "{b:4} {:<28} {:<22} {}\n",
                display_name(name),
                role,
                self.reason(b)
            ));
        }
        out
    }
}

/// Why recognition failed, before it is told which skeleton it was.
#[derive(Clone, Debug, PartialEq)]
enum Refusal {
    /// A part of the body was found neither by names nor by structure.
    Missing(String),
    /// The hips→head direction is this many degrees from up (a quadruped's spine is
    /// horizontal).
    NotUpright(f32),
    /// What would be the hands hang at or below the knees (forelegs, not arms).
    ForelimbsReachGround,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(what) => write!(f, "no {what} found, by names or by structure"),
            Self::NotUpright(degrees) => write!(
                f,
                "the body is not upright in its rest pose (hips to head is {degrees:.0} degrees \
                 from up): a quadruped?"
            ),
            Self::ForelimbsReachGround => write!(
                f,
                "the forelimbs reach the ground in the rest pose (legs, not arms): a quadruped?"
            ),
        }
    }
}

/// A skeleton as errors name it: its size and top joint (an asset does not know its file).
pub(crate) fn skeleton_label(skeleton: &Skeleton) -> String {
    format!(
        "skeleton of {} bones (top joint '{}')",
        skeleton.len(),
        display_name(&skeleton.names()[0])
    )
}

/// Recognises the humanoid roles of `asset`'s skeleton in its world (see the module
/// documentation); a skeleton that is not a humanoid is an [`Error::NotHumanoid`] saying why.
pub fn recognise(asset: &Asset) -> Result<Humanoid> {
    recognise_skeleton(&asset.skeleton, &asset.frame).map_err(|why| Error::NotHumanoid {
        what: skeleton_label(&asset.skeleton),
        why: why.to_string(),
    })
}

/// Per bone, whether it deforms the mesh: it or a bone below it is skinned (or carries a mesh
/// node), per `frame`; every bone where the file does not say.
pub(crate) fn deforming(tree: &Tree, frame: &AssetFrame) -> Vec<bool> {
    match &frame.skinned {
        Some(skinned) => {
            let mut any = skinned.clone();
            for b in (0..any.len()).rev() {
                if let (true, Some(p)) = (any[b], tree.parent[b]) {
                    any[p] = true;
                }
            }
            any
        }
        None => vec![true; tree.parent.len()],
    }
}

fn recognise_skeleton(
    skeleton: &Skeleton,
    frame: &AssetFrame,
) -> std::result::Result<Humanoid, Refusal> {
    let pos: Vec<Vec3> = skeleton
        .rest_component()
        .iter()
        .map(|t| t.translation)
        .collect();
    let tree = Tree::new(skeleton);
    let infos: Vec<NameInfo> = skeleton.names().iter().map(|s| parse_name(s)).collect();
    let deforms = deforming(&tree, frame);
    let ctx = Ctx {
        skeleton,
        pos: &pos,
        tree: &tree,
        infos: &infos,
        deforms: &deforms,
        world_up: frame.up_in_component(),
        frame,
    };
    let parts = match by_names(&ctx) {
        Ok(p) => p,
        Err(named) => match by_structure(&ctx) {
            Ok(p) => p,
            Err(Refusal::Missing(_)) => return Err(named),
            Err(e) => return Err(e),
        },
    };
    validate(&ctx, &parts)?;
    Ok(finish(&ctx, parts))
}

/// A bone name for messages: `<unnamed>` for the empty name.
pub(crate) fn display_name(name: &str) -> &str {
    if name.is_empty() {
        "<unnamed>"
    } else {
        name
    }
}

/// What both recognition methods read.
struct Ctx<'a> {
    skeleton: &'a Skeleton,
    /// Rest joint positions in component space.
    pos: &'a [Vec3],
    tree: &'a Tree,
    infos: &'a [NameInfo],
    /// Whether each bone (or a descendant) carries skin weights (true when unknown).
    deforms: &'a [bool],
    /// The world's up in component space, where the file fixes it.
    world_up: Option<Vec3>,
    frame: &'a AssetFrame,
}

impl Ctx<'_> {
    fn name(&self, b: usize) -> &str {
        display_name(&self.skeleton.names()[b])
    }

    /// False for bones whose name excludes them from every role (IK, twist, helpers, ends).
    fn usable(&self, b: usize) -> bool {
        self.infos[b].excluded.is_none()
    }

    /// The diagonal of the rest pose's bounding box.
    fn extent(&self) -> f32 {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in self.pos {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        (hi - lo).length().max(1e-6)
    }
}

/// The intermediate result of a recognition method.
struct Parts {
    hips: usize,
    chest: usize,
    head: usize,
    sides: [SideLimbs; 2],
    up: Vec3,
    method: Method,
    /// Reasons for the limb and head bones, by bone.
    reasons: Vec<(usize, String)>,
}

/// Hips (where the legs and the head meet) and chest (where the arms leave the hips→head path).
fn torso(
    ctx: &Ctx,
    left: &SideLimbs,
    right: &SideLimbs,
    head: usize,
) -> std::result::Result<(usize, usize), Refusal> {
    let tree = ctx.tree;
    let missing = |what: &str| Refusal::Missing(what.into());
    let mut hips = tree
        .lca(left.thigh, right.thigh)
        .ok_or_else(|| missing("hips joining the two legs"))?;
    if !tree.is_ancestor(hips, head) {
        hips = tree
            .lca(hips, head)
            .ok_or_else(|| missing("hips joining the legs and the head"))?;
    }
    if hips == left.thigh || hips == right.thigh || hips == head {
        return Err(missing("hips distinct from the legs and the head"));
    }
    let arm_l = left.clavicle.unwrap_or(left.upper_arm);
    let arm_r = right.clavicle.unwrap_or(right.upper_arm);
    let chest = tree
        .ancestors(head)
        .skip(1)
        .take_while(|&b| b != hips)
        .chain(std::iter::once(hips))
        .find(|&b| tree.is_ancestor(b, arm_l) && tree.is_ancestor(b, arm_r))
        .ok_or_else(|| missing("chest joining the two arms"))?;
    Ok((hips, chest))
}

/// The coordinate axis (±X, ±Y, ±Z) closest to `v`.
fn snap_axis(v: Vec3) -> Vec3 {
    let a = v.abs();
    if a.x >= a.y && a.x >= a.z {
        Vec3::X * v.x.signum()
    } else if a.y >= a.z {
        Vec3::Y * v.y.signum()
    } else {
        Vec3::Z * v.z.signum()
    }
}

// ---------------------------------------------------------------------------------------------
// Validation and the final table

fn validate(ctx: &Ctx, parts: &Parts) -> std::result::Result<(), Refusal> {
    let pos = ctx.pos;
    let up = parts.up;
    let [l, r] = &parts.sides;
    let pelvis = (pos[l.thigh] + pos[r.thigh]) * 0.5;
    let torso = pos[parts.head] - pelvis;
    let degrees = torso
        .try_normalize()
        .map_or(180.0, |t| t.dot(up).clamp(-1.0, 1.0).acos().to_degrees());
    if degrees > 50.0 {
        return Err(Refusal::NotUpright(degrees));
    }
    for s in [l, r] {
        if pos[s.hand].dot(up) <= pos[s.shin].dot(up) {
            return Err(Refusal::ForelimbsReachGround);
        }
    }
    Ok(())
}

fn finish(ctx: &Ctx, parts: Parts) -> Humanoid {
    let n = ctx.skeleton.len();
    let tree = ctx.tree;
    let mut roles: Vec<Option<Role>> = vec![None; n];
    let mut reasons: Vec<String> = vec![String::new(); n];
    let Parts {
        hips,
        chest,
        head,
        sides,
        up,
        method,
        reasons: limb_reasons,
    } = parts;
    let [left, right] = sides;
    for (b, why) in limb_reasons {
        reasons[b] = why;
    }
    let spine: Vec<usize> = tree
        .between(hips, chest)
        .into_iter()
        .filter(|&b| ctx.usable(b))
        .collect();
    let neck: Vec<usize> = if chest == head {
        Vec::new()
    } else {
        tree.between(chest, head)
            .into_iter()
            .filter(|&b| ctx.usable(b))
            .collect()
    };
    roles[hips] = Some(Role::Hips);
    reasons[hips] = format!(
        "structure: where the two legs and the head meet{}",
        name_agrees(ctx, hips, Kind::Hips)
    );
    roles[chest] = Some(Role::Chest);
    reasons[chest] = format!(
        "structure: where the arms leave the spine{}",
        name_agrees(ctx, chest, Kind::Spine)
    );
    for (i, &b) in spine.iter().enumerate() {
        roles[b] = Some(Role::Spine(i as u8));
        reasons[b] = format!(
            "structure: between hips and chest{}",
            name_agrees(ctx, b, Kind::Spine)
        );
    }
    for (i, &b) in neck.iter().enumerate() {
        roles[b] = Some(Role::Neck(i as u8));
        reasons[b] = format!(
            "structure: between chest and head{}",
            name_agrees(ctx, b, Kind::Neck)
        );
    }
    roles[head] = Some(Role::Head);
    for (side, l) in [(Side::Left, &left), (Side::Right, &right)] {
        if let Some(c) = l.clavicle {
            roles[c] = Some(Role::Clavicle(side));
        }
        roles[l.upper_arm] = Some(Role::UpperArm(side));
        roles[l.forearm] = Some(Role::Forearm(side));
        roles[l.hand] = Some(Role::Hand(side));
        for &h in &l.hand_parts {
            roles[h] = Some(Role::HandPart(side));
        }
        for (di, digit) in Digit::ALL.into_iter().enumerate() {
            for (i, &b) in l.fingers[di].iter().enumerate() {
                roles[b] = Some(Role::Finger(side, digit, i as u8));
            }
        }
        roles[l.thigh] = Some(Role::Thigh(side));
        roles[l.shin] = Some(Role::Shin(side));
        roles[l.foot] = Some(Role::Foot(side));
        if let Some(t) = l.toes {
            roles[t] = Some(Role::Toes(side));
        }
    }
    // Why the others have no role.
    for b in 0..n {
        if roles[b].is_some() {
            continue;
        }
        reasons[b] = if let Some(why) = ctx.infos[b].excluded {
            format!("no role: {why}")
        } else if !ctx.deforms[b] {
            "no role: deforms nothing (no skin weights or rigid mesh in it or below it)".to_string()
        } else if tree.is_ancestor(b, hips) {
            "no role: above the hips (root / armature bone)".to_string()
        } else {
            // The nearest ancestor and descendant with roles.
            let above = tree.ancestors(b).skip(1).find(|&a| roles[a].is_some());
            let below = (0..n).find(|&d| roles[d].is_some() && tree.is_ancestor(b, d));
            match (above, below) {
                (Some(a), Some(d)) => format!(
                    "no role: extra bone between {} and {} (composed into the path)",
                    roles[a].map_or(String::new(), |r| r.to_string()),
                    roles[d].map_or(String::new(), |r| r.to_string())
                ),
                (Some(a), None) => format!(
                    "no role: below the {} (follows it)",
                    roles[a].map_or(String::new(), |r| r.to_string())
                ),
                _ => "no role: not part of the canonical humanoid".to_string(),
            }
        };
    }
    Humanoid {
        hips,
        spine,
        chest,
        neck,
        head,
        left,
        right,
        up,
        method,
        roles,
        reasons,
    }
}

fn name_agrees(ctx: &Ctx, b: usize, kind: Kind) -> String {
    if ctx.infos[b].kind == Some(kind) {
        format!("; name '{}' agrees", ctx.name(b))
    } else {
        String::new()
    }
}
