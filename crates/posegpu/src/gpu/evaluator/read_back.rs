//! Reading the outputs back: every chunk's buffers copied to mappable ones in one submission,
//! then mapped, blocking or as a future.

use std::ops::Range;

use super::super::outputs::{Outputs, SkinningLayout};
use super::super::util::MapAll;
use super::{GpuEvaluator, XFORM_BYTES};
use crate::error::{Error, Result};
use crate::pose::Poses;

impl GpuEvaluator {
    /// Copies the last frame's outputs back to host memory (blocking): one submission for all
    /// the copies, then one map per buffer.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_back(&self) -> Result<Poses> {
        super::super::util::block_on_device(&self.device, self.stage_outputs())
    }

    /// The same without blocking: records and submits the copies now, and returns a future
    /// that resolves once the buffers are mapped. Nothing here waits on the device, so it
    /// suits a frame loop and WebGPU; on native backends the host keeps the device polled
    /// (`device.poll(wgpu::PollType::Poll)` once a frame, as engines do) for it to resolve.
    pub fn read_back_async(&self) -> impl std::future::Future<Output = Result<Poses>> + 'static {
        self.stage_outputs()
    }

    /// Copies every chunk's outputs to mappable buffers, submits, and asks for their mapping.
    fn stage_outputs(&self) -> ReadBack {
        let bones = self.lib.bone_count();
        let curves = self.lib.curve_names().len();
        let total: usize = self.chunks.iter().map(|c| c.count).sum();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut staged = Vec::new();
        for chunk in self.chunks.iter().filter(|c| c.count > 0) {
            let n = (chunk.count * bones) as u64;
            let mut stage = |buffer: &wgpu::Buffer, size: u64| {
                let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("readback"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
                staging
            };
            staged.push(StagedChunk {
                bones: chunk.first * bones..(chunk.first + chunk.count) * bones,
                curves: chunk.first * curves..(chunk.first + chunk.count) * curves,
                locals: chunk.locals.as_ref().map(|b| stage(b, n * XFORM_BYTES)),
                component: chunk.component.as_ref().map(|b| stage(b, n * XFORM_BYTES)),
                skinning: stage(&chunk.skinning, n * chunk.skinning_layout.bytes()),
                layout: chunk.skinning_layout,
                // At least 4 bytes: a copy may not be empty.
                curve_values: stage(&chunk.curves, (chunk.count * curves * 4).max(4) as u64),
            });
        }
        self.queue.submit([encoder.finish()]);
        let buffers = staged.iter().flat_map(|c| {
            [&c.skinning, &c.curve_values]
                .into_iter()
                .chain(c.locals.iter())
                .chain(c.component.iter())
        });
        ReadBack {
            mapped: MapAll::new(buffers),
            staged,
            bones,
            curves,
            total,
            outputs: self.outputs,
        }
    }
}

/// One chunk's output copies: its ranges in the poses and the staged buffers.
struct StagedChunk {
    bones: Range<usize>,
    curves: Range<usize>,
    locals: Option<wgpu::Buffer>,
    component: Option<wgpu::Buffer>,
    skinning: wgpu::Buffer,
    layout: SkinningLayout,
    curve_values: wgpu::Buffer,
}

/// Staged output copies, resolving to [`Poses`] once every buffer is mapped.
struct ReadBack {
    mapped: MapAll,
    staged: Vec<StagedChunk>,
    bones: usize,
    curves: usize,
    total: usize,
    outputs: Outputs,
}

/// Copies a mapped buffer's first bytes into `dst` (cast from an aligned destination: the
/// mapped copy has no alignment promise) and unmaps it.
fn copy_mapped(dst: &mut [u8], buffer: &wgpu::Buffer) -> Result<()> {
    let view = buffer
        .get_mapped_range(..)
        .map_err(|e| Error::gpu("reading a mapped buffer", e))?;
    dst.copy_from_slice(&view[..dst.len()]);
    drop(view);
    buffer.unmap();
    Ok(())
}

impl ReadBack {
    /// The poses from the mapped copies: the outputs not kept are left empty.
    fn poses(&self) -> Result<Poses> {
        let mut poses = Poses::default();
        poses.resize(self.bones, self.curves, self.total);
        let mut words = Vec::new();
        for c in &self.staged {
            let r = c.bones.clone();
            if let Some(b) = &c.locals {
                copy_mapped(bytemuck::cast_slice_mut(&mut poses.locals[r.clone()]), b)?;
            }
            if let Some(b) = &c.component {
                copy_mapped(bytemuck::cast_slice_mut(&mut poses.component[r.clone()]), b)?;
            }
            if c.layout == SkinningLayout::Rows3x4 {
                copy_mapped(
                    bytemuck::cast_slice_mut(&mut poses.skinning[r]),
                    &c.skinning,
                )?;
            } else {
                let per = c.layout.words() as usize * 4;
                words.resize(r.len() * per, 0.0f32);
                copy_mapped(bytemuck::cast_slice_mut(&mut words), &c.skinning)?;
                for (m, w) in poses.skinning[r].iter_mut().zip(words.chunks_exact(per)) {
                    *m = c.layout.rows(w);
                }
            }
            copy_mapped(
                bytemuck::cast_slice_mut(&mut poses.curves[c.curves.clone()]),
                &c.curve_values,
            )?;
        }
        if !self.outputs.locals {
            poses.locals = Vec::new();
        }
        if !self.outputs.component {
            poses.component = Vec::new();
        }
        Ok(poses)
    }
}

impl std::future::Future for ReadBack {
    type Output = Result<Poses>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        match std::pin::Pin::new(&mut this.mapped).poll(cx) {
            std::task::Poll::Pending => std::task::Poll::Pending,
            std::task::Poll::Ready(Err(e)) => std::task::Poll::Ready(Err(e)),
            std::task::Poll::Ready(Ok(())) => std::task::Poll::Ready(this.poses()),
        }
    }
}
