//! The retargeting stages of `posegpu check`: UE's per-bone translation modes, a character
//! plan between two differently proportioned humanoids, IK after retargeting, baked clips.

use posegpu::procedural::{humanoid_asset, humanoid_variant};
use posegpu::retarget::Rig;
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{
    AnimLibrary, Asset, AssetFrame, Error, GpuOptions, IkWeights, PoseBatch, RootLock,
    TranslationMode,
};

use super::poses::{both, both_plans, spread};
use super::{Checker, Measured};

/// The humanoid (source) and a variant of other proportions and rest orientations (target).
fn humanoid_pair() -> (Asset, Asset) {
    let target = Asset {
        skeleton: humanoid_variant(7),
        clips: Vec::new(),
        nodes: None,
        frame: AssetFrame::Y_UP,
    };
    (humanoid_asset(), target)
}

/// Instance `i`'s root lock: in place three times out of four, each lock in turn.
fn lock(i: usize) -> Option<RootLock> {
    [
        None,
        Some(RootLock::RefPose),
        Some(RootLock::FirstFrame),
        Some(RootLock::Zero),
    ][i % 4]
}

/// The humanoid's clips on the variant, every bone in `mode`, both pass plans.
pub(super) fn ue_mode(c: &Checker, mode: TranslationMode) -> Result<Measured, Error> {
    let (source, target) = humanoid_pair();
    let mut builder = AnimLibrary::builder(&target.skeleton);
    let id = builder.add_source("humanoid", &source.skeleton, None, &Rig::uniform(mode))?;
    builder.add_clips_from(id, &source.clips)?;
    let lib = builder.build();
    let samples = spread(&lib, c.instances, lock);
    let mut batch = PoseBatch::with_capacity(samples.len(), 1);
    for s in &samples {
        batch.push_blend(std::slice::from_ref(s));
    }
    both_plans(c, &format!("UE mode {mode}"), &lib, &batch)
}

/// The humanoid's clips on the variant through a character plan, each instance at one of
/// `weights` (IK after retargeting where they are not zero).
pub(super) fn plan(c: &Checker, stage: &str, weights: &[IkWeights]) -> Result<Measured, Error> {
    let (source, target) = humanoid_pair();
    let plan = RetargetPlan::new(&source, &target, &PlanOptions::default())?;
    plan_between(c, stage, &source, &target, &plan, weights)
}

/// `source`'s clips on `target` through `plan`, at `weights` in turn.
pub(super) fn plan_between(
    c: &Checker,
    stage: &str,
    source: &Asset,
    target: &Asset,
    plan: &RetargetPlan,
    weights: &[IkWeights],
) -> Result<Measured, Error> {
    let mut builder = AnimLibrary::builder(&target.skeleton);
    let id = builder.add_character_source("source", source, plan)?;
    builder.add_clips_from(id, &source.clips)?;
    let lib = builder.build();
    let batch = ik_batch(&lib, c.instances, weights);
    if weights.iter().all(|w| *w == IkWeights::NONE) {
        // No IK: the fused pass takes plan clips too.
        return both_plans(c, stage, &lib, &batch);
    }
    both(c, stage, &lib, &batch, &GpuOptions::default())
}

/// `n` instances over `lib`'s clips, in place or not, each with IK at one of `weights`
/// (none where the weights are zero).
fn ik_batch(lib: &AnimLibrary, n: usize, weights: &[IkWeights]) -> PoseBatch {
    let mut batch = PoseBatch::with_capacity(n, 2);
    for (i, s) in spread(lib, n, lock).iter().enumerate() {
        let w = weights[i % weights.len()];
        let layers = batch.push_blend(std::slice::from_ref(s));
        if w != IkWeights::NONE {
            layers.ik(w);
        }
    }
    batch
}

/// The humanoid's clips baked onto the variant at upload, with IK per instance from the baked
/// goals.
pub(super) fn baked(c: &Checker) -> Result<Measured, Error> {
    let (source, target) = humanoid_pair();
    let plan = RetargetPlan::new(&source, &target, &PlanOptions::default())?;
    let mut builder = AnimLibrary::builder(&target.skeleton);
    builder.add_baked_clips(&source, &plan, &source.clips)?;
    let lib = builder.build();
    let half = IkWeights {
        feet: 0.5,
        hands: 0.5,
    };
    let weights = [IkWeights::NONE, IkWeights::FEET, half, IkWeights::ALL];
    let batch = ik_batch(&lib, c.instances, &weights);
    both(c, "baked clips", &lib, &batch, &GpuOptions::default())
}
