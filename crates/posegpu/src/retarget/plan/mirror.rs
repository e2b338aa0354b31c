//! Mirrored characters (negative scales) and plans: `docs/pose-math.md`, "Mirrored characters
//! in retarget plans". Under UE's matrix path a bone below a frame reflected by `D` (the sign
//! pattern of its parent's component-space scale) has the component rotation
//! `R_p ⊗ (D · R · D)` and position `T_p + R_p · (S_p ∘ T)`. Its *unmirrored twin* (rotation
//! `D · R · D`, translation `D ∘ T`, scale `|S|`) has the same component rotation and position
//! by the plain TRS formulas, so a plan is built between the twins, reads the source's locals
//! as the twin's (the path entries' mirror bits), and turns each target record's result back
//! into the mirrored character's local (the record's mirror pattern), last. The reflections
//! must be those of the reference pose: a clip or pose that changes the sign of a scale above
//! other bones is an [`Error::MirroredRetarget`] (mirrored leaves may do as they like).

use std::borrow::Cow;

use crate::drive::plan::{check_clip_reflections, check_reflections};
use crate::error::{Error, Result};
use crate::layout::{
    BonePlan, PATH_MIRROR_SHIFT, PLAN_DRIVEN, PLAN_MIRROR_SHIFT, PLAN_REFERENCE, PLAN_ROTATION,
};
use crate::math::mirror::{pattern_signs, reflect_rotation, sign_pattern};
use crate::model::{component_space, Bone, Clip, Skeleton};
use crate::Transform;

/// The reflections of one skeleton's reference pose.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Mirror {
    /// Per bone: the sign pattern of its parent's component-space reference scale (0 at a
    /// root).
    parent: Vec<u32>,
    /// Per bone: the sign pattern of its component-space reference scale.
    world: Vec<u32>,
    /// Per bone: the sign pattern of its local reference scale.
    own: Vec<u32>,
    /// Per bone that carries others: its `own` pattern, which poses must keep (`None` for a
    /// leaf).
    kept: Vec<Option<u32>>,
}

impl Mirror {
    pub(super) fn new(skeleton: &Skeleton) -> Self {
        let cs = skeleton.rest_component();
        let world: Vec<u32> = cs.iter().map(|t| sign_pattern(t.scale)).collect();
        let mut has_children = vec![false; skeleton.len()];
        for i in 0..skeleton.len() {
            if let Some(p) = skeleton.parent(i) {
                has_children[p] = true;
            }
        }
        let own: Vec<u32> = skeleton
            .rest()
            .iter()
            .map(|t| sign_pattern(t.scale))
            .collect();
        Self {
            parent: (0..skeleton.len())
                .map(|i| skeleton.parent(i).map_or(0, |p| world[p]))
                .collect(),
            kept: (0..skeleton.len())
                .map(|b| has_children[b].then_some(own[b]))
                .collect(),
            own,
            world,
        }
    }

    /// Per bone that carries others, the sign pattern of its reference scale, which poses and
    /// clips must keep; `None` for a leaf.
    pub(super) fn kept(&self) -> &[Option<u32>] {
        &self.kept
    }

    /// Whether any bone has a negative scale component.
    pub(super) fn any(&self) -> bool {
        self.own.iter().any(|&p| p != 0)
    }

    /// The sign pattern of bone `b`'s parent frame.
    pub(super) fn parent(&self, b: usize) -> u32 {
        self.parent[b]
    }

    /// The sign pattern of bone `b`'s component-space frame.
    pub(super) fn world(&self, b: usize) -> u32 {
        self.world[b]
    }

    /// The sign pattern of bone `b`'s own reference scale.
    pub(super) fn own(&self, b: usize) -> u32 {
        self.own[b]
    }

    /// Bone `b`'s mirror bits in a path entry (`PATH_MIRROR_SHIFT`).
    pub(super) fn path_bits(&self, b: usize) -> u32 {
        (self.parent[b] | self.own[b] << 3) << PATH_MIRROR_SHIFT
    }

    /// Bone `b`'s local `t` as its unmirrored twin's, or back (the change is its own inverse).
    pub(super) fn twin_local(&self, b: usize, t: &Transform) -> Transform {
        let (parent, own) = (self.parent[b], self.own[b]);
        if parent | own == 0 {
            return *t;
        }
        Transform {
            rotation: reflect_rotation(t.rotation, parent),
            translation: t.translation * pattern_signs(parent),
            scale: t.scale * pattern_signs(own),
        }
    }

    /// `skeleton`'s unmirrored twin (itself where nothing is mirrored): every local as
    /// [`Mirror::twin_local`] turns it, inverse binds from the twin's rest pose.
    pub(super) fn twin<'a>(&self, skeleton: &'a Skeleton) -> Result<Cow<'a, Skeleton>> {
        if !self.any() {
            return Ok(Cow::Borrowed(skeleton));
        }
        let rest: Vec<Transform> = (0..skeleton.len())
            .map(|b| self.twin_local(b, &skeleton.rest()[b]))
            .collect();
        let cs = component_space(skeleton.parents(), &rest);
        let bones = (0..skeleton.len())
            .map(|b| Bone {
                name: skeleton.names()[b].clone(),
                parent: skeleton.parent(b),
                rest: rest[b],
                inverse_bind: Some(cs[b].to_matrix().inverse()),
            })
            .collect();
        Ok(Cow::Owned(Skeleton::new(bones)?))
    }

    /// An [`Error::MirroredRetarget`] where `locals` (`what`) give a bone that carries others a
    /// scale whose signs differ from the reference pose's.
    pub(super) fn check_locals(
        &self,
        locals: &[Transform],
        names: &[String],
        what: &str,
    ) -> Result<()> {
        let scales = locals.iter().map(|t| t.scale).enumerate();
        check_reflections(&self.kept, scales, names, what)
    }

    /// As [`Mirror::check_locals`] for every scale key of `clip`.
    pub(super) fn check_clip(&self, clip: &Clip, names: &[String]) -> Result<()> {
        check_clip_reflections(&self.kept, clip, names)
    }
}

/// Turns record `rec`, built on the unmirrored twin, into the mirrored character's: its scale
/// takes the signs of `own` (the bone's own pattern); below a parent frame of pattern `parent`,
/// a record that only keeps its reference local keeps the mirrored local, and any other
/// reflects its result by `parent` last (its mirror bits in `modes`).
pub(super) fn mirror_record(rec: &mut BonePlan, parent: u32, own: u32) {
    if own != 0 {
        rec.scale = (glam::Vec3::from_array(rec.scale) * pattern_signs(own)).to_array();
    }
    if parent == 0 {
        return;
    }
    if rec.modes & PLAN_ROTATION == PLAN_REFERENCE && rec.modes & PLAN_DRIVEN == 0 {
        let q = glam::Quat::from_array(rec.outer_post);
        rec.outer_post = reflect_rotation(q, parent).to_array();
        rec.t_const = (glam::Vec3::from_array(rec.t_const) * pattern_signs(parent)).to_array();
    } else {
        rec.modes |= parent << PLAN_MIRROR_SHIFT;
    }
}

/// A [`Error::TooLarge`] for a source skeleton whose bone indices do not fit a path entry's
/// bone bits (below [`PATH_MIRROR_SHIFT`]).
pub(super) fn check_path_bones(bones: usize) -> Result<()> {
    let limit = 1u64 << PATH_MIRROR_SHIFT;
    if bones as u64 > limit {
        return Err(Error::TooLarge {
            what: "a retarget plan's source skeleton".to_string(),
            size: bones as u64,
            limit,
            unit: "bones",
            limit_name: "24-bit path entry",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{PlanOptions, RetargetPlan};
    use super::check_path_bones;
    use crate::error::Error;
    use crate::layout::{PATH_MIRROR_SHIFT, PLAN_MIRROR_SHIFT};
    use crate::model::{Asset, AssetFrame};

    /// Plans between unmirrored characters take the fast path everywhere: no record and no path
    /// entry carries mirror bits, so they run as before.
    #[test]
    fn plans_between_unmirrored_characters_carry_no_mirror_bits() {
        let source = crate::procedural::humanoid_asset();
        let target = Asset {
            skeleton: crate::procedural::humanoid_variant(7),
            clips: vec![],
            nodes: None,
            frame: AssetFrame::Y_UP,
        };
        let plan = RetargetPlan::new(&source, &target, &PlanOptions::default()).unwrap();
        let section = plan.section();
        let records = section.records.iter().chain(&section.goals);
        assert!(records
            .into_iter()
            .all(|r| r.modes >> PLAN_MIRROR_SHIFT == 0));
        assert!(section
            .paths
            .iter()
            .all(|e| e & (0x3f << PATH_MIRROR_SHIFT) == 0));
        for clip in &source.clips {
            plan.check_clip(clip).unwrap();
        }
    }

    #[test]
    fn a_source_past_the_path_entries_bone_bits_is_too_large() {
        assert!(check_path_bones(1 << 24).is_ok());
        let e = check_path_bones((1 << 24) + 1).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("24-bit path entry"), "{e}");
    }
}
