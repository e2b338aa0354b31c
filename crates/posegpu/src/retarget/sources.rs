//! The library builder's retargeting methods: sources paired with the target here (a rig's bone
//! mapping and modes, a [`RetargetPlan`]) go into the library as the packed tables the runtime
//! plays (`src/drive/`), and nothing else of them.

use super::offline::bake_with_goals;
use super::{BoneMapping, RetargetPlan, Rig};
use crate::drive::modes::mode_caches;
use crate::error::{Error, Result};
use crate::library::{LibraryBuilder, SourceId};
use crate::model::{Asset, BoneTrack, Clip, RestPose, Skeleton};

impl LibraryBuilder {
    /// Adds a retarget source: clips authored on `skeleton` will play on the target, retargeted
    /// from `skeleton`'s reference pose (or its alternative named `pose`) with `rig`'s bone
    /// correspondence and modes. The caches are built here, once.
    pub fn add_source(
        &mut self,
        name: &str,
        skeleton: &Skeleton,
        pose: Option<&str>,
        rig: &Rig,
    ) -> Result<SourceId> {
        let target = self.target();
        let source_pose = match pose {
            None => skeleton.reference(rig.rest.unwrap_or(RestPose::Nodes)),
            Some(p) => skeleton
                .reference_pose(p)
                .ok_or_else(|| Error::UnknownReferencePose {
                    name: p.to_string(),
                    available: skeleton
                        .alternatives()
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?,
        };
        let mapping = BoneMapping::new(skeleton, target, rig)?;
        let modes = rig.modes(target)?;
        let target_pose = target.reference(rig.rest.unwrap_or(RestPose::Nodes));
        let caches = mode_caches(source_pose, target_pose, |b| mapping.source_of(b), &modes);
        self.push_mode_source(name, skeleton, pose, &caches)
    }

    /// Adds a character source: clips authored on `source`'s skeleton will play on the target
    /// through `plan` (built for this source and this library's target skeleton, else an
    /// [`Error::PlanMismatch`]), per bone, in the sampling stage of both backends. Its clips may
    /// not be additive (bake them with [`crate::retarget::bake_clip`], then make the additive
    /// on the target).
    pub fn add_character_source(
        &mut self,
        name: &str,
        source: &Asset,
        plan: &RetargetPlan,
    ) -> Result<SourceId> {
        plan.check(&source.skeleton, self.target())?;
        self.push_plan_source(name, &source.skeleton, plan.section())
    }

    /// Adds `clips` of the character `source` retargeted through `plan` once, here
    /// ([`crate::retarget::bake_clip`] without IK), as clips of the target itself: they then
    /// play at the speed of the target's own clips, instead of running the plan per bone and
    /// per instance in the sampling stage ([`Self::add_character_source`]). The plan's IK goals
    /// are baked beside them, so IK after retargeting stays per instance, at each instance's
    /// weights, as for the plan's clips. What that costs: the plan's poses and goals at the
    /// source's key times, interpolated between them (exact where a bone maps one to one;
    /// within a small angle on chains of different lengths, `tests/it/retarget_baked.rs`), and
    /// keys for every moving target bone and every goal at the source's key times.
    pub fn add_baked_clips(
        &mut self,
        source: &Asset,
        plan: &RetargetPlan,
        clips: &[Clip],
    ) -> Result<&mut Self> {
        let (baked, goals): (Vec<Clip>, Vec<Vec<BoneTrack>>) = clips
            .iter()
            .map(|c| bake_with_goals(plan, source, c, self.target()))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        self.push_baked_clips(&baked, &goals, &plan.section().ik)?;
        Ok(self)
    }
}
