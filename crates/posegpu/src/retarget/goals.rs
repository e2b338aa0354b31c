//! IK after retargeting: a target's two-bone chains (each leg, and the left arm reaching for a
//! goal the right hand carries), the way each bends, and the IK table the IK stage reads
//! (`shaders/ik.wgsl`, CPU twin `src/cpu/ik.rs`; the per-instance weights are
//! [`crate::IkWeights`]). A plan makes one goal per
//! chain from the source's pose (`RetargetPlan`'s goal records). Spec: `docs/pose-math.md`,
//! "IK after retargeting".

use glam::Vec3;

use super::frame::Character;
use super::humanoid::{Side, SideLimbs};
use super::tree::Tree;
use crate::layout::{
    Entry, IkChain, IkHeader, IK_ATTACHED, IK_CARRIED, IK_HAND, IK_MAX_CHAINS, IK_NO_BONE, IK_TORSO,
};
use crate::model::Skeleton;
use crate::Transform;

/// The most bones from a skeleton's root to a chain's end (or to a goal's bone) the IK table
/// takes; a deeper chain is left out (it keeps its pose).
pub const MAX_IK_DEPTH: usize = 64;

/// The most source bones a goal record may read (a hand's goal reads from one hand up to
/// where the arms meet and down to the other).
pub(crate) const MAX_GOAL_PATH: usize = 16;

/// What one chain is, before it is laid out in the IK table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ChainDef {
    pub root: usize,
    pub mid: usize,
    pub end: usize,
    /// The bone the goal is relative to (the right hand, for the left arm's).
    pub goal_parent: Option<usize>,
    /// The way `mid` bends, in `root`'s rest local frame.
    pub bend: Vec3,
    pub hand: bool,
    /// An IK-style leg: `end` is the foot bone the shin should reach, `tip` the point the shin
    /// carries to it (in `mid`'s rest frame).
    pub carried: Option<Vec3>,
    /// A carried leg whose foot stays on the shin ([`super::feet`]): the IK stage moves the
    /// foot to the carried point.
    pub attached: bool,
    /// Up, the end's rest height along it, and the hip height (component space).
    pub up: Vec3,
    pub rest_height: f32,
    pub hip_height: f32,
    /// A leg's toe bone, where it hangs right below the foot: the IK stage turns the foot
    /// about the ankle to bring the toe to its goal's height.
    pub toe: Option<usize>,
    /// The torso: `root` is the spine bone below the chest (`mid`), `end` the neck's base,
    /// `goal_parent` the hips and this the pelvis (the hip joints' midpoint) in the hips' rest
    /// frame. The IK stage turns `root` so that the pelvis → neck-base line points where the
    /// source's does, the chest keeping its turn.
    pub torso: Option<Vec3>,
}

/// A leg's goal is in full contact up to this lift above its rest height (in hip heights), and
/// from [`CONTACT_HI`] on moves only its height: the ankle lift of a planted foot whose heel
/// rises stays in contact.
pub(crate) const CONTACT_LO: f32 = 0.03;
/// See [`CONTACT_LO`].
pub(crate) const CONTACT_HI: f32 = 0.08;

/// How far from its goal's height a swinging foot may stay, in hip heights: two thirds of the
/// heights aim ([`crate::retarget::quality::AIM_HEIGHT`]), so that a leg whose proportions
/// differ from the source's keeps its knee angle rather than bending to match the ankle's
/// height exactly.
pub(crate) const SWING_SLACK: f32 = 0.02;

/// The most the IK stage lowers the pelvis so that the legs reach their goals, in hip heights
/// (a target whose legs are short for its hip height, or a source stride longer than the
/// target's legs reach).
pub(crate) const MAX_PELVIS_DROP: f32 = 0.1;

/// The bone the IK stage lowers where the legs cannot reach their goals: the hips, when both
/// legs are chains whose thighs hang below them; with the most it may be lowered (component
/// units). An IK-style leg, whose foot hangs elsewhere, is not lowered with them: tried on
/// Mech_Stan, its feet came within the heights aim but its pelvis went 4 to 8% of hip height
/// below the source's and its legs bent further from the source's directions.
pub(crate) fn pelvis(
    skeleton: &Skeleton,
    character: &Character,
    chains: &[ChainDef],
) -> Option<(usize, f32)> {
    let tree = Tree::new(skeleton);
    let hips = character.humanoid.hips;
    let legs: Vec<&ChainDef> = chains
        .iter()
        .filter(|c| !c.hand && c.torso.is_none())
        .collect();
    let all = legs.len() == 2
        && legs
            .iter()
            .all(|c| c.carried.is_none() && c.root != hips && tree.is_ancestor(hips, c.root));
    all.then_some((hips, MAX_PELVIS_DROP * character.body.hip_height))
}

/// The chains of `character` (whose skeleton is `skeleton`): left leg, right leg, left arm,
/// each only where its three bones descend from one another within [`MAX_IK_DEPTH`]; a leg
/// whose foot hangs elsewhere (an IK-style rig) is a carried chain: its end is the point the
/// shin carries, and where no sample gives it a goal it reaches the foot bone where the pose
/// put it.
pub(crate) fn chains(skeleton: &Skeleton, character: &Character) -> Vec<ChainDef> {
    let tree = Tree::new(skeleton);
    let cs = skeleton.rest_component();
    let (h, body) = (&character.humanoid, &character.body);
    let chain = |root: usize, mid: usize, end: usize, goal_parent: Option<usize>, hand: bool| {
        // An IK-style foot (not below its shin) is reached by the point the shin carries.
        let carried = (!hand && !tree.is_ancestor(mid, end))
            .then(|| Transform::relative(&cs[end], &cs[mid]).translation);
        let goal_parent = if carried.is_some() {
            Some(end)
        } else {
            goal_parent
        };
        let ok = root != mid
            && mid != end
            && tree.is_ancestor(root, mid)
            && (carried.is_some() || tree.is_ancestor(mid, end))
            && tree.depth[end] < MAX_IK_DEPTH
            && goal_parent
                .is_none_or(|g| tree.depth[g] < MAX_IK_DEPTH && !tree.is_ancestor(root, g));
        // The bend: knees forward, elbows back, square to the rest line root → end. The IK
        // stage bends the mid joint the way the pose bends it, and this way where the pose
        // holds the chain straight.
        let (a, c) = (cs[root].translation, cs[end].translation);
        let line = (c - a).normalize_or_zero();
        let way = if hand { -body.forward } else { body.forward };
        let dir = (way - line * way.dot(line)).normalize_or(way);
        ok.then(|| ChainDef {
            root,
            mid,
            end,
            goal_parent,
            bend: cs[root].rotation.inverse() * dir,
            hand,
            carried,
            attached: false,
            up: body.up,
            rest_height: c.dot(body.up),
            hip_height: body.hip_height,
            toe: None,
            torso: None,
        })
    };
    let (l, r) = (h.side(Side::Left), h.side(Side::Right));
    // A leg's toe: its toes bone where it hangs right below the foot (not on IK-style legs).
    let leg = |s: &SideLimbs| {
        chain(s.thigh, s.shin, s.foot, None, false).map(|mut c| {
            c.toe = s
                .toes
                .filter(|&t| c.carried.is_none() && tree.parent[t] == Some(s.foot));
            c
        })
    };
    [
        torso(&tree, &cs, character),
        leg(l),
        leg(r),
        chain(l.upper_arm, l.forearm, l.hand, Some(r.hand), true),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The torso chain ([`ChainDef::torso`]), where a spine bone carries the chest and the neck's
/// base hangs below the chest, within [`MAX_IK_DEPTH`].
fn torso(tree: &Tree, cs: &[Transform], character: &Character) -> Option<ChainDef> {
    let (h, body) = (&character.humanoid, &character.body);
    let root = tree.parent[h.chest].filter(|r| h.spine.contains(r))?;
    let pos: Vec<Vec3> = cs.iter().map(|t| t.translation).collect();
    let end = h.neck_base(&pos);
    let ok = end != h.chest && tree.is_ancestor(h.chest, end) && tree.depth[end] < MAX_IK_DEPTH;
    let pelvis = Transform {
        translation: h.pelvis(cs),
        ..Transform::IDENTITY
    };
    ok.then(|| ChainDef {
        root,
        mid: h.chest,
        end,
        goal_parent: Some(h.hips),
        bend: Vec3::ZERO,
        hand: false,
        carried: None,
        attached: false,
        up: body.up,
        rest_height: 0.0,
        hip_height: body.hip_height,
        toe: None,
        torso: Some(Transform::relative(&pelvis, &cs[h.hips]).translation),
    })
}

/// The IK table of `chains` and `pelvis` (layout: [`IkHeader`], [`IkChain`]).
pub(crate) fn table(
    skeleton: &Skeleton,
    chains: &[ChainDef],
    pelvis: Option<(usize, f32)>,
) -> Vec<Entry> {
    let tree = Tree::new(skeleton);
    let down =
        |bone: usize| -> Vec<u32> { tree.top_down(bone).into_iter().map(|b| b as u32).collect() };
    debug_assert!(chains.len() <= IK_MAX_CHAINS as usize);
    let header = (size_of::<IkHeader>() + chains.len() * size_of::<IkChain>()) / size_of::<Entry>();
    // The pelvis's parent's path first, then each chain's.
    let pelvis_path = pelvis
        .and_then(|(p, _)| tree.parent[p])
        .map(down)
        .unwrap_or_default();
    let mut paths: Vec<u32> = pelvis_path.clone();
    let mut records = Vec::with_capacity(chains.len());
    for c in chains {
        let path = down(if c.carried.is_some() { c.mid } else { c.end });
        let goal_path = c.goal_parent.map(down).unwrap_or_default();
        let start = (header * 4 + paths.len()) as u32;
        paths.extend(&path);
        paths.extend(&goal_path);
        records.push(IkChain {
            root: c.root as u32,
            mid: c.mid as u32,
            end: c.end as u32,
            goal_parent: c.goal_parent.map_or(IK_NO_BONE, |g| g as u32),
            bend: c.bend.to_array(),
            flags: if c.hand { IK_HAND } else { 0 }
                | if c.carried.is_some() { IK_CARRIED } else { 0 }
                | if c.torso.is_some() { IK_TORSO } else { 0 }
                | if c.attached { IK_ATTACHED } else { 0 },
            path_start: start,
            path_len: path.len() as u32,
            goal_path_start: start + path.len() as u32,
            goal_path_len: goal_path.len() as u32,
            up: c.up.to_array(),
            rest_height: c.rest_height,
            contact_lo: CONTACT_LO * c.hip_height,
            contact_hi: CONTACT_HI * c.hip_height,
            toe: c.toe.map_or(IK_NO_BONE, |t| t as u32),
            slack: SWING_SLACK * c.hip_height,
            tip: c.carried.or(c.torso).unwrap_or(Vec3::ZERO).to_array(),
            _pad2: 0,
        });
    }
    let head = IkHeader {
        chain_count: chains.len() as u32,
        pelvis: pelvis.map_or(IK_NO_BONE, |(p, _)| p as u32),
        pelvis_path_start: (header * 4) as u32,
        pelvis_path_len: pelvis_path.len() as u32,
        max_drop: pelvis.map_or(0.0, |(_, d)| d),
        attached: chains.iter().filter(|c| c.attached).count() as u32,
        ..IkHeader::default()
    };
    let mut out: Vec<Entry> = bytemuck::cast_slice(&[head]).to_vec();
    out.extend_from_slice(bytemuck::cast_slice(&records));
    out.extend(paths.chunks(4).map(|c| {
        let mut word = [0; 4];
        word[..c.len()].copy_from_slice(c);
        word
    }));
    out
}
