//! CPU twin of `shaders/clip.wgsl`: one bone of one clip sample at one time, its keys found,
//! interpolated and retargeted (UE's translation modes, or a character source's plan), or the
//! root lock of an in-place sample. Spec: `docs/pose-math.md`, "Keyframe sampling",
//! "Translation retargeting" and "Retargeting between characters".

use glam::{Quat, Vec3, Vec4};

use crate::batch::RootPart;
use crate::batch::{ClipSample, RootLock, RootMotionAxes};
use crate::cpu::packed::{DecodedKey, DecodedKeys, KeyCursor};
use crate::cpu::resolve;
use crate::drive::plan::apply_bone;
use crate::drive::TranslationMode;
use crate::layout::{self, PackedHeader};
use crate::layout::{
    BonePlan, BoneRetarget, ChannelData, ClipData, Entry, Xform, BONE_PRESENT, CHANNEL_STEP,
    CHANNEL_STRIDE_SHIFT, CLIP_ADDITIVE, CLIP_COMPRESSED, CLIP_PLAN, KEYS_MOVING, KEYS_OWN_TIMES,
    KEYS_PRESENT, KEYS_STEP, KEYS_STRIDE_SHIFT, RETARGET_ORIENT,
};
use crate::library::{bone_keys_word, AnimLibrary};
use crate::math::delta::IDENTITY_DELTA;
use crate::math::{lerp3, normalize_quat, twist, ORIENT_PRECISION};
use crate::model::{find_keys, map_time};
use crate::Transform;

/// The last key search, reused by the next channel with the same key times: glTF samplers
/// often share them, and the library stores identical time arrays once. A sample's starts
/// from its resolved search (the resolve stage's row, [`super::resolve`]).
#[derive(Clone, Debug)]
pub(crate) struct KeySearch {
    found: layout::KeySearch,
    /// Where a compressed clip's keys lie at the time last sampled: the bones of one sample
    /// find them once.
    packed: Option<PackedSearch>,
}

/// [`KeySearch`] of a compressed clip.
#[derive(Clone, Debug)]
struct PackedSearch {
    /// The block's first word and the time's bits.
    at: (u32, u32),
    cursor: KeyCursor,
    /// Both keys decoded at every bone, where the sample's scratch shares them
    /// ([`KeySearch::share_keys`]).
    decoded: Option<[DecodedKey; 2]>,
}

impl PackedSearch {
    /// Source bone `source`'s local, of descriptor `d`: from the shared keys where the search
    /// has them, else decoded bone by bone.
    #[inline]
    fn local(
        &self,
        lib: &AnimLibrary,
        source: u32,
        d: [u32; 2],
        (fill, full): (Transform, bool),
    ) -> Transform {
        match &self.decoded {
            Some([a, b]) => {
                let pair = [&a[source as usize], &b[source as usize]];
                self.cursor.local_decoded(d, pair, fill, full)
            }
            None => self.cursor.local(lib.data().value_words(), d, fill, full),
        }
    }
}

impl Default for KeySearch {
    fn default() -> Self {
        Self {
            found: layout::KeySearch::NONE,
            packed: None,
        }
    }
}

impl KeySearch {
    /// The search `sample` starts from: its resolved search over its clip's reference times
    /// (as `seed` gives the sampling pass), or for a compressed clip its two keys, decoded
    /// from `keys` (decoded there where they are not yet).
    pub(crate) fn share_keys(lib: &AnimLibrary, sample: &Prepared, keys: &mut DecodedKeys) -> Self {
        let mut search = Self {
            found: resolve::search_at(lib, sample.clip, sample.time),
            packed: None,
        };
        let c = lib.data().clip_data(sample.clip as u32);
        if c.flags & CLIP_COMPRESSED != 0 {
            packed_keys(lib, &c, sample.time, &mut search);
            if let Some(p) = &mut search.packed {
                p.decoded = keys.pair(lib.data().value_words(), sample.clip, &p.cursor);
            }
        }
        search
    }

    #[inline]
    fn find(&mut self, lib: &AnimLibrary, ch: &ChannelData, t: f32) -> (usize, usize, f32) {
        // One key (a channel that holds still): no search, and the last one kept for the
        // channels around it (as `channel_keys` in `clip.wgsl`).
        if ch.count == 1 {
            return (0, 0, 0.0);
        }
        // A time array is named by its first word alone: each lies there once.
        if self.found.time_offset != ch.time_offset {
            let (first, count) = (ch.time_offset as usize, ch.count as usize);
            let (lo, hi, alpha) = find_keys(&lib.data().times[first..first + count], t);
            self.found = layout::KeySearch {
                time_offset: ch.time_offset,
                lo: lo as u32,
                hi: hi as u32,
                alpha,
            };
        }
        let f = &self.found;
        (f.lo as usize, f.hi as usize, f.alpha)
    }
}

/// Samples one channel: absolute value indices and blend factor; `None` when it is absent.
#[inline]
fn sample_channel(
    lib: &AnimLibrary,
    ch: &ChannelData,
    t: f32,
    search: &mut KeySearch,
) -> Option<(u32, u32, f32)> {
    if ch.count == 0 {
        return None;
    }
    let (k0, k1, alpha) = search.find(lib, ch, t);
    let alpha = if ch.flags & CHANNEL_STEP != 0 {
        0.0
    } else {
        alpha
    };
    // Keys are stored key-major among the channels that share their times.
    let stride = ch.flags >> CHANNEL_STRIDE_SHIFT;
    Some((
        ch.value_offset + k0 as u32 * stride,
        ch.value_offset + k1 as u32 * stride,
        alpha,
    ))
}

/// A curve channel's value at an already mapped time; 0 where the clip lacks the curve (as
/// `sample_curve` in `shaders/clip.wgsl`).
pub(crate) fn sample_curve(lib: &AnimLibrary, ch: &ChannelData, t: f32) -> f32 {
    let Some((a, b, alpha)) = sample_channel(lib, ch, t, &mut KeySearch::default()) else {
        return 0.0;
    };
    let (a, b) = (lib.value4(a).x, lib.value4(b).x);
    a + (b - a) * alpha
}

/// The local transform of target bone `bone` in `clip` at an already mapped time. Through a
/// character source's plan ([`sample_plan_bone`]), or: its source bone's channels sampled
/// (channels the clip lacks take the retarget source's reference value), then retargeted; a
/// bone with no source bone or no track keeps its target reference (for additive clips, the
/// identity delta: no rotation or translation, scale delta 0). `search` carries the last key
/// search over from the previous call at the same time (a fresh `KeySearch::default()`
/// otherwise).
pub(crate) fn sample_bone(
    lib: &AnimLibrary,
    clip: usize,
    bone: usize,
    t: f32,
    search: &mut KeySearch,
) -> Transform {
    let data = lib.data();
    let c = &data.clip_data(clip as u32);
    if c.flags & CLIP_PLAN != 0 {
        let r = &data.bone_plan(c.retarget_base, bone as u32);
        return sample_plan_bone(lib, c, r, t, search);
    }
    let r = &data.bone_retarget_sampled(c.retarget_base, bone as u32);
    sample_mode_bone(lib, c, bone, r, t, search)
}

/// [`sample_bone`] of a clip of UE's translation modes, from its bone's record `r`.
fn sample_mode_bone(
    lib: &AnimLibrary,
    c: &ClipData,
    bone: usize,
    r: &BoneRetarget,
    t: f32,
    search: &mut KeySearch,
) -> Transform {
    let additive = c.flags & CLIP_ADDITIVE != 0;
    let Ok(source) = u32::try_from(r.source) else {
        return unkeyed(r, additive);
    };
    if c.flags & CLIP_COMPRESSED != 0 {
        let keys = packed_keys(lib, c, t, search);
        let d = keys.cursor.header.bone(lib.data().value_words(), source);
        if d[0] & BONE_PRESENT == 0 {
            return unkeyed(r, additive);
        }
        let fill = reference(&r.source_ref, additive);
        let out = keys.local(lib, source, d, (fill, true));
        return retarget_bone(out, r, additive);
    }
    keyed_bone(lib, c, r, lib.data().bone_keys(c, bone as u32), t, search)
}

/// A reference value `x` as a clip plays it: `x`, or for an additive clip the identity delta.
#[inline]
fn reference(x: &Xform, additive: bool) -> Transform {
    if additive {
        IDENTITY_DELTA
    } else {
        (*x).into()
    }
}

/// What a bone with no source bone or no keys plays: its target reference (for additive
/// clips, the identity delta), the rotation normalized.
fn unkeyed(r: &BoneRetarget, additive: bool) -> Transform {
    let mut out = reference(&r.target_ref, additive);
    out.rotation = normalize_quat(Vec4::from(out.rotation));
    out
}

/// Every target bone of clip `c` (UE's translation modes, keys not compressed) at `t` into
/// `out`, from the clip's records `records`: [`sample_mode_bone`] bone by bone, without
/// looking the clip and its section up again for each. Four bones' rotations are normalized
/// at once (the same operations per lane as `normalize_quat`), so that one bone's square root
/// and reciprocal do not hold up the next bone's key search.
pub(crate) fn sample_mode_run(
    lib: &AnimLibrary,
    c: &ClipData,
    records: &[BoneRetarget],
    t: f32,
    search: &mut KeySearch,
    out: &mut [Xform],
) {
    let additive = c.flags & CLIP_ADDITIVE != 0;
    let first = bone_keys_word(c, 0) as usize;
    let keys = &lib.data().clip_table[first..first + out.len()];
    for ((out, records), keys) in out.chunks_mut(4).zip(records.chunks(4)).zip(keys.chunks(4)) {
        let mut keyed = [Keyed::Done(Transform::IDENTITY); 4];
        for ((k, r), &keys) in keyed.iter_mut().zip(records).zip(keys) {
            *k = keyed_lerp(lib, c, r, keys, t, search);
        }
        let lengths = keyed.map(|k| match k {
            Keyed::Lerped(x) => Vec4::from(x.rotation).dot(Vec4::from(x.rotation)),
            Keyed::Done(_) => 1.0,
        });
        let scales = Vec4::from(lengths).sqrt().recip();
        for (j, (o, r)) in out.iter_mut().zip(records).enumerate() {
            *o = match keyed[j] {
                Keyed::Done(x) => x,
                Keyed::Lerped(mut x) => {
                    x.rotation = Quat::from_vec4(Vec4::from(x.rotation) * scales[j]);
                    retarget_bone(x, r, additive)
                }
            }
            .into();
        }
    }
}

/// A bone of a clip whose keys are not compressed: its final local, or its keys interpolated
/// with the rotation not yet normalized nor the bone retargeted.
#[derive(Clone, Copy)]
enum Keyed {
    Done(Transform),
    Lerped(Transform),
}

/// [`sample_mode_bone`] of a clip whose keys are not compressed, from the bone's bone-keys
/// word `keys`.
#[inline]
fn keyed_bone(
    lib: &AnimLibrary,
    c: &ClipData,
    r: &BoneRetarget,
    keys: [u32; 4],
    t: f32,
    search: &mut KeySearch,
) -> Transform {
    match keyed_lerp(lib, c, r, keys, t, search) {
        Keyed::Done(x) => x,
        Keyed::Lerped(x) => retarget_bone(normalized(x), r, c.flags & CLIP_ADDITIVE != 0),
    }
}

/// [`keyed_bone`] up to its keys' interpolation.
#[inline]
fn keyed_lerp(
    lib: &AnimLibrary,
    c: &ClipData,
    r: &BoneRetarget,
    keys: [u32; 4],
    t: f32,
    search: &mut KeySearch,
) -> Keyed {
    let additive = c.flags & CLIP_ADDITIVE != 0;
    let Ok(source) = u32::try_from(r.source) else {
        return Keyed::Done(unkeyed(r, additive));
    };
    let fill = reference(&r.source_ref, additive);
    let keys = if keys[3] & KEYS_OWN_TIMES == 0 {
        if keys[3] & (KEYS_PRESENT * 7) == 0 {
            return Keyed::Done(unkeyed(r, additive));
        }
        // A Skeleton-mode bone's translation is replaced: its keys are not read.
        let mut keys = keys;
        if TranslationMode::from_code(r.mode) == TranslationMode::Skeleton {
            keys[3] &= !(KEYS_PRESENT | KEYS_MOVING);
        }
        bone_key_pairs(lib, c, keys, t, search)
    } else {
        channel_pairs(lib, &clip_channels(lib, c, source), t, search)
    };
    Keyed::Lerped(lerp_keys(lib, keys, fill))
}

/// A bone's keys at `t` from its bone-keys word `keys` (`sample_keys` in `clip.wgsl`):
/// moving channels at the keys the search over the clip's reference times finds, one-key
/// channels at their key. The same keys as [`channel_pairs`] finds, so the same bits.
#[inline]
fn bone_key_pairs(
    lib: &AnimLibrary,
    c: &ClipData,
    keys: [u32; 4],
    t: f32,
    search: &mut KeySearch,
) -> [Option<(u32, u32, f32)>; 3] {
    let flags = keys[3];
    let (lo, hi, alpha) = if flags & (KEYS_MOVING * 7) != 0 {
        search.find(lib, &lib.data().reference_channel(c), t)
    } else {
        (0, 0, 0.0)
    };
    let stride = flags >> KEYS_STRIDE_SHIFT;
    // Channel `k`'s two keys and blend factor.
    let pair = |k: usize| {
        let at = keys[k];
        if flags & (KEYS_MOVING << k) == 0 {
            return (at, at, 0.0);
        }
        let alpha = if flags & (KEYS_STEP << k) != 0 {
            0.0
        } else {
            alpha
        };
        (at + lo as u32 * stride, at + hi as u32 * stride, alpha)
    };
    [0, 1, 2].map(|k| (flags & (KEYS_PRESENT << k) != 0).then(|| pair(k)))
}

/// The records of the retarget sections a run of instances samples, each gathered once from the
/// retarget table by the readers the shaders use ([`bone_retarget`] and [`bone_plan`]'s
/// twins): a lane reads its record's field-major words coalesced with its neighbours', where
/// the CPU gathers them one record at a time, which measured 1.4x the cost of the whole
/// sampling stage when done per bone and per sample.
///
/// [`bone_retarget`]: crate::library::LibraryData::bone_retarget
/// [`bone_plan`]: crate::library::LibraryData::bone_plan
#[derive(Clone, Debug, Default)]
pub(crate) struct Records {
    /// Per section (its first word), every target bone's record.
    modes: Vec<(u32, Vec<BoneRetarget>)>,
    plans: Vec<(u32, Vec<BonePlan>)>,
}

impl Records {
    /// The gathered records of `c`'s section, where `c` is a clip of UE's translation modes
    /// whose section was gathered.
    pub(crate) fn modes_of(&self, c: &ClipData) -> Option<&[BoneRetarget]> {
        if c.flags & CLIP_PLAN != 0 {
            return None;
        }
        let found = self.modes.iter().find(|(b, _)| *b == c.retarget_base);
        found.map(|(_, records)| &records[..])
    }

    /// Gathers the section of `clip`, where it is not yet.
    pub(crate) fn gather(&mut self, lib: &AnimLibrary, clip: usize) {
        let data = lib.data();
        let c = data.clip_data(clip as u32);
        let (base, bones) = (c.retarget_base, lib.bone_count() as u32);
        if c.flags & CLIP_PLAN != 0 {
            if !self.plans.iter().any(|(b, _)| *b == base) {
                let records = (0..bones).map(|b| data.bone_plan(base, b)).collect();
                self.plans.push((base, records));
            }
        } else if !self.modes.iter().any(|(b, _)| *b == base) {
            let records = (0..bones).map(|b| data.bone_retarget(base, b)).collect();
            self.modes.push((base, records));
        }
    }

    /// [`sample_bone`] from the gathered records (as [`sample_bone`] where `clip`'s section
    /// was not gathered).
    pub(crate) fn sample_bone(
        &self,
        lib: &AnimLibrary,
        clip: usize,
        bone: usize,
        t: f32,
        search: &mut KeySearch,
    ) -> Transform {
        let c = &lib.data().clip_data(clip as u32);
        let base = c.retarget_base;
        if c.flags & CLIP_PLAN != 0 {
            if let Some((_, records)) = self.plans.iter().find(|(b, _)| *b == base) {
                return sample_plan_bone(lib, c, &records[bone], t, search);
            }
        } else if let Some((_, records)) = self.modes.iter().find(|(b, _)| *b == base) {
            return sample_mode_bone(lib, c, bone, &records[bone], t, search);
        }
        sample_bone(lib, clip, bone, t, search)
    }
}

/// The packed block of compressed clip `c` (`packed_header` in `packed.wgsl`).
#[inline]
pub(crate) fn packed_header(lib: &AnimLibrary, c: &ClipData) -> PackedHeader {
    PackedHeader::read(lib.data().value_words(), c.channel_base * 4)
}

/// Source bone `source`'s local in compressed clip `c` at `t` (`packed_local`): tracks it
/// does not store keep `fill`'s value; only the rotation unless `full`. `search` keeps the
/// clip's header and keys at `t` for the sample's next bones.
pub(crate) fn packed_local(
    lib: &AnimLibrary,
    c: &ClipData,
    source: u32,
    t: f32,
    (fill, full): (Transform, bool),
    search: &mut KeySearch,
) -> Transform {
    let keys = packed_keys(lib, c, t, search);
    let d = keys.cursor.header.bone(lib.data().value_words(), source);
    keys.local(lib, source, d, (fill, full))
}

/// Where compressed clip `c`'s keys at `t` lie, kept in `search` for the sample's next bones.
#[inline]
fn packed_keys<'a>(
    lib: &AnimLibrary,
    c: &ClipData,
    t: f32,
    search: &'a mut KeySearch,
) -> &'a PackedSearch {
    let at = (c.channel_base * 4, t.to_bits());
    if search.packed.as_ref().is_none_or(|p| p.at != at) {
        let data = lib.data();
        let cursor = packed_header(lib, c).cursor(data.value_words(), &data.times, t);
        search.packed = Some(PackedSearch {
            at,
            cursor,
            decoded: None,
        });
    }
    search.packed.as_ref().expect("just set")
}

/// Source bone `source`'s three channels in clip `c` (T, R, S: `clip_channel` for each).
pub(crate) fn clip_channels(lib: &AnimLibrary, c: &ClipData, source: u32) -> [ChannelData; 3] {
    [0, 1, 2].map(|k| lib.data().clip_channel(c, source, k))
}

/// A bone's three channels (T, R, S) sampled at `t`; those absent keep `fill`'s value (its
/// rotation normalized).
pub(crate) fn sample_channels(
    lib: &AnimLibrary,
    channels: &[ChannelData; 3],
    t: f32,
    fill: Transform,
    search: &mut KeySearch,
) -> Transform {
    interpolate(lib, channel_pairs(lib, channels, t, search), fill)
}

/// A bone's keys at `t` from its three channels (T, R, S), searched in this order: each
/// carries its search over to the next.
#[inline]
fn channel_pairs(
    lib: &AnimLibrary,
    channels: &[ChannelData; 3],
    t: f32,
    search: &mut KeySearch,
) -> [Option<(u32, u32, f32)>; 3] {
    channels
        .each_ref()
        .map(|ch| sample_channel(lib, ch, t, search))
}

/// `fill` with the channels whose keys (two value indices and a blend factor) are given
/// interpolated: translation and scale lerped, the rotation nlerped on the shorter arc; the
/// rotation normalized either way. Shared by every path of keys that are not compressed.
#[inline]
fn interpolate(
    lib: &AnimLibrary,
    keys: [Option<(u32, u32, f32)>; 3],
    fill: Transform,
) -> Transform {
    normalized(lerp_keys(lib, keys, fill))
}

/// [`interpolate`] without normalizing the rotation.
#[inline]
fn lerp_keys(lib: &AnimLibrary, keys: [Option<(u32, u32, f32)>; 3], fill: Transform) -> Transform {
    let mut out = fill;
    if let Some((a, b, alpha)) = keys[0] {
        out.translation = lerp3(lib.value3(a), lib.value3(b), alpha);
    }
    if let Some((a, b, alpha)) = keys[1] {
        let (qa, qb) = (lib.value4(a), lib.value4(b));
        let sign = if qa.dot(qb) >= 0.0 { 1.0 } else { -1.0 };
        out.rotation = Quat::from_vec4(qa * (1.0 - alpha) + qb * (alpha * sign));
    }
    if let Some((a, b, alpha)) = keys[2] {
        out.scale = lerp3(lib.value3(a), lib.value3(b), alpha);
    }
    out
}

/// `x` with its rotation normalized.
#[inline]
fn normalized(mut x: Transform) -> Transform {
    x.rotation = normalize_quat(Vec4::from(x.rotation));
    x
}

/// `fill` with its rotation sampled from channel `ch` at `t` (normalized either way).
fn sample_rotation(
    lib: &AnimLibrary,
    ch: &ChannelData,
    t: f32,
    fill: Transform,
    search: &mut KeySearch,
) -> Transform {
    interpolate(lib, [None, sample_channel(lib, ch, t, search), None], fill)
}

/// Target bone `bone` of plan clip `c` at `t` (`apply_plan` in `clip.wgsl`): the source
/// bones on its record's paths sampled (channels the clip lacks take the source's reference
/// locals, stored after the records), then the record applied ([`apply_bone`]).
fn sample_plan_bone(
    lib: &AnimLibrary,
    c: &ClipData,
    r: &BonePlan,
    t: f32,
    search: &mut KeySearch,
) -> Transform {
    let data = lib.data();
    apply_bone(
        r,
        |i| data.table_u32(0, i as u32),
        |source, full| source_local(lib, c, r, source, t, full, search),
    )
}

/// Source bone `source`'s local in plan clip `c` at `t` (`source_local` in `clip.wgsl`):
/// channels the clip lacks take the source's reference locals, stored where `r` says; only
/// the rotation is sampled unless `full`.
pub(crate) fn source_local(
    lib: &AnimLibrary,
    c: &ClipData,
    r: &BonePlan,
    source: usize,
    t: f32,
    full: bool,
    search: &mut KeySearch,
) -> Transform {
    let source = source as u32;
    let fill = lib.data().retarget_xform(r.source_rest + source * 3).into();
    if c.flags & CLIP_COMPRESSED != 0 {
        return packed_local(lib, c, source, t, (fill, full), search);
    }
    if full {
        sample_channels(lib, &clip_channels(lib, c, source), t, fill, search)
    } else {
        let rotation = lib.data().clip_channel(c, source, 1);
        sample_rotation(lib, &rotation, t, fill, search)
    }
}

/// Applies a bone's translation retargeting mode to its sampled local transform `x`. Additive
/// clips (whose keys are deltas) follow the spec's rules: Skeleton gives a zero translation,
/// AnimationScaled scales, AnimationRelative and OrientAndScale leave the delta alone.
#[inline]
pub(crate) fn retarget_bone(x: Transform, b: &BoneRetarget, additive: bool) -> Transform {
    let mut out = x;
    match TranslationMode::from_code(b.mode) {
        TranslationMode::Animation => {}
        TranslationMode::Skeleton => {
            out.translation = if additive {
                Vec3::ZERO
            } else {
                Transform::from(b.target_ref).translation
            };
        }
        TranslationMode::AnimationScaled => out.translation = x.translation * b.length_ratio,
        TranslationMode::AnimationRelative if !additive => {
            let rel = Transform::from(b.relative);
            out.rotation = normalize_quat(Vec4::from(x.rotation * rel.rotation));
            out.translation = x.translation + rel.translation;
            out.scale = x.scale * rel.scale;
        }
        TranslationMode::OrientAndScale if !additive && b.flags & RETARGET_ORIENT != 0 => {
            let s = Vec4::from(b.orient_source);
            let near = (x.translation - s.truncate()).abs().max_element() <= ORIENT_PRECISION;
            out.translation = if near {
                Vec4::from(b.orient_target).truncate()
            } else {
                s.w * (Quat::from_array(b.orient_rotation) * x.translation)
            };
        }
        TranslationMode::AnimationRelative | TranslationMode::OrientAndScale => {}
    }
    out
}

/// A clip sample with its time mapped into the clip's range.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prepared {
    pub clip: usize,
    pub time: f32,
    pub weight: f32,
    pub root_lock: Option<RootLock>,
    pub root_axes: RootMotionAxes,
}

impl Prepared {
    /// The clip sample of frame entry `e`, its time mapped into the clip's range.
    pub(crate) fn from_entry(lib: &AnimLibrary, e: &Entry) -> Self {
        let s = ClipSample::from_entry(e);
        let clip = s.clip.index();
        Self {
            clip,
            time: map_time(s.time, lib.data().clip_data(s.clip.0).duration, s.looping),
            weight: s.weight,
            root_lock: s.root_lock,
            root_axes: s.root_axes,
        }
    }

    /// `bone` of this sample; an in-place sample's root-motion bone shows its lock instead, in
    /// the parts of its motion the sample's axes take out ([`root_locked`]).
    pub(crate) fn bone(
        &self,
        lib: &AnimLibrary,
        bone: usize,
        search: &mut KeySearch,
        records: &Records,
    ) -> Transform {
        let data = lib.data();
        let Some(lock) = self.root_lock.filter(|_| bone == data.root_bone as usize) else {
            return records.sample_bone(lib, self.clip, bone, self.time, search);
        };
        // A search of its own: `search` carries this sample's time over to the next bones.
        let held = match lock {
            RootLock::RefPose => {
                let mut out = data.target_reference(bone);
                out.rotation = normalize_quat(Vec4::from(out.rotation));
                out
            }
            RootLock::Zero => Transform::IDENTITY,
            RootLock::FirstFrame => {
                sample_bone(lib, self.clip, bone, 0.0, &mut KeySearch::default())
            }
        };
        if self.root_axes == RootMotionAxes::EVERYTHING {
            return held;
        }
        let x = sample_bone(lib, self.clip, bone, self.time, search);
        root_locked(&x, &held, self.root_axes, data.root_up_local)
    }
}

/// The parts of a root-motion bone's local transform `x` that `axes` extract as root motion,
/// with `up` in the bone's parent's frame: the translation whole, in the ground plane
/// (`x.T − up·(x.T·up)`) or none; the rotation whole, its yaw (its twist about `up`) or none;
/// the scale only when everything is extracted. As `root_extract` in `shaders/clip.wgsl`.
pub(crate) fn root_extract(x: &Transform, axes: RootMotionAxes, up: Vec3) -> Transform {
    if axes == RootMotionAxes::EVERYTHING {
        return *x;
    }
    let translation = match axes.translation {
        RootPart::All => x.translation,
        RootPart::Horizontal => x.translation - up * x.translation.dot(up),
        RootPart::None => Vec3::ZERO,
    };
    let rotation = match axes.rotation {
        RootPart::All => x.rotation,
        RootPart::Horizontal => twist(x.rotation, up),
        RootPart::None => Quat::IDENTITY,
    };
    Transform::new(translation, rotation, Vec3::ONE)
}

/// What an in-place sample's root-motion bone shows for a mask that extracts part of the
/// motion: what is left of the animation `x` once its extracted part is taken out, put on the
/// lock's extracted part: `E(held) ∘ E(x)⁻¹ ∘ x` (`E` = [`root_extract`]). The placement, moved
/// by `E`'s motion, carries the rest: a ground-plane mask keeps the bob and the pitch in the
/// pose. As `root_locked` in `shaders/clip.wgsl`.
pub(crate) fn root_locked(
    x: &Transform,
    held: &Transform,
    axes: RootMotionAxes,
    up: Vec3,
) -> Transform {
    let left = Transform::relative(x, &root_extract(x, axes, up));
    let mut out = Transform::compose(&left, &root_extract(held, axes, up));
    out.rotation = normalize_quat(Vec4::from(out.rotation));
    out
}
