//! The device's achievable memory bandwidth, measured with a copy kernel (`shaders/copy.wgsl`:
//! one 16-byte load and one 16-byte store per invocation): the ceiling that `posegpu bench`
//! compares the pose passes' traffic against, measured in the same run on the same device.

use std::time::Instant;

use posegpu::PassTimer;
use posegpu::{Error, GpuContext, Result};

/// The copy kernel; it is validated by naga in this module's tests.
pub const COPY_WGSL: &str = include_str!("../shaders/copy.wgsl");

/// Invocations per workgroup of the copy kernel (its `@workgroup_size`).
const WORKGROUP_SIZE: u64 = 64;

/// Timed repetitions of the copy (after one untimed warm-up).
pub const COPY_REPETITIONS: u32 = 8;

/// The smallest copy measured: a request below it is raised to it.
pub const MIN_COPY_BYTES: u64 = 64 * 1024;

/// Bytes per invocation of the copy kernel (one `vec4<u32>`).
const ELEMENT_BYTES: u64 = 16;

/// Where a [`Bandwidth`]'s times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSource {
    /// Timestamp queries at the copy pass's start and end: GPU time only.
    Timestamps,
    /// Wall clock around each submission and its wait (the device has no timestamp queries):
    /// includes the submission's overhead, so it understates the bandwidth of small copies.
    WallClock,
}

impl TimeSource {
    pub fn name(self) -> &'static str {
        match self {
            Self::Timestamps => "GPU timestamps",
            Self::WallClock => "wall clock",
        }
    }
}

/// The result of [`copy_bandwidth`].
#[derive(Clone, Debug, PartialEq)]
pub struct Bandwidth {
    /// Bytes copied per repetition (each read once and written once), after clamping to the
    /// device's limits.
    pub bytes: u64,
    /// Bytes asked for.
    pub requested: u64,
    /// Seconds of each timed repetition, in order.
    pub seconds: Vec<f64>,
    pub source: TimeSource,
}

impl Bandwidth {
    /// The fastest repetition's time.
    pub fn best_seconds(&self) -> f64 {
        self.seconds.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The median repetition's time.
    pub fn median_seconds(&self) -> f64 {
        let mut s = self.seconds.clone();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// Bytes moved per second by the fastest repetition: `2 * bytes / time` (read + write).
    pub fn bytes_per_second(&self) -> f64 {
        2.0 * self.bytes as f64 / self.best_seconds()
    }

    /// The same for the median repetition.
    pub fn median_bytes_per_second(&self) -> f64 {
        2.0 * self.bytes as f64 / self.median_seconds()
    }
}

/// The bytes [`copy_bandwidth`] copies when asked for `bytes` on a device with `limits`: at
/// least [`MIN_COPY_BYTES`], at most one storage binding, one buffer and one dispatch's worth,
/// in whole 16-byte elements (0 where a binding cannot hold one).
pub fn copy_size(bytes: u64, limits: &wgpu::Limits) -> u64 {
    let max_workgroups = limits.max_compute_workgroups_per_dimension.max(1);
    let max_invocations = u64::from(max_workgroups).pow(2) * WORKGROUP_SIZE;
    let limit = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
        .min(max_invocations * ELEMENT_BYTES);
    bytes.max(MIN_COPY_BYTES).min(limit) / ELEMENT_BYTES * ELEMENT_BYTES
}

/// Copies `bytes` from one storage buffer to another with `shaders/copy.wgsl`, once untimed and
/// [`COPY_REPETITIONS`] times timed, and reports each repetition's time. `bytes` is clamped to
/// the device's storage-binding and buffer-size limits (and to at least [`MIN_COPY_BYTES`]) and
/// rounded down to whole 16-byte elements; [`Bandwidth::bytes`] says what was copied. Times come
/// from timestamp queries where the device has them, else from the wall clock
/// ([`Bandwidth::source`]). Allocation and validation failures are [`Error::Gpu`].
pub fn copy_bandwidth(ctx: &GpuContext, bytes: u64) -> Result<Bandwidth> {
    let device = &ctx.device;
    let limits = device.limits();
    let max_workgroups = limits.max_compute_workgroups_per_dimension.max(1);
    let size = copy_size(bytes, &limits);
    if size == 0 {
        return Err(Error::Gpu {
            what: format!(
                "the device's storage bindings ({} bytes) cannot hold one 16-byte copy element",
                limits.max_storage_buffer_binding_size
            ),
            source: None,
        });
    }

    let scope = ErrorScope::push(device);
    let buffer = |label: &str| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (src, dst) = (buffer("copy source"), buffer("copy destination"));
    let pipeline = copy_pipeline(device);
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("copy"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: src.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst.as_entire_binding(),
            },
        ],
    });
    let timer = ctx
        .has_timestamps()
        .then(|| PassTimer::new(device, &ctx.queue, COPY_REPETITIONS));
    scope.pop()?;

    let workgroups = (size / ELEMENT_BYTES).div_ceil(WORKGROUP_SIZE);
    let x = workgroups.min(u64::from(max_workgroups)) as u32;
    let y = workgroups.div_ceil(u64::from(x)) as u32;
    let run = |passes: u32, timer: Option<&PassTimer>| -> Result<(Option<Vec<f64>>, f64)> {
        let scope = ErrorScope::push(device);
        let mut encoder = device.create_command_encoder(&Default::default());
        for k in 0..passes {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("copy"),
                timestamp_writes: timer.map(|t| t.writes(k)),
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
        if let Some(t) = timer {
            t.resolve(&mut encoder);
        }
        let start = Instant::now();
        ctx.queue.submit([encoder.finish()]);
        let spans = match timer {
            Some(t) => Some(t.read(device)?),
            None => {
                device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| gpu_error("waiting for the device", e))?;
                None
            }
        };
        let wall = start.elapsed().as_secs_f64();
        scope.pop()?;
        Ok((spans, wall))
    };

    run(1, None)?; // warm-up: pages touched, pipeline compiled
    let (seconds, source) = match &timer {
        Some(t) => {
            let (spans, _) = run(COPY_REPETITIONS, Some(t))?;
            let spans = spans.unwrap_or_default();
            (
                spans.iter().map(|ns| ns / 1e9).collect(),
                TimeSource::Timestamps,
            )
        }
        None => {
            let mut walls = Vec::new();
            for _ in 0..COPY_REPETITIONS {
                walls.push(run(1, None)?.1);
            }
            (walls, TimeSource::WallClock)
        }
    };
    if seconds.len() != COPY_REPETITIONS as usize
        || seconds.iter().any(|s| !s.is_finite() || *s <= 0.0)
    {
        return Err(Error::Gpu {
            what: format!(
                "the copy kernel's {} times are not all positive: {seconds:?}",
                source.name()
            ),
            source: None,
        });
    }
    Ok(Bandwidth {
        bytes: size,
        requested: bytes,
        seconds,
        source,
    })
}

/// [`Error::Gpu`] keeping wgpu's error as its source.
fn gpu_error(what: &str, source: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Gpu {
        what: what.to_string(),
        source: Some(Box::new(source)),
    }
}

fn copy_pipeline(device: &wgpu::Device) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("copy"),
        source: wgpu::ShaderSource::Wgsl(COPY_WGSL.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("copy"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Wgpu's validation and out-of-memory errors as [`Error::Gpu`] instead of a panic.
struct ErrorScope {
    validation: wgpu::ErrorScopeGuard,
    memory: wgpu::ErrorScopeGuard,
}

impl ErrorScope {
    fn push(device: &wgpu::Device) -> Self {
        let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        Self { validation, memory }
    }

    fn pop(self) -> Result<()> {
        let validation = pollster::block_on(self.validation.pop());
        let memory = pollster::block_on(self.memory.pop());
        match validation.or(memory) {
            Some(e) => Err(gpu_error("the copy kernel", e)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_kernel_is_valid_wgsl() {
        let module = naga::front::wgsl::parse_str(COPY_WGSL).unwrap();
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap();
        let ep = &module.entry_points[0];
        assert_eq!(ep.workgroup_size, [WORKGROUP_SIZE as u32, 1, 1]);
    }

    #[test]
    fn the_copy_size_is_clamped_to_the_device_and_whole_elements() {
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: 1 << 20,
            ..wgpu::Limits::default()
        };
        assert_eq!(copy_size(0, &limits), MIN_COPY_BYTES);
        assert_eq!(copy_size(100_000 + 7, &limits), 100_000);
        assert_eq!(copy_size(u64::MAX, &limits), 1 << 20);
        let tiny = wgpu::Limits {
            max_storage_buffer_binding_size: 15,
            ..limits
        };
        assert_eq!(copy_size(1 << 30, &tiny), 0);
        let few_workgroups = wgpu::Limits {
            max_compute_workgroups_per_dimension: 2,
            ..limits
        };
        assert_eq!(copy_size(u64::MAX, &few_workgroups), 4 * 64 * 16);
    }

    /// Skipped without an adapter, except under `CI=true`, where that fails.
    #[test]
    fn a_copy_is_timed_and_gives_a_positive_bandwidth() {
        let ctx = match GpuContext::new() {
            Ok(ctx) => ctx,
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("CI=true but no GPU adapter: {e}")
            }
            Err(e) => return eprintln!("skipping a GPU test: {e}"),
        };
        let b = copy_bandwidth(&ctx, 1 << 20).unwrap();
        assert_eq!((b.bytes, b.requested), (1 << 20, 1 << 20));
        assert_eq!(b.seconds.len(), COPY_REPETITIONS as usize);
        let expected = if ctx.has_timestamps() {
            TimeSource::Timestamps
        } else {
            TimeSource::WallClock
        };
        assert_eq!(b.source, expected);
        assert!(b.best_seconds() <= b.median_seconds());
        assert!(b.bytes_per_second() >= b.median_bytes_per_second());
        assert!(b.bytes_per_second().is_finite() && b.bytes_per_second() > 0.0);
    }
}
