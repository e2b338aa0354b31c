//! Uploading a frame: each chunk's heads (rebased onto its own frame buffer and delta slots)
//! and entries, its parameters, the buffers grown where the frame needs more room, and the
//! frame's plan.

use super::super::util::{fits_binding, FrameScope};
use super::{GpuEvaluator, OutputChunk, ENTRY_BYTES, XFORM_BYTES};
use crate::batch::{FrameInput, PoseBatch};
use crate::error::Result;
use crate::frame_plan::{fused_group_instances, FramePlan, FrameShape};
use crate::layout::{Head, Params, FUSED_MAX_POSES};

impl GpuEvaluator {
    /// Uploads what every instance of `frame` (a [`PoseBatch`] or [`ClipSample`](crate::ClipSample)s) plays this
    /// frame, validated first, growing the buffers if needed, and plans the frame's passes.
    pub fn write(&mut self, frame: &(impl FrameInput + ?Sized)) -> Result<()> {
        self.write_batch(&frame.batch())
    }

    /// Each chunk gets its instances' heads, rebased, then their entries.
    fn write_batch(&mut self, batch: &PoseBatch) -> Result<()> {
        batch.validate(&self.lib)?;
        self.reserve(batch.len())?;
        let bones = self.lib.bone_count() as u64;
        let (heads, entries) = (batch.heads(), batch.entries());
        // Each chunk's heads (rebased onto its own frame buffer and delta slots), its entries
        // and its delta bytes, all checked against the binding limit before anything is made.
        let mut frames = Vec::with_capacity(self.chunks.len());
        for chunk in &self.chunks {
            let end = (chunk.first + chunk.capacity).min(heads.len());
            let mine = heads.get(chunk.first..end).unwrap_or(&[]);
            let (e0, s0) = mine.first().map_or((0, 0), |h| (h.first, h.slot));
            let e1 = heads.get(end).map_or(entries.len(), |h| h.first as usize);
            let rebased: Vec<Head> = mine
                .iter()
                .map(|h| Head {
                    first: h.first - e0 + mine.len() as u32,
                    slot: h.slot - s0,
                    ..*h
                })
                .collect();
            let own = if mine.is_empty() {
                &[][..]
            } else {
                &entries[e0 as usize..e1]
            };
            let slots: u64 = mine.iter().map(|h| u64::from(h.slots)).sum();
            // The heads and entries, then as many words for the resolve pass to write each
            // sample's key search in (`Params::resolved_word`).
            let frame_bytes = 2 * (rebased.len() + own.len()) as u64 * ENTRY_BYTES;
            let delta_bytes = slots * bones * XFORM_BYTES;
            for (what, size) in [("frame", frame_bytes), ("layer deltas", delta_bytes)] {
                let what = || {
                    format!(
                        "the {what} of instances {}..{end} (fewer layers or instances per batch)",
                        chunk.first
                    )
                };
                fits_binding(what, size, self.max_binding)?;
            }
            frames.push((rebased, own, frame_bytes, delta_bytes));
        }
        // Only a frame that grows buffers creates anything that can fail validation: the
        // others write and return without waiting on the device (an error scope's pop does).
        let inertia_bytes = |c: &OutputChunk| {
            u64::from(batch.has_inertia()) * c.capacity as u64 * bones * XFORM_BYTES
        };
        let grows = frames.iter().zip(&self.chunks).any(|((_, _, f, d), c)| {
            *f > c.buffers.frame.size()
                || *d > c.buffers.deltas.size()
                || inertia_bytes(c) > c.buffers.inertia.size()
        });
        let scope = grows.then(|| FrameScope::push(&self.device));
        let group_instances = fused_group_instances(bones as u32, self.frame_options.fused_poses);
        let task_instances = fused_group_instances(bones as u32, FUSED_MAX_POSES);
        for (k, (rebased, own, frame_bytes, delta_bytes)) in frames.into_iter().enumerate() {
            let inertia = inertia_bytes(&self.chunks[k]);
            self.fit_chunk(k, frame_bytes, delta_bytes, inertia);
            let chunk = &mut self.chunks[k];
            chunk.count = rebased.len();
            // Heads, then the entries straight from the batch (no copy).
            let heads_bytes: &[u8] = bytemuck::cast_slice(&rebased);
            if !rebased.is_empty() {
                self.queue
                    .write_buffer(&chunk.buffers.frame, 0, heads_bytes);
                let at = heads_bytes.len() as u64;
                self.queue
                    .write_buffer(&chunk.buffers.frame, at, bytemuck::cast_slice(own));
            }
            let params = Params {
                bone_count: bones as u32,
                instance_count: chunk.count as u32,
                curve_count: self.lib.curve_names().len() as u32,
                root_bone: self.lib.data().root_bone,
                root_up: self.lib.data().root_up_local.extend(0.0).to_array(),
                root_parent: self.lib.data().root_parent.into(),
                levels: self.skeleton.levels,
                group_instances,
                parents_word: self.skeleton.parents,
                inverse_bind_word: self.skeleton.inverse_bind,
                tasks_word: self.skeleton.tasks,
                level_starts_word: self.skeleton.level_starts,
                resolved_word: (frame_bytes / ENTRY_BYTES / 2) as u32,
                task_instances,
            };
            self.queue
                .write_buffer(&chunk.buffers.params, 0, bytemuck::bytes_of(&params));
        }
        self.plan_frame(FrameShape::of(batch));
        scope.map_or(Ok(()), FrameScope::pop)?;
        self.compile_planned()
    }

    /// Grows chunk `k`'s frame and delta buffers to hold the given bytes (by half again, so a
    /// slowly growing crowd does not reallocate every frame) and rebinds them.
    fn fit_chunk(&mut self, k: usize, frame_bytes: u64, delta_bytes: u64, inertia_bytes: u64) {
        let grown = |size: u64| grown_capacity(size, self.max_binding);
        let mut buffers = self.chunks[k].buffers.clone();
        let mut fits = true;
        for (buffer, needed, size) in [
            (&mut buffers.frame, frame_bytes, grown(frame_bytes)),
            (&mut buffers.deltas, delta_bytes, grown(delta_bytes)),
            // The whole chunk's at once: the state must not move while transitions blend.
            (&mut buffers.inertia, inertia_bytes, inertia_bytes),
        ] {
            if needed > buffer.size() {
                *buffer = self.frame_buffer(size);
                fits = false;
            }
        }
        if fits {
            return;
        }
        let groups = self.bind_groups(&buffers);
        let chunk = &mut self.chunks[k];
        (chunk.buffers, chunk.groups) = (buffers, groups);
    }

    /// Plans the frames of `shape` from now on (a crowd, whose frames are written on the
    /// device, says when an inertialization is under way and when one begins).
    pub(crate) fn plan_frame(&mut self, shape: FrameShape) {
        self.plan = FramePlan::new(&self.lib, &shape, &self.frame_options);
        self.shape = shape;
    }

    /// The shape of the frame last written.
    pub(crate) fn frame_shape(&self) -> FrameShape {
        self.shape
    }
}

/// The bytes a frame buffer that must hold `needed` bytes (a multiple of 16, within `limit`) is
/// given: half again, so a slowly growing crowd does not reallocate every frame, in whole
/// 16-byte words, and never past the binding limit (rounding up after capping once passed it:
/// NVIDIA's limit, 2,147,483,644 bytes, is not a multiple of 16).
fn grown_capacity(needed: u64, limit: u64) -> u64 {
    (needed + needed / 2)
        .next_multiple_of(16)
        .min(limit / 16 * 16)
        .max(needed.max(16))
}

#[cfg(test)]
mod tests {
    use super::grown_capacity;

    #[test]
    fn grown_frame_buffers_stay_within_the_binding_limit() {
        // NVIDIA's limit, and odd ones.
        for limit in [2_147_483_644u64, 1_000_003, 4_099, 64] {
            for needed in [
                16u64,
                48,
                960,
                1_431_655_760,
                2_147_483_632,
                limit / 16 * 16,
            ] {
                if needed > limit {
                    continue;
                }
                let size = grown_capacity(needed, limit);
                assert!(size >= needed, "{needed} within {limit}: {size}");
                assert!(
                    size <= limit,
                    "{needed} within {limit}: {size} passes the limit"
                );
                assert_eq!(size % 16, 0, "{needed} within {limit}: {size}");
            }
        }
        // A million instances' mesh-space deltas (1.43 GB and up) used to round past it.
        assert_eq!(grown_capacity(1_431_655_760, 2_147_483_644), 2_147_483_632);
        assert_eq!(grown_capacity(1_000, u64::MAX), 1_504);
    }
}
