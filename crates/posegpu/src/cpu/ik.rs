//! CPU twin of `shaders/ik.wgsl`: per instance, after the layers, each two-bone chain of the
//! library's IK table (built by `src/retarget/goals.rs`) turns its root and middle bones so that
//! its end reaches the goal, weighted per instance ([`IkWeights`]). A chain's goal is the blend
//! of its base samples' goals: a character source's clip gives its plan's goal record, a clip
//! baked from one its goal's keys, any other sample the end where it is. The solver is
//! `src/drive/ik.rs` (shared with `RetargetPlan::apply_with_ik`); this file reads the batch and
//! samples the goals. Spec: `docs/pose-math.md`, "IK after retargeting".

use glam::Vec3;

use crate::batch::{self, ClipSample, LayerKind, PoseBatch};
use crate::drive::ik::{attaches_feet, chain_count, solve};
use crate::drive::plan::apply_bone;
use crate::drive::IkWeights;
use crate::layout::ZERO_WEIGHT;
use crate::layout::{
    ClipData, Entry, Head, Xform, CLIP_COMPRESSED, CLIP_GOALS, CLIP_PLAN, IK_HAND, PLAN_NO_GOAL,
};
use crate::library::AnimLibrary;
use crate::model::map_time;
use crate::Transform;

/// One instance of the library's batch: its chains run on its `locals`, when it has an IK
/// layer with a weight and the library has chains; and its attached feet move onto their
/// shins, IK layer or not.
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
    // Without an IK layer (or with zero weights), only attached feet have work.
    let weights = batch::ik_weights(entries, head).unwrap_or(IkWeights::NONE);
    if weights.feet <= ZERO_WEIGHT && weights.hands <= ZERO_WEIGHT && !attaches_feet(&data.ik) {
        return;
    }
    let Some(Some(base)) = batch::layers(entries, head).next() else {
        return;
    };
    debug_assert_eq!(base.kind, LayerKind::Base);
    let bones = lib.bone_count() as u32;
    let mut pose: Vec<Transform> = locals.iter().map(|&x| x.into()).collect();
    // The root-motion bone in component space as the pose has it (IK never turns it; its
    // ancestors at their reference pose): an in-place sample's goals follow it.
    let (root, parent) = (data.root_bone, &data.root_parent);
    let root_now = Transform::compose(&pose[root as usize], parent);
    let sample_weights = base
        .samples
        .iter()
        .map(|e| ClipSample::from_entry(e).weight);
    solve(
        &data.ik,
        &mut pose,
        weights,
        sample_weights,
        |i, chain, k, toe| {
            let s = ClipSample::from_entry(&base.samples[k]);
            let c = &data.clip_data(s.clip.0);
            // Toe goals follow the chains' goals.
            let toes = if toe { chain_count(&data.ik) as u32 } else { 0 };
            let record = bones + i as u32 + toes;
            if !has_goal(lib, c, record) {
                return None;
            }
            let t = map_time(s.time, c.duration, s.looping);
            let goal = clip_goal(lib, c, t, record);
            // A component-space goal of an in-place sample: where the clip puts it relative to its
            // own (unlocked) root-motion bone, carried onto that bone as the lock left it, at the
            // height the clip gives it (the floor does not move with the lock: feet stay on it).
            if s.root_lock.is_none() || chain.flags & IK_HAND != 0 {
                return Some(goal);
            }
            let up = Vec3::from_array(chain.up);
            let clip_root = Transform::compose(&clip_goal(lib, c, t, root), parent);
            let mut g = Transform::compose(&Transform::relative(&goal, &clip_root), &root_now);
            g.translation += up * (goal.translation.dot(up) - g.translation.dot(up));
            Some(g)
        },
    );
    for (x, p) in locals.iter_mut().zip(&pose) {
        *x = (*p).into();
    }
}

/// Whether clip `c` has goal record `record` (past the bones: `bones + g`): a character
/// source's clip where its plan has that goal, a clip baked from one ([`CLIP_GOALS`]) where
/// that goal has keys, no other clip. As `has_goal` in `shaders/ik.wgsl`.
fn has_goal(lib: &AnimLibrary, c: &ClipData, record: u32) -> bool {
    let data = lib.data();
    if c.flags & CLIP_PLAN != 0 {
        return data.bone_plan(c.retarget_base, record).modes & PLAN_NO_GOAL == 0;
    }
    if c.flags & CLIP_COMPRESSED != 0 {
        let words = data.value_words();
        return c.flags & CLIP_GOALS != 0
            && super::clip::packed_header(lib, c).present(words, record);
    }
    c.flags & CLIP_GOALS != 0 && data.clip_channel(c, record, 0).count > 0
}

/// Record `record` of clip `c` at the mapped time `t` as the IK stage reads it: a bone's
/// local (`record` below the bone count) or a goal. A character source's clip runs its plan
/// record; a baked clip samples its keys (the bone's, or the goal's after them). As
/// `clip_goal` in `shaders/ik.wgsl`.
fn clip_goal(lib: &AnimLibrary, c: &ClipData, t: f32, record: u32) -> Transform {
    let data = lib.data();
    let mut search = super::KeySearch::default();
    if c.flags & CLIP_PLAN != 0 {
        let r = &data.bone_plan(c.retarget_base, record);
        return apply_bone(
            r,
            |i| data.table_u32(0, i as u32),
            |source, full| super::clip::source_local(lib, c, r, source, t, full, &mut search),
        );
    }
    let fill = if (record as usize) < lib.bone_count() {
        data.target_reference(record as usize)
    } else {
        Transform::IDENTITY
    };
    if c.flags & CLIP_COMPRESSED != 0 {
        return super::clip::packed_local(lib, c, record, t, (fill, true), &mut search);
    }
    let channels = super::clip::clip_channels(lib, c, record);
    super::clip::sample_channels(lib, &channels, t, fill, &mut search)
}

/// The stage for every instance of `batch` (instance-major `locals`).
pub(super) fn run(lib: &AnimLibrary, batch: &PoseBatch, locals: &mut [Xform]) {
    let bones = lib.bone_count();
    for (h, l) in batch.heads.iter().zip(locals.chunks_exact_mut(bones)) {
        run_instance(lib, &batch.entries, h, l);
    }
}
