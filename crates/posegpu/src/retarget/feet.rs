//! IK-style feet that stay on their legs. A foot bone that does not hang from its shin (an
//! IK-style rig) and deforms something (skin weights, or a mesh under it), which the
//! character's own clips keep at the point its shin carries, is kept there after retargeting
//! too: the IK stage moves it there, with feet IK on or off ([`crate::layout::IK_ATTACHED`]).
//! One that its own clips leave free (Mech_Stan's), or that deforms nothing, stays a free IK
//! target, placed where the source's foot is. Spec: `docs/pose-math.md`, "IK after
//! retargeting".

use std::fmt;

use super::goals::ChainDef;
use super::humanoid::deforming;
use super::tree::Tree;
use crate::{component_space, Asset, Transform};

/// How far from the point its shin carries a character's own clips may take an IK-style foot
/// for retargeting to keep it there, in hip heights: 2% of the hip height (a foot that rides on
/// its shin stays within a few thousandths: 0.0002 on a Quaternius robot, 0.003 on a KayKit
/// knight; a free IK target strays tenths: 0.42 on Mech_Stan).
pub const FOOT_ON_SHIN: f32 = 0.02;

/// The most frames of each own clip measured (spread over the clip's keys).
const MOST_FRAMES: usize = 240;

/// What an IK-style foot is, and why: the plan's choice, from the character's own clips and
/// rest ([`crate::retarget::RetargetPlan::foot_holds`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootHold {
    /// The foot bone.
    pub foot: usize,
    /// The shin whose end it is measured from.
    pub shin: usize,
    /// Whether the foot or a bone below it deforms a mesh (true where the file does not say).
    pub deforms: bool,
    /// The farthest the character's own clips take the foot's joint from the point its shin
    /// carries, in hip heights, and over how many frames; `None` for a character without clips.
    pub own_gap: Option<(f32, usize)>,
    /// Whether retargeting keeps the foot on the shin: it deforms, and its own clips keep it
    /// within [`FOOT_ON_SHIN`] (or it has none: its rest puts it there).
    pub on_shin: bool,
}

impl fmt::Display for FootHold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gap = match self.own_gap {
            Some((g, n)) => format!(
                "its own clips take it up to {g:.4} hip heights from the shin's end ({n} frames)"
            ),
            None => "no clips of its own: its rest puts it at the shin's end".into(),
        };
        if !self.deforms {
            write!(f, "a free IK target: it deforms nothing ({gap})")
        } else if self.on_shin {
            write!(f, "kept on the shin: it deforms the mesh and {gap}")
        } else {
            write!(f, "a free IK target: {gap}, more than {FOOT_ON_SHIN}")
        }
    }
}

/// The hold of a carried chain's foot (`chain.end`, reached by the point `chain.mid` carries),
/// from `asset`'s own clips (not additive) and skin, with hip height `hip_height`.
pub(crate) fn hold(asset: &Asset, chain: &ChainDef, hip_height: f32) -> Option<FootHold> {
    let tip = chain.carried?;
    let skeleton = &asset.skeleton;
    let (shin, foot) = (chain.mid, chain.end);
    let deforms = deforming(&Tree::new(skeleton), &asset.frame)[foot];
    let carried = Transform {
        translation: tip,
        ..Transform::IDENTITY
    };
    let mut frames = 0;
    let mut worst = 0.0f32;
    for clip in asset.clips.iter().filter(|c| !c.is_additive()) {
        let times = clip.key_times();
        let step = times.len().div_ceil(MOST_FRAMES).max(1);
        for &t in times.iter().step_by(step) {
            let cs = component_space(skeleton.parents(), &clip.pose_at(skeleton.rest(), t));
            let at = Transform::compose(&carried, &cs[shin]).translation;
            worst = worst.max((at - cs[foot].translation).length() / hip_height);
            frames += 1;
        }
    }
    let own_gap = (frames > 0).then_some((worst, frames));
    Some(FootHold {
        foot,
        shin,
        deforms,
        own_gap,
        on_shin: deforms && own_gap.is_none_or(|(g, _)| g <= FOOT_ON_SHIN),
    })
}
