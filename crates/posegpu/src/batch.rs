//! What every instance plays in a frame: a base pose (one clip, or a blend of clips) and any
//! number of additive layers, each with its own clips, times, weight and space.
//!
//! A batch is two flat arrays, uploaded as they are: one `Head` per instance and a list of
//! 16-byte entries. An instance's entries are its layers in order, each a header followed by
//! its clip samples. The first layer is the base.
//!
//! Layers up to an instance's first mesh-space layer are applied bone by bone in the sampling
//! stage. From that layer on, the sampling stage writes each layer's weighted delta (or, for a
//! dynamic mesh-space additive, its two sampled poses) into delta slots, and the parent-ordered
//! layer stage applies them in order. [`PoseBatch`] numbers those slots as instances are pushed.

mod input;
mod root;

pub use input::FrameInput;
pub use root::{RootLock, RootMotionAxes, RootPart};

use crate::drive::IkWeights;
use crate::error::{Error, Result};
use crate::layout::ZERO_WEIGHT;
use crate::layout::{
    Entry, Head, INSTANCE_LOOP, LAYER_BASE, LAYER_BLEND_LOCAL, LAYER_BLEND_MESH,
    LAYER_DYNAMIC_LOCAL, LAYER_DYNAMIC_MESH, LAYER_IK, LAYER_INERTIALIZE, LAYER_KIND_MASK,
    LAYER_LOCAL, LAYER_MESH, LAYER_SAMPLES_SHIFT, ROOT_LOCK_MASK,
};
use crate::library::{AnimLibrary, ClipId, MaskId};
use crate::model::AdditiveSpace;

/// One clip at one time, with its weight in a blend. An instance that plays one clip is one
/// sample of weight 1 ([`PoseBatch::from_instances`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipSample {
    /// The clip.
    pub clip: ClipId,
    /// Seconds; clamped to the clip's range, or wrapped when `looping`.
    pub time: f32,
    /// Wrap `time` into the clip's range instead of clamping it.
    pub looping: bool,
    /// Weights at or below 1e-5 are dropped; the rest are renormalized to sum to 1.
    pub weight: f32,
    /// In-place playback: what the library's root-motion bone shows instead of its animation
    /// (a base sample only)...
    pub root_lock: Option<RootLock>,
    /// ... in the parts of its motion these axes take out (the rest stays animated).
    pub root_axes: RootMotionAxes,
}

impl ClipSample {
    /// `clip` at `time` with weight 1.
    pub fn new(clip: impl Into<ClipId>, time: f32, looping: bool) -> Self {
        Self {
            clip: clip.into(),
            time,
            looping,
            weight: 1.0,
            root_lock: None,
            root_axes: RootMotionAxes::EVERYTHING,
        }
    }

    /// The same sample with weight `weight`.
    pub fn with_weight(self, weight: f32) -> Self {
        Self { weight, ..self }
    }

    /// The same sample with root lock `root_lock` (`None` plays the root's animation).
    pub fn with_root_lock(self, root_lock: Option<RootLock>) -> Self {
        Self { root_lock, ..self }
    }

    /// The same sample locking only `root_axes` of its root's motion.
    pub fn with_root_axes(self, root_axes: RootMotionAxes) -> Self {
        Self { root_axes, ..self }
    }

    fn entry(&self) -> Entry {
        let clip = self.clip.0 | if self.looping { INSTANCE_LOOP } else { 0 };
        let lock = RootLock::code(self.root_lock);
        let axes = if lock == 0 { 0 } else { self.root_axes.code() };
        [
            clip,
            self.time.to_bits(),
            self.weight.to_bits(),
            lock | axes,
        ]
    }

    /// The sample an entry holds; an unknown root-lock code reads as none (validation
    /// reports it).
    pub(crate) fn from_entry(e: &Entry) -> Self {
        Self {
            clip: ClipId(e[0] & !INSTANCE_LOOP),
            time: f32::from_bits(e[1]),
            looping: e[0] & INSTANCE_LOOP != 0,
            weight: f32::from_bits(e[2]),
            root_lock: RootLock::from_code(e[3] & ROOT_LOCK_MASK).flatten(),
            root_axes: RootMotionAxes::from_code(e[3] & !ROOT_LOCK_MASK).unwrap_or_default(),
        }
    }
}

/// What a layer does with its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayerKind {
    /// The base pose: the blend of its samples (clips that are not additive).
    Base,
    /// The blend of its samples' deltas (additive clips of this space), applied with the
    /// layer's weight.
    Additive(AdditiveSpace),
    /// UE's Make Dynamic Additive: the delta of its first sample's pose against its second's
    /// (both clips that are not additive), made at run time in this space and applied.
    Dynamic(AdditiveSpace),
    /// The instance's IK weights ([`InstanceLayers::ik`]): no samples, always the last layer,
    /// read by the IK stage after the others.
    Ik,
    /// UE's Layered blend per bone: the blend of its samples (clips that are not additive)
    /// replaces the pose by the layer's weight times its mask's weight at each bone
    /// ([`InstanceLayers::with_mask`]); rotations blended in local space, or in mesh space
    /// (UE's `bMeshSpaceRotationBlend`: a branch keeps its orientation in the character's
    /// space whatever the bones above it do).
    Blend(AdditiveSpace),
    /// An inertialized transition ([`InstanceLayers::inertialize`]): after the pose layers,
    /// read by the inertialization stage.
    Inertialize,
}

impl LayerKind {
    fn code(self) -> u32 {
        match self {
            Self::Base => LAYER_BASE,
            Self::Additive(AdditiveSpace::Local) => LAYER_LOCAL,
            Self::Additive(AdditiveSpace::Mesh) => LAYER_MESH,
            Self::Dynamic(AdditiveSpace::Local) => LAYER_DYNAMIC_LOCAL,
            Self::Dynamic(AdditiveSpace::Mesh) => LAYER_DYNAMIC_MESH,
            Self::Ik => LAYER_IK,
            Self::Blend(AdditiveSpace::Local) => LAYER_BLEND_LOCAL,
            Self::Blend(AdditiveSpace::Mesh) => LAYER_BLEND_MESH,
            Self::Inertialize => LAYER_INERTIALIZE,
        }
    }

    fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            LAYER_BASE => Self::Base,
            LAYER_LOCAL => Self::Additive(AdditiveSpace::Local),
            LAYER_MESH => Self::Additive(AdditiveSpace::Mesh),
            LAYER_DYNAMIC_LOCAL => Self::Dynamic(AdditiveSpace::Local),
            LAYER_DYNAMIC_MESH => Self::Dynamic(AdditiveSpace::Mesh),
            LAYER_IK => Self::Ik,
            LAYER_BLEND_LOCAL => Self::Blend(AdditiveSpace::Local),
            LAYER_BLEND_MESH => Self::Blend(AdditiveSpace::Mesh),
            LAYER_INERTIALIZE => Self::Inertialize,
            _ => return None,
        })
    }

    /// Mesh-space layers go through the parent-ordered layer stage.
    pub fn is_mesh(self) -> bool {
        matches!(
            self,
            Self::Additive(AdditiveSpace::Mesh)
                | Self::Dynamic(AdditiveSpace::Mesh)
                | Self::Blend(AdditiveSpace::Mesh)
        )
    }

    /// Delta slots a layer takes once it is deferred to the layer stage.
    fn slots(self) -> u32 {
        match self {
            Self::Dynamic(AdditiveSpace::Mesh) => 2,
            Self::Ik | Self::Inertialize => 0,
            _ => 1,
        }
    }
}

/// One layer of an instance, decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layer<'a> {
    /// What the layer does with its samples.
    pub kind: LayerKind,
    /// How much of the layer's delta is applied; the base's (always 1) is not used.
    pub weight: f32,
    /// Applied by the layer stage (at or after the instance's first mesh-space layer).
    pub deferred: bool,
    /// This layer's first delta slot, counted from the instance's first (when `deferred`).
    pub slot: u32,
    pub(crate) samples: &'a [Entry],
    /// The layer's header word (an IK layer keeps its hands weight in the third word, any
    /// layer its mask in the fourth).
    header: &'a Entry,
    /// Where the header is among the batch's entries (its samples follow it).
    pub(crate) entry: usize,
}

impl Layer<'_> {
    /// The layer's clip samples, in order (for a dynamic layer: the pose, then the base).
    pub fn samples(&self) -> impl ExactSizeIterator<Item = ClipSample> + '_ {
        self.samples.iter().map(ClipSample::from_entry)
    }

    /// The layer's bone mask ([`InstanceLayers::with_mask`]); `None` weights every bone alike.
    pub fn mask(&self) -> Option<MaskId> {
        (self.header[3] != 0 && self.kind != LayerKind::Inertialize)
            .then_some(MaskId(self.header[3]))
    }

    /// An inertialized transition's blend time, seconds since it began, and the step between
    /// its two samples (0 once it has begun); `None` for other layers.
    pub fn inertialization(&self) -> Option<[f32; 3]> {
        (self.kind == LayerKind::Inertialize).then(|| {
            [
                self.weight,
                f32::from_bits(self.header[2]),
                f32::from_bits(self.header[3]),
            ]
        })
    }

    /// The mask word as the stages read it (0: no mask).
    pub(crate) fn mask_word(&self) -> u32 {
        self.header[3]
    }

    /// An IK layer's weights ([`InstanceLayers::ik`]); `None` for other layers.
    pub fn ik_weights(&self) -> Option<IkWeights> {
        (self.kind == LayerKind::Ik).then(|| IkWeights {
            feet: self.weight,
            hands: f32::from_bits(self.header[2]),
        })
    }
}

/// The per-frame description of a crowd: what each instance plays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoseBatch {
    pub(crate) heads: Vec<Head>,
    pub(crate) entries: Vec<Entry>,
    slots: u32,
    /// Some instance has more than one layer, or a base of more or less than one kept clip.
    blends_or_layers: bool,
    mesh_layers: bool,
    ik: bool,
    inertia: bool,
    inertia_start: bool,
    root_locks: bool,
    heavy_layers: bool,
}

impl PoseBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `instances` instances of `entries_per_instance` entries each (a header and a
    /// sample per single-clip layer).
    pub fn with_capacity(instances: usize, entries_per_instance: usize) -> Self {
        Self {
            heads: Vec::with_capacity(instances),
            entries: Vec::with_capacity(instances * entries_per_instance),
            ..Self::default()
        }
    }

    /// One instance per [`ClipSample`], each playing its clip alone.
    pub fn from_instances(instances: &[ClipSample]) -> Self {
        let mut batch = Self::with_capacity(instances.len(), 2);
        for i in instances {
            batch.push_blend(std::slice::from_ref(i));
        }
        batch
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.heads.clear();
        self.entries.clear();
        self.slots = 0;
        self.blends_or_layers = false;
        self.mesh_layers = false;
        self.ik = false;
        self.inertia = false;
        self.inertia_start = false;
        self.root_locks = false;
        self.heavy_layers = false;
    }

    /// The number of instances.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// True when the batch has no instances.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Adds an instance whose base is one clip; returns it to add layers.
    pub fn push_clip(
        &mut self,
        clip: impl Into<ClipId>,
        time: f32,
        looping: bool,
    ) -> InstanceLayers<'_> {
        self.push_blend(&[ClipSample::new(clip, time, looping)])
    }

    /// Adds an instance whose base is the blend of `samples`; returns it to add layers.
    pub fn push_blend(&mut self, samples: &[ClipSample]) -> InstanceLayers<'_> {
        self.heads.push(Head {
            first: self.entries.len() as u32,
            layers: 0,
            slot: self.slots,
            slots: 0,
        });
        let mut instance = InstanceLayers {
            batch: self,
            deferred: false,
            last: 0,
        };
        instance.push(LayerKind::Base, 1.0, samples);
        instance
    }

    /// Delta slots over all instances.
    pub fn slot_count(&self) -> u32 {
        self.slots
    }

    /// True when every instance plays one clip (a base of one sample whose weight is over
    /// ZERO_WEIGHT) and nothing else: the sampling stage then takes its shortest path.
    pub fn is_single_clips(&self) -> bool {
        !self.blends_or_layers
    }

    /// True when some instance has a mesh-space layer (the layer stage has work).
    pub fn has_mesh_layers(&self) -> bool {
        self.mesh_layers
    }

    /// True when some instance has an IK layer (the IK stage has work).
    pub fn has_ik(&self) -> bool {
        self.ik
    }

    /// True when some instance has an inertialized transition (the inertialization stage has
    /// work).
    pub fn has_inertia(&self) -> bool {
        self.inertia
    }

    /// True when some instance's inertialized transition begins in this frame (its offsets
    /// are measured: the old pose is sampled).
    pub fn has_inertia_start(&self) -> bool {
        self.inertia_start
    }

    /// True when some sample locks its root ([`ClipSample::with_root_lock`]).
    pub fn has_root_locks(&self) -> bool {
        self.root_locks
    }

    /// True when some additive, dynamic or blend layer weighs more than 1 (it extrapolates:
    /// a scale may turn negative).
    pub fn has_heavy_layers(&self) -> bool {
        self.heavy_layers
    }

    /// The 16-byte words this batch uploads each frame: a head per instance and its entries.
    pub fn frame_words(&self) -> usize {
        self.heads.len() + self.entries.len()
    }

    /// Layers over all instances, the bases included.
    pub fn layer_count(&self) -> usize {
        self.heads.iter().map(|h| h.layers as usize).sum()
    }

    /// Instances that have a layer the layer stage applies (from a mesh-space layer on).
    pub fn deferred_instance_count(&self) -> usize {
        self.heads.iter().filter(|h| h.slots > 0).count()
    }

    pub(crate) fn heads(&self) -> &[Head] {
        &self.heads
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Checks a batch: every instance starts with its base layer and has no other; every
    /// sample names a clip of the library at a finite time and weight; base and dynamic
    /// layers sample ordinary clips, additive layers additive clips of their own space.
    pub fn validate(&self, lib: &AnimLibrary) -> Result<()> {
        let batch = self;
        let bad = |instance, what: String| Error::BadInstance { instance, what };
        for instance in 0..batch.len() {
            for (l, layer) in batch.layers(instance).enumerate() {
                let layer =
                    layer.ok_or_else(|| bad(instance, format!("layer {l} is malformed")))?;
                let what = |w: &str| format!("layer {l} ({:?}): {w}", layer.kind);
                if (l == 0) != (layer.kind == LayerKind::Base) {
                    let w = "the base must be the first layer, and only the first";
                    return Err(bad(instance, what(w)));
                }
                if let Some([blend_time, elapsed, dt]) = layer.inertialization() {
                    let layers = batch.heads[instance].layers as usize;
                    let next_is_ik = || {
                        batch.layers(instance).nth(l + 1).flatten().map(|n| n.kind)
                            == Some(LayerKind::Ik)
                    };
                    let problem = if !(l + 1 == layers || l + 2 == layers && next_is_ik()) {
                        Some("it must follow every pose layer (only the IK layer after it)".into())
                    } else if !(blend_time.is_finite() && blend_time >= 0.0) {
                        Some(format!("blend time {blend_time} is not a finite, non-negative number of seconds"))
                    } else if !(elapsed.is_finite()
                        && elapsed >= 0.0
                        && dt.is_finite()
                        && dt >= 0.0)
                    {
                        Some(format!(
                            "elapsed time {elapsed} and step {dt} must be finite and not negative"
                        ))
                    } else if !(layer.samples.is_empty() && dt == 0.0 || layer.samples.len() == 2) {
                        Some(
                            "a start takes two samples (the old pose now and one step earlier)"
                                .into(),
                        )
                    } else {
                        None
                    };
                    if let Some(w) = problem {
                        return Err(bad(instance, what(&w)));
                    }
                }
                if let Some(weights) = layer.ik_weights() {
                    let last = l + 1 == batch.heads[instance].layers as usize;
                    let bare = layer.samples.is_empty() && layer.mask().is_none();
                    if !last || !weights.is_valid() || !bare {
                        let w = format!(
                            "IK weights {weights:?}: the IK layer must be the last, with weights \
                             in 0..=1, no samples and no mask"
                        );
                        return Err(bad(instance, what(&w)));
                    }
                    continue;
                }
                if !layer.weight.is_finite() {
                    let w = format!("weight {} is not finite", layer.weight);
                    return Err(bad(instance, what(&w)));
                }
                if matches!(layer.kind, LayerKind::Blend(_)) && !(0.0..=1.0).contains(&layer.weight)
                {
                    let w = format!("weight {} is outside 0..=1", layer.weight);
                    return Err(bad(instance, what(&w)));
                }
                let mask_problem = match layer.mask() {
                    Some(_) if layer.kind == LayerKind::Base => {
                        Some("the base takes no mask (mask a layer over it)".to_string())
                    }
                    Some(mask) if lib.mask_entry(mask).is_none() => Some(format!(
                        "its mask (word {}) is not a mask of this library",
                        mask.0
                    )),
                    _ => None,
                };
                if let Some(w) = mask_problem {
                    return Err(bad(instance, what(&w)));
                }
                let count = layer.samples().len();
                match layer.kind {
                    LayerKind::Dynamic(_) if count != 2 => {
                        let w = format!("{count} samples; a dynamic additive takes 2 (pose, base)");
                        return Err(bad(instance, what(&w)));
                    }
                    LayerKind::Inertialize => {}
                    _ if count == 0 => return Err(bad(instance, what("no samples"))),
                    _ => {}
                }
                let wanted = match layer.kind {
                    LayerKind::Additive(space) => Some(space),
                    LayerKind::Base
                    | LayerKind::Dynamic(_)
                    | LayerKind::Blend(_)
                    | LayerKind::Inertialize
                    | LayerKind::Ik => None,
                };
                for (k, sample) in layer.samples().enumerate() {
                    let c = sample.clip.index();
                    let problem = if c >= lib.clip_count() {
                        format!(
                            "clip {c} does not exist (the library has {})",
                            lib.clip_count()
                        )
                    } else if !sample.time.is_finite() || !sample.weight.is_finite() {
                        format!(
                            "time {} or weight {} is not finite",
                            sample.time, sample.weight
                        )
                    } else if RootLock::from_code(layer.samples[k][3] & ROOT_LOCK_MASK).is_none()
                        || RootMotionAxes::from_code(layer.samples[k][3] & !ROOT_LOCK_MASK)
                            .is_none()
                    {
                        "its root lock is not a known code (0 to 3, with an axis mask)".to_string()
                    } else if sample.root_lock.is_some()
                        && !matches!(layer.kind, LayerKind::Base | LayerKind::Inertialize)
                    {
                        "only a base sample (or a transition's old pose) may lock the root"
                            .to_string()
                    } else if lib.clip_additive_space(sample.clip) != wanted {
                        let kind = |s: Option<AdditiveSpace>| match s {
                            None => "an ordinary clip".to_string(),
                            Some(s) => format!("a {} additive", s.name()),
                        };
                        format!(
                            "clip '{}' is {}, the layer needs {}",
                            lib.clip_names()[c],
                            kind(lib.clip_additive_space(sample.clip)),
                            kind(wanted)
                        )
                    } else {
                        continue;
                    };
                    return Err(bad(instance, what(&format!("sample {k}: {problem}"))));
                }
            }
        }
        Ok(())
    }

    /// The layers of one instance, in order; `None` for an entry that is not a layer header
    /// (only a hand-edited batch has one).
    pub fn layers(&self, instance: usize) -> impl Iterator<Item = Option<Layer<'_>>> + '_ {
        layers(&self.entries, &self.heads[instance])
    }
}

/// Decodes the layers of the instance `head` describes from `entries`.
pub(crate) fn layers<'a>(
    entries: &'a [Entry],
    head: &Head,
) -> impl Iterator<Item = Option<Layer<'a>>> + 'a {
    let (mut e, mut slot, mut deferred) = (head.first as usize, 0, false);
    (0..head.layers).map(move |_| {
        let header = entries.get(e)?;
        let kind = LayerKind::from_code(header[0] & LAYER_KIND_MASK)?;
        let count = (header[0] >> LAYER_SAMPLES_SHIFT) as usize;
        let samples = entries.get(e + 1..e + 1 + count)?;
        deferred |= kind.is_mesh();
        let layer = Layer {
            kind,
            weight: f32::from_bits(header[1]),
            deferred,
            slot,
            samples,
            header,
            entry: e,
        };
        if deferred {
            slot += kind.slots();
        }
        e += 1 + count;
        Some(layer)
    })
}

/// The IK weights of an instance: its last layer when that is an IK layer.
pub(crate) fn ik_weights(entries: &[Entry], head: &Head) -> Option<IkWeights> {
    layers(entries, head).last()??.ik_weights()
}

/// The instance last pushed, to add layers to in order.
pub struct InstanceLayers<'a> {
    batch: &'a mut PoseBatch,
    deferred: bool,
    /// The entry of the last layer's header.
    last: usize,
}

impl InstanceLayers<'_> {
    /// Adds a layer whose delta is the blend of `samples` (additive clips of `space`: a single
    /// clip, or a blend space's samples with their weights), applied with `weight`.
    pub fn additive(mut self, space: AdditiveSpace, weight: f32, samples: &[ClipSample]) -> Self {
        self.push(LayerKind::Additive(space), weight, samples);
        self
    }

    /// Adds a dynamic additive: the delta of `pose` against `base` (clips that are not
    /// additive), made in `space` at run time and applied with `weight`.
    pub fn dynamic(
        mut self,
        space: AdditiveSpace,
        weight: f32,
        pose: ClipSample,
        base: ClipSample,
    ) -> Self {
        let samples = [pose.with_weight(1.0), base.with_weight(1.0)];
        self.push(LayerKind::Dynamic(space), weight, &samples);
        self
    }

    /// Adds a layered blend per bone (UE's node): the blend of `samples` (clips that are not
    /// additive) over the pose so far, by `weight` (0 to 1) times the layer's mask at each bone
    /// ([`Self::with_mask`]; without one, every bone); rotations blended in `space`.
    pub fn blend(mut self, space: AdditiveSpace, weight: f32, samples: &[ClipSample]) -> Self {
        self.push(LayerKind::Blend(space), weight, samples);
        self
    }

    /// Weights the layer added last by `mask` per bone ([`crate::LibraryBuilder::add_mask`]):
    /// an upper-body wave over a walk, an aim offset on the spine only. Any layer but the base
    /// and the IK weights takes a mask ([`PoseBatch::validate`] refuses the others).
    pub fn with_mask(self, mask: MaskId) -> Self {
        self.batch.entries[self.last][3] = mask.0;
        self
    }

    /// Adds an inertialized transition (UE5's Inertialization, after Bollo): the pose layers
    /// before it are the new pose, and the offset to the old pose decays to nothing over
    /// `blend_time` seconds; `elapsed` seconds have passed since it began. On the frame it
    /// begins, `start` gives the old pose (as a clip sample now and one step earlier): the
    /// evaluator stores each bone's offset and velocity then (in its state for this instance;
    /// [`crate::Poses`] on the CPU) and applies it every later frame of the blend.
    pub fn inertialize(
        mut self,
        blend_time: f32,
        elapsed: f32,
        start: Option<InertialStart>,
    ) -> Self {
        let (samples, dt) = match start {
            Some(s) => (s.samples().to_vec(), s.dt),
            None => (Vec::new(), 0.0),
        };
        self.push_word(
            LayerKind::Inertialize,
            blend_time,
            elapsed.to_bits(),
            &samples,
        );
        self.batch.entries[self.last][3] = dt.to_bits();
        self.batch.inertia_start |= dt > 0.0;
        self
    }

    /// The same with both samples always present (a crowd's frame keeps its layout): `start.dt`
    /// 0 means the transition has begun already.
    pub(crate) fn inertialize_with(
        mut self,
        blend_time: f32,
        elapsed: f32,
        start: InertialStart,
    ) -> Self {
        let samples = start.samples();
        self.push_word(
            LayerKind::Inertialize,
            blend_time,
            elapsed.to_bits(),
            &samples,
        );
        self.batch.entries[self.last][3] = start.dt.to_bits();
        self.batch.inertia_start |= start.dt > 0.0;
        self
    }

    /// Adds the instance's IK weights, its last layer: after retargeting through a plan (at run
    /// time, or baked with [`crate::LibraryBuilder::add_baked_clips`]), the legs
    /// (`weights.feet`) and the left arm (`weights.hands`) reach their goals ([`IkWeights`]).
    /// Without it an instance gets no IK. A later layer is refused by
    /// [`PoseBatch::validate`].
    pub fn ik(mut self, weights: IkWeights) -> Self {
        self.push_word(LayerKind::Ik, weights.feet, weights.hands.to_bits(), &[]);
        self
    }

    fn push(&mut self, kind: LayerKind, weight: f32, samples: &[ClipSample]) {
        self.push_word(kind, weight, 0, samples);
    }

    fn push_word(&mut self, kind: LayerKind, weight: f32, third: u32, samples: &[ClipSample]) {
        let b = &mut *self.batch;
        self.last = b.entries.len();
        b.entries.push([
            kind.code() | (samples.len() as u32) << LAYER_SAMPLES_SHIFT,
            weight.to_bits(),
            third,
            0,
        ]);
        b.entries.extend(samples.iter().map(ClipSample::entry));
        self.deferred |= kind.is_mesh();
        b.mesh_layers |= kind.is_mesh();
        let single = kind == LayerKind::Ik
            || kind == LayerKind::Base && samples.len() == 1 && samples[0].weight > ZERO_WEIGHT;
        b.blends_or_layers |= !single;
        b.ik |= kind == LayerKind::Ik;
        b.inertia |= kind == LayerKind::Inertialize;
        b.root_locks |= samples.iter().any(|s| s.root_lock.is_some());
        // The word is a blend time or IK weight for these kinds, and the base's is unused.
        let blends = !matches!(
            kind,
            LayerKind::Base | LayerKind::Ik | LayerKind::Inertialize
        );
        b.heavy_layers |= blends && weight > 1.0;
        let head = b.heads.last_mut().expect("an instance was pushed");
        head.layers += 1;
        if self.deferred {
            head.slots += kind.slots();
            b.slots += kind.slots();
        }
    }
}

/// Where an inertialized transition begins ([`InstanceLayers::inertialize`]): the old pose as
/// a clip sample now, and one step of `dt` seconds earlier (its velocity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InertialStart {
    /// The old pose now.
    pub now: ClipSample,
    /// The old pose one step earlier.
    pub before: ClipSample,
    /// The step between them, in seconds (above 0).
    pub dt: f32,
    /// Seconds into an inertialized transition of this instance that this one interrupts: the
    /// old pose is then the one shown, that transition's offsets included, so the switch does
    /// not pop. `None` for a transition that interrupts none.
    pub interrupted: Option<f32>,
}

impl InertialStart {
    /// The two samples as the layer stores them: the first's weight says how far into an
    /// interrupted transition it is (−1: none).
    fn samples(&self) -> [ClipSample; 2] {
        let interrupted = self.interrupted.map_or(-1.0, |t| t.max(0.0));
        [
            self.now.with_weight(interrupted),
            self.before.with_weight(1.0),
        ]
    }
}
