//! Assets loaded from bytes: `load(bytes, format)` and what a renderer needs of a skeleton.

use posegpu::import::{load_bytes, Format};
use wasm_bindgen::prelude::*;

use super::error;

/// A skeleton and its clips, from glTF or BVH bytes.
#[wasm_bindgen]
pub struct Asset {
    pub(crate) inner: posegpu::Asset,
}

/// Loads glTF (`"glb"`, `"gltf"`: embedded buffers only) or BVH (`"bvh"`) bytes. `name` stands
/// for the data in error messages (and names a BVH's clip). Rejects with posegpu's message.
#[wasm_bindgen]
pub async fn load(bytes: Vec<u8>, format: String, name: Option<String>) -> Result<Asset, JsError> {
    let f = Format::from_name(&format)
        .ok_or_else(|| error(format!("unknown format {format:?} (one of glb, gltf, bvh)")))?;
    let name = name.unwrap_or_else(|| format!("data.{format}"));
    let inner = load_bytes(&bytes, f, &name).map_err(error)?;
    Ok(Asset { inner })
}

#[wasm_bindgen]
impl Asset {
    /// Bones, parents first.
    #[wasm_bindgen(getter, js_name = boneCount)]
    pub fn bone_count(&self) -> usize {
        self.inner.skeleton.len()
    }

    /// Bone names, in bone order.
    #[wasm_bindgen(getter, js_name = boneNames)]
    pub fn bone_names(&self) -> Vec<String> {
        self.inner.skeleton.names().to_vec()
    }

    /// Each bone's parent, -1 for roots.
    #[wasm_bindgen(getter)]
    pub fn parents(&self) -> Vec<i32> {
        let s = &self.inner.skeleton;
        (0..s.len())
            .map(|b| s.parent(b).map_or(-1, |p| p as i32))
            .collect()
    }

    /// For glTF, each bone's index in the skin's `joints` (what a mesh's `JOINTS_0` refers
    /// to; bones the importer added between joints have indices at or past the joint count).
    #[wasm_bindgen(getter, js_name = sourceIndex)]
    pub fn source_index(&self) -> Vec<u32> {
        (self.inner.skeleton.source_index().iter())
            .map(|&i| i as u32)
            .collect()
    }

    /// Clip names.
    #[wasm_bindgen(getter, js_name = clipNames)]
    pub fn clip_names(&self) -> Vec<String> {
        (self.inner.clips.iter())
            .map(|c| c.name().to_string())
            .collect()
    }

    /// The skeleton's size (`Skeleton::extent`).
    #[wasm_bindgen(getter)]
    pub fn extent(&self) -> f32 {
        self.inner.skeleton.extent()
    }

    /// `posegpu check`'s tolerance for this skeleton, relative to its size.
    #[wasm_bindgen(getter)]
    pub fn tolerance(&self) -> f32 {
        crate::fixtures::tolerance(&self.inner.skeleton)
    }

    /// A test aid: a hash of what the compressor makes of the clips named (all when absent) at
    /// `tolerance` (`fixtures::compression_fingerprint`): bit rates, sizes, decoded keys.
    #[wasm_bindgen(js_name = compressionFingerprint)]
    pub fn compression_fingerprint(
        &self,
        tolerance: f32,
        names: Option<Vec<String>>,
    ) -> Result<String, JsError> {
        crate::fixtures::compression_fingerprint(&self.inner, &names.unwrap_or_default(), tolerance)
            .map_err(error)
    }

    /// The clips named (all when absent) as a `.glb` (`export::glb_bytes`, no template).
    #[wasm_bindgen(js_name = exportGlb)]
    pub fn export_glb(&self, name: String, clips: Option<Vec<String>>) -> Result<Vec<u8>, JsError> {
        let chosen = self.clips(clips)?;
        posegpu::export::glb_bytes(&name, &self.inner.skeleton, &chosen, None).map_err(error)
    }
}

impl Asset {
    /// The clips named, all when `names` is absent; an unknown name is an error.
    pub(crate) fn clips(&self, names: Option<Vec<String>>) -> Result<Vec<posegpu::Clip>, JsError> {
        let Some(names) = names else {
            return Ok(self.inner.clips.clone());
        };
        names
            .iter()
            .map(|n| {
                (self.inner.clips.iter())
                    .find(|c| c.name() == n)
                    .cloned()
                    .ok_or_else(|| {
                        error(format!(
                            "no clip named {n:?} (the asset has {})",
                            self.clip_names().join(", ")
                        ))
                    })
            })
            .collect()
    }
}
