//! Reading a crowd's state back from the GPU: which instances finished, the events of the last
//! step, the players, root motion and placements. Each reader is a future (`_async`, which a
//! browser awaits) and, natively, a blocking call that polls the device until it resolves.

use std::future::Future;

#[cfg(not(target_arch = "wasm32"))]
use super::super::util::block_on_device;
use super::super::util::read_mapped_async;
use super::GpuCrowd;
use crate::error::{Error, Result};
use crate::layout::{PlayerData, RootMotionData};
use crate::playback::{Event, EventKind, Player};
use crate::Transform;

/// The blocking form of each `_async` reader: the same future, run to completion.
macro_rules! blocking {
    ($(#[$doc:meta])* $name:ident, $async_name:ident, $out:ty) => {
        $(#[$doc])*
        #[cfg(not(target_arch = "wasm32"))]
        pub fn $name(&self) -> Result<$out> {
            block_on_device(self.eval.device(), self.$async_name())
        }
    };
}

impl GpuCrowd {
    blocking!(
        /// The instances that reached the end of a non-looping track in the last step,
        /// ascending: reads back their count, then only that many indices.
        finished, finished_async, Vec<u32>
    );
    blocking!(
        /// What the players of weight over 1e-5 passed in the last step (notifies, loops,
        /// montage segments), sorted by instance, player and kind as [`crate::Crowd::events`]
        /// lists them: reads back their count, then only that many records. More events than
        /// the list holds ([`crate::GpuOptions::event_capacity`]) is an [`Error::Playback`]
        /// naming both numbers.
        events, events_async, Vec<Event>
    );
    blocking!(
        /// Every player as the GPU has it now, instance after instance.
        read_players, read_players_async, Vec<Player>
    );
    blocking!(
        /// Each instance's root motion over the last step (the identity where it is not
        /// extracted).
        read_root_motion, read_root_motion_async, Vec<Transform>
    );
    blocking!(
        /// Each instance's placement, moved by every root motion so far.
        read_placements, read_placements_async, Vec<Transform>
    );

    /// [`GpuCrowd::finished`] as a future.
    pub fn finished_async(&self) -> impl Future<Output = Result<Vec<u32>>> + 'static {
        let this = self.reader(&self.events);
        let count = this.read(0, 4);
        async move {
            let count: u32 = bytemuck::pod_read_unaligned(&count.await?);
            if count == 0 {
                return Ok(Vec::new());
            }
            let bytes = this.read(4, 4 * u64::from(count)).await?;
            let mut list: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes);
            list.sort_unstable();
            Ok(list)
        }
    }

    /// [`GpuCrowd::events`] as a future.
    pub fn events_async(&self) -> impl Future<Output = Result<Vec<Event>>> + 'static {
        let this = self.reader(&self.passed);
        let count = this.read(0, 4);
        let capacity = self.passed_capacity;
        async move {
            let count: u32 = bytemuck::pod_read_unaligned(&count.await?);
            if count > capacity {
                return Err(Error::Playback {
                    what: format!(
                        "{count} events in the last step, over the event list's {capacity} \
                         (GpuOptions::event_capacity)"
                    ),
                });
            }
            if count == 0 {
                return Ok(Vec::new());
            }
            let bytes = this.read(16, 16 * u64::from(count)).await?;
            let records: Vec<[u32; 4]> = bytemuck::pod_collect_to_vec(&bytes);
            let mut list = records
                .iter()
                .map(|&[instance, player, kind, payload]| {
                    let kind = EventKind::from_code([kind, payload]).ok_or_else(|| Error::Gpu {
                        what: format!("event record of unknown kind {kind}"),
                        source: None,
                    })?;
                    Ok(Event {
                        instance,
                        player,
                        kind,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            list.sort_unstable();
            Ok(list)
        }
    }

    /// [`GpuCrowd::read_players`] as a future.
    pub fn read_players_async(&self) -> impl Future<Output = Result<Vec<Player>>> + 'static {
        let chunks: Vec<_> = (self.chunks.iter())
            .map(|c| self.reader(&c.players).read(0, c.players.size()))
            .collect();
        async move {
            let mut out = Vec::new();
            for bytes in chunks {
                let data: Vec<PlayerData> = bytemuck::pod_collect_to_vec(&bytes.await?);
                out.extend(data.iter().map(PlayerData::player));
            }
            Ok(out)
        }
    }

    /// [`GpuCrowd::read_root_motion`] as a future.
    pub fn read_root_motion_async(&self) -> impl Future<Output = Result<Vec<Transform>>> + 'static {
        let motion = self.read_motion_async();
        async move { Ok(motion.await?.iter().map(|m| m.delta.into()).collect()) }
    }

    /// [`GpuCrowd::read_placements`] as a future.
    pub fn read_placements_async(&self) -> impl Future<Output = Result<Vec<Transform>>> + 'static {
        let motion = self.read_motion_async();
        async move { Ok(motion.await?.iter().map(|m| m.placement.into()).collect()) }
    }

    fn read_motion_async(&self) -> impl Future<Output = Result<Vec<RootMotionData>>> + 'static {
        let chunks: Vec<_> = (self.chunks.iter())
            .map(|c| self.reader(&c.motion).read(0, c.motion.size()))
            .collect();
        async move {
            let mut out = Vec::new();
            for bytes in chunks {
                out.extend(bytemuck::pod_collect_to_vec::<u8, RootMotionData>(
                    &bytes.await?,
                ));
            }
            Ok(out)
        }
    }

    /// What reads `buffer`, for a future to hold.
    fn reader(&self, buffer: &wgpu::Buffer) -> Reader {
        Reader {
            device: self.eval.device().clone(),
            queue: self.eval.queue().clone(),
            buffer: buffer.clone(),
        }
    }
}

/// A buffer with the device and queue to read it, owned, so that a future can read it after
/// an earlier read told it how much.
struct Reader {
    device: wgpu::Device,
    queue: wgpu::Queue,
    buffer: wgpu::Buffer,
}

impl Reader {
    /// `size` bytes from `offset`, after the work submitted so far: copied to a staging
    /// buffer, submitted, and mapped.
    fn read(&self, offset: u64, size: u64) -> impl Future<Output = Result<Vec<u8>>> + 'static {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&self.buffer, offset, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        read_mapped_async(&staging)
    }
}
