//! Mech_Mike's clips driving a crowd of Mech_Stans on the GPU: one library whose clips come
//! from another skeleton, retargeted per bone by the humanoid preset (roots and pelvis
//! `animation_scaled`, every other bone `skeleton`), every instance on its own clip and phase.
//!
//! ```text
//! cargo run --release --example retarget_crowd [-- INSTANCES [RIG]]
//! ```
//! RIG is a rig JSON file, `humanoid` or a mode name. Prints the per-pass GPU times and checks
//! the first instances against the CPU twin.

use std::path::PathBuf;

use posegpu::retarget::Rig;
use posegpu::{
    AnimLibrary, ClipId, ClipSample, CpuEvaluator, Deviation, Error, GpuContext, GpuEvaluator,
    GpuOptions, Poses,
};

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rig = Rig::from_arg(&args.next().unwrap_or_else(|| "humanoid".into()))?;
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/anim-data/gltf/quaternius");
    let mike = posegpu::import::load(dir.join("Mech_Mike.glb"))?;
    let stan = posegpu::import::load(dir.join("Mech_Stan.glb"))?;

    // The caches for (Mike's reference pose, Stan) are built here, once.
    let mut builder = AnimLibrary::builder(&stan.skeleton);
    let source = builder.add_source("Mech_Mike", &mike.skeleton, None, &rig)?;
    builder.add_clips_from(source, &mike.clips)?;
    let lib = builder.build();
    let caches = lib.retarget_caches(source);
    println!(
        "{count} Stans ({} bones) playing Mike's {} clips; {} of {} bones matched",
        lib.bone_count(),
        lib.clip_count(),
        caches.iter().filter(|c| c.source.is_some()).count(),
        lib.bone_count()
    );

    let ctx = GpuContext::new()?;
    println!("adapter: {}", ctx.describe());
    let mut gpu = GpuEvaluator::new(&ctx, &lib, count, &GpuOptions::default())?;
    let mut times = Vec::new();
    for frame in 0..30 {
        let crowd = crowd(&lib, count, frame as f32 / 30.0);
        if let Some(t) = gpu.evaluate_timed(&crowd)? {
            times.push(t);
        }
    }
    if let Some(t) = times.get(times.len() / 2) {
        let passes: Vec<String> = (t.passes().iter())
            .map(|(pass, ns)| format!("{} {:.3} ms", pass.label(), ns / 1e6))
            .collect();
        println!("GPU per frame (sampling retargets): {}", passes.join(", "));
    }

    // The last frame, read back, against the CPU twin on the first instances.
    let crowd = crowd(&lib, count, 29.0 / 30.0);
    let check: Vec<usize> = (0..count.min(256)).collect();
    let gpu_poses = gpu.read_back()?.select(&check);
    let mut cpu_poses = Poses::default();
    CpuEvaluator::new(&lib).evaluate(&crowd[..check.len()], &mut cpu_poses)?;
    let d = Deviation::between(&gpu_poses, &cpu_poses).relative(lib.skeleton().extent());
    println!(
        "GPU against CPU on {} instances: {d:.2e} relative",
        check.len()
    );
    Ok(())
}

/// `count` looping instances, clips dealt round-robin at spread phases, `time` seconds in.
fn crowd(lib: &AnimLibrary, count: usize, time: f32) -> Vec<ClipSample> {
    (0..count)
        .map(|i| {
            let clip = ClipId((i % lib.clip_count()) as u32);
            let phase = (i as f32 * 0.618_034).fract() * lib.clip_duration(clip);
            ClipSample::new(clip, phase + time, true)
        })
        .collect()
}
