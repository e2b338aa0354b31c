//! The retarget plan of one (source, target) pair of characters: per target bone, a fixed-size
//! record built once (`BonePlan` in `src/layout/`) that the sampling stage runs on the sampled
//! source locals, independently for every bone (no source hierarchy pass). The formulas (`G`,
//! `Q_b`, `pre`/`post`, chain shares, swings, driven translations, rest alignment) are those of
//! `docs/pose-math.md`, "Retargeting between characters"; the names below are the spec's.

mod align;
mod build;
mod correspond;
mod goal;
mod mirror;

use std::collections::BTreeMap;
use std::fmt::Write;

use glam::Quat;

use super::feet::{self, FootHold};
use super::frame::Character;
use super::goals;
use super::humanoid::{display_name, skeleton_label};
use crate::drive::plan::PlanSection;
use crate::drive::IkWeights;
use crate::error::{Error, Result};
use crate::layout::{BonePlan, PLAN_NO_GOAL};
use crate::model::{Asset, Clip, RestPose, Skeleton};
use crate::Transform;
use build::{reference_record, Builder, PlanSide};
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

impl PlanOptions {
    /// The character retargeting's options with a rig's `bone_map` (target → source) over every
    /// pairing by role and name, and its `rest` (the bind pose where it names none). Its
    /// `strip_prefixes` are not needed: role recognition already ignores namespaces and tool
    /// prefixes (`mixamorig:`, `DEF-`).
    pub fn from_rig(rig: &super::Rig) -> Self {
        Self {
            bone_map: rig.bone_map.clone(),
            rest: rig.rest.unwrap_or_default(),
            ..Self::default()
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
    /// What the stages run: the records, one goal record per IK chain of the target
    /// ([`goals::chains`]) and one toe goal per chain, the paths, the IK table; all a library
    /// keeps of the plan.
    section: PlanSection,
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
    /// The target's IK-style feet, and whether each stays on its shin.
    foot_holds: Vec<FootHold>,
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
        let own = target;
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
        let mut chains = goals::chains(&target.skeleton, &t_char);
        // IK-style feet that the target's own clips keep on its shins stay there.
        let foot_holds: Vec<FootHold> = chains
            .iter_mut()
            .filter_map(|c| {
                let hold = feet::hold(own, c, t_char.body.hip_height)?;
                c.attached = hold.on_shin;
                Some(hold)
            })
            .collect();
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
            section: PlanSection {
                records: built.records,
                goals: built.goals,
                paths: built.paths,
                ik: goals::table(
                    &target.skeleton,
                    &chains,
                    goals::pelvis(&target.skeleton, &t_char, &chains),
                ),
                kept_signs: s_mirror.kept().to_vec(),
            },
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
            foot_holds,
            source_names: source.skeleton.names().to_vec(),
            target_names: target.skeleton.names().to_vec(),
        })
    }

    /// The target's local pose from one pose of the source (local transforms, one per source
    /// bone), as the sampling stage computes it. Source bones past the end read the identity.
    pub fn apply(&self, source_locals: &[Transform]) -> Vec<Transform> {
        let s = &self.section;
        s.records.iter().map(|r| s.run(r, source_locals)).collect()
    }

    /// The target's IK-style feet (foot bones that do not hang from their shins), each with
    /// what it is and why: kept on its shin after retargeting, or a free IK target.
    pub fn foot_holds(&self) -> &[FootHold] {
        &self.foot_holds
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
        crate::drive::ik::solve(
            &self.section.ik,
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
        let goals = &self.section.goals;
        self.run_goals(&goals[..goals.len() / 2], source_locals)
    }

    /// Every goal record (the chains' goals, then their toe goals) on one source pose, as the
    /// IK stage reads them; `None` where the plan has no such goal.
    pub(crate) fn all_goals(&self, source_locals: &[Transform]) -> Vec<Option<Transform>> {
        self.run_goals(&self.section.goals, source_locals)
    }

    /// `records` run on one source pose; `None` for a record without a goal.
    fn run_goals(
        &self,
        records: &[BonePlan],
        source_locals: &[Transform],
    ) -> Vec<Option<Transform>> {
        records
            .iter()
            .map(|r| (r.modes & PLAN_NO_GOAL == 0).then(|| self.section.run(r, source_locals)))
            .collect()
    }

    /// The plan compiled for a library: what the sampling and IK stages run, nothing of the
    /// characters and names it was built from.
    pub(crate) fn section(&self) -> &PlanSection {
        &self.section
    }
}
