//! The GPU stages against their CPU twins: generated skeletons, every real file, the paths that
//! split work past device limits. In CI these run on lavapipe; under CI=true a missing adapter
//! fails.

use crate::common;

use common::{assert_gpu_matches_cpu, cpu_eval, gpu, gpu_eval, spread_instances, TOLERANCE};
use posegpu::Stage;
use posegpu::{
    AdditiveSpace, AnimLibrary, ClipSample, Deviation, Error, FusePolicy, GpuEvaluator, GpuOptions,
    Outputs, PoseBatch, SkinningLayout,
};

#[test]
fn generated_skeletons_match_the_cpu() {
    let Some(ctx) = gpu() else { return };
    for (seed, bones) in [(1, 1), (2, 2), (3, 17), (4, 67), (5, 150)] {
        let asset = posegpu::procedural::random_asset(seed, bones, 4);
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        assert_gpu_matches_cpu(
            &ctx,
            &lib,
            &spread_instances(&lib, 9),
            &format!("random skeleton {bones} bones"),
        );
    }
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    assert_gpu_matches_cpu(&ctx, &lib, &spread_instances(&lib, 25), "humanoid");
}

#[test]
fn every_real_file_matches_the_cpu() {
    let Some(ctx) = gpu() else { return };
    let mut checked = 0;
    for path in common::anim_files() {
        let asset = posegpu::import::load(&path).unwrap_or_else(|e| panic!("{e}"));
        if asset.clips.is_empty() {
            continue;
        }
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        let d = assert_gpu_matches_cpu(
            &ctx,
            &lib,
            &spread_instances(&lib, 7),
            &path.display().to_string(),
        );
        eprintln!(
            "{}: {} clips, deviation {d:.1e}",
            path.display(),
            lib.clip_count()
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} animated files found");
}

#[test]
fn work_past_the_limits_is_split_not_refused() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let instances = spread_instances(&lib, 60); // 480 instances
    let per_instance = (lib.bone_count() * 48) as u64;
    let options = GpuOptions {
        // 37 instances per buffer, and at most 3 x 3 workgroups per dispatch.
        max_binding_size: Some(per_instance * 37 + 5),
        max_workgroups_per_dimension: Some(3),
        ..Default::default()
    };
    let mut gpu = GpuEvaluator::new(&ctx, &lib, 10, &options).unwrap();
    gpu.evaluate(&instances).unwrap();
    let per_chunk = gpu.instances_per_chunk();
    assert!(
        per_chunk <= 37 && per_chunk * lib.bone_count() <= 9 * 64,
        "{per_chunk}"
    );
    assert!(
        gpu.chunks().len() >= instances.len() / per_chunk,
        "{} chunks",
        gpu.chunks().len()
    );
    let split = gpu.read_back().unwrap();
    let whole = gpu_eval(&ctx, &lib, &instances, &GpuOptions::default());
    let cpu = cpu_eval(&lib, &instances);
    let extent = lib.skeleton().extent();
    assert!(Deviation::between(&split, &cpu).relative(extent) <= TOLERANCE);
    assert_eq!(split, whole, "splitting must not change a single bit");

    // Fewer instances the next frame: the later chunks fall idle, the result stays right.
    let few = &instances[..50];
    gpu.evaluate(few).unwrap();
    let again = gpu.read_back().unwrap();
    assert_eq!(again.instance_count(), 50);
    assert_eq!(again, gpu_eval(&ctx, &lib, few, &GpuOptions::default()));
}

#[test]
fn one_instance_past_the_binding_limit_is_a_typed_error() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let options = GpuOptions {
        max_binding_size: Some(1024),
        ..Default::default()
    };
    let err = GpuEvaluator::new(&ctx, &lib, 1, &options)
        .err()
        .expect("must fail");
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(
        err.to_string().contains("max_storage_buffer_binding_size"),
        "{err}"
    );
}

#[test]
fn bad_instances_are_refused_before_upload() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut gpu = GpuEvaluator::new(&ctx, &lib, 4, &GpuOptions::default()).unwrap();
    let bad = [
        ClipSample::new(0, 0.0, false),
        ClipSample::new(99, 0.0, false),
    ];
    assert!(matches!(
        gpu.evaluate(&bad),
        Err(Error::BadInstance { instance: 1, .. })
    ));
    let bad = [ClipSample::new(0, f32::INFINITY, false)];
    assert!(matches!(
        gpu.evaluate(&bad),
        Err(Error::BadInstance { instance: 0, .. })
    ));
}

#[test]
fn timestamps_are_reported_where_the_adapter_has_them() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut gpu = GpuEvaluator::new(&ctx, &lib, 1000, &GpuOptions::default()).unwrap();
    let instances = spread_instances(&lib, 100);
    let times = gpu.evaluate_timed(&instances).unwrap();
    assert_eq!(times.is_some(), ctx.has_timestamps());
    if let Some(t) = times {
        let fused = gpu.fuse_policy() == FusePolicy::Fused;
        assert!(
            t.ns(Stage::Sample) + t.ns(Stage::Fused) > 0.0
                && (t.ns(Stage::Hierarchy) > 0.0 || fused),
            "{t:?}"
        );
    }
    // The timed path computes the same poses.
    assert!(
        Deviation::between(&gpu.read_back().unwrap(), &cpu_eval(&lib, &instances)).relative(1.0)
            <= TOLERANCE
    );
}

#[test]
fn the_async_read_back_gives_what_the_blocking_one_does() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let instances = spread_instances(&lib, 9);
    let mut gpu = GpuEvaluator::new(&ctx, &lib, instances.len(), &GpuOptions::default()).unwrap();
    gpu.evaluate(&instances).unwrap();
    let blocking = gpu.read_back().unwrap();
    let pending = gpu.read_back_async();
    // Nothing has waited yet: the host drives the device, as a frame loop does.
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let poses = pollster::block_on(pending).unwrap();
    assert_eq!(poses.instance_count(), instances.len());
    assert_eq!(poses.locals, blocking.locals);
    assert_eq!(poses.skinning, blocking.skinning);
}

#[test]
fn a_host_device_opened_with_the_required_limits_and_features_evaluates() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::random_asset(9, 300, 3);
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    // A host application's own device: WebGPU's defaults plus what posegpu asks for.
    let adapter = common::adapter_of(&ctx);
    let limits = GpuEvaluator::required_limits(&lib);
    assert!(limits.check_limits(&adapter.limits()), "{limits:?}");
    let features = GpuEvaluator::required_features()
        | (adapter.features() & GpuEvaluator::optional_features());
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: features,
        required_limits: limits,
        ..Default::default()
    }))
    .unwrap();
    let instances = spread_instances(&lib, 5);
    let mut gpu = GpuEvaluator::with_device(
        &device,
        &queue,
        &lib,
        instances.len(),
        &GpuOptions::default(),
    )
    .unwrap();
    gpu.evaluate(&instances).unwrap();
    let d = Deviation::between(&gpu.read_back().unwrap(), &cpu_eval(&lib, &instances))
        .relative(lib.skeleton().extent());
    assert!(d <= TOLERANCE, "deviation {d:e}");
    // The evaluator shares the library rather than copying it.
    assert_eq!(gpu.library().bone_count(), 300);
}

/// Past 65,535 bones: lavapipe ends an invocation's loops after 65,535 iterations in all, and
/// the stages that walk an instance's bones (hierarchy, mesh-space layers) used to leave every
/// later bone at zero. They now take a dispatch per block of bones.
#[test]
fn skeletons_past_65535_bones_evaluate_every_bone() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::random_asset(7, 70_000, 2);
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..3 {
        let base = [
            ClipSample::new(0, 0.1 * i as f32, true).with_weight(0.5),
            ClipSample::new(1, 0.2, true).with_weight(0.5),
        ];
        let layer = [ClipSample::new(1, 0.4, true)];
        batch
            .push_blend(&base)
            .blend(AdditiveSpace::Mesh, 0.5, &layer);
    }
    let plain = [ClipSample::new(0, 0.3, true)];
    for (what, cpu, gpu) in [
        (
            "one clip",
            cpu_eval(&lib, &plain),
            gpu_eval(&ctx, &lib, &plain, &GpuOptions::default()),
        ),
        (
            "blends under a mesh-space layer",
            common::cpu_eval_batch(&lib, &batch),
            common::gpu_eval_batch(&ctx, &lib, &batch),
        ),
    ] {
        let zeros = gpu
            .component
            .iter()
            .filter(|x| x.rotation == [0.0; 4])
            .count();
        assert_eq!(zeros, 0, "{what}: {zeros} bones left at zero");
        // Deep random chains drift in f32; every bone is compared, relative to its own size.
        let worst = (0..gpu.component.len())
            .map(|b| {
                let (g, c) = (&gpu.component[b], &cpu.component[b]);
                let size = c.translation.iter().map(|v| v.abs()).fold(1.0f32, f32::max);
                (0..3)
                    .map(|k| (g.translation[k] - c.translation[k]).abs() / size)
                    .chain((0..4).map(|k| (g.rotation[k] - c.rotation[k]).abs()))
                    .fold(0.0f32, f32::max)
            })
            .fold(0.0f32, f32::max);
        assert!(worst <= 1e-3, "{what}: GPU and CPU differ by {worst:e}");
    }
}

/// A chunk's layer deltas grown frame by frame up to a binding limit that is not a multiple of
/// 16 (NVIDIA's is 2,147,483,644 bytes): the grown buffer stays within it and every frame is
/// right.
#[test]
fn layer_deltas_grow_up_to_an_odd_binding_limit() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let per_instance = (lib.bone_count() * 48) as u64;
    let options = GpuOptions {
        max_binding_size: Some(per_instance * 20 + 5),
        ..Default::default()
    };
    let mut gpu = GpuEvaluator::new(&ctx, &lib, 20, &options).unwrap();
    for count in [1, 4, 13, 20, 6] {
        let mut batch = PoseBatch::new();
        for i in 0..count {
            let layer = [ClipSample::new(1, 0.1 * i as f32, true)];
            batch
                .push_clip(0, 0.2 * i as f32, true)
                .blend(AdditiveSpace::Mesh, 0.7, &layer);
        }
        gpu.evaluate(&batch).unwrap();
        let poses = gpu.read_back().unwrap();
        let cpu = common::cpu_eval_batch(&lib, &batch);
        let d = Deviation::between(&poses, &cpu).relative(lib.skeleton().extent());
        assert!(d <= TOLERANCE, "{count} instances: {d:e}");
    }
}

/// Fewer outputs, or skinning matrices as 4x4 columns: the matrices are the very ones the
/// default evaluator writes (bit for bit), the outputs not asked for are absent, and what is
/// kept is what the CPU twin computes. Mesh-space layers run first, so the in-place hierarchy
/// reads locals the layer stage rewrote.
#[test]
fn outputs_on_request_are_the_default_outputs_bit_for_bit() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..7 {
        let layer = [ClipSample::new(2, 0.3 * i as f32, true)];
        batch
            .push_clip(i % 2, 0.25 * i as f32, true)
            .blend(AdditiveSpace::Mesh, 0.6, &layer);
    }
    let eval = |outputs: Outputs| {
        let options = GpuOptions {
            outputs,
            // Several chunks.
            max_workgroups_per_dimension: Some(1),
            ..Default::default()
        };
        let mut gpu = GpuEvaluator::new(&ctx, &lib, batch.len(), &options).unwrap();
        gpu.evaluate(&batch).unwrap();
        let chunks = gpu.chunks();
        assert!(chunks.len() > 1);
        for c in chunks {
            assert_eq!(c.locals.is_some(), outputs.locals);
            assert_eq!(c.component.is_some(), outputs.component);
            assert_eq!(c.skinning_layout, outputs.skinning);
            let per_bone = outputs.skinning.bytes();
            assert_eq!(
                c.skinning.size(),
                (c.capacity * lib.bone_count()) as u64 * per_bone
            );
        }
        gpu.read_back().unwrap()
    };
    let all = eval(Outputs::ALL);
    let cpu = common::cpu_eval_batch(&lib, &batch);
    let d = Deviation::between(&all, &cpu).relative(lib.skeleton().extent());
    assert!(d <= TOLERANCE, "{d:e}");
    for layout in [SkinningLayout::Rows3x4, SkinningLayout::Columns4x4] {
        for outputs in [
            Outputs::ALL,
            Outputs::COMPONENT_AND_SKINNING,
            Outputs::SKINNING,
            Outputs {
                locals: true,
                component: false,
                skinning: layout,
            },
        ] {
            let outputs = outputs.with_skinning(layout);
            let some = eval(outputs);
            assert_eq!(some.instance_count(), batch.len());
            assert_eq!(some.skinning, all.skinning, "{outputs:?}");
            let kept = |on: bool, v: &Vec<posegpu::Xform>, want: &Vec<posegpu::Xform>| {
                if on {
                    assert_eq!(v, want, "{outputs:?}");
                } else {
                    assert!(v.is_empty(), "{outputs:?}");
                }
            };
            kept(outputs.locals, &some.locals, &all.locals);
            kept(outputs.component, &some.component, &all.component);
        }
    }
}

/// The fused pass against the separate passes, bit for bit, and against the CPU twin: deep and
/// wide random skeletons up to the pass's 320 bones, blocks of instances left partial, blends,
/// local layers with masks, every output choice; then real files.
#[test]
fn the_fused_pass_gives_the_separate_passes_bits() {
    let Some(ctx) = gpu() else { return };
    let eval = |lib: &AnimLibrary, batch: &PoseBatch, passes: FusePolicy, outputs: Outputs| {
        let options = GpuOptions {
            passes,
            outputs,
            ..Default::default()
        };
        let mut gpu = GpuEvaluator::new(&ctx, lib, batch.len(), &options).unwrap();
        assert_eq!(gpu.fuse_policy(), passes);
        let times = gpu.evaluate_timed(batch).unwrap();
        if let Some(t) = times.filter(|_| passes == FusePolicy::Fused) {
            assert_eq!(t.ns(Stage::Hierarchy), 0.0, "the fused pass ran: {t:?}");
        }
        gpu.read_back().unwrap()
    };
    let check = |lib: &AnimLibrary, batch: &PoseBatch, what: &str, all_outputs: bool| {
        let separate = eval(lib, batch, FusePolicy::Separate, Outputs::ALL);
        let fused = eval(lib, batch, FusePolicy::Fused, Outputs::ALL);
        assert_eq!(fused, separate, "{what}");
        let cpu = common::cpu_eval_batch(lib, batch);
        let d = Deviation::between(&fused, &cpu).relative(lib.skeleton().extent());
        assert!(d <= TOLERANCE, "{what}: {d:e}");
        let columns = Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4);
        let others = [Outputs::COMPONENT_AND_SKINNING, columns];
        for outputs in others.into_iter().filter(|_| all_outputs) {
            let some = eval(lib, batch, FusePolicy::Fused, outputs);
            assert_eq!(some.skinning, separate.skinning, "{what}, {outputs:?}");
            if outputs.component {
                assert_eq!(some.component, separate.component, "{what}, {outputs:?}");
            }
        }
    };
    for (seed, bones) in [(11, 1), (12, 5), (13, 67), (14, 150), (15, 320)] {
        let asset = posegpu::procedural::random_asset(seed, bones, 3);
        let mut builder = AnimLibrary::builder(&asset.skeleton);
        builder.add_clips(&asset.clips).unwrap();
        let mask = builder
            .add_mask("upper", &[posegpu::MaskBranch::new("bone_000", 1)])
            .unwrap();
        let lib = builder.build();
        // 13 instances: partial blocks at every size but 1 and 320 bones (a workgroup takes
        // 320 / bones instances).
        let mut batch = PoseBatch::new();
        for i in 0..13 {
            let t = 0.17 * i as f32;
            match i % 3 {
                0 => {
                    batch.push_clip(i % 3, t, i % 2 == 0);
                }
                1 => {
                    batch.push_blend(&[
                        ClipSample::new(0, t, true).with_weight(0.3),
                        ClipSample::new(1, t + 0.2, true).with_weight(0.7),
                    ]);
                }
                _ => {
                    batch
                        .push_clip(2, t, true)
                        .blend(AdditiveSpace::Local, 0.6, &[ClipSample::new(0, t, true)])
                        .with_mask(mask);
                }
            }
        }
        check(
            &lib,
            &batch,
            &format!("random skeleton of {bones} bones"),
            true,
        );
    }
    let mut checked = 0;
    for path in common::anim_files() {
        let asset = posegpu::import::load(&path).unwrap_or_else(|e| panic!("{e}"));
        if asset.clips.is_empty() || asset.skeleton.len() > 320 {
            continue;
        }
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        let batch = PoseBatch::from_instances(&spread_instances(&lib, 3));
        check(&lib, &batch, &path.display().to_string(), false);
        checked += 1;
        // Each evaluator compiles its pipelines on lavapipe: a few files keep the test short
        // (every_real_file_matches_the_cpu covers them all).
        if checked == 4 {
            break;
        }
    }
    assert_eq!(checked, 4, "too few animated files");
}

/// Pipelines built without wgpu's runtime checks (the default) give the bits of those built
/// with them (bounds clamps, loop counters, zero-filled workgroup memory), fused and separate,
/// on a library that takes every optional path but plans: blends, root locks, negative scales
/// (compressed clips count as having them), compressed clips.
#[test]
fn pipelines_without_runtime_checks_give_the_checked_bits() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let mut builder = AnimLibrary::builder(&asset.skeleton);
    builder.compress(Some(posegpu::compress::Compression::all(3e-4).unwrap()));
    builder.add_clips(&asset.clips).unwrap();
    let lib = builder.build();
    let clips = lib.clip_count() as u32;
    let mut batch = PoseBatch::new();
    for i in 0..40u32 {
        let t = 0.13 * i as f32;
        let lock = (i % 4 == 1).then_some(posegpu::RootLock::FirstFrame);
        batch.push_blend(&[
            ClipSample::new(i % clips, t, true).with_root_lock(lock),
            ClipSample::new((i + 5) % clips, t + 0.3, true).with_weight(0.4),
        ]);
    }
    for passes in [FusePolicy::Fused, FusePolicy::Separate] {
        let eval = |runtime_checks: bool| {
            let options = GpuOptions {
                passes,
                runtime_checks,
                ..Default::default()
            };
            let mut gpu = GpuEvaluator::new(&ctx, &lib, batch.len(), &options).unwrap();
            gpu.evaluate_timed(&batch).unwrap();
            gpu.read_back().unwrap()
        };
        let checked = eval(true);
        assert_eq!(eval(false), checked, "{passes:?}");
        let cpu = common::cpu_eval_batch(&lib, &batch);
        let d = Deviation::between(&checked, &cpu).relative(lib.skeleton().extent());
        assert!(d <= TOLERANCE, "{passes:?}: {d:e}");
    }
}

/// The fused pass's variants give the default's bits, every output in both skinning layouts:
/// each skinning matrix written at its bone's compose, and workgroups of more poses (more
/// instances a workgroup than the task table's first blocks; as many as the device holds).
/// Random skeletons with several roots (whose matrices are written before level 1), partial
/// blocks, 1 to 320 bones.
#[test]
fn fused_variants_give_the_default_bits() {
    let Some(ctx) = gpu() else { return };
    let room = (ctx.device.limits().max_compute_workgroup_storage_size - 4) / 48;
    let most = room.min(1024);
    for (seed, bones, n) in [(3, 1, 5), (11, 67, 9), (29, 160, 7), (41, 320, 3)] {
        let asset = posegpu::procedural::random_asset(seed, bones, 2);
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        let batch = PoseBatch::from_instances(&spread_instances(&lib, n));
        for layout in [SkinningLayout::Rows3x4, SkinningLayout::Columns4x4] {
            let eval = |skin_at_compose: bool, fused_poses: Option<u32>| {
                let options = GpuOptions {
                    passes: FusePolicy::Fused,
                    outputs: Outputs::ALL.with_skinning(layout),
                    skin_at_compose,
                    fused_poses,
                    ..Default::default()
                };
                let mut gpu = GpuEvaluator::new(&ctx, &lib, batch.len(), &options).unwrap();
                gpu.evaluate_timed(&batch).unwrap();
                gpu.read_back().unwrap()
            };
            let default = eval(false, Some(320));
            assert!(!default.skinning.is_empty());
            for (skin, poses) in [(true, Some(320)), (false, Some(most)), (true, Some(most))] {
                let what = format!("seed {seed}, {bones} bones, {layout:?}, {poses:?}, {skin}");
                assert_eq!(eval(skin, poses), default, "{what}");
            }
        }
    }
}

/// A fused workgroup of fewer poses than one skeleton, or more than the pass takes, is a
/// typed error naming the option; one past the device's workgroup memory names the limit.
#[test]
fn fused_poses_out_of_range_are_typed_errors() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let new = |fused_poses| {
        let options = GpuOptions {
            passes: FusePolicy::Fused,
            fused_poses: Some(fused_poses),
            ..Default::default()
        };
        GpuEvaluator::new(&ctx, &lib, 4, &options).map(|_| ())
    };
    for poses in [66, 1025] {
        match new(poses) {
            Err(Error::BadRequest { what }) => assert!(what.contains("fused_poses"), "{what}"),
            other => panic!("{poses} poses: {other:?}"),
        }
    }
    let limit = ctx.device.limits().max_compute_workgroup_storage_size;
    match new(1024) {
        Err(Error::TooLarge { limit_name, .. }) if 1024 * 48 > limit => {
            assert_eq!(limit_name, "max_compute_workgroup_storage_size")
        }
        Ok(()) if 1024 * 48 + 4 <= limit => {}
        other => panic!("1024 poses within {limit} bytes: {other:?}"),
    }
}

/// The occupancy probe past the device's workgroup storage limit is a typed error naming the
/// limit (drivers differ on whether such a pipeline fails), and a pad that fits gives the
/// CPU twin's poses.
#[test]
fn an_occupancy_pad_past_the_workgroup_limit_is_a_typed_error() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let instances = spread_instances(&lib, 8);
    let batch = PoseBatch::from_instances(&instances);
    let limit = ctx.device.limits().max_compute_workgroup_storage_size;
    let options = |occupancy_pad_words| GpuOptions {
        passes: FusePolicy::Fused,
        occupancy_pad_words,
        ..Default::default()
    };
    // `limit / 4` words alone fill the limit; the poses come on top.
    match GpuEvaluator::new(&ctx, &lib, batch.len(), &options(limit / 4)) {
        Err(Error::TooLarge { limit_name, .. }) => {
            assert_eq!(limit_name, "max_compute_workgroup_storage_size")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a pad of {} words was accepted", limit / 4),
    }
    let mut gpu = GpuEvaluator::new(&ctx, &lib, batch.len(), &options(16)).unwrap();
    gpu.evaluate(&batch).unwrap();
    let d = Deviation::between(&gpu.read_back().unwrap(), &cpu_eval(&lib, &instances))
        .relative(lib.skeleton().extent());
    assert!(d <= TOLERANCE, "{d:e}");
}
