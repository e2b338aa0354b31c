//! Bone masks for UE's Layered blend per bone: a weight per bone, from branch filters named by
//! bone, resolved once when a library is built ([`crate::LibraryBuilder::add_mask`]) and
//! referenced per instance per frame by a layer ([`crate::batch::InstanceLayers::with_mask`]).
//! Spec: `docs/pose-math.md`, "Layered blend per bone".

use crate::error::{Error, Result};
use crate::model::Skeleton;

/// One branch filter: the bone the branch starts at and its blend depth, as UE's
/// `FBranchFilter`.
///
/// A bone `d` levels below `bone` (0 for `bone` itself) gets `(d + 1) / blend_depth` from this
/// branch, or 1 when `blend_depth` is 0; a negative depth takes weight away, which is how a
/// sub-branch is excluded (`head` with depth -1 under `spine_01` with depth 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskBranch {
    /// The bone the branch starts at, by name.
    pub bone: String,
    /// Bones over which the weight ramps up to 1 (0 or 1: full weight at once).
    pub blend_depth: i32,
}

impl MaskBranch {
    /// The branch from `bone` with blend depth `blend_depth`.
    pub fn new(bone: impl Into<String>, blend_depth: i32) -> Self {
        Self {
            bone: bone.into(),
            blend_depth,
        }
    }

    /// Parses `BONE` or `BONE:DEPTH` (the command line's form); a colon not followed by a
    /// whole number is part of the name (`mixamorig:Spine`).
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let (bone, depth) = s
            .rsplit_once(':')
            .and_then(|(bone, depth)| Some((bone, depth.parse::<i32>().ok()?)))
            .unwrap_or((s, 0));
        if bone.is_empty() {
            return Err(format!("'{s}': no bone name"));
        }
        Ok(Self::new(bone, depth))
    }
}

/// The mask's weight of every bone of `skeleton`: per bone, the branches that contain it are
/// added in order, each sum clamped to `[0, 1]` (UE's `CreateMaskWeights`). `mask` names the
/// mask in errors.
pub fn mask_weights(skeleton: &Skeleton, mask: &str, branches: &[MaskBranch]) -> Result<Vec<f32>> {
    if branches.is_empty() {
        return Err(Error::Mask {
            mask: mask.to_string(),
            what: "no branches (name at least one bone)".to_string(),
        });
    }
    let parents = skeleton.parents();
    let mut weights = vec![0.0f32; skeleton.len()];
    for branch in branches {
        let start = skeleton
            .find(&branch.bone)
            .ok_or_else(|| Error::UnknownBone {
                what: format!("bone mask '{mask}'"),
                name: branch.bone.clone(),
                skeleton: "target",
            })?;
        let per_depth = match branch.blend_depth {
            0 => 1.0,
            d => 1.0 / d as f32,
        };
        for (bone, weight) in weights.iter_mut().enumerate() {
            if let Some(depth) = depth_below(parents, bone, start) {
                *weight = (*weight + per_depth * (depth + 1) as f32).clamp(0.0, 1.0);
            }
        }
    }
    Ok(weights)
}

/// How many levels `bone` lies below `ancestor` (0 for the bone itself); `None` outside its
/// branch. Parents come before their children, so the walk ends.
fn depth_below(parents: &[i32], bone: usize, ancestor: usize) -> Option<usize> {
    let (mut b, mut depth) = (bone, 0);
    loop {
        if b == ancestor {
            return Some(depth);
        }
        b = usize::try_from(parents[b]).ok()?;
        depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Bone;
    use crate::Transform;

    /// root ─ spine ─ chest ─ neck ─ head, and chest ─ arm ─ hand; root ─ leg.
    fn skeleton() -> Skeleton {
        let names = [
            "root", "spine", "chest", "neck", "head", "arm", "hand", "leg",
        ];
        let parents = [-1, 0, 1, 2, 3, 2, 5, 0];
        let bones = names
            .iter()
            .zip(parents)
            .map(|(name, p)| Bone::new(*name, usize::try_from(p).ok(), Transform::IDENTITY));
        Skeleton::new(bones.collect()).unwrap()
    }

    #[test]
    fn a_branch_with_depth_zero_is_full_weight_on_its_bones_only() {
        let w = mask_weights(&skeleton(), "upper", &[MaskBranch::new("spine", 0)]).unwrap();
        assert_eq!(w, [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn blend_depth_ramps_the_weight_down_the_branch() {
        let w = mask_weights(&skeleton(), "upper", &[MaskBranch::new("spine", 3)]).unwrap();
        let third = 1.0 / 3.0;
        // spine d0, chest d1, neck and arm d2, head and hand d3 (clamped).
        let expected = [0.0, third, 2.0 * third, 1.0, 1.0, 1.0, 1.0, 0.0];
        for (got, want) in w.iter().zip(expected) {
            assert!((got - want).abs() < 1e-6, "{w:?}");
        }
    }

    #[test]
    fn a_negative_depth_excludes_a_sub_branch() {
        let branches = [MaskBranch::new("spine", 0), MaskBranch::new("neck", -1)];
        let w = mask_weights(&skeleton(), "body", &branches).unwrap();
        assert_eq!(w, [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
        // A slower negative ramp leaves part of the weight one level down.
        let branches = [MaskBranch::new("spine", 0), MaskBranch::new("neck", -2)];
        let w = mask_weights(&skeleton(), "body", &branches).unwrap();
        assert_eq!(w[3], 0.5);
        assert_eq!(w[4], 0.0);
    }

    #[test]
    fn unknown_bones_and_empty_masks_are_errors() {
        let e = mask_weights(&skeleton(), "upper", &[MaskBranch::new("spine_01", 0)]);
        assert!(
            matches!(&e, Err(Error::UnknownBone { name, what, .. }) if name == "spine_01" && what.contains("upper")),
            "{e:?}"
        );
        let e = mask_weights(&skeleton(), "none", &[]);
        assert!(matches!(e, Err(Error::Mask { .. })), "{e:?}");
    }

    #[test]
    fn branches_parse_from_the_command_line_form() {
        assert_eq!(
            MaskBranch::parse("spine_01"),
            Ok(MaskBranch::new("spine_01", 0))
        );
        assert_eq!(
            MaskBranch::parse("head:-1"),
            Ok(MaskBranch::new("head", -1))
        );
        assert_eq!(
            MaskBranch::parse("mixamorig:Spine:2"),
            Ok(MaskBranch::new("mixamorig:Spine", 2))
        );
        assert_eq!(MaskBranch::parse("a:b"), Ok(MaskBranch::new("a:b", 0)));
        assert!(MaskBranch::parse(":2").is_err());
    }
}
