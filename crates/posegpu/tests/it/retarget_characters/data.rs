//! The characters of `../shared/anim-data`, loaded once per test run, and the pair runner.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use posegpu::retarget::quality::{self, QualityReport};
use posegpu::retarget::{PlanOptions, RetargetPlan};
pub use posegpu::IkWeights;
use posegpu::{AnimLibrary, Asset, Clip, LibraryBuilder};

use crate::common::anim_data;

pub const KNIGHT: &str = "gltf/kaykit-adventurers/Knight.glb";
pub const MED: &str = "gltf/kaykit-rig-medium/Med_MovementBasic.glb";
pub const MECH_STAN: &str = "gltf/quaternius/Mech_Stan.glb";
pub const MECH_MIKE: &str = "gltf/quaternius/Mech_Mike.glb";
pub const SUPERHERO: &str = "gltf/quaternius-ubc/Superhero_Male_FullBody.gltf";
pub const UAL: &str = "gltf/quaternius-ual/AnimationLibrary_Godot_Standard.gltf";
pub const CESIUM: &str = "gltf/khronos/CesiumMan.glb";
pub const FIGURE: &str = "gltf/khronos/RiggedFigure.glb";
pub const FOX: &str = "gltf/khronos/Fox.glb";
pub const CMU_01: &str = "bvh/cmu_01_01.bvh";
pub const CMU_WALK: &str = "bvh/cmu_walk_delfem2.bvh";
pub const ZOMBIE: &str = "bvh/makehuman/zombieWalk1.bvh";
pub const TPOSE: &str = "bvh/makehuman/tpose.bvh";

/// The asset of `rel` (under anim-data), loaded once.
pub fn asset(rel: &str) -> Arc<Asset> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Asset>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(a) = cache.lock().unwrap().get(rel) {
        return a.clone();
    }
    let a =
        Arc::new(posegpu::import::load(anim_data().join(rel)).unwrap_or_else(|e| panic!("{e}")));
    cache.lock().unwrap().insert(rel.to_string(), a.clone());
    a
}

/// The clip of `asset` named `name` (or ending in `|name`); the first without a name.
pub fn clip<'a>(asset: &'a Asset, name: Option<&str>) -> &'a Clip {
    match name {
        Some(n) => asset
            .clips
            .iter()
            .find(|c| c.name() == n || c.name().ends_with(&format!("|{n}")))
            .unwrap_or_else(|| panic!("no clip {n}")),
        None => &asset.clips[0],
    }
}

/// The default plan of `source` onto `target`.
pub fn plan(source: &str, target: &str) -> RetargetPlan {
    RetargetPlan::new(&asset(source), &asset(target), &PlanOptions::default())
        .unwrap_or_else(|e| panic!("{source} -> {target}: {e}"))
}

/// The file name without its folder and extension.
pub fn short(rel: &str) -> String {
    std::path::Path::new(rel)
        .file_stem()
        .map_or(rel.to_string(), |s| s.to_string_lossy().into_owned())
}

/// `clip` of `source` played on `target` with the default plan at up to `frames` of its key
/// times, measured on the CPU twin: the label and the report.
pub fn run_pair(
    source: &str,
    clip_name: Option<&str>,
    target: &str,
    frames: usize,
    ik: IkWeights,
) -> (String, QualityReport) {
    run_pair_with(
        source,
        clip_name,
        target,
        frames,
        ik,
        &PlanOptions::default(),
    )
}

/// [`run_pair`] with a plan built with `options`.
pub fn run_pair_with(
    source: &str,
    clip_name: Option<&str>,
    target: &str,
    frames: usize,
    ik: IkWeights,
    options: &PlanOptions,
) -> (String, QualityReport) {
    let (s, t) = (asset(source), asset(target));
    let clip = clip(&s, clip_name);
    let plan =
        RetargetPlan::new(&s, &t, options).unwrap_or_else(|e| panic!("{source} -> {target}: {e}"));
    let times = quality::frame_times(clip, frames);
    let report = quality::measure(&s, &t, &plan, clip, &times, ik).unwrap();
    let label = format!("{} [{}] -> {}", short(source), clip.name(), short(target));
    (label, report)
}

/// A library of `target` playing `clip` of `source` through the default plan (clip 0).
pub fn plan_library(source: &str, clip_name: Option<&str>, target: &str) -> AnimLibrary {
    plan_builder(source, clip_name, target).build()
}

/// [`plan_library`] before it is built (to set more on it).
pub fn plan_builder(source: &str, clip_name: Option<&str>, target: &str) -> LibraryBuilder {
    let (s, t) = (asset(source), asset(target));
    let mut builder = AnimLibrary::builder(&t.skeleton);
    let id = builder
        .add_character_source(&short(source), &s, &plan(source, target))
        .unwrap();
    builder
        .add_clips_from(id, &[clip(&s, clip_name).clone()])
        .unwrap();
    builder
}
