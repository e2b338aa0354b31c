//! What one lane of the sampling or fused pass reads for its bone's local pose:
//! `bone_pose` in `local_pose.wgsl`, and the clip sampling of `clip.wgsl` beneath it.

use super::warp::{read, read_depth, write_xform};
use super::{read_table_u32, Access, Buffer, Replay, Search};
use crate::batch::{self, LayerKind};
use crate::drive::TranslationMode;
use crate::layout::PackedHeader;
use crate::layout::ZERO_WEIGHT;
use crate::layout::{
    ChannelData, ClipData, Entry, BONE_PRESENT, CHANNEL_STRIDE_SHIFT, CLIP_ADDITIVE,
    CLIP_COMPRESSED, CLIP_PLAN, INSTANCE_LOOP, KEYS_MOVING, KEYS_OWN_TIMES, KEYS_PRESENT,
    KEYS_STRIDE_SHIFT, PACKED_DESCRIPTOR_WORDS, PACKED_HEADER_WORDS, PACKED_SEGMENTED,
    PACKED_SEGMENT_KEYS, PACKED_UNIFORM, PATH_BONE, PLAN_DRIVEN, PLAN_REFERENCE, PLAN_ROTATION,
    PLAN_WORDS, RATE_CONSTANT, RATE_MASK, RATE_RAW, RATE_SHIFT, RETARGET_ORIENT,
    ROOT_LOCK_FIRST_FRAME, ROOT_LOCK_MASK, ROOT_LOCK_REF_POSE,
};
use crate::library::{bone_keys_word, clip_channel_word, reference_word};
use crate::model::{map_time, AdditiveSpace};

/// What a key load's address comes from (`Replay::chain`): its bone-keys word (its value
/// offsets) and its sample's search, resolved (site 9) or its own (sites 60 to 64).
const KEYS_AFTER_BONE_KEYS: &[u32] = &[22, 9, 60, 61, 63, 64];
/// The same for a channel's keys: its channel word (UE's modes, a plan's path) and the search.
const KEYS_AFTER_CHANNELS: &[u32] = &[25, 26, 27, 91, 92, 93, 9, 60, 61, 63, 64];

impl Replay<'_> {
    /// `bone_pose` in `local_pose.wgsl`: what invocation `index` reads; deferred layers' delta
    /// writes go to `deltas`. Each sample starts from the key search the resolve pass wrote
    /// for it (`seed` in `sample.wgsl` and `fused.wgsl`: one load).
    pub(super) fn bone_pose(&self, index: usize, out: &mut Vec<Access>, deltas: &mut Vec<Access>) {
        // Each sample's chain to its keys starts at its frame entry and its resolved search.
        self.bone_start.set(out.len());
        let seed = |entry: u32, out: &mut Vec<Access>| {
            self.chain(out, &[], 9, Buffer::Frame, (self.resolved_at(entry), 16));
            self.sample_search(self.entry(entry), None)
        };
        let bones = self.bones();
        let (instance, bone) = (index / bones, index % bones);
        let head = &self.batch.heads[instance];
        read(out, 1, Buffer::Frame, instance as u64 * 16, 16);
        if self.batch.is_single_clips() {
            let entry = u64::from(head.first + 1) * 16;
            self.chain(out, &[], 2, Buffer::Frame, (entry, 16));
            let seed = seed(head.first + 1, out);
            self.sample_clip(self.entry(head.first + 1), bone, seed, out);
            return;
        }
        let base_slot = u64::from(head.slot);
        for layer in batch::layers(&self.batch.entries, head).map_while(|l| l) {
            let e = layer.entry as u64;
            read(out, 3, Buffer::Frame, e * 16, 16);
            if matches!(layer.kind, LayerKind::Ik | LayerKind::Inertialize) {
                continue;
            }
            let at = (base_slot + u64::from(layer.slot)) * bones as u64 + bone as u64;
            if layer.kind != LayerKind::Base && layer.weight <= ZERO_WEIGHT {
                continue;
            }
            let first = e + 1;
            let mut kept = 0;
            for (k, sample) in layer.samples.iter().enumerate() {
                read(out, 4, Buffer::Frame, (first + k as u64) * 16, 16);
                kept += usize::from(f32::from_bits(sample[2]) > ZERO_WEIGHT);
            }
            let blend = matches!(layer.kind, LayerKind::Blend(_));
            if (layer.kind == LayerKind::Base || blend) && kept == 0 {
                self.record_words(out, 5, (0, bone), 4, 3);
            }
            for (k, &sample) in layer.samples.iter().enumerate() {
                let entry = (first + k as u64) * 16;
                self.chain(out, &[], 8, Buffer::Frame, (entry, 16));
                let dynamic_local = layer.kind == LayerKind::Dynamic(AdditiveSpace::Local);
                if !dynamic_local && f32::from_bits(sample[2]) <= ZERO_WEIGHT {
                    continue;
                }
                let seed = seed(first as u32 + k as u32, out);
                self.sample_clip(sample, bone, seed, out);
            }
            if layer.kind == LayerKind::Base {
                continue;
            }
            if let Some(mask) = layer.mask() {
                // `mask_weight`: `table_u32(mask, bone)`.
                read_table_u32(out, 9, mask.0, bone as u32);
            }
            if layer.deferred {
                write_xform(deltas, 950, Buffer::Deltas, at);
            }
        }
    }

    /// `sample_search` in `clip.wgsl`: the search of `sample`'s clip at its time over its first
    /// source bone's rotation keys; its loads go to `out` where given.
    pub(super) fn sample_search(
        &self,
        sample: Entry,
        out: Option<&mut Vec<Access>>,
    ) -> Option<Search> {
        let data = self.lib.data();
        let c = sample[0] & !INSTANCE_LOOP;
        let clip = data.clip_data(c);
        let t = map_time(
            f32::from_bits(sample[1]),
            clip.duration,
            sample[0] & INSTANCE_LOOP != 0,
        );
        let mut scratch = Vec::new();
        let out = out.unwrap_or(&mut scratch);
        read(out, 963, Buffer::ClipTable, u64::from(c) * 16, 16);
        if clip.flags & CLIP_COMPRESSED != 0 {
            // Packed keys find their own (one multiply where uniform).
            return None;
        }
        let word = reference_word(&clip);
        read(out, 964, Buffer::ClipTable, u64::from(word) * 16, 16);
        let ch = Some(data.channel_data(word)).filter(|c| c.count > 0)?;
        let mut search = None;
        self.search_keys(&mut search, &ch, t, out);
        search
    }

    /// `sample_clip` and `sample_clip_at` in `clip.wgsl` (UE's translation modes, or a plan),
    /// from the key search `seed`.
    fn sample_clip(&self, sample: Entry, bone: usize, seed: Option<Search>, out: &mut Vec<Access>) {
        let data = self.lib.data();
        let lock = sample[3] & ROOT_LOCK_MASK;
        let axes = sample[3] & !ROOT_LOCK_MASK;
        let locked = bone as u32 == data.root_bone && lock != 0;
        if locked && lock == ROOT_LOCK_REF_POSE {
            self.record_words(out, 20, (0, bone), 4, 3);
        }
        let clip_index = sample[0] & !INSTANCE_LOOP;
        let clip_word = u64::from(clip_index) * 16;
        self.chain(out, &[2, 8], 23, Buffer::ClipTable, (clip_word, 16));
        if locked && lock != ROOT_LOCK_FIRST_FRAME && axes == 0 {
            return;
        }
        let clip = data.clip_data(clip_index);
        let looping = sample[0] & INSTANCE_LOOP != 0;
        let t = map_time(f32::from_bits(sample[1]), clip.duration, looping);
        let first_frame = locked && lock == ROOT_LOCK_FIRST_FRAME;
        let times = if first_frame && axes != 0 {
            &[t, 0.0][..]
        } else if first_frame {
            &[0.0][..]
        } else {
            &[t][..]
        };
        let additive = clip.flags & CLIP_ADDITIVE != 0;
        for &t in times {
            if clip.flags & CLIP_PLAN != 0 {
                self.plan_bone(clip_index, t, bone, seed.filter(|_| !locked), out);
                continue;
            }
            let record = data.bone_retarget(clip.retarget_base, bone as u32);
            let at = (clip.retarget_base, bone);
            self.record_words(out, 24, at, 0, 1);
            let packed = clip.flags & CLIP_COMPRESSED != 0;
            let source = u32::try_from(record.source).ok();
            let mut channels = [ChannelData::default(); 3];
            let mut keys = [0; 4];
            let keyed;
            if packed {
                keyed = source.is_some_and(|s| self.packed_present(&clip, s, out));
            } else {
                // The bone-keys word, then the channel words only where a channel moves on
                // key times of its own.
                let word = bone_keys_word(&clip, bone as u32);
                keys = data.bone_keys(&clip, bone as u32);
                self.chain(
                    out,
                    &[23],
                    22,
                    Buffer::ClipTable,
                    (u64::from(word) * 16, 16),
                );
                keyed = keys[3] & (KEYS_PRESENT * 7) != 0;
                if let Some(source) = source.filter(|_| keys[3] & KEYS_OWN_TIMES != 0) {
                    for (k, ch) in (0..).zip(channels.iter_mut()) {
                        let word = clip_channel_word(&clip, source, k);
                        *ch = data.channel_data(word);
                        let word = (u64::from(word) * 16, 16);
                        self.chain(out, &[22], 25 + k, Buffer::ClipTable, word);
                    }
                }
            }
            if !keyed {
                if !additive {
                    self.record_words(out, 28, at, 4, 3);
                }
                continue;
            }
            if !additive {
                self.record_words(out, 31, at, 1, 3);
            }
            if let (true, Some(source)) = (packed, source) {
                self.packed_local(&clip, source, t, true, 200, out);
            } else {
                // A seed is a search at t; a first-frame lock samples at 0 too.
                let mut search = seed.filter(|_| !locked);
                if keys[3] & KEYS_OWN_TIMES != 0 {
                    self.sample_channels(&mut search, &channels, t, 40, out);
                } else {
                    // A Skeleton-mode bone's translation keys are not read.
                    if record.mode == TranslationMode::Skeleton as u32 {
                        keys[3] &= !(KEYS_PRESENT | KEYS_MOVING);
                    }
                    self.sample_keys(&mut search, &clip, keys, t, out);
                }
            }
            let mode = record.mode;
            if mode == TranslationMode::Skeleton as u32 && !additive {
                self.record_words(out, 46, at, 5, 1);
            } else if mode == TranslationMode::AnimationRelative as u32 && !additive {
                self.record_words(out, 47, at, 7, 3);
            } else if mode == TranslationMode::OrientAndScale as u32
                && !additive
                && record.flags & RETARGET_ORIENT != 0
            {
                self.record_words(out, 50, at, 10, 3);
            }
        }
    }

    /// `apply_plan` in `clip.wgsl`: target bone `bone` of plan clip `c` at `t`. Its record
    /// (field-major among the target's bones), then, unless it keeps its reference, the source
    /// bones along its three paths: each path entry, the source bone's channels (the rotation
    /// alone where the record reads no translation), its reference local where one of those
    /// is absent, and its keys.
    fn plan_bone(&self, c: u32, t: f32, bone: usize, seed: Option<Search>, out: &mut Vec<Access>) {
        let data = self.lib.data();
        let clip = data.clip_data(c);
        let (base, bone) = (clip.retarget_base, bone as u32);
        for k in 0..PLAN_WORDS {
            let word = data.plan_word(base, bone, k);
            self.chain(
                out,
                &[23],
                70 + k,
                Buffer::Retarget,
                (u64::from(word) * 16, 16),
            );
        }
        let r = data.bone_plan(base, bone);
        // The record's words, which the path entries' addresses come from.
        let record: Vec<u32> = (70..70 + PLAN_WORDS).collect();
        let driven = r.modes & PLAN_DRIVEN != 0;
        if r.modes & PLAN_ROTATION == PLAN_REFERENCE && !driven {
            return;
        }
        let parent_swing = r.parent_swing != [0.0; 3];
        let main_full = driven || (parent_swing && r.parent_chord_len == 0);
        let mut search = seed;
        let mut first = r.path_start;
        let paths = [
            (r.path_len, main_full),
            (r.chord_len, true),
            (r.parent_chord_len, true),
        ];
        for (len, full) in paths {
            // The channels sampled: T, R, S, or R alone.
            let kinds = if full { 0..3 } else { 1..2 };
            for i in first..first + len {
                // A path entry: `table_u32(0, i)`, where the record's words put it.
                let (word, lane) = crate::library::table_u32_at(0, i);
                let entry = (u64::from(word) * 16 + lane as u64 * 4, 4);
                self.chain(out, &record, 90, Buffer::Retarget, entry);
                let source = data.table_u32(0, i) & PATH_BONE;
                if clip.flags & CLIP_COMPRESSED != 0 {
                    // `source_local`: `packed_local`, its fill the source's reference local
                    // (read where a track it decodes is the reference).
                    let values = data.value_words();
                    let h = PackedHeader::read(values, clip.channel_base * 4);
                    let d = h.bone(values, source);
                    let rate = |k: u32| (d[0] >> (RATE_SHIFT * k)) & RATE_MASK;
                    // Packed kinds: 0 rotation, 1 translation, 2 scale.
                    let decoded = if full { 0..3 } else { 0..1 };
                    if decoded.into_iter().any(|k| rate(k) == 0) {
                        let rest = u64::from(r.source_rest + source * 3);
                        for k in 0..3 {
                            read(out, 94 + k as u32, Buffer::Retarget, (rest + k) * 16, 16);
                        }
                    }
                    let site = if full { 300 } else { 400 };
                    self.packed_local(&clip, source, t, full, site, out);
                    continue;
                }
                let chs: Vec<ChannelData> = kinds
                    .clone()
                    .map(|k| {
                        let word = clip_channel_word(&clip, source, k);
                        let at = (u64::from(word) * 16, 16);
                        self.chain(out, &[90], 91 + k, Buffer::ClipTable, at);
                        data.channel_data(word)
                    })
                    .collect();
                if chs.iter().any(|c| c.count == 0) {
                    // `retarget_xform(source_rest + source * 3)`.
                    let rest = u64::from(r.source_rest + source * 3);
                    for k in 0..3 {
                        read(out, 94 + k as u32, Buffer::Retarget, (rest + k) * 16, 16);
                    }
                }
                let site = 97 + 2 * kinds.start;
                self.sample_channels(&mut search, &chs, t, site, out);
            }
            first += len;
        }
    }

    /// `sample_keys` in `clip.wgsl`: where a channel moves, the clip's reference channel and
    /// the search over its times (skipped where the seed covers them), then each present
    /// channel's two keys (sites 40 on, two per channel, as `sample_channels`).
    fn sample_keys(
        &self,
        search: &mut Option<Search>,
        clip: &ClipData,
        keys: [u32; 4],
        t: f32,
        out: &mut Vec<Access>,
    ) {
        let flags = keys[3];
        let (mut lo, mut hi) = (0, 0);
        if flags & (KEYS_MOVING * 7) != 0 {
            let word = reference_word(clip);
            self.chain(
                out,
                &[23],
                21,
                Buffer::ClipTable,
                (u64::from(word) * 16, 16),
            );
            let reference = self.lib.data().channel_data(word);
            (lo, hi) = self.search_keys(search, &reference, t, out);
        }
        let stride = flags >> KEYS_STRIDE_SHIFT;
        for k in (0..3).filter(|k| flags & (KEYS_PRESENT << k) != 0) {
            let moving = flags & (KEYS_MOVING << k) != 0;
            for (j, key) in [lo, hi].into_iter().enumerate() {
                let at = keys[k] + if moving { key * stride } else { 0 };
                let site = 40 + (k * 2 + j) as u32;
                let value = (u64::from(at) * 16, 16);
                self.chain(out, KEYS_AFTER_BONE_KEYS, site, Buffer::Values, value);
            }
        }
    }

    /// `sample_channels` in `clip.wgsl`: each present channel's key search (`channel_keys`) and
    /// its two keys (sites from `site` on, two per channel).
    fn sample_channels(
        &self,
        search: &mut Option<Search>,
        channels: &[ChannelData],
        t: f32,
        site: u32,
        out: &mut Vec<Access>,
    ) {
        for (k, ch) in channels.iter().enumerate().filter(|(_, c)| c.count > 0) {
            // `channel_keys`: one key needs no search and keeps the last one.
            let (lo, hi) = if ch.count == 1 {
                (0, 0)
            } else {
                self.search_keys(search, ch, t, out)
            };
            // Key-major among the channels that share key times.
            let stride = ch.flags >> CHANNEL_STRIDE_SHIFT;
            for (j, key) in [lo, hi].into_iter().enumerate() {
                let at = u64::from(ch.value_offset + key * stride) * 16;
                let site = site + (k * 2 + j) as u32;
                self.chain(out, KEYS_AFTER_CHANNELS, site, Buffer::Values, (at, 16));
            }
        }
    }

    /// `search_keys` in `clip.wgsl`: the key times it reads, and the keys found. A search is
    /// skipped where the previous channel had the same key times.
    fn search_keys(
        &self,
        last: &mut Option<Search>,
        ch: &ChannelData,
        t: f32,
        out: &mut Vec<Access>,
    ) -> (u32, u32) {
        if let Some((offset, count, lo, hi)) = *last {
            if (offset, count) == (ch.time_offset, ch.count) {
                return (lo, hi);
            }
        }
        let times = &self.lib.data().times;
        let first = ch.time_offset;
        let end = ch.count - 1;
        let at = |k: u32| (u64::from(first + k) * 4, 4);
        // The ends after the channel word; each halving after the one before (`read_depth`).
        let ends = &[21, 25, 26, 27, 91, 92, 93];
        self.chain(out, ends, 60, Buffer::Times, at(0));
        let found = if t <= times[first as usize] {
            (0, 0)
        } else {
            self.chain(out, ends, 61, Buffer::Times, at(end));
            let mut depth = out.last().and_then(|a| a.depth).unwrap_or(0);
            if t >= times[(first + end) as usize] {
                (end, end)
            } else {
                let (mut lo, mut hi) = (0, end);
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2;
                    depth += 1;
                    read_depth(out, depth, 62, Buffer::Times, at(mid));
                    if times[(first + mid) as usize] <= t {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                read_depth(out, depth + 1, 63, Buffer::Times, at(lo));
                read_depth(out, depth + 1, 64, Buffer::Times, at(hi));
                (lo, hi)
            }
        };
        *last = Some((ch.time_offset, ch.count, found.0, found.1));
        found
    }

    /// `packed_present` in `packed.wgsl`: the descriptor of source bone `bone` in compressed
    /// clip `clip` (its first word), and whether the clip keys it.
    fn packed_present(&self, clip: &ClipData, bone: u32, out: &mut Vec<Access>) -> bool {
        let values = self.lib.data().value_words();
        let h = PackedHeader::read(values, clip.channel_base * 4);
        let w = h.base + PACKED_HEADER_WORDS + PACKED_DESCRIPTOR_WORDS * bone;
        read(out, 190, Buffer::Values, u64::from(w) * 4, 4);
        h.bone(values, bone)[0] & BONE_PRESENT != 0
    }

    /// `packed_local` in `packed.wgsl`: the header's words, the bone's descriptor, the key
    /// times where the keys are not uniform (`packed_keys`), then each track decoded at the two
    /// keys (translation and scale where `full`, then the rotation; a key's second decode only
    /// where its first found the track). Sites from `site` on.
    fn packed_local(
        &self,
        clip: &ClipData,
        bone: u32,
        t: f32,
        full: bool,
        site: u32,
        out: &mut Vec<Access>,
    ) {
        let data = self.lib.data();
        let values = data.value_words();
        let h = PackedHeader::read(values, clip.channel_base * 4);
        for k in 0..8 {
            read(out, site + k, Buffer::Values, u64::from(h.base + k) * 4, 4);
        }
        let d = h.bone(values, bone);
        let w = h.base + PACKED_HEADER_WORDS + PACKED_DESCRIPTOR_WORDS * bone;
        read(out, site + 8, Buffer::Values, u64::from(w) * 4, 8);
        if h.flags & PACKED_UNIFORM == 0 && h.keys > 0 {
            let ch = ChannelData {
                time_offset: h.time_offset,
                count: h.keys,
                ..ChannelData::default()
            };
            self.search_keys(&mut None, &ch, t, out);
        }
        let (a, b, _) = h.keys_at(&data.times, t);
        if full {
            for kind in 1..3 {
                self.packed_track(&h, d, kind, (a, b), site + 10 + 20 * (kind - 1), out);
            }
        }
        self.packed_track(&h, d, 0, (a, b), site + 50, out);
    }

    /// `packed_track` in `packed.wgsl`: track `kind` of the bone of descriptor `d` at keys `a`
    /// and `b`, whether stored. A constant's three words; else the segment table's word of
    /// each key's segment (one where both share it), then per component its unit and minimum,
    /// its segment-range word (where segmented; per segment), and each key's bits
    /// (`read_bits`). Sites `site .. site + 12`.
    fn packed_track(
        &self,
        h: &PackedHeader,
        d: [u32; 2],
        kind: u32,
        (a, b): (u32, u32),
        site: u32,
        out: &mut Vec<Access>,
    ) -> bool {
        let values = self.lib.data().value_words();
        let word = |out: &mut Vec<Access>, site: u32, w: u32| {
            read(out, site, Buffer::Values, u64::from(w) * 4, 4);
        };
        let crate::layout::Located {
            rate,
            bit,
            range,
            quantized,
        } = h.locate(d, kind);
        if rate == 0 {
            return false;
        }
        if rate == RATE_CONSTANT {
            for c in 0..3 {
                word(out, site + c, range + c);
            }
            return true;
        }
        let segment = |out: &mut Vec<Access>, key: u32| {
            let table = h.base + h.segment_table + key / PACKED_SEGMENT_KEYS;
            word(out, site + 3, table);
            h.base + values[table as usize]
        };
        let sa = segment(out, a);
        let sb = if a / PACKED_SEGMENT_KEYS == b / PACKED_SEGMENT_KEYS {
            sa
        } else {
            segment(out, b)
        };
        let segmented = h.flags & PACKED_SEGMENTED != 0;
        let ranges_words = h.segment_range_words();
        let first = |s: u32, key: u32| {
            (s + ranges_words) * 32 + (key % PACKED_SEGMENT_KEYS) * h.key_bits + bit
        };
        let (at_a, at_b) = (first(sa, a), first(sb, b));
        // `read_bits`: the word the bits start in, and the next where they run over.
        let read_bits = |out: &mut Vec<Access>, site: u32, at: u32, count: u32| {
            word(out, site, at / 32);
            if at % 32 + count > 32 {
                word(out, site + 1, at / 32 + 1);
            }
        };
        if rate == RATE_RAW {
            let n = if kind == 0 { 4 } else { 3 };
            for c in 0..n {
                read_bits(out, site + 4, at_a + 32 * c, 32);
                read_bits(out, site + 4, at_b + 32 * c, 32);
            }
            return true;
        }
        let bits = crate::layout::rate_bits(rate);
        for c in 0..3 {
            word(out, site + 10, range + 3 + c);
            word(out, site + 11, range + c);
            if segmented {
                // An even byte: its pair (lo, hi) shares one word.
                let at = (quantized * 6 + c * 2) / 4;
                word(out, site + 6, sa + at);
                if sb != sa {
                    word(out, site + 6, sb + at);
                }
            }
            read_bits(out, site + 8, at_a + c * bits, bits);
            read_bits(out, site + 8, at_b + c * bits, bits);
        }
        true
    }

    /// Words `first .. first + count` of target bone `bone`'s record in the retarget section
    /// at word `base`, which the GPU holds field-major (`bone_retarget` in `clip.wgsl`).
    fn record_words(
        &self,
        out: &mut Vec<Access>,
        site: u32,
        (base, bone): (u32, usize),
        first: u64,
        count: u64,
    ) {
        let data = self.lib.data();
        for k in first..first + count {
            let word = u64::from(data.bone_retarget_word(base, bone as u32, k as u32));
            read(
                out,
                site + (k - first) as u32,
                Buffer::Retarget,
                word * 16,
                16,
            );
        }
    }
}
