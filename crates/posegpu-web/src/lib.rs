//! posegpu in the browser: a JavaScript/TypeScript package (wasm-bindgen) that loads glTF and
//! BVH bytes, builds libraries (with character retargeting and compressed keys), and plays
//! crowds and evaluators on WebGPU, on a device posegpu opens and hands to the page or on the
//! page's own `GPUDevice`. The skinning matrices stay on the device: each chunk's `GPUBuffer`
//! is what a renderer binds (`npm/three.js` feeds three.js's WebGPU renderer from it).
//!
//! The modules that do not touch JavaScript are compiled natively too: `spec` (the agent and
//! option descriptions the JavaScript side passes) and `fixtures` (numbers of the CPU twin the
//! browser tests compare against, written natively by the `posegpu-web-fixtures` binary).
//! The guide is `docs/guide/web.md`.

pub mod fixtures;
pub mod spec;

#[cfg(target_arch = "wasm32")]
pub mod js;
