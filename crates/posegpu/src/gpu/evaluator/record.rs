//! Recording a frame: the frame plan's passes, each with its pipeline, its bind group per chunk
//! and its dispatch shape, timed where timestamps exist.

use std::future::Future;

#[cfg(not(target_arch = "wasm32"))]
use super::super::util::block_on_device;
use super::super::util::{grid, submit_timed, FrameScope};
use super::GpuEvaluator;
use crate::batch::FrameInput;
use crate::error::Result;
use crate::frame_plan::{PassTimes, PlannedPass};

impl GpuEvaluator {
    /// Records the passes of the frame last written (see [`crate::Stage`] for their order). A
    /// renderer may record its draw after this in the same encoder: wgpu orders the storage
    /// writes before the vertex reads. (A [`crate::GpuCrowd`] records its own passes with
    /// these.)
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_timed(encoder, false);
    }

    /// The plan's passes, pass `k` timed in the timer's slot `k` when `timed`.
    fn encode_timed(&self, encoder: &mut wgpu::CommandEncoder, timed: bool) {
        let timer = self.timer.as_ref().filter(|_| timed);
        for (k, planned) in self.plan.passes().iter().enumerate() {
            let writes = timer.map(|t| t.writes(k as u32));
            self.encode_pass(encoder, planned, writes);
        }
    }

    /// Records one of the plan's passes over every chunk; nothing for a crowd's own passes.
    pub(crate) fn encode_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        planned: &PlannedPass,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) {
        let Some(pipeline) = self.pipelines.get(planned.pass) else {
            return;
        };
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(planned.pass.label()),
            timestamp_writes,
        });
        pass.set_pipeline(&pipeline.get(self.paths()));
        for chunk in self.chunks.iter().filter(|c| c.count > 0) {
            let (workgroups, dispatches) = planned.dispatch.workgroups(chunk.count as u64);
            let (x, y) = grid(workgroups, self.max_workgroups);
            let group = chunk.groups.get(planned.pass).expect("an evaluator pass");
            pass.set_bind_group(0, group, &[]);
            for z in 1..=dispatches {
                pass.dispatch_workgroups(x, y, z);
            }
        }
    }

    /// Compiles the pipelines the next frame runs that are not compiled yet, reporting a
    /// failure as an error (a pipeline is compiled the first time a frame needs it).
    pub(crate) fn compile_planned(&self) -> Result<()> {
        let paths = self.paths();
        let missing: Vec<_> = (self.plan.passes().iter())
            .filter_map(|p| self.pipelines.get(p.pass))
            .filter(|p| !p.is_compiled(paths))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let scope = FrameScope::push(&self.device);
        for pipeline in missing {
            pipeline.get(paths);
        }
        scope.pop()
    }

    /// Writes `frame` (a [`PoseBatch`](crate::PoseBatch) or [`ClipSample`](crate::ClipSample)s),
    /// records its passes and submits the work, without waiting for it.
    pub fn evaluate(&mut self, frame: &(impl FrameInput + ?Sized)) -> Result<()> {
        self.write(frame)?;
        let mut encoder = self.device.create_command_encoder(&Default::default());
        self.encode(&mut encoder);
        self.queue.submit([encoder.finish()]);
        Ok(())
    }

    /// Like [`GpuEvaluator::evaluate`], then waits and returns each pass's GPU time; `None`
    /// where the adapter has no timestamp queries.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn evaluate_timed(
        &mut self,
        frame: &(impl FrameInput + ?Sized),
    ) -> Result<Option<PassTimes>> {
        let device = self.device.clone();
        let times = block_on_device(&device, self.evaluate_timed_async(frame))?;
        self.wait()?;
        Ok(times)
    }

    /// [`GpuEvaluator::evaluate_timed`] without blocking: the frame is written and submitted
    /// now, and the future gives the pass times once they are read back (at once `None`
    /// without timestamp queries).
    pub fn evaluate_timed_async(
        &mut self,
        frame: &(impl FrameInput + ?Sized),
    ) -> impl Future<Output = Result<Option<PassTimes>>> + 'static {
        let submitted = self.write(frame).map(|()| {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            self.encode_timed(&mut encoder, true);
            let spans = submit_timed(&self.queue, encoder, self.timer.as_ref());
            (spans, self.plan.clone())
        });
        async move {
            let (spans, plan) = submitted?;
            Ok(spans.await?.map(|spans| PassTimes::new(&plan, &spans)))
        }
    }

    /// Blocks until all submitted work is done.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| crate::Error::gpu("waiting for the device", e))
    }
}
