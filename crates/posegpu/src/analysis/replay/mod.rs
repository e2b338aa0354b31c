//! A warp-level replay of the evaluator's memory traffic, which runs without a GPU.
//!
//! The replay mirrors, load by load, what each pass's shader reads and writes for the real
//! packed library and batch. Every invocation's accesses are listed in program order, each
//! tagged with its static site. Invocations run in warps of 32 consecutive lanes (a
//! workgroup's lanes in order).
//!
//! A warp issues one memory instruction per site occurrence that any of its lanes reaches (the
//! `k`-th time lanes pass one site). An instruction moves the 32-byte sectors, in 128-byte
//! lines, that its lanes' bytes fall in. Its compulsory sectors are its distinct bytes packed
//! together, rounded up.
//!
//! DRAM traffic is the pass's distinct sectors, read and written. That assumes L2 holds what
//! the pass touches twice (shared tables, parents' transforms): the compulsory DRAM traffic at
//! sector grain.
//!
//! A load is at most 16 bytes per lane, as hardware issues them. A 48-byte transform is three
//! loads, and a `u32` or `f32` is one 4-byte load. Loads whose values a pass never uses are
//! left out, as a GPU compiler removes them.
//!
//! The passes are the frame plan's ([`FramePlan`]). Not replayed: IK, inertialization and
//! dynamic mesh-space layers ([`replay_traffic`] returns `None` for batches that have them), and
//! the curve pass (left out of the list).

#[cfg(test)]
mod bindings;
mod pose;
#[cfg(test)]
mod tests;
mod warp;

use crate::batch::{self, LayerKind, PoseBatch};
use crate::frame_plan::{fused_group_instances, Dispatch, FrameOptions, FramePlan, Pass};
use crate::gpu::{FusePolicy, Outputs};
use crate::layout::ZERO_WEIGHT;
use crate::layout::{Entry, FUSED_MAX_POSES, LAYER_SAMPLES_SHIFT, WORKGROUP_SIZE};
use crate::library::{table_u32_at, AnimLibrary};
use crate::model::AdditiveSpace;
use warp::{read, read_xform, replay, write, write_xform};

impl Buffer {
    const fn read_bit(self) -> u32 {
        1 << (2 * self as u32)
    }

    const fn write_bit(self) -> u32 {
        1 << (2 * self as u32 + 1)
    }
}

/// Lanes of a warp, bytes of a sector and of a line (NVIDIA's).
const WARP: usize = 32;
const SECTOR: u64 = 32;
const LINE: u64 = 128;

/// The buffers a pass binds, as the replay names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Buffer {
    Frame,
    ClipTable,
    Times,
    Values,
    Retarget,
    Locals,
    Component,
    Skinning,
    Deltas,
    Parents,
    InverseBind,
}

/// A key search's result: the time array (offset, count) and the keys found.
type Search = (u32, u32, u32, u32);

/// One lane's access: a buffer, a byte range, the site it comes from, and, for a load on a
/// bone's chain from its sample's frame entry to its keys, its depth on that chain
/// ([`warp::read_after`]).
#[derive(Clone, Copy, Debug)]
struct Access {
    site: u32,
    buffer: Buffer,
    offset: u64,
    bytes: u64,
    write: bool,
    depth: Option<u32>,
}

/// One pass's traffic, summed over its warps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassTraffic {
    /// The pass: `sample`, `layers`, `hierarchy` or `fused`.
    pub pass: &'static str,
    /// Sectors the warps' memory instructions touch.
    pub sectors: u64,
    /// Lines the warps' memory instructions touch.
    pub lines: u64,
    /// The least sectors the same instructions could touch: each one's distinct bytes packed.
    pub compulsory_sectors: u64,
    /// Distinct sectors read and written in the pass, in bytes: its DRAM traffic when L2 holds
    /// what the pass touches twice.
    pub dram_bytes: u64,
    /// Loads the lanes issue (each lane's load of a word of 4 or 16 bytes): a latency-bound
    /// pass's cost grows with them, however well they coalesce.
    pub loads: u64,
    /// Key loads on a modelled chain (plain keys, UE's modes and plans; compressed keys are
    /// not modelled), and their dependent-load depth summed and at most: the loads from a
    /// bone's sample entry in the frame to its keys, each addressed by a value the one before
    /// returned, the keys' own included and the entry's not. A latency-bound pass waits for
    /// each in turn.
    pub key_loads: u64,
    /// The depths of the key loads, summed ([`PassTraffic::mean_key_depth`]).
    pub key_depth_sum: u64,
    /// The deepest key load.
    pub key_depth_max: u32,
    /// The buffers the lanes read and wrote (bits of [`Buffer::read_bit`] and
    /// [`Buffer::write_bit`]), which a test holds against the shader's bindings.
    pub(crate) accessed: u32,
}

impl PassTraffic {
    /// Sectors touched over compulsory sectors (1 is perfect coalescing).
    pub fn sector_ratio(&self) -> f64 {
        self.sectors as f64 / self.compulsory_sectors.max(1) as f64
    }

    /// The mean dependent-load depth of a key load ([`PassTraffic::key_loads`]); 0 where the
    /// pass loads no modelled keys.
    pub fn mean_key_depth(&self) -> f64 {
        self.key_depth_sum as f64 / self.key_loads.max(1) as f64
    }
}

/// Replays the passes evaluating `batch` runs (with the fused pass where `passes` says so and
/// the batch allows it; [`FusePolicy::Auto`] counts as fused) and keeping `outputs`. `None` for
/// a batch that has what the replay does not model (see the module), or that `lib` refuses.
pub fn replay_traffic(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    passes: FusePolicy,
    outputs: Outputs,
) -> Option<Vec<PassTraffic>> {
    batch.validate(lib).ok()?;
    let unmodelled = (0..batch.len()).any(|i| {
        batch.layers(i).flatten().any(|layer| {
            matches!(
                layer.kind,
                LayerKind::Dynamic(AdditiveSpace::Mesh) | LayerKind::Inertialize | LayerKind::Ik
            )
        })
    });
    if unmodelled {
        return None;
    }
    let options = FrameOptions::fusing(passes != FusePolicy::Separate);
    let r = Replay::new(lib, batch, outputs);
    let plan = FramePlan::of_batch(lib, batch, &options);
    let traffic = plan
        .passes()
        .iter()
        .filter_map(|p| match (p.pass, p.dispatch) {
            (Pass::Fused { .. }, Dispatch::InstanceGroups { instances }) => {
                Some(r.fused(instances as usize))
            }
            (Pass::Resolve, _) => Some(r.resolve()),
            (Pass::Sample { .. }, _) => Some(r.sample()),
            (Pass::Layers, _) => Some(r.layers()),
            (Pass::Hierarchy, _) => Some(r.hierarchy()),
            // The curve pass is not replayed; the others are refused above.
            _ => None,
        });
    Some(traffic.collect())
}

/// What the lanes of every pass read: the library's tables (as the evaluator uploads them,
/// addressed through the library's readers) and the batch.
struct Replay<'a> {
    lib: &'a AnimLibrary,
    batch: &'a PoseBatch,
    outputs: Outputs,
    /// Where the bone a lane samples now starts in its accesses (`bone_pose`), so that a
    /// chain's loads look back no further.
    bone_start: std::cell::Cell<usize>,
}

impl<'a> Replay<'a> {
    fn new(lib: &'a AnimLibrary, batch: &'a PoseBatch, outputs: Outputs) -> Self {
        Self {
            lib,
            batch,
            outputs,
            bone_start: std::cell::Cell::new(0),
        }
    }

    /// A load on the chain of the bone sampled now ([`warp::read_after`]).
    fn chain(
        &self,
        out: &mut Vec<Access>,
        after: &[u32],
        site: u32,
        buffer: Buffer,
        range: (u64, u64),
    ) {
        warp::read_after(out, (self.bone_start.get(), after), site, buffer, range);
    }

    fn bones(&self) -> usize {
        self.lib.bone_count()
    }

    /// The separate sampling pass: a lane per (instance, bone).
    fn sample(&self) -> PassTraffic {
        let bones = self.bones();
        let lanes = self.batch.len() * bones;
        let mut deltas = Vec::new();
        replay("sample", lanes.div_ceil(WARP), |warp, lane, out| {
            let index = warp * WARP + lane;
            if index >= lanes {
                return;
            }
            deltas.clear();
            self.bone_pose(index, out, &mut deltas);
            write_xform(out, 900, Buffer::Locals, index as u64);
            out.append(&mut deltas);
        })
    }

    /// The resolve pass: a lane per instance, each of its samples' key search written after
    /// the frame's entries.
    fn resolve(&self) -> PassTraffic {
        let n = self.batch.len();
        replay("resolve", n.div_ceil(WARP), |warp, lane, out| {
            let instance = warp * WARP + lane;
            if instance >= n {
                return;
            }
            let head = &self.batch.heads[instance];
            read(out, 960, Buffer::Frame, instance as u64 * 16, 16);
            let mut e = head.first;
            for _ in 0..head.layers {
                read(out, 961, Buffer::Frame, u64::from(e) * 16, 16);
                let n = self.entry(e)[0] >> LAYER_SAMPLES_SHIFT;
                for k in 1..=n {
                    read(out, 962, Buffer::Frame, u64::from(e + k) * 16, 16);
                    self.sample_search(self.entry(e + k), Some(out));
                    write(out, 965, Buffer::Frame, self.resolved_at(e + k), 16);
                }
                e += 1 + n;
            }
        })
    }

    /// The byte in the frame buffer where the resolve pass writes the search of the sample at
    /// entry `e` (`Params::resolved_word`: after the heads and entries).
    fn resolved_at(&self, e: u32) -> u64 {
        (self.batch.heads.len() + self.batch.entries.len() + e as usize) as u64 * 16
    }

    /// The separate hierarchy pass: a lane per instance walking its bones.
    fn hierarchy(&self) -> PassTraffic {
        let bones = self.bones();
        let n = self.batch.len();
        let in_place = !self.outputs.locals;
        let parents = &self.lib.data().parents;
        replay("hierarchy", n.div_ceil(WARP), |warp, lane, out| {
            let instance = warp * WARP + lane;
            if instance >= n {
                return;
            }
            let base = (instance * bones) as u64;
            for (bone, &parent) in parents.iter().enumerate() {
                let b = bone as u64;
                let local = if in_place {
                    Buffer::Component
                } else {
                    Buffer::Locals
                };
                read_xform(out, 0, local, base + b);
                read(out, 3, Buffer::Parents, b * 4, 4);
                if let Ok(p) = u64::try_from(parent) {
                    read_xform(out, 4, Buffer::Component, base + p);
                }
                write_xform(out, 7, Buffer::Component, base + b);
                for row in 0..3u64 {
                    read(
                        out,
                        10 + row as u32,
                        Buffer::InverseBind,
                        (b * 3 + row) * 16,
                        16,
                    );
                }
                for k in 0..self.words() {
                    let at = ((base + b) * self.words() + k) * 16;
                    write(out, 13 + k as u32, Buffer::Skinning, at, 16);
                }
            }
        })
    }

    /// The layer pass (mesh-space additive and blend layers): a lane per instance.
    fn layers(&self) -> PassTraffic {
        let bones = self.bones() as u64;
        let n = self.batch.len();
        let parents = &self.lib.data().parents;
        replay("layers", n.div_ceil(WARP), |warp, lane, out| {
            let instance = warp * WARP + lane;
            if instance >= n {
                return;
            }
            let head = &self.batch.heads[instance];
            read(out, 0, Buffer::Frame, instance as u64 * 16, 16);
            let base = instance as u64 * bones;
            for layer in batch::layers(&self.batch.entries, head).map_while(|l| l) {
                read(out, 1, Buffer::Frame, layer.entry as u64 * 16, 16);
                if !layer.deferred {
                    continue;
                }
                let s = (u64::from(head.slot) + u64::from(layer.slot)) * bones;
                if layer.weight <= ZERO_WEIGHT {
                    continue;
                }
                // The mesh-space rotations of the parent's slot (and the layers' write back):
                // two words, three for a blend.
                let back = match layer.kind {
                    LayerKind::Additive(AdditiveSpace::Mesh) => 2,
                    LayerKind::Blend(AdditiveSpace::Mesh) => 3,
                    _ => 0,
                };
                for i in 0..bones {
                    let p = parents[i as usize];
                    if back > 0 {
                        read(out, 2, Buffer::Parents, i * 4, 4);
                    }
                    if let Some(p) = u64::try_from(p).ok().map(|p| s + p) {
                        for k in 0..back {
                            read(out, 3 + k as u32, Buffer::Deltas, p * 48 + k * 16, 16);
                        }
                    }
                    read_xform(out, 6, Buffer::Deltas, s + i);
                    read_xform(out, 9, Buffer::Locals, base + i);
                    write_xform(out, 12, Buffer::Locals, base + i);
                    for k in 0..back {
                        write(
                            out,
                            15 + k as u32,
                            Buffer::Deltas,
                            (s + i) * 48 + k * 16,
                            16,
                        );
                    }
                }
            }
        })
    }

    /// The fused pass: workgroups of `group` instances (`320 / bones`), 64 lanes each.
    fn fused(&self, group: usize) -> PassTraffic {
        let bones = self.bones();
        let n = self.batch.len();
        let lanes_per_group = WORKGROUP_SIZE as usize;
        let warps_per_group = lanes_per_group / WARP;
        let groups = n.div_ceil(group);
        let data = self.lib.data();
        let mut deltas = Vec::new();
        replay("fused", groups * warps_per_group, |warp, lane, out| {
            let g = warp / warps_per_group;
            let local = (warp % warps_per_group) * WARP + lane;
            let first = g * group;
            let count = group.min(n - first);
            let total = count * bones;
            let base = (first * bones) as u64;
            let strided = (local..).step_by(lanes_per_group);
            for k in strided.clone().take_while(|&k| k < total) {
                self.bone_pose(first * bones + k, out, &mut deltas);
            }
            if self.outputs.locals {
                for w in strided.clone().take_while(|&w| w < total * 3) {
                    write(out, 900, Buffer::Locals, base * 48 + w as u64 * 16, 16);
                }
            }
            let s = data.skeleton_section;
            for d in 1..s.levels {
                for j in [d, d + 1] {
                    read_table_u32(out, 910 + j - d, s.level_starts, j);
                }
                let lo = data.table_u32(s.level_starts, d);
                let level = (data.table_u32(s.level_starts, d + 1) - lo) as usize;
                let g = fused_group_instances(bones as u32, FUSED_MAX_POSES);
                for k in strided.clone().take_while(|&k| k < count * level) {
                    read_table_u32(out, 912, s.tasks, g * lo + k as u32);
                }
            }
            if self.outputs.component {
                for w in strided.clone().take_while(|&w| w < total * 3) {
                    write(out, 920, Buffer::Component, base * 48 + w as u64 * 16, 16);
                }
            }
            for k in strided.clone().take_while(|&k| k < total) {
                let bone = (k % bones) as u32;
                for r in 0..3 {
                    let word = s.inverse_bind_word(bones as u32, bone, r);
                    read(out, 930 + r, Buffer::Retarget, u64::from(word) * 16, 16);
                }
            }
            let words = self.words() as usize;
            for w in strided.take_while(|&w| w < total * words) {
                let at = (base * words as u64 + w as u64) * 16;
                write(out, 940, Buffer::Skinning, at, 16);
            }
        })
    }

    /// `vec4` words per skinning matrix.
    fn words(&self) -> u64 {
        u64::from(self.outputs.skinning.words())
    }

    fn entry(&self, e: u32) -> Entry {
        self.batch.entries[e as usize]
    }
}

/// The 4-byte load of `table_u32(w, k)` from the retarget table.
fn read_table_u32(out: &mut Vec<Access>, site: u32, w: u32, k: u32) {
    let (word, lane) = table_u32_at(w, k);
    read(
        out,
        site,
        Buffer::Retarget,
        u64::from(word) * 16 + lane as u64 * 4,
        4,
    );
}
