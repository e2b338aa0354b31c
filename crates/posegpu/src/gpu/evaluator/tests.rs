//! The resolve pass against its CPU twin: the key searches the GPU writes after a frame's
//! entries are the ones `cpu::resolve` makes, sample by sample.

use super::{GpuEvaluator, GpuOptions};
use crate::batch::{ClipSample, PoseBatch};
use crate::cpu::resolve;
use crate::gpu::util::read_mapped;
use crate::gpu::GpuContext;
use crate::layout::{KeySearch, LAYER_SAMPLES_SHIFT};
use crate::library::AnimLibrary;
use crate::procedural::random_asset;

/// A device, lavapipe included; `None` (the test skipped) without one, except under `CI=true`.
fn gpu() -> Option<GpuContext> {
    match GpuContext::new() {
        Ok(ctx) => Some(ctx),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but no GPU adapter: {e}")
        }
        Err(e) => {
            eprintln!("skipping a GPU test: {e}");
            None
        }
    }
}

#[test]
fn the_resolve_pass_writes_the_searches_its_twin_makes() {
    let Some(ctx) = gpu() else { return };
    // Clips whose channels have key times of their own, of several lengths.
    let asset = random_asset(11, 23, 4);
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..150u32 {
        // Before, inside and past each clip, looping and clamped, some instances blending.
        let (clip, time) = (i % 4, i as f32 * 0.037 - 0.5);
        if i % 3 == 0 {
            let other = ClipSample::new((clip + 1) % 4, time * 0.7, false);
            batch.push_blend(&[ClipSample::new(clip, time, true), other]);
        } else {
            batch.push_clip(clip, time, i % 2 == 0);
        }
    }
    let mut gpu = GpuEvaluator::new(&ctx, &lib, batch.len(), &GpuOptions::default()).unwrap();
    gpu.evaluate(&batch).unwrap();
    let (heads, entries) = (batch.heads(), batch.entries());
    let words = heads.len() + entries.len();
    let chunk = &gpu.chunks()[0];
    let bytes = 16 * 2 * words as u64;
    let device = gpu.device();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("resolved rows"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(chunk.frame(), 0, &staging, 0, bytes);
    gpu.queue().submit([encoder.finish()]);
    let frame = read_mapped(device, &staging).unwrap();
    let frame: &[KeySearch] = bytemuck::cast_slice(&frame);

    let mut rows = vec![KeySearch::NONE; entries.len()];
    for head in heads {
        resolve::run_instance(&lib, entries, head, &mut rows);
    }
    let mut samples = 0;
    for head in heads {
        let layer = head.first as usize;
        let n = (entries[layer][0] >> LAYER_SAMPLES_SHIFT) as usize;
        for e in layer + 1..=layer + n {
            // Entry `e` of the batch is word `heads + e` of the chunk's frame.
            let gpu_row = frame[words + heads.len() + e];
            assert_eq!(gpu_row, rows[e], "the sample at entry {e}");
            assert_eq!(rows[e], resolve::sample_search(&lib, &entries[e]));
            samples += 1;
        }
    }
    assert_eq!(samples, 200);
    // The searches found keys inside the clips as well as at their ends.
    assert!(rows.iter().any(|r| r.hi > r.lo && r.alpha > 0.0));
    assert!(rows
        .iter()
        .any(|r| r.time_offset != u32::MAX && r.hi == r.lo));
}
