//! Poses brought to the host (a GPU read-back or the CPU twin's), as typed arrays.

use wasm_bindgen::prelude::*;

use super::error;
use crate::fixtures::{component_deviation, pose_hashes, xform_floats};

/// Local and component-space transforms (12 floats a bone: rotation xyzw, translation xyz0,
/// scale xyz0) and skinning matrices (12 floats a bone in 3x4 rows, 16 in 4x4 columns),
/// instance-major (`instance * boneCount + bone`).
#[wasm_bindgen]
pub struct Poses {
    inner: posegpu::Poses,
}

impl Poses {
    pub(crate) fn new(inner: posegpu::Poses) -> Self {
        Self { inner }
    }
}

#[wasm_bindgen]
impl Poses {
    /// Instances held.
    #[wasm_bindgen(getter, js_name = instanceCount)]
    pub fn instance_count(&self) -> usize {
        self.inner.instance_count()
    }

    /// Bones per instance.
    #[wasm_bindgen(getter, js_name = boneCount)]
    pub fn bone_count(&self) -> usize {
        self.inner.bone_count
    }

    /// Local transforms (empty when the evaluator did not keep them).
    #[wasm_bindgen(getter)]
    pub fn locals(&self) -> Vec<f32> {
        self.inner.locals.iter().flat_map(xform_floats).collect()
    }

    /// Component-space transforms (empty when the evaluator did not keep them).
    #[wasm_bindgen(getter)]
    pub fn component(&self) -> Vec<f32> {
        self.inner.component.iter().flat_map(xform_floats).collect()
    }

    /// Skinning matrices, 3x4 rows (`M(CS) · inverseBind`), 12 floats a bone.
    #[wasm_bindgen(getter)]
    pub fn skinning(&self) -> Vec<f32> {
        self.inner.skinning.iter().flatten().copied().collect()
    }

    /// FNV-1a hashes of the bytes of `{locals, component, skinning}`: equal hashes, equal bits.
    pub fn hashes(&self) -> Result<JsValue, JsError> {
        let [locals, component, skinning] = pose_hashes(&self.inner);
        let map = std::collections::BTreeMap::from([
            ("locals", locals),
            ("component", component),
            ("skinning", skinning),
        ]);
        super::plain(&map)
    }

    /// The largest deviation of these component transforms from `expected` (12 floats a
    /// bone, the same instances), as `posegpu check` measures it: translations over `extent`,
    /// rotations up to sign, scales absolute.
    #[wasm_bindgen(js_name = componentDeviation)]
    pub fn component_deviation(&self, expected: Vec<f32>, extent: f32) -> Result<f32, JsError> {
        let actual = self.component();
        component_deviation(&actual, &expected, extent).ok_or_else(|| {
            error(format!(
                "componentDeviation: {} floats against {} expected",
                actual.len(),
                expected.len()
            ))
        })
    }
}
