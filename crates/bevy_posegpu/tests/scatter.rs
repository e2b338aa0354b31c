//! The scatter stage on the GPU (lavapipe in CI) against its CPU twin, on posegpu's GPU output
//! for a real character, and the CPU twin against posegpu's CPU skinning placed in the world.
//! Under `CI=true` a missing adapter fails the test instead of skipping it.

use bevy::math::{Mat4, Vec3, Vec4};
use bevy_posegpu::scatter::{scatter_cpu, ScatterBuffers, ScatterPipeline, SkinJob};
use posegpu::{
    AnimLibrary, CpuEvaluator, GpuContext, GpuEvaluator, GpuOptions, Outputs, PoseBatch, Poses,
    SkinningLayout,
};

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

fn knight() -> AnimLibrary {
    let path = bevy_posegpu::headless::data_root().join("gltf/kaykit-adventurers/Knight.glb");
    let asset = posegpu::import::load(&path).unwrap();
    AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap()
}

/// A 3x4 row-major skinning matrix as a column-major 4x4.
fn columns(m: &[f32; 12]) -> [f32; 16] {
    let rows = [0, 1, 2].map(|r| Vec4::new(m[r * 4], m[r * 4 + 1], m[r * 4 + 2], m[r * 4 + 3]));
    Mat4::from_cols(
        Vec4::new(rows[0].x, rows[1].x, rows[2].x, 0.0),
        Vec4::new(rows[0].y, rows[1].y, rows[2].y, 0.0),
        Vec4::new(rows[0].z, rows[1].z, rows[2].z, 0.0),
        Vec4::new(rows[0].w, rows[1].w, rows[2].w, 1.0),
    )
    .to_cols_array()
}

fn read(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Vec<[f32; 16]> {
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: buffer.size(),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    ctx.queue.submit([encoder.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.unwrap());
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let data = staging.slice(..).get_mapped_range().unwrap();
    bytemuck::cast_slice::<u8, [f32; 16]>(&data).to_vec()
}

#[test]
fn the_gpu_scatter_matches_its_cpu_twin_and_the_cpu_skinning() {
    let Some(ctx) = gpu() else { return };
    let lib = knight();
    let bones = lib.bone_count();
    let mut batch = PoseBatch::new();
    for i in 0..5 {
        batch.push_clip((i % lib.clip_count()) as u32, 0.1 + 0.23 * i as f32, true);
    }
    let options = GpuOptions {
        outputs: Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4),
        ..GpuOptions::default()
    };
    let mut evaluator = GpuEvaluator::new(&ctx, &lib, 5, &options).unwrap();
    evaluator.evaluate(&batch).unwrap();
    let chunk = &evaluator.chunks()[0];
    assert_eq!(chunk.count, 5);

    // Joint maps in a shuffled order (as a skin's joints are not posegpu's bone order), two
    // meshes per instance, placed apart in the joint buffer, each instance in its own place.
    let joint_bones: Vec<u32> = (0..bones as u32).rev().collect();
    let world = |i: usize| {
        Mat4::from_scale_rotation_translation(
            Vec3::splat(1.0 + 0.1 * i as f32),
            bevy::math::Quat::from_rotation_y(0.7 * i as f32),
            Vec3::new(3.0 * i as f32, 0.5, -2.0),
        )
    };
    let stride = bones.next_multiple_of(4) as u32;
    let jobs: Vec<SkinJob> = (0..10)
        .map(|k| SkinJob {
            world: world(k / 2).to_cols_array_2d(),
            skin_index: 4 + k as u32 * stride,
            instance: (k / 2) as u32,
            joint_base: 0,
            joint_count: bones as u32,
        })
        .collect();
    let slots = 4 + 10 * stride as usize;
    let joints = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (slots * 64) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let scatter = ScatterPipeline::new(&ctx.device);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let joint_map = ScatterPipeline::joint_map(&ctx.device, &joint_bones);
    let buffers = ScatterBuffers {
        joint_map: &joint_map,
        skin: &chunk.skinning,
        joints: &joints,
    };
    scatter.encode(&ctx.device, &mut encoder, &jobs, bones as u32, buffers);
    ctx.queue.submit([encoder.finish()]);
    let gpu = read(&ctx, &joints);

    // The CPU twin on the GPU's own skinning output: the same inputs, bit for bit.
    let skin = read(&ctx, &chunk.skinning);
    let mut cpu = vec![[0.0; 16]; slots];
    scatter_cpu(&jobs, &joint_bones, &skin, bones, &mut cpu);
    // And on posegpu's CPU twin: the world placement of Bevy's joint matrices.
    let mut poses = Poses::default();
    CpuEvaluator::new(&lib)
        .evaluate(&batch, &mut poses)
        .unwrap();
    let cpu_skin: Vec<[f32; 16]> = poses.skinning.iter().map(columns).collect();
    let mut expected = vec![[0.0; 16]; slots];
    scatter_cpu(&jobs, &joint_bones, &cpu_skin, bones, &mut expected);

    let mut worst = (0.0f32, 0.0f32);
    for (k, job) in jobs.iter().enumerate() {
        for j in 0..bones {
            let at = job.skin_index as usize + j;
            for c in 0..16 {
                worst.0 = worst.0.max((gpu[at][c] - cpu[at][c]).abs());
                worst.1 = worst.1.max((gpu[at][c] - expected[at][c]).abs());
            }
            assert_ne!(gpu[at], [0.0; 16], "job {k} joint {j} was not written");
        }
    }
    // The shader's matrix product against glam's: a few ulps of values up to ~10.
    assert!(worst.0 <= 1e-5, "GPU against its CPU twin: {}", worst.0);
    assert!(
        worst.1 <= 1e-4,
        "GPU against posegpu's CPU skinning: {}",
        worst.1
    );
    // Slots no job covers stay as they were.
    assert_eq!(gpu[0], [0.0; 16]);
}
