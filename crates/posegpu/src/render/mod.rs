//! Drawing skinned crowds from posegpu's output buffers: the renderer's side of the
//! integration, headless (an offscreen target) or into a caller's own views.
//!
//! Order of operations, in one submission (or two: evaluate, submit, draw, submit):
//! 1. the evaluator writes this frame's instances ([`crate::GpuEvaluator::write`]; a
//!    [`crate::GpuCrowd`] advances its players),
//! 2. it records its compute passes into the encoder ([`crate::GpuEvaluator::encode`]),
//! 3. [`CrowdRenderer::draw`] records a render pass whose vertex shader reads each chunk's
//!    `skinning` buffer as a read-only storage buffer; wgpu orders the compute writes before
//!    the vertex reads, so nothing is copied or read back.

mod mesh;
mod renderer;
mod target;

pub use mesh::{grid_placements, rest_skinning, SkinnedMesh, SkinnedVertex};
pub use renderer::{
    check_placements, placements_buffer, Camera, CrowdRenderer, DrawChunk, BACKGROUND,
    COLOR_FORMAT, DEPTH_FORMAT,
};
pub use target::RenderTarget;
