//! Small pieces every GPU stage uses: pipelines, dispatch grids, timestamps, read-backs and
//! error scopes.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use super::shaders::{self, Shader};
use super::specialize::{specialize, Paths, ENTRY};
use crate::error::{Error, Result};
use crate::frame_plan::Stage;

/// A compute stage's pipelines, one per [`Paths`] variant a workload asks for, with the
/// explicit bind group layout its [`Shader`] declares (the same for every variant). The layout
/// is made at once (bind groups need it); a variant is compiled the first time it is asked
/// for, so that an evaluator compiles only the variants its frames use (half a second each on
/// lavapipe).
pub(crate) struct StagePipeline {
    device: wgpu::Device,
    layout: wgpu::BindGroupLayout,
    shader: &'static Shader,
    constants: Vec<(&'static str, f64)>,
    checks: bool,
    variants: Mutex<HashMap<Paths, wgpu::ComputePipeline>>,
}

impl StagePipeline {
    /// The pipelines of `stage` (entry point `main`), with `constants` for its own override
    /// constants; `checks` keeps wgpu's runtime checks (bounds clamps, loop counters,
    /// zero-filled workgroup memory), which the library's validation otherwise makes
    /// redundant.
    pub(crate) fn new(
        device: &wgpu::Device,
        stage: Stage,
        constants: &[(&'static str, f64)],
        checks: bool,
    ) -> Self {
        let shader = shaders::shader(stage);
        Self {
            device: device.clone(),
            layout: shaders::bind_group_layout(device, shader),
            shader,
            constants: constants.to_vec(),
            checks,
            variants: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the variant for `paths` has been compiled.
    pub(crate) fn is_compiled(&self, paths: Paths) -> bool {
        self.variants.lock().unwrap().contains_key(&paths)
    }

    /// The constants of the variant for `paths`: the stage's own, then the paths'.
    pub(crate) fn constants(&self, paths: Paths) -> Vec<(&'static str, f64)> {
        let mut c = self.constants.clone();
        c.extend(paths.constants());
        c
    }

    /// The pipeline for `paths`, compiled on first use. Callers that must report a failure as
    /// an error compile it first inside an [`ErrorScope`].
    pub(crate) fn get(&self, paths: Paths) -> wgpu::ComputePipeline {
        let mut variants = self.variants.lock().unwrap();
        if let Some(p) = variants.get(&paths) {
            return p.clone();
        }
        let pipeline = self.compile(paths);
        variants.insert(paths, pipeline.clone());
        pipeline
    }

    fn compile(&self, paths: Paths) -> wgpu::ComputePipeline {
        let device = &self.device;
        let label = Some(self.shader.name);
        // Every shader validates unspecialised (a test); a variant that does not is a bug.
        let module = specialize(self.shader, &self.constants(paths))
            .unwrap_or_else(|e| panic!("{} does not specialise: {e}", self.shader.name))
            .module;
        let desc = wgpu::ShaderModuleDescriptor {
            label,
            source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module)),
        };
        let module = if self.checks {
            device.create_shader_module(desc)
        } else {
            let mut checks = wgpu::ShaderRuntimeChecks::unchecked();
            // A division by zero is undefined in SPIR-V; the guard costs a select.
            checks.int_div_checks = true;
            // SAFETY: the library checks every index its tables hold when they are built
            // (clip, channel, key, retarget and plan words, packed blocks), batches check every
            // clip, mask and bone they name, and every loop is bounded by a count the library
            // or batch wrote; wgpu's clamps and loop counters would only repeat that.
            unsafe { device.create_shader_module_trusted(desc, checks) }
        };
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label,
            layout: Some(&shaders::pipeline_layout(device, &self.layout)),
            module: &module,
            entry_point: Some(ENTRY),
            compilation_options: wgpu::PipelineCompilationOptions {
                // Every workgroup array is written before it is read (each stage's barriers).
                zero_initialize_workgroup_memory: self.checks,
                ..Default::default()
            },
            cache: None,
        })
    }

    /// A bind group of `buffers`, one per declared binding, in binding order.
    pub(crate) fn bind(&self, device: &wgpu::Device, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        assert_eq!(
            buffers.len(),
            self.shader.bindings.len(),
            "the {} stage binds {} buffers",
            self.shader.name,
            self.shader.bindings.len()
        );
        let entries: Vec<_> = self
            .shader
            .bindings
            .iter()
            .zip(buffers)
            .map(|(&(binding, _), b)| wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.shader.name),
            layout: &self.layout,
            entries: &entries,
        })
    }
}

/// `Error::TooLarge` when `size` bytes exceed the storage-binding limit; `what` names them.
pub(crate) fn fits_binding(what: impl FnOnce() -> String, size: u64, limit: u64) -> Result<()> {
    if size <= limit {
        return Ok(());
    }
    Err(Error::TooLarge {
        what: what(),
        size,
        limit,
        unit: "bytes",
        limit_name: "max_storage_buffer_binding_size",
    })
}

/// Submits `encoder`'s passes; with a timer, resolves its timestamps first, and the future
/// gives each pass's GPU time (nanoseconds) once they are read back, else `None` at once.
pub(crate) fn submit_timed(
    queue: &wgpu::Queue,
    mut encoder: wgpu::CommandEncoder,
    timer: Option<&PassTimer>,
) -> impl Future<Output = Result<Option<Vec<f64>>>> + 'static {
    if let Some(t) = timer {
        t.resolve(&mut encoder);
    }
    queue.submit([encoder.finish()]);
    // Mapped after the submission that copies into it.
    let spans = timer.map(PassTimer::read_async);
    async move {
        match spans {
            Some(spans) => spans.await.map(Some),
            None => Ok(None),
        }
    }
}

/// Runs `work` to completion, polling `device` (which runs the map callbacks the future waits
/// for) whenever it is pending: the blocking form of the `_async` calls, on native backends.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on_device<T>(
    device: &wgpu::Device,
    work: impl Future<Output = Result<T>>,
) -> Result<T> {
    use std::task::{Context, Poll, Waker};
    let mut work = std::pin::pin!(work);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(result) = work.as_mut().poll(&mut cx) {
            return result;
        }
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::gpu("waiting for the device", e))?;
    }
}

/// GPU time of compute passes from timestamp queries (`Features::TIMESTAMP_QUERY`): the
/// evaluator's per-pass times, and a tool for hosts that time their own passes beside
/// posegpu's. Record pass `k` with [`PassTimer::writes`], then [`PassTimer::resolve`] into the
/// same encoder, submit, and [`PassTimer::read`].
pub struct PassTimer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    period_ns: f64,
    passes: u32,
}

impl PassTimer {
    /// Queries and buffers for `passes` passes.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, passes: u32) -> Self {
        let bytes = u64::from(passes) * 16;
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Self {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * passes,
            }),
            resolve: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            readback: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            period_ns: f64::from(queue.get_timestamp_period()),
            passes,
        }
    }

    /// The timestamp writes of pass `k`.
    pub fn writes(&self, k: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * k),
            end_of_pass_write_index: Some(2 * k + 1),
        }
    }

    /// Records the copy of every timestamp to the read-back buffer.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.queries, 0..2 * self.passes, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, self.resolve.size());
    }

    /// Each pass's GPU time in nanoseconds, after the submission that resolved them (0 for a
    /// pass that did not run), blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self, device: &wgpu::Device) -> Result<Vec<f64>> {
        block_on_device(device, self.read_async())
    }

    /// [`PassTimer::read`] as a future, asked for after the submission that resolved them.
    pub fn read_async(&self) -> impl Future<Output = Result<Vec<f64>>> + 'static {
        let bytes = read_mapped_async(&self.readback);
        let period_ns = self.period_ns;
        async move {
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes.await?);
            Ok(ticks
                .chunks_exact(2)
                .map(|t| t[1].saturating_sub(t[0]) as f64 * period_ns)
                .collect())
        }
    }
}

/// Workgroups laid out as `x * y ≥ workgroups` with `x` within the per-dimension limit and
/// fewer than `y` idle.
pub(crate) fn grid(workgroups: u64, max: u32) -> (u32, u32) {
    // As few rows as fit, then rows as short as they can be: fewer than `y` workgroups idle
    // (filling x first would leave up to a whole row, a quarter of 100,000 humanoids, idle).
    let y = workgroups.div_ceil(u64::from(max.max(1))).max(1);
    (workgroups.div_ceil(y).max(1) as u32, y as u32)
}

/// Asks for a `MAP_READ` buffer's mapping now (after the queue's work), and the future copies
/// it out and unmaps it once mapped.
pub(crate) fn read_mapped_async(
    buffer: &wgpu::Buffer,
) -> impl Future<Output = Result<Vec<u8>>> + 'static {
    let mapped = MapAll::new(std::iter::once(buffer));
    let buffer = buffer.clone();
    async move {
        mapped.await?;
        let bytes = buffer
            .get_mapped_range(..)
            .map_err(|e| Error::gpu("reading a mapped buffer", e))?
            .to_vec();
        buffer.unmap();
        Ok(bytes)
    }
}

/// [`read_mapped_async`], blocking (for the renderer's and the tests' read-backs).
#[cfg(all(not(target_arch = "wasm32"), any(test, feature = "render")))]
pub(crate) fn read_mapped(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
    block_on_device(device, read_mapped_async(buffer))
}

/// Turns wgpu's validation and out-of-memory errors into [`Error::Gpu`] instead of the
/// default handler's panic. The errors come as a future: constructors await it (their `_async`
/// forms on the web), and native callers block on it.
pub(crate) struct ErrorScope {
    validation: wgpu::ErrorScopeGuard,
    memory: wgpu::ErrorScopeGuard,
}

impl ErrorScope {
    pub(crate) fn push(device: &wgpu::Device) -> Self {
        let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        Self { validation, memory }
    }

    /// The scope's first error, once the device has answered.
    pub(crate) async fn pop_async(self) -> Result<()> {
        let validation = self.validation.pop();
        let memory = self.memory.pop();
        match validation.await.or(memory.await) {
            Some(e) => Err(Error::gpu("a device operation", e)),
            None => Ok(()),
        }
    }

    /// [`ErrorScope::pop_async`], blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn pop(self) -> Result<()> {
        pollster::block_on(self.pop_async())
    }
}

/// The error scope of work a frame (or a call that cannot be async) does: natively an
/// [`ErrorScope`] waited for. A browser cannot block, so there none is pushed and an error
/// reaches the device's uncaptured-error handler (the console, or the page's handler).
pub(crate) struct FrameScope(#[cfg(not(target_arch = "wasm32"))] ErrorScope);

impl FrameScope {
    pub(crate) fn push(device: &wgpu::Device) -> Self {
        #[cfg(target_arch = "wasm32")]
        let _ = device;
        Self(
            #[cfg(not(target_arch = "wasm32"))]
            ErrorScope::push(device),
        )
    }

    pub(crate) fn pop(self) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.0.pop();
        #[cfg(target_arch = "wasm32")]
        Ok(())
    }
}

/// Maps buffers for reading and resolves once every one is mapped (or one failed). The map
/// callbacks run when the device is polled; nothing here blocks.
pub(crate) struct MapAll {
    state: std::sync::Arc<std::sync::Mutex<MapState>>,
}

#[derive(Default)]
struct MapState {
    left: usize,
    error: Option<wgpu::BufferAsyncError>,
    waker: Option<std::task::Waker>,
}

impl MapAll {
    pub(crate) fn new<'a>(buffers: impl Iterator<Item = &'a wgpu::Buffer>) -> Self {
        let state = std::sync::Arc::new(std::sync::Mutex::new(MapState::default()));
        for buffer in buffers {
            state.lock().unwrap_or_else(|p| p.into_inner()).left += 1;
            let state = state.clone();
            buffer.map_async(wgpu::MapMode::Read, .., move |result| {
                let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                s.left -= 1;
                if let Err(e) = result {
                    s.error.get_or_insert(e);
                }
                if s.left == 0 || s.error.is_some() {
                    if let Some(w) = s.waker.take() {
                        w.wake();
                    }
                }
            });
        }
        Self { state }
    }
}

impl std::future::Future for MapAll {
    type Output = Result<()>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = s.error.take() {
            return std::task::Poll::Ready(Err(Error::gpu("mapping a buffer", e)));
        }
        if s.left == 0 {
            return std::task::Poll::Ready(Ok(()));
        }
        s.waker = Some(cx.waker().clone());
        std::task::Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn grids_are_exact_within_a_row_and_within_the_limit() {
        for max in [1u32, 3, 7, 64, 65_535] {
            for workgroups in (0u64..300).chain([104_688, 65_535, 65_536, 1 << 20, 4_000_000]) {
                if workgroups > u64::from(max).pow(2) {
                    continue;
                }
                let (x, y) = grid(workgroups, max);
                let launched = u64::from(x) * u64::from(y);
                assert!(x <= max && y <= max, "{workgroups} on {max}: {x} x {y}");
                assert!(
                    launched >= workgroups.max(1),
                    "{workgroups} on {max}: {x} x {y}"
                );
                assert!(
                    launched - workgroups.max(1) < u64::from(y),
                    "{workgroups} on {max}: {x} x {y} leaves a row's worth idle"
                );
            }
        }
        // 100,000 humanoids (67 bones, 64 lanes a workgroup): no idle workgroup at all.
        assert_eq!(grid(104_688, 65_535), (52_344, 2));
    }
}
