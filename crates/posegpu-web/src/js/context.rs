//! The WebGPU device: one posegpu opens and hands to the page (`Context.create()`, then
//! `context.device` is the `GPUDevice` a renderer such as three.js is given), or the page's
//! own (`Context.fromDevice(device)`).
//!
//! wgpu 30 has no public way to wrap a foreign `GPUDevice` (its WebGPU backend's wrappers are
//! crate-private; `Device::from_custom` means reimplementing the whole backend), but it reads
//! `navigator.gpu` when asked for an adapter and takes the device `requestDevice` resolves
//! with as it is. So `fromDevice` answers those two calls with the page's device for the
//! duration of one `GpuContext::new_async`, and puts `navigator.gpu` back.

use posegpu::GpuContext;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{error, rejection};

#[wasm_bindgen(inline_js = r#"
export function lendDevice(device) {
  const nav = globalThis.navigator;
  const real = nav.gpu;
  const info = device.adapterInfo || {};
  const adapter = {
    features: device.features,
    limits: device.limits,
    info,
    isFallbackAdapter: !!info.isFallbackAdapter,
    requestDevice: async () => device,
  };
  const gpu = {
    requestAdapter: async () => adapter,
    getPreferredCanvasFormat: () => (real ? real.getPreferredCanvasFormat() : 'bgra8unorm'),
    wgslLanguageFeatures: real ? real.wgslLanguageFeatures : new Set(),
  };
  Object.defineProperty(nav, 'gpu', { value: gpu, configurable: true });
}
export function returnDevice() {
  const nav = globalThis.navigator;
  if (Object.prototype.hasOwnProperty.call(nav, 'gpu')) delete nav.gpu;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = lendDevice, catch)]
    fn lend_device(device: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = returnDevice)]
    fn return_device();
}

/// A WebGPU device and queue posegpu evaluates on.
#[wasm_bindgen]
pub struct Context {
    pub(crate) inner: GpuContext,
}

#[wasm_bindgen]
impl Context {
    /// Asks the browser for a high-performance adapter and opens a device with every limit it
    /// has and timestamp queries where available. Rejects where there is no WebGPU.
    pub async fn create() -> Result<Context, JsError> {
        let inner = GpuContext::new_async().await.map_err(error)?;
        Ok(Context { inner })
    }

    /// Evaluates on the page's own `GPUDevice` (posegpu's buffers are then that device's). The
    /// device should have the limits posegpu needs: 8 storage buffers per stage (WebGPU's
    /// default) and storage bindings that hold the library's tables.
    #[wasm_bindgen(js_name = fromDevice, unchecked_return_type = "Promise<Context>")]
    pub fn from_device(
        #[wasm_bindgen(unchecked_param_type = "GPUDevice")] device: JsValue,
    ) -> js_sys::Promise {
        wasm_bindgen_futures::future_to_promise(async move {
            lend_device(&device).map_err(|e| rejection(describe_js(&e)))?;
            let ctx = GpuContext::new_async().await;
            return_device();
            let inner = ctx.map_err(rejection)?;
            Ok(Context { inner }.into())
        })
    }

    /// The `GPUDevice` posegpu's buffers live on: give it to the renderer.
    #[wasm_bindgen(getter, unchecked_return_type = "GPUDevice")]
    pub fn device(&self) -> Result<JsValue, JsError> {
        (self.inner.device.as_webgpu())
            .map(|d| JsValue::from(d.clone()))
            .ok_or_else(|| error("the device is not on the WebGPU backend"))
    }

    /// The adapter: name, type and backend.
    #[wasm_bindgen(getter)]
    pub fn adapter(&self) -> String {
        self.inner.describe()
    }

    /// Whether pass times can be measured (timestamp queries).
    #[wasm_bindgen(getter, js_name = hasTimestamps)]
    pub fn has_timestamps(&self) -> bool {
        self.inner.has_timestamps()
    }
}

fn describe_js(value: &JsValue) -> String {
    value
        .as_string()
        .or_else(|| (value.dyn_ref::<js_sys::Error>()).map(|e| String::from(e.message())))
        .unwrap_or_else(|| "lending the device failed".into())
}
