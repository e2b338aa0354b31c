//! CPU twin of `shaders/ik.wgsl`: per instance, after the layers, each two-bone chain of the
//! library's IK table (`src/retarget/goals.rs`) turns its root and middle bones so that its end
//! reaches the goal, weighted per instance ([`IkWeights`]). A chain's goal is the blend of its
//! base samples' goals: a character source's clip gives its plan's goal record, any other
//! sample the end where it is. The solver is `retarget::ik` (shared with
//! `RetargetPlan::apply_with_ik`); this file reads the batch and samples the goals. Spec:
//! `docs/pose-math.md`, "IK after retargeting".

use crate::batch::{self, ClipSample, LayerKind};
use crate::layout::{BonePlan, Entry, Head, Xform, CLIP_PLAN, PLAN_NO_GOAL, PLAN_WORDS};
use crate::library::AnimLibrary;
use crate::math::Transform;
use crate::model::map_time;
use crate::retarget::ik::{chain_count, solve};
use crate::retarget::plan::apply_bone;

/// One instance of the library's batch: its chains run on its `locals`, when it has an IK
/// layer and the library has chains.
pub(super) fn run_instance(
    lib: &AnimLibrary,
    entries: &[Entry],
    head: &Head,
    locals: &mut [Xform],
) {
    let data = lib.data();
    if chain_count(&data.ik) == 0 {
        return;
    }
    let Some(weights) = batch::ik_weights(entries, head) else {
        return;
    };
    let Some(Some(base)) = batch::layers(entries, head).next() else {
        return;
    };
    debug_assert_eq!(base.kind, LayerKind::Base);
    let samples: Vec<ClipSample> = base.samples().collect();
    let sample_weights: Vec<f32> = samples.iter().map(|s| s.weight).collect();
    let bones = lib.bone_count() as u32;
    let mut pose: Vec<Transform> = locals.iter().map(|&x| x.into()).collect();
    solve(&data.ik, &mut pose, weights, &sample_weights, |chain, k| {
        let s = &samples[k];
        let c = &data.clips[s.clip as usize];
        if c.flags & CLIP_PLAN == 0 || s.root_lock.is_some() {
            return None;
        }
        let r: &BonePlan = data.record(c.retarget_base + (bones + chain as u32) * PLAN_WORDS);
        if r.modes & PLAN_NO_GOAL != 0 {
            return None;
        }
        let t = map_time(s.time, c.duration, s.looping);
        let mut search = super::KeySearch::default();
        Some(apply_bone(
            r,
            |i| data.path_entry(i),
            |source| super::clip::source_local(lib, c, r, source, t, &mut search),
        ))
    });
    for (x, p) in locals.iter_mut().zip(&pose) {
        *x = (*p).into();
    }
}
