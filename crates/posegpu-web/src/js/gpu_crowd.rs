//! A crowd on the GPU: `step(dt)` each frame (players advance, root motion, poses, in one
//! submission, nothing uploaded but `dt`), the skinning and root-motion buffers per chunk.

use wasm_bindgen::prelude::*;

use super::context::Context;
use super::crowd::Crowd;
use super::evaluator::{chunks, pass_times};
use super::library::Library;
use super::poses::Poses;
use super::{describe, describe_or_default, error, plain, rejection};
use crate::fixtures::transform_floats;
use crate::spec::{OptionsSpec, PlacementSpec};

/// A `Crowd` played on the GPU.
#[wasm_bindgen]
pub struct GpuCrowd {
    inner: posegpu::GpuCrowd,
}

#[wasm_bindgen]
impl GpuCrowd {
    /// Uploads `library` and the crowd's state as it is now. `options` as for
    /// `GpuEvaluator.create` (a renderer alone: `{outputs: "skinning"}`).
    #[wasm_bindgen(unchecked_return_type = "Promise<GpuCrowd>")]
    pub fn create(
        context: &Context,
        library: &Library,
        crowd: &Crowd,
        #[wasm_bindgen(unchecked_optional_param_type = "GpuOptions")] options: JsValue,
    ) -> js_sys::Promise {
        let (ctx, lib, crowd) = (
            context.inner.clone(),
            library.inner.clone(),
            crowd.inner.clone(),
        );
        let options = describe_or_default::<OptionsSpec>("options", &options)
            .map_err(JsValue::from)
            .and_then(|o| o.resolve().map_err(rejection));
        wasm_bindgen_futures::future_to_promise(async move {
            let options = options?;
            let inner = posegpu::GpuCrowd::new_async(&ctx, &lib, &crowd, &options)
                .await
                .map_err(rejection)?;
            Ok(GpuCrowd { inner }.into())
        })
    }

    /// Advances every player by `dt` seconds and evaluates every pose, on the GPU, without
    /// waiting. Draw after it: the skinning buffers then hold this step's matrices.
    pub fn step(&mut self, dt: f32) -> Result<(), JsError> {
        self.inner.advance(dt).map_err(error)
    }

    /// The same, then the step's GPU time per pass: `{totalMs, passes: [{pass, ms}]}`, or
    /// `null` without timestamp queries.
    #[wasm_bindgen(js_name = stepTimed, unchecked_return_type = "Promise<PassTimesSpec | null>")]
    pub fn step_timed(&mut self, dt: f32) -> js_sys::Promise {
        let times = self.inner.advance_timed_async(dt);
        wasm_bindgen_futures::future_to_promise(async move {
            let times = times.await.map_err(rejection)?;
            pass_times(times.as_ref())
        })
    }

    /// Per chunk: `{first, count, skinning, component, locals, skinningLayout, rootMotion}`;
    /// `rootMotion` holds 96 bytes an instance, the step's delta then the placement, each
    /// `{rotation xyzw, translation xyz0, scale xyz0}`.
    #[wasm_bindgen(getter, unchecked_return_type = "OutputChunkSpec[]")]
    pub fn chunks(&self) -> js_sys::Array {
        let motion: Vec<(usize, &wgpu::Buffer)> = (self.inner.root_motion_buffers())
            .map(|(first, _, b)| (first, b))
            .collect();
        chunks(self.inner.evaluator().chunks(), &motion)
    }

    /// The number of instances.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// Bones per instance.
    #[wasm_bindgen(getter, js_name = boneCount)]
    pub fn bone_count(&self) -> usize {
        self.inner.evaluator().library().bone_count()
    }

    /// Each instance's placement, moved by its root motion so far: 10 floats (translation
    /// xyz, rotation xyzw, scale xyz).
    #[wasm_bindgen(js_name = readPlacements, unchecked_return_type = "Promise<Float32Array>")]
    pub fn read_placements(&self) -> js_sys::Promise {
        let placements = self.inner.read_placements_async();
        wasm_bindgen_futures::future_to_promise(async move {
            let list = placements.await.map_err(rejection)?;
            let floats: Vec<f32> = list.iter().flat_map(transform_floats).collect();
            Ok(js_sys::Float32Array::from(floats.as_slice()).into())
        })
    }

    /// The instances whose non-looping track ended in the last step.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint32Array>")]
    pub fn finished(&self) -> js_sys::Promise {
        let finished = self.inner.finished_async();
        wasm_bindgen_futures::future_to_promise(async move {
            let list = finished.await.map_err(rejection)?;
            Ok(js_sys::Uint32Array::from(list.as_slice()).into())
        })
    }

    /// What the players passed in the last step: `[{instance, player, kind}]` (kind: a notify
    /// id, `"looped"` or a montage segment).
    #[wasm_bindgen(unchecked_return_type = "Promise<Array<object>>")]
    pub fn events(&self) -> js_sys::Promise {
        let events = self.inner.events_async();
        wasm_bindgen_futures::future_to_promise(async move {
            let list = events.await.map_err(rejection)?;
            let plain_list: Vec<serde_json::Value> = (list.iter())
                .map(|e| {
                    serde_json::json!({
                        "instance": e.instance,
                        "player": e.player,
                        "kind": format!("{:?}", e.kind),
                    })
                })
                .collect();
            plain(&plain_list).map_err(JsValue::from)
        })
    }

    /// The poses of the last step, read back (when the crowd keeps component transforms).
    #[wasm_bindgen(js_name = readPoses, unchecked_return_type = "Promise<Poses>")]
    pub fn read_poses(&self) -> js_sys::Promise {
        let poses = self.inner.evaluator().read_back_async();
        wasm_bindgen_futures::future_to_promise(async move {
            Ok(Poses::new(poses.await.map_err(rejection)?).into())
        })
    }

    /// Moves an instance, on the GPU.
    #[wasm_bindgen(js_name = setPlacement)]
    pub fn set_placement(
        &mut self,
        instance: usize,
        #[wasm_bindgen(unchecked_param_type = "Placement")] placement: JsValue,
    ) -> Result<(), JsError> {
        let p: PlacementSpec = describe("placement", &placement)?;
        self.inner
            .set_placement(instance, p.transform())
            .map_err(error)
    }

    /// Sets an instance's player weights, on the GPU.
    #[wasm_bindgen(js_name = setWeights)]
    pub fn set_weights(&mut self, instance: usize, weights: Vec<f32>) -> Result<(), JsError> {
        self.inner.set_weights(instance, &weights).map_err(error)
    }

    /// Puts an instance's players back at their start positions.
    pub fn restart(&mut self, instance: usize) -> Result<(), JsError> {
        self.inner.restart(instance).map_err(error)
    }
}
