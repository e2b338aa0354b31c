//! A crowd on the GPU: its players, tracks and root motion live in storage buffers; each step
//! runs the evaluator's frame plan, whose first passes are the crowd's own (advance, then root
//! motion where some instance extracts it), in one submission. Nothing is uploaded per frame
//! but `dt`.

mod read;

use std::future::Future;

use wgpu::util::DeviceExt;

use super::context::GpuContext;
use super::evaluator::{GpuEvaluator, GpuOptions};
#[cfg(not(target_arch = "wasm32"))]
use super::util::block_on_device;
use super::util::{fits_binding, grid, submit_timed, ErrorScope, StagePipeline};
use crate::error::{Error, Result};
use crate::frame_plan::{Binding, FrameShape, Pass, PassTimes, Stage};
use crate::layout::{
    CrowdParams, Entry, GroupData, PlayerData, RootMotionData, Xform, GROUP_ROOT_MOTION,
    LAYER_INERTIALIZE, LAYER_SAMPLES_SHIFT, PLAYER_LOOP,
};
use crate::library::AnimLibrary;
use crate::playback::crowd::{check_dt, Phase, TransitionState};
use crate::playback::{Crowd, PlayRate, Player, TrackId, Transition};
use crate::Transform;

const PLAYER_BYTES: u64 = std::mem::size_of::<PlayerData>() as u64;
const MOTION_BYTES: u64 = std::mem::size_of::<RootMotionData>() as u64;
/// Byte offsets of fields the host rewrites alone.
const POSITION_OFFSET: u64 = std::mem::offset_of!(PlayerData, position) as u64;
const WEIGHT_OFFSET: u64 = std::mem::offset_of!(PlayerData, weight) as u64;
const ENTRY_OFFSET: u64 = std::mem::offset_of!(PlayerData, entry) as u64;
const INTERRUPTED_OFFSET: u64 = std::mem::offset_of!(PlayerData, interrupted) as u64;
const PLACEMENT_OFFSET: u64 = std::mem::offset_of!(RootMotionData, placement) as u64;

impl PlayerData {
    fn new(p: &Player, entry: u32) -> Self {
        Self {
            track: p.track.0,
            flags: if p.looping { PLAYER_LOOP } else { 0 },
            entry,
            position: p.position,
            start_position: p.start_position,
            weight: p.weight,
            interrupted: -1.0,
            rate: p.rate.rate,
            basis: p.rate.basis,
            scale: p.rate.scale,
            bias: p.rate.bias,
            clamp_min: p.rate.clamp.0,
            clamp_max: p.rate.clamp.1,
            ..Self::default()
        }
    }

    fn player(&self) -> Player {
        Player {
            track: TrackId(self.track),
            position: self.position,
            start_position: self.start_position,
            rate: PlayRate {
                rate: self.rate,
                basis: self.basis,
                scale: self.scale,
                bias: self.bias,
                clamp: (self.clamp_min, self.clamp_max),
            },
            looping: self.flags & PLAYER_LOOP != 0,
            weight: self.weight,
        }
    }
}

/// What a chunk's crowd buffers will hold, checked against the limits before any is made.
struct ChunkPlan {
    /// The evaluator's chunk.
    index: usize,
    first: usize,
    count: usize,
    first_player: usize,
    params: CrowdParams,
    structure: Vec<Entry>,
    players: Vec<PlayerData>,
    motion: Vec<RootMotionData>,
}

/// The crowd state of one of the evaluator's chunks (the same instances).
struct CrowdChunk {
    first: usize,
    count: usize,
    first_player: usize,
    params: wgpu::Buffer,
    players: wgpu::Buffer,
    motion: wgpu::Buffer,
    advance: wgpu::BindGroup,
    root_motion: wgpu::BindGroup,
}

/// A [`Crowd`] played on the GPU: one call advances every player by `dt` and evaluates every
/// pose, without per-frame uploads. The CPU twin is [`Crowd::advance`] and
/// [`crate::CpuEvaluator`].
pub struct GpuCrowd {
    eval: GpuEvaluator,
    /// The description, and every value the host has set since (positions go stale: the GPU
    /// advances them).
    host: Crowd,
    advance: StagePipeline,
    root_motion: StagePipeline,
    /// `[count, instances...]` of the last step.
    events: wgpu::Buffer,
    /// `[count, _, _, _]`, then `[instance, player, kind, payload]` records: what the last
    /// step's players passed.
    passed: wgpu::Buffer,
    /// Records `passed` has room for.
    passed_capacity: u32,
    chunks: Vec<CrowdChunk>,
    /// Each player's clip sample in its chunk's frame buffer.
    entries: Vec<u32>,
    /// Instances whose transition is under way (the host steps them).
    transitioning: Vec<usize>,
}

impl GpuCrowd {
    /// Uploads `lib` and `crowd` (the state it has now) and makes every buffer a step needs.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(
        ctx: &GpuContext,
        lib: &AnimLibrary,
        crowd: &Crowd,
        options: &GpuOptions,
    ) -> Result<Self> {
        pollster::block_on(Self::new_async(ctx, lib, crowd, options))
    }

    /// [`GpuCrowd::new`] without blocking: the device's verdict on the uploads is awaited.
    pub async fn new_async(
        ctx: &GpuContext,
        lib: &AnimLibrary,
        crowd: &Crowd,
        options: &GpuOptions,
    ) -> Result<Self> {
        crowd.check_library(lib)?;
        if crowd.is_empty() {
            return Err(Error::Playback {
                what: "the crowd has no instances".into(),
            });
        }
        let mut eval = GpuEvaluator::new_async(ctx, lib, crowd.len(), options).await?;
        let batch = crowd.batch();
        eval.write(&batch)?;
        // The crowd writes its frames on the device from now on: its pipelines keep the paths
        // a later frame could take (a montage's root lock, a layer's weight).
        let shape = FrameShape {
            root_locks: true,
            heavy_layers: true,
            ..eval.frame_shape()
        };
        eval.plan_frame(shape);
        let device = eval.device().clone();
        let max_binding = eval.max_binding();
        let too_large = |what: String, size: u64| fits_binding(|| what, size, max_binding);
        too_large(
            "the finished-events list".into(),
            4 * (1 + crowd.len() as u64),
        )?;
        let passed_capacity = options
            .event_capacity
            .unwrap_or_else(|| (4 * crowd.players.len() + 64).min(u32::MAX as usize) as u32);
        let passed_bytes = 16 * (1 + u64::from(passed_capacity));
        too_large("the event list".into(), passed_bytes)?;
        too_large(
            "the notify table".into(),
            16 * lib.data().notify_table.len() as u64,
        )?;

        // Every chunk's structure: its groups (players counted from the chunk's first), then
        // every track and segment.
        let timeline = &crowd.timeline;
        let heads = batch.heads();
        let mut entries = vec![0; crowd.players.len()];
        let mut planned = Vec::new();
        for (index, chunk) in eval
            .chunks()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.count > 0)
        {
            let range = chunk.first..chunk.first + chunk.count;
            let groups = &crowd.groups[range.clone()];
            let first_player = groups[0].first;
            let e0 = heads[chunk.first].first;
            let mut structure: Vec<Entry> = groups
                .iter()
                .zip(range.clone())
                .map(|(g, i)| {
                    bytemuck::cast(GroupData {
                        first_player: g.first - first_player,
                        player_count: g.count,
                        flags: g.flags,
                        instance: i as u32,
                    })
                })
                .collect();
            let tracks = structure.len() as u32;
            structure.extend(
                timeline
                    .tracks
                    .iter()
                    .map(|t| bytemuck::cast::<_, Entry>(*t)),
            );
            let segments = structure.len() as u32;
            structure.extend(
                timeline
                    .segments
                    .iter()
                    .map(|s| bytemuck::cast::<_, Entry>(*s)),
            );
            let mut players = Vec::new();
            for (g, i) in groups.iter().zip(range.clone()) {
                // The chunk's frame buffer: its heads, then its entries (a base header, then
                // one sample per player).
                let base = chunk.count as u32 + heads[i].first - e0 + 1;
                for k in 0..g.count {
                    let p = (g.first + k) as usize;
                    entries[p] = base + k;
                    players.push(PlayerData::new(&crowd.players[p], base + k));
                }
            }
            let motion: Vec<RootMotionData> = crowd.placements()[range]
                .iter()
                .map(|p| RootMotionData {
                    delta: Transform::IDENTITY.into(),
                    placement: (*p).into(),
                })
                .collect();
            let at = format!("instances {}..{}", chunk.first, chunk.first + chunk.count);
            too_large(
                format!("the crowd structure of {at}"),
                16 * structure.len() as u64,
            )?;
            too_large(
                format!("the players of {at}"),
                PLAYER_BYTES * players.len() as u64,
            )?;
            too_large(
                format!("the root motion of {at}"),
                MOTION_BYTES * motion.len() as u64,
            )?;
            let params = CrowdParams {
                dt: 0.0,
                group_count: chunk.count as u32,
                tracks,
                segments,
                root_up: lib.data().root_up_local.to_array(),
                root_bone: lib.data().root_bone,
                root_parent: lib.data().root_parent.into(),
                bone_count: lib.bone_count() as u32,
                ..Default::default()
            };
            planned.push(ChunkPlan {
                index,
                first: chunk.first,
                count: chunk.count,
                first_player: first_player as usize,
                params,
                structure,
                players,
                motion,
            });
        }

        let scope = ErrorScope::push(&device);
        let checks = options.runtime_checks;
        let advance = StagePipeline::new(&device, Stage::Advance, &[], checks);
        let root_motion = StagePipeline::new(&device, Stage::RootMotion, &[], checks);
        advance.get(eval.paths());
        root_motion.get(eval.paths());
        let events = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("finished events"),
            size: 4 * (1 + crowd.len() as u64),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let passed = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("events"),
            size: passed_bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let init = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let notify_table = init(
            "notify table",
            bytemuck::cast_slice(&lib.data().notify_table),
            wgpu::BufferUsages::STORAGE,
        );
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let mut chunks = Vec::new();
        for plan in planned {
            let uniform = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
            let params = init("crowd params", bytemuck::bytes_of(&plan.params), uniform);
            let structure = init(
                "crowd structure",
                bytemuck::cast_slice(&plan.structure),
                wgpu::BufferUsages::STORAGE,
            );
            let players = init("players", bytemuck::cast_slice(&plan.players), storage);
            let motion = init("root motion", bytemuck::cast_slice(&plan.motion), storage);
            let frame = eval.chunks()[plan.index].frame();
            // The crowd's own buffers; the evaluator's for the rest.
            let bind = |pipeline: &StagePipeline, stage: Stage| {
                let bound: Vec<&wgpu::Buffer> = (stage.bindings().iter())
                    .map(|&b| match b {
                        Binding::CrowdParams => &params,
                        Binding::Structure => &structure,
                        Binding::Players => &players,
                        Binding::Motion => &motion,
                        Binding::Finished => &events,
                        Binding::NotifyTable => &notify_table,
                        Binding::Events => &passed,
                        Binding::Frame => frame,
                        _ => eval.asset(b).expect("a library table"),
                    })
                    .collect();
                pipeline.bind(&device, &bound)
            };
            let (advance_group, root_motion_group) = (
                bind(&advance, Stage::Advance),
                bind(&root_motion, Stage::RootMotion),
            );
            chunks.push(CrowdChunk {
                first: plan.first,
                count: plan.count,
                first_player: plan.first_player,
                params,
                players,
                advance: advance_group,
                root_motion: root_motion_group,
                motion,
            });
        }
        scope.pop_async().await?;
        eval.set_crowd(
            crowd
                .groups
                .iter()
                .any(|g| g.flags & GROUP_ROOT_MOTION != 0),
        );
        Ok(Self {
            eval,
            host: crowd.clone(),
            advance,
            root_motion,
            events,
            passed,
            passed_capacity,
            chunks,
            entries,
            transitioning: Vec::new(),
        })
    }

    /// The evaluator whose output buffers hold the poses of the last step.
    pub fn evaluator(&self) -> &GpuEvaluator {
        &self.eval
    }

    /// The number of instances.
    pub fn len(&self) -> usize {
        self.host.len()
    }

    /// True when the crowd has no instances (never: [`GpuCrowd::new`] refuses an empty crowd).
    pub fn is_empty(&self) -> bool {
        self.host.is_empty()
    }

    /// Per chunk of instances `first .. first + count`, the root-motion buffer: per instance
    /// 96 bytes, the last step's delta then the placement, each an [`Xform`] (`STORAGE`
    /// usage: a crowd simulation may bind it).
    pub fn root_motion_buffers(&self) -> impl Iterator<Item = (usize, usize, &wgpu::Buffer)> {
        self.chunks.iter().map(|c| (c.first, c.count, &c.motion))
    }

    /// Advances every player by `dt` seconds and evaluates every pose, on the GPU, in one
    /// submission (without waiting for it).
    pub fn advance(&mut self, dt: f32) -> Result<()> {
        let mut encoder = self
            .eval
            .device()
            .create_command_encoder(&Default::default());
        self.encode_step(&mut encoder, dt)?;
        self.eval.queue().submit([encoder.finish()]);
        Ok(())
    }

    /// Records a step of `dt` seconds into a caller's encoder (a renderer records its draw
    /// after it). `dt` is written to the queue, so submit this encoder before the next step.
    pub fn encode_step(&mut self, encoder: &mut wgpu::CommandEncoder, dt: f32) -> Result<()> {
        self.write_dt(dt)?;
        self.eval.compile_planned()?;
        self.encode_passes(encoder, false);
        Ok(())
    }

    /// Like [`GpuCrowd::advance`], then waits and returns each pass's GPU time; `None` where
    /// the adapter has no timestamp queries.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn advance_timed(&mut self, dt: f32) -> Result<Option<PassTimes>> {
        let device = self.eval.device().clone();
        let times = block_on_device(&device, self.advance_timed_async(dt))?;
        self.eval.wait()?;
        Ok(times)
    }

    /// [`GpuCrowd::advance_timed`] without blocking: the step is submitted now, and the future
    /// gives the pass times once they are read back (at once `None` without timestamp queries).
    pub fn advance_timed_async(
        &mut self,
        dt: f32,
    ) -> impl Future<Output = Result<Option<PassTimes>>> + 'static {
        let submitted = self.write_dt(dt).and_then(|()| {
            self.eval.compile_planned()?;
            let mut encoder = self
                .eval
                .device()
                .create_command_encoder(&Default::default());
            self.encode_passes(&mut encoder, true);
            let spans = submit_timed(self.eval.queue(), encoder, self.eval.timer());
            Ok((spans, self.eval.frame_plan().clone()))
        });
        async move {
            let (spans, plan) = submitted?;
            Ok(spans.await?.map(|spans| PassTimes::new(&plan, &spans)))
        }
    }

    fn write_dt(&mut self, dt: f32) -> Result<()> {
        check_dt(dt)?;
        for c in &self.chunks {
            self.eval
                .queue()
                .write_buffer(&c.params, 0, bytemuck::bytes_of(&dt));
        }
        self.step_transitions(dt);
        Ok(())
    }

    /// Switches `instance` (added [`crate::playback::Agent::with_transitions`]) to `player` over
    /// `blend_time` seconds, as [`Crowd::transition_to`] does: its player (as the GPU has it)
    /// becomes the outgoing one, on the GPU; the transition begins with the next step.
    pub fn transition_to(
        &mut self,
        instance: usize,
        player: Player,
        blend_time: f32,
        kind: Transition,
    ) -> Result<()> {
        self.host
            .transition_to(instance, player, blend_time, kind)?;
        let (new, old) = (
            self.host.player_index(instance, 0)?,
            self.host.player_index(instance, 1)?,
        );
        // The outgoing player is the GPU's current one: copied over (through a staging buffer:
        // a copy may not stay within one buffer) before the new one is written.
        let device = self.eval.device();
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("outgoing player"),
            size: PLAYER_BYTES,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (buffer, at_new) = self.player_at(instance, new);
        let (_, at_old) = self.player_at(instance, old);
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, at_new, &staging, 0, PLAYER_BYTES);
        encoder.copy_buffer_to_buffer(&staging, 0, buffer, at_old, PLAYER_BYTES);
        self.eval.queue().submit([encoder.finish()]);
        let queue = self.eval.queue();
        let data = PlayerData::new(&self.host.all_players()[new], self.entries[new]);
        queue.write_buffer(buffer, at_new, bytemuck::bytes_of(&data));
        // The copy carries the new slot's frame entry and weight: the outgoing slot's own.
        let w = self.host.all_players()[old].weight;
        queue.write_buffer(buffer, at_old + WEIGHT_OFFSET, bytemuck::bytes_of(&w));
        let entry = self.entries[old];
        queue.write_buffer(buffer, at_old + ENTRY_OFFSET, bytemuck::bytes_of(&entry));
        let transition = self.host.groups[instance].transition;
        let interrupted = transition.and_then(|t| t.interrupted).unwrap_or(-1.0);
        queue.write_buffer(
            buffer,
            at_old + INTERRUPTED_OFFSET,
            bytemuck::bytes_of(&interrupted),
        );
        if !self.transitioning.contains(&instance) {
            self.transitioning.push(instance);
        }
        self.write_transition(instance);
        Ok(())
    }

    /// Steps the host's copy of every transition under way by `dt` and writes what changed:
    /// crossfade weights and inertialization layers.
    fn step_transitions(&mut self, dt: f32) {
        let mut list = std::mem::take(&mut self.transitioning);
        list.retain(|&i| {
            let g = &mut self.host.groups[i];
            if g.transition.is_none() {
                return false;
            }
            // The GPU samples the outgoing player's earlier position itself.
            let [new, old] = TransitionState::step_weights(&mut g.transition, dt, 0.0);
            let (first, over) = (g.first as usize, g.transition.is_none());
            // Only weights that change are written (an inertialization's stay 1 and 0).
            for (k, w) in [new, old].into_iter().enumerate() {
                if self.host.players[first + k].weight == w {
                    continue;
                }
                self.host.players[first + k].weight = w;
                let (buffer, at) = self.player_at(i, first + k);
                self.eval
                    .queue()
                    .write_buffer(buffer, at + WEIGHT_OFFSET, bytemuck::bytes_of(&w));
            }
            self.write_transition(i);
            !over
        });
        self.transitioning = list;
        // The frames the crowd writes: the pass runs only while an inertialization is under
        // way, and samples the old poses only when one begins.
        let (mut needed, mut starts) = (false, false);
        for &i in &self.transitioning {
            if let Some(t) = self.host.groups[i].transition {
                let inertial = t.kind == Transition::Inertialize && t.phase != Phase::Asked;
                needed |= inertial;
                starts |= inertial && t.phase == Phase::Starting;
            }
        }
        let shape = FrameShape {
            inertia: needed,
            inertia_starts: starts,
            ..self.eval.frame_shape()
        };
        self.eval.plan_frame(shape);
    }

    /// The inertialization layer's header of `instance` (after its outgoing player's sample),
    /// as the host's copy of its transition has it ([`Crowd::batch`] writes the same).
    fn write_transition(&self, instance: usize) {
        let g = &self.host.groups[instance];
        let [blend_time, elapsed, dt] = TransitionState::layer_words(g.transition);
        let header: Entry = [
            LAYER_INERTIALIZE | 2 << LAYER_SAMPLES_SHIFT,
            blend_time.to_bits(),
            elapsed.to_bits(),
            dt.to_bits(),
        ];
        let word = self.entries[g.first as usize + 1] + 1;
        let chunk = self
            .eval
            .chunks()
            .iter()
            .find(|c| (c.first..c.first + c.count).contains(&instance))
            .expect("every instance has a chunk");
        self.eval.queue().write_buffer(
            chunk.frame(),
            u64::from(word) * 16,
            bytemuck::bytes_of(&header),
        );
    }

    /// The frame plan's passes: the crowd's own, then the evaluator's; pass `k` timed in the
    /// timer's slot `k` when `timed`.
    fn encode_passes(&self, encoder: &mut wgpu::CommandEncoder, timed: bool) {
        encoder.clear_buffer(&self.events, 0, Some(4));
        encoder.clear_buffer(&self.passed, 0, Some(4));
        let timer = self.eval.timer().filter(|_| timed);
        for (k, planned) in self.eval.frame_plan().passes().iter().enumerate() {
            let writes = timer.map(|t| t.writes(k as u32));
            let (pipeline, group): (_, fn(&CrowdChunk) -> &wgpu::BindGroup) = match planned.pass {
                Pass::Advance => (&self.advance, |c| &c.advance),
                Pass::RootMotion => (&self.root_motion, |c| &c.root_motion),
                _ => {
                    self.eval.encode_pass(encoder, planned, writes);
                    continue;
                }
            };
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(planned.pass.label()),
                timestamp_writes: writes,
            });
            pass.set_pipeline(&pipeline.get(self.eval.paths()));
            for c in &self.chunks {
                let (workgroups, _) = planned.dispatch.workgroups(c.count as u64);
                let (x, y) = grid(workgroups, self.eval.max_workgroups());
                pass.set_bind_group(0, group(c), &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Replaces player `k` of `instance` (checked first), on the GPU.
    pub fn set_player(&mut self, instance: usize, k: usize, player: Player) -> Result<()> {
        self.host.set_player(instance, k, player)?;
        let p = self.host.player_index(instance, k)?;
        let data = PlayerData::new(&player, self.entries[p]);
        let (buffer, at) = self.player_at(instance, p);
        self.eval
            .queue()
            .write_buffer(buffer, at, bytemuck::bytes_of(&data));
        Ok(())
    }

    /// Sets the weights of `instance`'s players (checked first), on the GPU.
    pub fn set_weights(&mut self, instance: usize, weights: &[f32]) -> Result<()> {
        self.host.set_weights(instance, weights)?;
        let first = self.host.player_index(instance, 0)?;
        for (j, w) in weights.iter().enumerate() {
            let (buffer, at) = self.player_at(instance, first + j);
            let bytes = bytemuck::bytes_of(w);
            self.eval
                .queue()
                .write_buffer(buffer, at + WEIGHT_OFFSET, bytes);
        }
        Ok(())
    }

    /// Puts every player of `instance` back at its start position, on the GPU.
    pub fn restart(&mut self, instance: usize) -> Result<()> {
        self.host.restart(instance)?;
        let first = self.host.player_index(instance, 0)?;
        for (j, p) in self.host.players(instance).iter().enumerate() {
            let (buffer, at) = self.player_at(instance, first + j);
            let bytes = bytemuck::bytes_of(&p.start_position);
            self.eval
                .queue()
                .write_buffer(buffer, at + POSITION_OFFSET, bytes);
        }
        Ok(())
    }

    /// Moves `instance` to `placement`, on the GPU.
    pub fn set_placement(&mut self, instance: usize, placement: Transform) -> Result<()> {
        self.host.set_placement(instance, placement)?;
        let c = self.chunk_of(instance);
        let at = (instance - c.first) as u64 * MOTION_BYTES + PLACEMENT_OFFSET;
        let x: Xform = placement.into();
        self.eval
            .queue()
            .write_buffer(&c.motion, at, bytemuck::bytes_of(&x));
        Ok(())
    }

    fn chunk_of(&self, instance: usize) -> &CrowdChunk {
        let k = self
            .chunks
            .partition_point(|c| c.first + c.count <= instance);
        &self.chunks[k]
    }

    /// The buffer and byte offset of global player `p` of `instance`.
    fn player_at(&self, instance: usize, p: usize) -> (&wgpu::Buffer, u64) {
        let c = self.chunk_of(instance);
        (&c.players, (p - c.first_player) as u64 * PLAYER_BYTES)
    }
}
