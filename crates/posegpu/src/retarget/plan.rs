//! The retarget plan of one (source, target) pair of characters: per target bone, a fixed-size
//! record built once (`BonePlan` in `src/layout.rs`) that the sampling stage runs on the sampled
//! source locals, independently for every bone (no source hierarchy pass). The formulas (`G`,
//! `Q_b`, `pre`/`post`, chain shares, swings, driven translations, rest alignment) are those of
//! `docs/pose-math.md`, "Retargeting between characters"; the names below are the spec's.

mod align;
mod apply;
mod correspond;
mod goal;
mod mirror;

use std::collections::BTreeMap;
use std::fmt::Write;

use glam::{Quat, Vec3};

pub(crate) use apply::apply_bone;

use super::frame::Character;
use super::goals::{self, ChainDef, IkWeights};
use super::humanoid::{display_name, skeleton_label, Role};
use super::tree::Tree;
use crate::error::{Error, Result};
use crate::layout::{
    BonePlan, Entry, PATH_INVERSE, PLAN_CHAIN, PLAN_DRIVEN, PLAN_MAPPED, PLAN_NO_GOAL,
    PLAN_REFERENCE, PLAN_SEGMENT_END,
};
use crate::math::{safe_recip, Transform};
use crate::model::{component_space, Asset, Clip, RestPose, Skeleton};
use mirror::Mirror;

/// The most source bones one target bone's path may read. A longer path (many helper joints
/// between two mapped bones, a deep IK-style root) is an [`Error::RetargetPath`]: a `bone_map`
/// entry must then pair an intermediate bone. A record may also read two chord sub-paths of at
/// most this length (its own swing and its parent's); a longer swing is left out.
pub const MAX_PATH: usize = 8;

/// Choices for [`RetargetPlan::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOptions {
    /// Rest-pose alignment (UE5 IK Retargeter's retarget pose), on by default: before the
    /// offsets are taken, the target's mapped bones turn so that each points where the
    /// source's does at rest (an A-pose target playing a T-pose source puts its arms where the
    /// source's are). Off: UE's RemapTracksToNewSkeleton offsets between the rest poses as
    /// they are.
    pub align_rest: bool,
    /// Also pair bones without a role whose names are equal on both sides and that carry no
    /// role below them (IK targets, poles and slots of two skeletons from one tool). On by
    /// default.
    pub match_names: bool,
    /// Mapped bones whose path is their counterpart alone also take that bone's translation
    /// change from its rest, turned into the target's frame and scaled by `k` (KayKit sways
    /// its hip joints so; motion capture has no such channels). On by default; off, such bones
    /// keep the target's reference translation.
    pub translation_deltas: bool,
    /// Target bone → source bone, over every other pairing (a rig file's `bone_map`).
    pub bone_map: BTreeMap<String, String>,
    /// The pose both characters are measured from: their bind pose by default (rebuilt from
    /// the skin's inverse bind matrices), or their node transforms. Either way, unanimated
    /// source channels read the node transforms, and target bones that neither follow a source
    /// bone nor hold up one that does keep their node transforms.
    pub rest: RestPose,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            align_rest: true,
            match_names: true,
            translation_deltas: true,
            bone_map: BTreeMap::new(),
            rest: RestPose::Bind,
        }
    }
}

/// What a target bone does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoneKind {
    /// Follows a source bone.
    Mapped,
    /// Takes a share of its chain's rotation (an extra bone of a longer chain).
    ChainShare,
    /// Keeps its reference local pose.
    Reference,
}

impl BoneKind {
    /// `mapped`, `share` or `ref`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mapped => "mapped",
            Self::ChainShare => "share",
            Self::Reference => "ref",
        }
    }
}

/// How one target bone is driven, for reports (`posegpu info TARGET --against SOURCE`).
#[derive(Clone, Debug, PartialEq)]
pub struct BonePlanInfo {
    /// The counterpart source bone.
    pub source: Option<usize>,
    /// What the bone does.
    pub kind: BoneKind,
    /// The translation follows the source (a driven bone's position, or a translation delta).
    pub driven: bool,
    /// Why the bone has its counterpart, or none.
    pub reason: String,
    /// The source bones read (the path, then the bone's own swing chord), `true` where inverted.
    pub path: Vec<(usize, bool)>,
}

/// The retarget plan of one (source, target) pair (see the module documentation): built once,
/// applied per target bone by the sampling stage of both backends
/// ([`crate::LibraryBuilder::add_character_source`]), by [`RetargetPlan::apply`] to one pose,
/// and by [`super::bake_clip`] to a whole clip.
#[derive(Clone, Debug, PartialEq)]
pub struct RetargetPlan {
    records: Vec<BonePlan>,
    /// One goal record per IK chain of the target ([`goals::chains`]).
    goals: Vec<BonePlan>,
    ik_table: Vec<Entry>,
    paths: Vec<u32>,
    bones: Vec<BonePlanInfo>,
    g: Quat,
    k: f32,
    reference: Vec<Transform>,
    /// The source's reflections, which its clips must keep.
    source_mirror: Mirror,
    rest: RestPose,
    /// The locals each side was measured in (source, target): its bind pose or node
    /// transforms, IK-style feet where the shins carry them.
    measured: [Vec<Transform>; 2],
    source: Character,
    target: Character,
    source_names: Vec<String>,
    target_names: Vec<String>,
}

impl RetargetPlan {
    /// The plan of `source`'s clips playing on `target`: both recognised as humanoids, their
    /// body frames measured (a floating BVH rest pose takes its floor from the asset's first
    /// clip), bones paired by role, chain and name, rest poses aligned (per `options`), and
    /// one record per target bone. A skeleton that is not a humanoid is an
    /// [`Error::NotHumanoid`]; a bone that would read more than [`MAX_PATH`] source bones an
    /// [`Error::RetargetPath`]. Mirrored sides (negative scales) are read and written as their
    /// unmirrored twins (`docs/pose-math.md`, "Mirrored characters in retarget plans").
    pub fn new(source: &Asset, target: &Asset, options: &PlanOptions) -> Result<Self> {
        mirror::check_path_bones(source.skeleton.len())?;
        let nodes = &target.skeleton;
        let side = |asset, which: &str| {
            Character::measure_at(asset, options.rest).map_err(|e| match e {
                Error::NotHumanoid { what, why } => Error::NotHumanoid {
                    what: format!("{which} {what}"),
                    why,
                },
                e => e,
            })
        };
        let ((s_char, source), (t_char, target)) =
            (side(source, "source")?, side(target, "target")?);
        let (source, target) = (source.as_ref(), target.as_ref());
        // The plan is built between the unmirrored twins.
        let (s_mirror, t_mirror) = (Mirror::new(&source.skeleton), Mirror::new(&target.skeleton));
        let (s_twin, t_twin) = (
            s_mirror.twin(&source.skeleton)?,
            t_mirror.twin(&target.skeleton)?,
        );
        let s = PlanSide::new(&s_twin, &s_char, &s_mirror);
        let t = PlanSide::new(&t_twin, &t_char, &t_mirror);
        let chains = goals::chains(&target.skeleton, &t_char);
        let mut built = Builder::new(&s, &t, options)?.build(&chains)?;
        // Bones that neither follow the source nor hold up a bone that does keep their node
        // transforms (what a viewer shows for a bone no clip moves).
        // One pass children first (parents precede children): whether a moving bone lies below.
        let mut moves_below = vec![false; nodes.len()];
        for b in (0..nodes.len()).rev() {
            if built.bones[b].kind == BoneKind::Reference && !moves_below[b] {
                built.records[b] = reference_record(&nodes.rest()[b]);
            }
            if let Some(p) = nodes.parent(b) {
                moves_below[p] |= moves_below[b] || built.bones[b].kind != BoneKind::Reference;
            }
        }
        Ok(Self {
            records: built.records,
            goals: built.goals,
            ik_table: goals::table(
                &target.skeleton,
                &chains,
                goals::pelvis(&target.skeleton, &t_char, &chains),
            ),
            paths: built.paths,
            bones: built.bones,
            g: built.g,
            k: built.k,
            reference: (0..built.reference.len())
                .map(|b| t_mirror.twin_local(b, &built.reference[b]))
                .collect(),
            source_mirror: s_mirror,
            rest: options.rest,
            measured: [
                source.skeleton.rest().to_vec(),
                target.skeleton.rest().to_vec(),
            ],
            source: s_char,
            target: t_char,
            source_names: source.skeleton.names().to_vec(),
            target_names: target.skeleton.names().to_vec(),
        })
    }

    /// The target's local pose from one pose of the source (local transforms, one per source
    /// bone), as the sampling stage computes it. Source bones past the end read the identity.
    pub fn apply(&self, source_locals: &[Transform]) -> Vec<Transform> {
        self.records
            .iter()
            .map(|r| self.run(r, source_locals))
            .collect()
    }

    /// One record on one source pose (source bones past the end read the identity).
    fn run(&self, r: &BonePlan, source_locals: &[Transform]) -> Transform {
        apply_bone(
            r,
            |i| self.paths.get(i).copied().unwrap_or(0),
            |bone, _| {
                source_locals
                    .get(bone)
                    .copied()
                    .unwrap_or(Transform::IDENTITY)
            },
        )
    }

    /// The rotation from the source's body frame to the target's (`G` in `docs/pose-math.md`).
    pub fn frame_rotation(&self) -> Quat {
        self.g
    }

    /// The ratio of hip heights, target over source, that scales the source's motion (`k`).
    pub fn hip_height_ratio(&self) -> f32 {
        self.k
    }

    /// The target's reference locals the offsets were taken against: its rest pose, aligned
    /// to the source's where [`PlanOptions::align_rest`] is on.
    pub fn reference(&self) -> &[Transform] {
        &self.reference
    }

    /// The pose both characters were measured from ([`PlanOptions::rest`]).
    pub fn rest_pose(&self) -> RestPose {
        self.rest
    }

    /// The locals the source was measured in: the pose [`RetargetPlan::rest_pose`] names,
    /// IK-style feet where their shins carry them.
    pub fn measured_source(&self) -> &[Transform] {
        &self.measured[0]
    }

    /// The locals the target was measured in (as [`RetargetPlan::measured_source`]).
    pub fn measured_target(&self) -> &[Transform] {
        &self.measured[1]
    }

    /// Per target bone: its counterpart, kind, reason and path.
    pub fn bones(&self) -> &[BonePlanInfo] {
        &self.bones
    }

    /// The source character: humanoid roles and body frame.
    pub fn source(&self) -> &Character {
        &self.source
    }

    /// The target character.
    pub fn target(&self) -> &Character {
        &self.target
    }

    /// An [`Error::MirroredRetarget`] where `clip` (of the source) changes the reflection of a
    /// source bone that carries others from the one the plan was built with.
    pub fn check_clip(&self, clip: &Clip) -> Result<()> {
        self.source_mirror.check_clip(clip, &self.source_names)
    }

    /// An [`Error::PlanMismatch`] unless `source` and `target` have the bones (names, in
    /// order) this plan was built for; an [`Error::MirroredRetarget`] where `source`'s node
    /// transforms reflect a bone that carries others otherwise than the plan's reference.
    pub fn check(&self, source: &Skeleton, target: &Skeleton) -> Result<()> {
        for (which, names, skeleton) in [
            ("source", &self.source_names, source),
            ("target", &self.target_names, target),
        ] {
            if names.as_slice() != skeleton.names() {
                return Err(Error::PlanMismatch {
                    what: format!(
                        "the plan was built for a {which} of {} bones (top joint '{}'), not this \
                         {}",
                        names.len(),
                        names.first().map_or("", |n| display_name(n)),
                        skeleton_label(skeleton)
                    ),
                });
            }
        }
        self.source_mirror.check_locals(
            source.rest(),
            source.names(),
            "the source's node transforms",
        )
    }

    /// One line per target bone: its counterpart, kind (`mapped`, `share`, `ref`; `pos` where
    /// the translation follows the source), why, and the source bones it reads
    /// (`posegpu info TARGET --against SOURCE`).
    pub fn describe(&self, source: &Skeleton, target: &Skeleton) -> String {
        let name = |sk: &Skeleton, b: usize| {
            sk.names()
                .get(b)
                .map_or("?".to_string(), |n| display_name(n).to_string())
        };
        let g = self.g.to_array().map(|v| (v * 1e4).round() / 1e4);
        let mut out = format!("G = {g:?}, k = {:.4}\n", self.k);
        for (b, i) in self.bones.iter().enumerate() {
            let src = i
                .source
                .map_or_else(|| "-".to_string(), |a| name(source, a));
            let path: Vec<String> = i
                .path
                .iter()
                .map(|&(x, inv)| format!("{}{}", if inv { "^-1 " } else { "" }, name(source, x)))
                .collect();
            let _ = writeln!(
                out,
                "{b:4} {:<26} <- {src:<26} {:<6}{} | {} | path [{}]",
                name(target, b),
                i.kind.name(),
                if i.driven { " pos" } else { "    " },
                i.reason,
                path.join(", ")
            );
        }
        out
    }

    /// The target's local pose from one pose of the source, then its IK chains run with
    /// `weights` toward the goals this source pose gives ("IK after retargeting"): what the
    /// IK stage computes for an instance that plays one of this source's clips alone.
    pub fn apply_with_ik(&self, source_locals: &[Transform], weights: IkWeights) -> Vec<Transform> {
        let mut out = self.apply(source_locals);
        let goals = self.all_goals(source_locals);
        let chains = goals.len() / 2;
        super::ik::solve(
            &self.ik_table,
            &mut out,
            weights,
            [1.0].into_iter(),
            |c, _, _, toe| goals[c + if toe { chains } else { 0 }],
        );
        out
    }

    /// Per IK chain of the target, its goal from one pose of the source, in the chain's goal
    /// frame (component space for a leg, the right hand's frame for the left arm); `None`
    /// where the plan has none.
    pub fn goals(&self, source_locals: &[Transform]) -> Vec<Option<Transform>> {
        self.run_goals(&self.goals[..self.goals.len() / 2], source_locals)
    }

    /// Every goal record (the chains' goals, then their toe goals) on one source pose, as the
    /// IK stage reads them; `None` where the plan has no such goal.
    pub(crate) fn all_goals(&self, source_locals: &[Transform]) -> Vec<Option<Transform>> {
        self.run_goals(&self.goals, source_locals)
    }

    /// `records` run on one source pose; `None` for a record without a goal.
    fn run_goals(
        &self,
        records: &[BonePlan],
        source_locals: &[Transform],
    ) -> Vec<Option<Transform>> {
        records
            .iter()
            .map(|r| (r.modes & PLAN_NO_GOAL == 0).then(|| self.run(r, source_locals)))
            .collect()
    }

    /// The goal records: one per IK chain of the target, then one toe goal per chain (path
    /// starts relative to [`RetargetPlan::paths`]).
    pub(crate) fn goal_records(&self) -> &[BonePlan] {
        &self.goals
    }

    /// The target's IK table (layout: `IkChain` in `src/layout.rs`).
    pub(crate) fn ik_table(&self) -> &[Entry] {
        &self.ik_table
    }

    /// The records, one per target bone (path starts relative to [`RetargetPlan::paths`]).
    pub(crate) fn records(&self) -> &[BonePlan] {
        &self.records
    }

    /// The path entries the records index: source bones, [`PATH_INVERSE`] where inverted.
    pub(crate) fn paths(&self) -> &[u32] {
        &self.paths
    }
}

/// One side of a pair as the builder reads it.
struct PlanSide<'a> {
    skeleton: &'a Skeleton,
    tree: Tree,
    character: &'a Character,
    /// Rest component-space transforms.
    cs: Vec<Transform>,
    /// Rest joint positions.
    pos: Vec<Vec3>,
    /// The reflections of the character `skeleton` is the unmirrored twin of.
    mirror: &'a Mirror,
}

impl<'a> PlanSide<'a> {
    fn new(skeleton: &'a Skeleton, character: &'a Character, mirror: &'a Mirror) -> Self {
        let cs = skeleton.rest_component();
        Self {
            mirror,
            skeleton,
            tree: Tree::new(skeleton),
            character,
            pos: cs.iter().map(|t| t.translation).collect(),
            cs,
        }
    }
}

/// What [`Builder::build`] makes.
struct Built {
    records: Vec<BonePlan>,
    goals: Vec<BonePlan>,
    paths: Vec<u32>,
    bones: Vec<BonePlanInfo>,
    g: Quat,
    k: f32,
    reference: Vec<Transform>,
}

/// The unmapped target bones strictly between two consecutive mapped bones of one chain
/// (`p` above, `c` below), which share the rotation of the segment.
struct Segment {
    inter: Vec<usize>,
    /// Per bone of `inter`: the normalized length from `p`'s joint to its joint.
    cum: Vec<f32>,
    /// The segment's direction in `p`'s frame for a limb segment (its bones share only the
    /// twist about it); zero for torso and finger chains (the whole rotation).
    axis: Vec3,
}

/// A swing: the source sub-path whose end gives the chord, and the chord's rest direction.
type Swing = (Vec<(usize, bool)>, Vec3);

/// Everything the records of one pair are built from.
struct Builder<'a> {
    s: &'a PlanSide<'a>,
    t: &'a PlanSide<'a>,
    options: &'a PlanOptions,
    g: Quat,
    k: f32,
    /// Counterpart source bone per target bone, and why.
    map: Vec<Option<usize>>,
    why: Vec<String>,
    /// The target's reference locals (aligned) and their component-space transforms.
    tref: Vec<Transform>,
    t_cs: Vec<Transform>,
    /// `Q_b` per mapped target bone.
    q: Vec<Option<Quat>>,
    /// The nearest mapped ancestor per target bone.
    mapped_anc: Vec<Option<usize>>,
    used_source: Vec<bool>,
    segment_of: Vec<Option<Segment>>,
    /// For a chain share: the mapped bone ending its segment and its place in it.
    share_of: Vec<Option<(usize, usize)>>,
    swing: Vec<Option<Swing>>,
}

impl<'a> Builder<'a> {
    fn new(s: &'a PlanSide<'a>, t: &'a PlanSide<'a>, options: &'a PlanOptions) -> Result<Self> {
        let (sf, tf) = (&s.character.body, &t.character.body);
        let g = sf.rotation_to(tf);
        let k = tf.hip_height / sf.hip_height;
        let nt = t.skeleton.len();
        let (map, why) = correspond::correspondence(s, t, options)?;
        let dirs = align::directions(s, t, &map);
        let mut tref = t.skeleton.rest().to_vec();
        if options.align_rest {
            align::align_rest(s, t, &mut tref, &map, &dirs, g);
        }
        let t_cs = component_space(t.skeleton.parents(), &tref);
        let q: Vec<Option<Quat>> = (0..nt)
            .map(|b| {
                map[b].map(|a| {
                    (s.cs[a].rotation.inverse() * g.inverse() * t_cs[b].rotation).normalize()
                })
            })
            .collect();
        let mapped_anc: Vec<Option<usize>> = (0..nt)
            .map(|b| t.tree.ancestors(b).skip(1).find(|&y| map[y].is_some()))
            .collect();
        let mut used_source = vec![false; s.skeleton.len()];
        for &a in map.iter().flatten() {
            used_source[a] = true;
        }
        let mut builder = Self {
            s,
            t,
            options,
            g,
            k,
            map,
            why,
            tref,
            t_cs,
            q,
            mapped_anc,
            used_source,
            segment_of: (0..nt).map(|_| None).collect(),
            share_of: vec![None; nt],
            swing: vec![None; nt],
        };
        builder.chain_segments();
        builder.swings(&dirs);
        Ok(builder)
    }

    /// Segments between consecutive mapped bones of a chain, whose unmapped bones share the
    /// segment's rotation ("Chains of different lengths").
    fn chain_segments(&mut self) {
        let (t, map) = (self.t, &self.map);
        let roles = t.character.humanoid.roles();
        for b in 0..t.skeleton.len() {
            let (Some(_), Some(p)) = (map[b], self.mapped_anc[b]) else {
                continue;
            };
            let inter = t.tree.between(p, b);
            let Some(twist_only) = chain_kind(roles[p], roles[b]) else {
                continue;
            };
            if inter.is_empty() {
                continue;
            }
            // A shared bone that carries other mapped bones would move them: it stays rigid.
            let carries_others = inter.iter().any(|&u| {
                (0..t.skeleton.len()).any(|d| {
                    map[d].is_some()
                        && d != b
                        && t.tree.is_ancestor(u, d)
                        && !t.tree.is_ancestor(b, d)
                })
            });
            if carries_others {
                continue;
            }
            let joints: Vec<Vec3> = std::iter::once(p)
                .chain(inter.iter().copied())
                .chain([b])
                .map(|x| self.t_cs[x].translation)
                .collect();
            let along: Vec<f32> = joints
                .windows(2)
                .scan(0.0, |acc, w| {
                    *acc += (w[1] - w[0]).length();
                    Some(*acc)
                })
                .collect();
            let total = along.last().copied().unwrap_or(0.0);
            if total <= 1e-8 {
                continue;
            }
            let axis = if twist_only {
                (self.t_cs[p].rotation.inverse()
                    * (self.t_cs[b].translation - self.t_cs[p].translation))
                    .try_normalize()
                    .unwrap_or(Vec3::ZERO)
            } else {
                Vec3::ZERO
            };
            for (i, &u) in inter.iter().enumerate() {
                self.share_of[u] = Some((b, i));
            }
            let cum = along[..inter.len()].iter().map(|l| l / total).collect();
            self.segment_of[b] = Some(Segment { inter, cum, axis });
        }
    }

    /// Swings ("Swings"): a mapped bone whose source segment to its direction child passes
    /// through extra source bones turns so that its direction follows the source's joints.
    fn swings(&mut self, dirs: &[align::Direction]) {
        let (s, t) = (self.s, self.t);
        for d in dirs {
            let Some(a) = self.map[d.b] else { continue };
            if d.b == t.character.humanoid.hips
                || !t.tree.is_ancestor(d.b, d.c)
                || !s.tree.is_ancestor(a, d.s_anchor)
            {
                continue;
            }
            let path = s.tree.path(a, d.s_anchor);
            if path.len() < 2 || path.iter().any(|&(_, inv)| inv) || path.len() > MAX_PATH {
                continue;
            }
            if let Some(chord) = self.rest_x(&path).translation.try_normalize() {
                self.swing[d.b] = Some((path, chord));
            }
        }
    }

    /// Path entries: source bone indices, with their mirror bits, [`PATH_INVERSE`] where the
    /// local is inverted.
    fn encode(&self, path: &[(usize, bool)]) -> Vec<u32> {
        let m = self.s.mirror;
        path.iter()
            .map(|&(x, inv)| x as u32 | m.path_bits(x) | if inv { PATH_INVERSE } else { 0 })
            .collect()
    }

    /// `X` at rest: the composition of the source's reference locals along `path`.
    fn rest_x(&self, path: &[(usize, bool)]) -> Transform {
        path.iter().fold(Transform::IDENTITY, |x, &(e, inv)| {
            let l = self.s.skeleton.rest()[e];
            Transform::compose(&if inv { l.inverse() } else { l }, &x)
        })
    }

    /// The source path a mapped target bone `c` reads: from its mapped ancestor's counterpart,
    /// or from the source's top when it has none.
    fn main_path(&self, c: usize) -> Vec<(usize, bool)> {
        let a = self.map[c].unwrap_or(0);
        match self.mapped_anc[c].and_then(|p| self.map[p]) {
            Some(a_p) => self.s.tree.path(a_p, a),
            None => from_top(&self.s.tree, a),
        }
    }

    fn build(self, chains: &[ChainDef]) -> Result<Built> {
        let nt = self.t.skeleton.len();
        let mut records = Vec::with_capacity(nt);
        let mut paths: Vec<u32> = Vec::new();
        let mut bones = Vec::with_capacity(nt);
        for b in 0..nt {
            let (record, info) = self.record(b, &mut paths)?;
            records.push(record);
            bones.push(info);
        }
        // One goal per chain, then one toe goal per chain.
        let mut goals: Vec<BonePlan> = chains.iter().map(|c| self.goal(c, &mut paths)).collect();
        goals.extend(chains.iter().map(|c| self.toe_goal(c, &mut paths)));
        Ok(Built {
            records,
            goals,
            paths,
            bones,
            g: self.g,
            k: self.k,
            reference: self.tref,
        })
    }

    /// Target bone `b`'s record and report; its path entries go to `paths`.
    fn record(&self, b: usize, paths: &mut Vec<u32>) -> Result<(BonePlan, BonePlanInfo)> {
        let mut rec = reference_record(&self.tref[b]);
        // The mapped bone whose path this record reads: itself, or its segment's end.
        let reader = match (self.map[b], self.share_of[b]) {
            (Some(_), _) => Some(b),
            (None, Some((c, _))) => Some(c),
            _ => None,
        };
        let Some(c) = reader else {
            let info = BonePlanInfo {
                source: None,
                kind: BoneKind::Reference,
                driven: false,
                reason: self.why[b].clone(),
                path: Vec::new(),
            };
            return Ok((rec, info));
        };
        let path = self.main_path(c);
        if path.len() > MAX_PATH {
            return Err(Error::RetargetPath {
                bone: display_name(&self.t.skeleton.names()[b]).to_string(),
                target: skeleton_label(self.t.skeleton),
                len: path.len(),
                limit: MAX_PATH,
            });
        }
        // Entries: the path, this bone's own chord (a chain share reads its segment end's),
        // then its frame parent's chord unless that is the path itself.
        let own = self.swing[c].as_ref();
        let parent = self.mapped_anc[c].and_then(|p| self.swing[p].as_ref());
        rec.path_start = paths.len() as u32;
        rec.path_len = path.len() as u32;
        paths.extend(self.encode(&path));
        if let Some((chord_path, chord)) = own {
            rec.swing = chord.to_array();
            rec.chord_len = chord_path.len() as u32;
            paths.extend(self.encode(chord_path));
        }
        if let Some((chord_path, chord)) = parent {
            rec.parent_swing = chord.to_array();
            if *chord_path != path {
                rec.parent_chord_len = chord_path.len() as u32;
                paths.extend(self.encode(chord_path));
            }
        }
        let driven = if self.map[b].is_some() {
            self.mapped_rotation(&mut rec, b);
            self.translation(&mut rec, b, &path)
        } else {
            self.share_rotation(&mut rec, b, c);
            false
        };
        if driven {
            rec.modes |= PLAN_DRIVEN;
        }
        let tm = self.t.mirror;
        mirror::mirror_record(&mut rec, tm.parent(b), tm.own(b));
        let (kind, reason) = if self.map[b].is_some() {
            (BoneKind::Mapped, self.why[b].clone())
        } else {
            let twist = if rec.twist_axis == [0.0; 3] {
                ""
            } else {
                " (twist only)"
            };
            let reason = format!(
                "chain share {:.2} of the rotation up to '{}'{twist}",
                rec.fraction,
                display_name(&self.t.skeleton.names()[c]),
            );
            (BoneKind::ChainShare, reason)
        };
        let mut read = path;
        read.extend(own.iter().flat_map(|(p, _)| p.iter().copied()));
        let info = BonePlanInfo {
            source: self.map[b],
            kind,
            driven,
            reason,
            path: read,
        };
        Ok((rec, info))
    }

    /// `Q_p⁻¹` for a bone whose nearest mapped ancestor is `p`, `G` for one without.
    fn frame_q(&self, c: usize) -> Quat {
        match self.mapped_anc[c] {
            Some(p) => self.q[p].unwrap_or(Quat::IDENTITY).inverse(),
            None => self.g,
        }
    }

    /// `P` for bone `x` read through `c`'s path: the reference rotation of `x`'s parent
    /// relative to `c`'s mapped ancestor (in component space where it has none).
    fn parent_rel(&self, x: usize, c: usize) -> Quat {
        let par = self
            .t
            .skeleton
            .parent(x)
            .map_or(Quat::IDENTITY, |pp| self.t_cs[pp].rotation);
        match self.mapped_anc[c] {
            Some(p) => (self.t_cs[p].rotation.inverse() * par).normalize(),
            None => par,
        }
    }

    /// A mapped bone's rotation: `pre ⊗ X.R ⊗ post`, or the remainder of its segment's
    /// rotation when unmapped bones above it share it (a segment end).
    fn mapped_rotation(&self, rec: &mut BonePlan, b: usize) {
        let qb = self.q[b].unwrap_or(Quat::IDENTITY);
        let frame_q = self.frame_q(b);
        let pmat = self.parent_rel(b, b);
        match &self.segment_of[b] {
            Some(seg) => {
                let placed = (pmat * self.tref[b].rotation).normalize();
                rec.pre = frame_q.to_array();
                rec.post = (qb * placed.inverse()).normalize().to_array();
                rec.outer_pre = pmat.inverse().to_array();
                rec.outer_post = placed.to_array();
                rec.fraction = seg.cum.last().copied().unwrap_or(0.0);
                rec.twist_axis = seg.axis.to_array();
                rec.modes = PLAN_SEGMENT_END;
            }
            None => {
                rec.pre = (pmat.inverse() * frame_q).normalize().to_array();
                rec.post = qb.to_array();
                rec.modes = PLAN_MAPPED;
            }
        }
    }

    /// A chain share's rotation: its part of the segment ending at mapped bone `c`.
    fn share_rotation(&self, rec: &mut BonePlan, b: usize, c: usize) {
        let (Some((_, i)), Some(seg)) = (self.share_of[b], &self.segment_of[c]) else {
            return;
        };
        let product = |n: usize| {
            seg.inter[..n]
                .iter()
                .fold(Quat::IDENTITY, |acc, &u| acc * self.tref[u].rotation)
        };
        let qc = self.q[c].unwrap_or(Quat::IDENTITY);
        let all = product(seg.inter.len());
        rec.pre = self.frame_q(c).to_array();
        rec.post = (qc * (all * self.tref[c].rotation).inverse())
            .normalize()
            .to_array();
        rec.outer_pre = product(i).inverse().normalize().to_array();
        rec.outer_post = product(i + 1).normalize().to_array();
        let before = if i == 0 { 0.0 } else { seg.cum[i - 1] };
        rec.fraction = seg.cum[i] - before;
        rec.twist_axis = seg.axis.to_array();
        rec.modes = PLAN_CHAIN;
    }

    /// A mapped bone's translation ("Driven translations"); true where it follows the source.
    fn translation(&self, rec: &mut BonePlan, b: usize, path: &[(usize, bool)]) -> bool {
        let (s, t) = (self.s, self.t);
        let a = self.map[b].unwrap_or(0);
        match self.mapped_anc[b] {
            None => {
                let par = t
                    .skeleton
                    .parent(b)
                    .map_or(Transform::IDENTITY, |pp| self.t_cs[pp]);
                self.root_translation(rec, b, &par, a, path, false);
                true
            }
            Some(p) => {
                let a_p = self.map[p].unwrap_or(0);
                let qp = self.q[p].unwrap_or(Quat::IDENTITY);
                let par = t.skeleton.parent(b).map_or(Transform::IDENTITY, |pp| {
                    Transform::relative(&self.t_cs[pp], &self.t_cs[p])
                });
                let (inv_r, inv_s) = (par.rotation.inverse(), safe_recip(par.scale));
                let kk = self.k * mean(s.cs[a_p].scale) / mean(self.t_cs[p].scale).max(1e-12);
                let xref = self.rest_x(path);
                let forward_mapped = path
                    .iter()
                    .any(|&(x, inv)| !inv && x != a && self.used_source[x]);
                if forward_mapped {
                    // Its path runs through another mapped source bone (an IK-style foot under
                    // the hips): it follows the source's position in p's frame.
                    let rest_b = Transform::relative(&self.t_cs[b], &self.t_cs[p]).translation;
                    rec.t_rot = (inv_r * qp.inverse()).normalize().to_array();
                    rec.t_k = kk;
                    rec.t_inv_scale = inv_s.to_array();
                    rec.t_cap = path.len() as u32;
                    rec.t_w = (rest_b - kk * (qp.inverse() * xref.translation)).to_array();
                    rec.t_wpre = qp.inverse().to_array();
                    rec.t_wpost = (xref.rotation.inverse() * qp).normalize().to_array();
                    rec.t_par_inv = inv_r.to_array();
                    rec.t_const = (inv_s * (inv_r * -par.translation)).to_array();
                    true
                } else if self.options.translation_deltas && path.len() == 1 && !path[0].1 {
                    // The source bone's own translation change from rest, into the target.
                    rec.t_rot = (inv_r * qp.inverse()).normalize().to_array();
                    rec.t_k = kk;
                    rec.t_inv_scale = inv_s.to_array();
                    rec.t_sub = (xref.translation * kk).to_array();
                    rec.t_const = self.tref[b].translation.to_array();
                    true
                } else {
                    false
                }
            }
        }
    }
}

/// A goal record for no goal.
fn no_goal() -> BonePlan {
    BonePlan {
        modes: PLAN_NO_GOAL,
        ..reference_record(&Transform::IDENTITY)
    }
}

/// A record that keeps `reference` (a bone with no counterpart).
fn reference_record(reference: &Transform) -> BonePlan {
    let identity = Quat::IDENTITY.to_array();
    BonePlan {
        pre: identity,
        post: identity,
        outer_pre: identity,
        outer_post: reference.rotation.to_array(),
        t_rot: identity,
        t_inv_scale: [1.0; 3],
        t_k: 1.0,
        t_const: reference.translation.to_array(),
        modes: PLAN_REFERENCE,
        scale: reference.scale.to_array(),
        t_wpre: identity,
        t_wpost: identity,
        t_par_inv: identity,
        ..BonePlan::default()
    }
}

/// The path from the source's top down to `a` (each local as it is).
fn from_top(tree: &Tree, a: usize) -> Vec<(usize, bool)> {
    tree.top_down(a).into_iter().map(|x| (x, false)).collect()
}

/// Whether bones between `p` and `b` form a chain, and if so whether they share only the twist
/// (limb segments, `Some(true)`) or the whole rotation (torso and fingers, `Some(false)`).
fn chain_kind(p: Option<Role>, b: Option<Role>) -> Option<bool> {
    use Role::*;
    let torso = |r: Role| matches!(r, Hips | Spine(_) | Chest | Neck(_) | Head);
    let (p, b) = (p?, b?);
    if torso(p) && torso(b) {
        return Some(false);
    }
    match (p, b) {
        (Hand(s), Finger(t, _, 0)) if s == t => Some(false),
        (Finger(s, d, _), Finger(t, e, _)) if s == t && d == e => Some(false),
        (UpperArm(s), Forearm(t))
        | (Forearm(s), Hand(t))
        | (Thigh(s), Shin(t))
        | (Shin(s), Foot(t))
            if s == t =>
        {
            Some(true)
        }
        _ => None,
    }
}

fn mean(v: Vec3) -> f32 {
    (v.x + v.y + v.z) / 3.0
}
