//! The evaluator: a frame of clip samples evaluated on WebGPU (`GpuEvaluator`) or by the CPU
//! twin (`evaluateCpu`), and the output chunks a renderer binds.

use posegpu::{AnimLibrary, ClipSample, CpuEvaluator, OutputChunk, PassTimes, SkinningLayout};
use wasm_bindgen::prelude::*;

use super::context::Context;
use super::library::Library;
use super::poses::Poses;
use super::{describe, describe_or_default, error, plain, rejection};
use crate::spec::{OptionsSpec, SampleSpec};

/// Evaluates frames of clip samples (one per instance) on the GPU.
#[wasm_bindgen]
pub struct GpuEvaluator {
    inner: posegpu::GpuEvaluator,
}

#[wasm_bindgen]
impl GpuEvaluator {
    /// Uploads `library` and makes output buffers for `capacity` instances (grown on demand).
    /// `options`: `{outputs: "all" | "componentAndSkinning" | "skinning", skinning: "rows3x4" |
    /// "columns4x4", passes: "auto" | "fused" | "separate", maxBindingSize}`.
    #[wasm_bindgen(unchecked_return_type = "Promise<GpuEvaluator>")]
    pub fn create(
        context: &Context,
        library: &Library,
        capacity: usize,
        #[wasm_bindgen(unchecked_optional_param_type = "GpuOptions")] options: JsValue,
    ) -> js_sys::Promise {
        let (ctx, lib) = (context.inner.clone(), library.inner.clone());
        let options = describe_or_default::<OptionsSpec>("options", &options)
            .map_err(JsValue::from)
            .and_then(|o| o.resolve().map_err(rejection));
        wasm_bindgen_futures::future_to_promise(async move {
            let options = options?;
            let inner = posegpu::GpuEvaluator::new_async(&ctx, &lib, capacity, &options)
                .await
                .map_err(rejection)?;
            Ok(GpuEvaluator { inner }.into())
        })
    }

    /// Uploads a frame (`[{clip, time, looping}]`, one per instance) and records and submits
    /// its passes; the output chunks then hold its poses.
    pub fn evaluate(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ClipSampleSpec[]")] samples: JsValue,
    ) -> Result<(), JsError> {
        let frame = samples_of(self.inner.library(), &samples)?;
        self.inner.evaluate(&frame).map_err(error)
    }

    /// The same, then each pass's GPU time: `{totalMs, passes: [{pass, ms}]}`, or `null`
    /// without timestamp queries.
    #[wasm_bindgen(
        js_name = evaluateTimed,
        unchecked_return_type = "Promise<PassTimesSpec | null>"
    )]
    pub fn evaluate_timed(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "ClipSampleSpec[]")] samples: JsValue,
    ) -> js_sys::Promise {
        let frame = samples_of(self.inner.library(), &samples).map_err(JsValue::from);
        let times = frame.map(|f| self.inner.evaluate_timed_async(&f));
        wasm_bindgen_futures::future_to_promise(async move {
            let times = times?.await.map_err(rejection)?;
            pass_times(times.as_ref())
        })
    }

    /// Reads the last frame's outputs back (one copy per buffer, then a map).
    #[wasm_bindgen(js_name = readBack, unchecked_return_type = "Promise<Poses>")]
    pub fn read_back(&self) -> js_sys::Promise {
        let poses = self.inner.read_back_async();
        wasm_bindgen_futures::future_to_promise(async move {
            Ok(Poses::new(poses.await.map_err(rejection)?).into())
        })
    }

    /// The output chunks: `[{first, count, skinning, component, locals, skinningLayout}]`, each
    /// buffer a `GPUBuffer` (or `null` when not kept), instance-major.
    #[wasm_bindgen(getter, unchecked_return_type = "OutputChunkSpec[]")]
    pub fn chunks(&self) -> js_sys::Array {
        chunks(self.inner.chunks(), &[])
    }

    /// Bones per instance.
    #[wasm_bindgen(getter, js_name = boneCount)]
    pub fn bone_count(&self) -> usize {
        self.inner.library().bone_count()
    }
}

/// The CPU twin: a frame of clip samples evaluated on the host (the oracle the GPU matches).
#[wasm_bindgen(js_name = evaluateCpu)]
pub fn evaluate_cpu(
    library: &Library,
    #[wasm_bindgen(unchecked_param_type = "ClipSampleSpec[]")] samples: JsValue,
) -> Result<Poses, JsError> {
    let frame = samples_of(&library.inner, &samples)?;
    let mut out = posegpu::Poses::default();
    CpuEvaluator::new(&library.inner)
        .evaluate(&frame, &mut out)
        .map_err(error)?;
    Ok(Poses::new(out))
}

fn samples_of(lib: &AnimLibrary, samples: &JsValue) -> Result<Vec<ClipSample>, JsError> {
    let specs: Vec<SampleSpec> = describe("samples", samples)?;
    (specs.iter().enumerate())
        .map(|(i, s)| {
            s.resolve(lib)
                .map_err(|e| error(format!("sample {i}: {e}")))
        })
        .collect()
}

/// Pass times as `{totalMs, passes: [{pass, ms}]}`, or `null`.
pub(crate) fn pass_times(times: Option<&PassTimes>) -> Result<JsValue, JsValue> {
    let Some(t) = times else {
        return Ok(JsValue::NULL);
    };
    #[derive(serde::Serialize)]
    struct PassMs {
        pass: &'static str,
        ms: f64,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Times {
        total_ms: f64,
        passes: Vec<PassMs>,
    }
    let times = Times {
        total_ms: t.total_ns() / 1e6,
        passes: (t.passes().iter())
            .map(|(pass, ns)| PassMs {
                pass: pass.label(),
                ms: ns / 1e6,
            })
            .collect(),
    };
    plain(&times).map_err(JsValue::from)
}

/// The chunks as plain objects; a crowd's root-motion buffers (by their first instance) join
/// theirs as `rootMotion`.
pub(crate) fn chunks(list: &[OutputChunk], motion: &[(usize, &wgpu::Buffer)]) -> js_sys::Array {
    let out = js_sys::Array::new();
    for c in list.iter().filter(|c| c.count > 0) {
        let o = js_sys::Object::new();
        let set = |key: &str, value: JsValue| {
            // A fresh plain object takes any property.
            let _ = js_sys::Reflect::set(&o, &key.into(), &value);
        };
        let buffer = |b: Option<&wgpu::Buffer>| {
            b.and_then(|b| b.as_webgpu())
                .map_or(JsValue::NULL, |b| JsValue::from(b.clone()))
        };
        set("first", (c.first as f64).into());
        set("count", (c.count as f64).into());
        set("skinning", buffer(Some(&c.skinning)));
        set("component", buffer(c.component.as_ref()));
        set("locals", buffer(c.locals.as_ref()));
        let layout = match c.skinning_layout {
            SkinningLayout::Rows3x4 => "rows3x4",
            SkinningLayout::Columns4x4 => "columns4x4",
        };
        set("skinningLayout", layout.into());
        if let Some((_, b)) = motion.iter().find(|(first, _)| *first == c.first) {
            set("rootMotion", buffer(Some(b)));
        }
        out.push(&o);
    }
    out
}
