//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{
    AnimLibrary, Asset, Clip, ClipId, ClipSample, CpuEvaluator, Deviation, GpuContext,
    GpuEvaluator, GpuOptions, PoseBatch, Poses,
};

/// GPU-vs-CPU tolerance, relative to the skeleton's size.
pub const TOLERANCE: f32 = 1e-4;

/// `../shared/anim-data` beside the repository (the first `shared/anim-data` above this crate),
/// which the tests need: a missing folder fails loudly.
pub fn anim_data() -> PathBuf {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = crate_dir
        .ancestors()
        .map(|d| d.join("shared/anim-data"))
        .find(|d| d.is_dir());
    dir.unwrap_or_else(|| {
        panic!(
            "the test data folder shared/anim-data is missing above {} (see ../shared/anim-data/README.md)",
            crate_dir.display()
        )
    })
}

/// Two cross-tool pairs of `anim-data` that retargeting is measured on side by side (baked
/// against run-time, own skeleton against plan): source, its clip (the first without a name),
/// target.
pub const CROSS_TOOL_PAIRS: [(&str, Option<&str>, &str); 2] = [
    (
        "bvh/cmu_walk_delfem2.bvh",
        None,
        "gltf/kaykit-adventurers/Knight.glb",
    ),
    (
        "gltf/quaternius-ual/AnimationLibrary_Godot_Standard.gltf",
        Some("Walk_Loop"),
        "gltf/quaternius-ubc/Superhero_Male_FullBody.gltf",
    ),
];

/// Pair `i` of [`CROSS_TOOL_PAIRS`] loaded: the source, its clip, the target and the default
/// plan between them.
pub fn cross_tool_pair(i: usize) -> (Asset, Clip, Asset, RetargetPlan) {
    let (source, clip, target) = CROSS_TOOL_PAIRS[i];
    let load = |rel: &str| posegpu::import::load(anim_data().join(rel)).unwrap();
    let (s, t) = (load(source), load(target));
    let index = clip.map_or(0, |name| Clip::find(&s.clips, name).unwrap());
    let clip = s.clips[index].clone();
    let plan = RetargetPlan::new(&s, &t, &PlanOptions::default()).unwrap();
    (s, clip, t, plan)
}

/// Every glTF and BVH file under `anim-data`, sorted.
pub fn anim_files() -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("glb" | "gltf" | "bvh")
            ) {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&anim_data(), &mut files);
    files.sort();
    assert!(!files.is_empty(), "no animation files found");
    files
}

/// A GPU device, lavapipe included. Without one the test is skipped, except under `CI=true`,
/// where a missing adapter fails the run.
pub fn gpu() -> Option<GpuContext> {
    match GpuContext::new() {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!(
                    "CI=true but no GPU adapter: {e} (install mesa-vulkan-drivers and libvulkan1)"
                );
            }
            eprintln!("skipping a GPU test: {e}");
            None
        }
    }
}

/// The adapter `ctx` was opened on, found again: to open another device on it (a host's own,
/// with the limits and features it chooses).
pub fn adapter_of(ctx: &GpuContext) -> wgpu::Adapter {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
        .into_iter()
        .find(|a| a.get_info().name == ctx.info.name)
        .expect("the context's adapter")
}

pub fn cpu_eval(lib: &AnimLibrary, instances: &[ClipSample]) -> Poses {
    let mut poses = Poses::default();
    CpuEvaluator::new(lib)
        .evaluate(instances, &mut poses)
        .unwrap();
    poses
}

pub fn gpu_eval(
    ctx: &GpuContext,
    lib: &AnimLibrary,
    instances: &[ClipSample],
    options: &GpuOptions,
) -> Poses {
    let mut gpu = GpuEvaluator::new(ctx, lib, instances.len(), options).unwrap();
    gpu.evaluate(instances).unwrap();
    gpu.read_back().unwrap()
}

/// Evaluates on both backends and asserts that they agree within [`TOLERANCE`].
pub fn assert_gpu_matches_cpu(
    ctx: &GpuContext,
    lib: &AnimLibrary,
    instances: &[ClipSample],
    what: &str,
) -> f32 {
    let cpu = cpu_eval(lib, instances);
    let gpu = gpu_eval(ctx, lib, instances, &GpuOptions::default());
    assert_within_tolerance(lib, &gpu, &cpu, what)
}

pub fn cpu_eval_batch(lib: &AnimLibrary, batch: &PoseBatch) -> Poses {
    let mut poses = Poses::default();
    CpuEvaluator::new(lib).evaluate(batch, &mut poses).unwrap();
    poses
}

pub fn gpu_eval_batch(ctx: &GpuContext, lib: &AnimLibrary, batch: &PoseBatch) -> Poses {
    let mut gpu = GpuEvaluator::new(ctx, lib, batch.len(), &GpuOptions::default()).unwrap();
    gpu.evaluate(batch).unwrap();
    gpu.read_back().unwrap()
}

/// [`assert_gpu_matches_cpu`] for a batch with blends and layers.
pub fn assert_batch_gpu_matches_cpu(
    ctx: &GpuContext,
    lib: &AnimLibrary,
    batch: &PoseBatch,
    what: &str,
) -> f32 {
    let cpu = cpu_eval_batch(lib, batch);
    let gpu = gpu_eval_batch(ctx, lib, batch);
    assert_within_tolerance(lib, &gpu, &cpu, what)
}

fn assert_within_tolerance(lib: &AnimLibrary, gpu: &Poses, cpu: &Poses, what: &str) -> f32 {
    let d = Deviation::between(gpu, cpu).relative(lib.skeleton().extent());
    assert!(
        d <= TOLERANCE,
        "{what}: GPU and CPU differ by {d:e} (relative), over {TOLERANCE:e}"
    );
    d
}

/// Instances covering every ordinary (not additive) clip of `lib` at `per_clip` times spread
/// over (and past) its range, clamped and looping.
pub fn spread_instances(lib: &AnimLibrary, per_clip: usize) -> Vec<ClipSample> {
    let mut out = Vec::new();
    for clip in lib
        .clip_ids()
        .filter(|&c| lib.clip_additive_space(c).is_none())
    {
        let d = lib.clip_duration(clip);
        for k in 0..per_clip {
            let t = -0.25 * d + 1.5 * d * k as f32 / (per_clip.max(2) - 1) as f32;
            out.push(ClipSample::new(clip, t, false));
            out.push(ClipSample::new(clip, t + 0.37 * d, true));
        }
    }
    out
}

/// `count` looping instances, clips dealt round-robin, phases spread over each clip by a
/// golden-ratio sequence, advanced by `time` seconds (the demo's crowd).
pub fn crowd(lib: &AnimLibrary, count: usize, time: f32) -> Vec<ClipSample> {
    let clips = lib.clip_count().max(1);
    (0..count)
        .map(|i| {
            let clip = i % clips;
            let duration = if clip < lib.clip_count() {
                lib.clip_duration(ClipId(clip as u32))
            } else {
                0.0
            };
            ClipSample::new(
                clip as u32,
                (i as f32 * 0.618_034).fract() * duration + time,
                true,
            )
        })
        .collect()
}

/// A small deterministic generator (no dependency on a random crate); tests add what they draw.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number in [0, 1).
    pub fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A number in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

/// The sampling work's GPU time (the sampling pass, or the fused pass where the plan fuses)
/// over `iters` frames of the crowd of `n` instances of `lib`, 1/60 s apart, from timestamp
/// queries; the wall time, waiting included, where the adapter has none. For the benches'
/// `iter_custom`.
pub fn gpu_sampling_time(
    gpu: &mut GpuEvaluator,
    lib: &AnimLibrary,
    n: usize,
    iters: u64,
) -> Duration {
    use posegpu::Stage;
    let mut total = Duration::ZERO;
    for frame in 0..iters {
        let instances = crowd(lib, n, frame as f32 / 60.0);
        let start = Instant::now();
        total += match gpu.evaluate_timed(&instances).unwrap() {
            Some(t) => Duration::from_nanos((t.ns(Stage::Sample) + t.ns(Stage::Fused)) as u64),
            None => start.elapsed(),
        };
    }
    total
}
