//! What a web page's device gives: WebGPU's default limits and no optional feature, and the
//! async calls a browser awaits (constructors, read-backs, pass times). Natively the futures
//! are driven as a browser's event loop would drive them: polled, with the device polled in
//! between so that map callbacks run.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use posegpu::{
    procedural, AdditiveSpace, AnimLibrary, ClipSample, Deviation, FusePolicy, GpuContext,
    GpuCrowd, GpuEvaluator, GpuOptions, PoseBatch,
};

use crate::common::{self, cpu_eval_batch, TOLERANCE};

/// A device on `ctx`'s adapter with WebGPU's default limits and no features, as
/// `requestDevice()` without arguments gives a page.
fn default_device(ctx: &GpuContext) -> GpuContext {
    let adapter = common::adapter_of(ctx);
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: wgpu::Features::empty(),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))
    .unwrap();
    assert_eq!(device.limits(), wgpu::Limits::default());
    GpuContext::from_device(device, queue, adapter.get_info())
}

/// Runs `work`, polling `device` whenever it waits.
fn drive<T>(device: &wgpu::Device, work: impl Future<Output = T>) -> T {
    let mut work = std::pin::pin!(work);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = work.as_mut().poll(&mut cx) {
            return out;
        }
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    }
}

#[test]
fn a_crowd_plays_on_webgpu_default_limits_through_the_async_calls() {
    let Some(native) = common::gpu() else { return };
    let ctx = default_device(&native);
    let asset = procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    for passes in [FusePolicy::Fused, FusePolicy::Separate] {
        let options = GpuOptions {
            passes,
            ..GpuOptions::default()
        };
        let mut cpu = procedural::humanoid_crowd(&lib, 64).unwrap();
        let new = GpuCrowd::new_async(&ctx, &lib, &cpu, &options);
        let mut gpu = drive(&ctx.device, new).unwrap();
        for dt in [0.016, 0.4, 1.1] {
            cpu.advance(&lib, dt).unwrap();
            // No timestamp queries on this device: no pass times, at once.
            let times = drive(&ctx.device, gpu.advance_timed_async(dt)).unwrap();
            assert!(times.is_none());
            let what = format!("{passes:?}, dt {dt}");
            let players = drive(&ctx.device, gpu.read_players_async()).unwrap();
            for (g, c) in players.iter().zip(cpu.all_players()) {
                assert!((g.position - c.position).abs() <= 1e-4, "{what}");
            }
            let placements = drive(&ctx.device, gpu.read_placements_async()).unwrap();
            for (g, c) in placements.iter().zip(cpu.placements()) {
                let d = (g.translation - c.translation).abs().max_element();
                assert!(d <= 1e-3, "{what}: {g:?} vs {c:?}");
            }
            assert_eq!(
                drive(&ctx.device, gpu.finished_async()).unwrap(),
                cpu.finished(),
                "{what}"
            );
            let poses = drive(&ctx.device, gpu.evaluator().read_back_async()).unwrap();
            let d = Deviation::between(&poses, &cpu_eval_batch(&lib, &cpu.batch()))
                .relative(lib.skeleton().extent());
            assert!(d <= TOLERANCE, "{what}: poses differ by {d:e}");
        }
    }
}

#[test]
fn an_evaluator_built_async_runs_layered_frames_on_webgpu_default_limits() {
    let Some(native) = common::gpu() else { return };
    let ctx = default_device(&native);
    let asset = procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..40u32 {
        let t = 0.07 * i as f32;
        let base = [
            ClipSample::new(i % 4, t, true).with_weight(0.6),
            ClipSample::new((i + 1) % 4, t, true).with_weight(0.4),
        ];
        let layer = [ClipSample::new((i + 2) % 4, t, true)];
        batch
            .push_blend(&base)
            .blend(AdditiveSpace::Mesh, 0.5, &layer);
    }
    let options = GpuOptions::default();
    let new = GpuEvaluator::new_async(&ctx, &lib, batch.len(), &options);
    let mut gpu = drive(&ctx.device, new).unwrap();
    assert!(drive(&ctx.device, gpu.evaluate_timed_async(&batch))
        .unwrap()
        .is_none());
    let poses = drive(&ctx.device, gpu.read_back_async()).unwrap();
    let d =
        Deviation::between(&poses, &cpu_eval_batch(&lib, &batch)).relative(lib.skeleton().extent());
    assert!(d <= TOLERANCE, "poses differ by {d:e}");
}
