//! Building a library in JavaScript: a target, its own clips, character sources retargeted
//! through plans, compressed keys, the root-motion bone.

use posegpu::compress::Compression;
use posegpu::glam::Vec3;
use posegpu::retarget::RetargetPlan;
use posegpu::AnimLibrary;
use wasm_bindgen::prelude::*;

use super::asset::Asset;
use super::{describe_or_default, error};
use crate::spec::PlanSpec;

/// `AnimLibrary::builder` on a target character.
#[wasm_bindgen]
pub struct LibraryBuilder {
    target: posegpu::Asset,
    inner: posegpu::LibraryBuilder,
    /// The sources added, by the ids JavaScript holds.
    sources: Vec<posegpu::SourceId>,
}

#[wasm_bindgen]
impl LibraryBuilder {
    /// A library whose instances have `target`'s skeleton.
    #[wasm_bindgen(constructor)]
    pub fn new(target: &Asset) -> LibraryBuilder {
        LibraryBuilder {
            target: target.inner.clone(),
            inner: AnimLibrary::builder(&target.inner.skeleton),
            sources: Vec::new(),
        }
    }

    /// Adds clips of an asset on the target's skeleton (all, or those named).
    #[wasm_bindgen(js_name = addClips)]
    pub fn add_clips(&mut self, asset: &Asset, names: Option<Vec<String>>) -> Result<(), JsError> {
        let clips = asset.clips(names)?;
        self.inner.add_clips(&clips).map_err(error)?;
        Ok(())
    }

    /// Adds a character source: `source`'s clips will play on the target through a
    /// `RetargetPlan` built here (options: `alignRest`, `matchNames`, `translationDeltas`,
    /// `rest` = `"bind"`|`"nodes"`, `boneMap`). Returns the source's id for `addClipsFrom`.
    #[wasm_bindgen(js_name = addCharacterSource)]
    pub fn add_character_source(
        &mut self,
        name: &str,
        source: &Asset,
        #[wasm_bindgen(unchecked_optional_param_type = "PlanOptions")] options: JsValue,
    ) -> Result<u32, JsError> {
        let options = describe_or_default::<PlanSpec>("plan options", &options)?
            .resolve()
            .map_err(error)?;
        let plan = RetargetPlan::new(&source.inner, &self.target, &options).map_err(error)?;
        let id = (self.inner)
            .add_character_source(name, &source.inner, &plan)
            .map_err(error)?;
        self.sources.push(id);
        Ok(self.sources.len() as u32 - 1)
    }

    /// Adds clips of a source added before (all, or those named), retargeted on the GPU.
    #[wasm_bindgen(js_name = addClipsFrom)]
    pub fn add_clips_from(
        &mut self,
        source: u32,
        asset: &Asset,
        names: Option<Vec<String>>,
    ) -> Result<(), JsError> {
        let clips = asset.clips(names)?;
        let id = *self.sources.get(source as usize).ok_or_else(|| {
            error(format!(
                "addClipsFrom: no source {source} (add it with addCharacterSource)"
            ))
        })?;
        self.inner.add_clips_from(id, &clips).map_err(error)?;
        Ok(())
    }

    /// Compresses the clips added from now on within `tolerance` of the skeleton's height
    /// (`undefined`: posegpu's default, 3e-4); `null` stops compressing.
    pub fn compress(
        &mut self,
        #[wasm_bindgen(unchecked_optional_param_type = "number | null")] tolerance: JsValue,
    ) -> Result<(), JsError> {
        let compression = if tolerance.is_null() {
            None
        } else {
            let t = match tolerance.as_f64() {
                Some(t) => t as f32,
                None if tolerance.is_undefined() => posegpu::compress::DEFAULT_TOLERANCE,
                None => return Err(error("compress: a tolerance is a number or null")),
            };
            Some(Compression::all(t).map_err(error)?)
        };
        self.inner.compress(compression);
        Ok(())
    }

    /// Takes root motion from this bone (its motion turned into the character's frame, `up`
    /// in component space, +Y when absent).
    #[wasm_bindgen(js_name = setRootMotionBone)]
    pub fn set_root_motion_bone(
        &mut self,
        bone: &str,
        up: Option<Vec<f32>>,
    ) -> Result<(), JsError> {
        let up = match up.as_deref() {
            None => Vec3::Y,
            Some([x, y, z]) => Vec3::new(*x, *y, *z),
            Some(_) => return Err(error("setRootMotionBone: up is [x, y, z]")),
        };
        self.inner.set_root_motion_bone(bone, up).map_err(error)?;
        Ok(())
    }

    /// The library (this builder is used up).
    pub fn build(self) -> Library {
        Library {
            inner: self.inner.build(),
        }
    }
}

/// A built library: validated, packed, immutable; shared by crowds and evaluators.
#[wasm_bindgen]
pub struct Library {
    pub(crate) inner: AnimLibrary,
}

#[wasm_bindgen]
impl Library {
    /// A library of one asset's clips on its own skeleton (`AnimLibrary::new`).
    #[wasm_bindgen(js_name = fromAsset)]
    pub fn from_asset(asset: &Asset) -> Result<Library, JsError> {
        let inner = AnimLibrary::new(&asset.inner.skeleton, &asset.inner.clips).map_err(error)?;
        Ok(Library { inner })
    }

    /// Bones per instance.
    #[wasm_bindgen(getter, js_name = boneCount)]
    pub fn bone_count(&self) -> usize {
        self.inner.bone_count()
    }

    /// Clips, in id order.
    #[wasm_bindgen(getter, js_name = clipNames)]
    pub fn clip_names(&self) -> Vec<String> {
        self.inner.clip_names().to_vec()
    }

    /// A clip's id by name.
    #[wasm_bindgen(js_name = findClip)]
    pub fn find_clip(&self, name: &str) -> Result<u32, JsError> {
        Ok(self.inner.find_clip(name).map_err(error)?.0)
    }

    /// A clip's duration, seconds.
    #[wasm_bindgen(js_name = clipDuration)]
    pub fn clip_duration(&self, clip: u32) -> Result<f32, JsError> {
        if clip as usize >= self.inner.clip_count() {
            return Err(error(format!(
                "clip {clip} is past the library's {} clips",
                self.inner.clip_count()
            )));
        }
        Ok(self.inner.clip_duration(clip))
    }

    /// The skeleton's size.
    #[wasm_bindgen(getter)]
    pub fn extent(&self) -> f32 {
        self.inner.skeleton().extent()
    }

    /// Bytes of the tables uploaded to the GPU.
    #[wasm_bindgen(getter, js_name = assetBytes)]
    pub fn asset_bytes(&self) -> f64 {
        self.inner.asset_bytes() as f64
    }
}
