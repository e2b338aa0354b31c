//! The packed form of a skeleton and its clips: flat arrays laid out exactly as the GPU storage
//! buffers, uploaded as they are and read by the shaders and by their CPU twins alike
//! (`tables.rs` names the readers after the WGSL functions that read the same words).

use std::collections::HashMap;

use std::sync::Arc;

use glam::{Mat4, Vec3};

use bytemuck::Pod;

mod packed;
mod read;
mod tables;

pub(crate) use packed::{ClipPacker, PackedClip};

pub(crate) use tables::{
    bone_keys_word, clip_channel_word, reference_word, table_u32_at, SkeletonSection,
};
use tables::{clip_table, field_major};

use crate::drive::modes::mode_caches;
use crate::drive::plan::{check_clip_reflections, PlanSection};
use crate::drive::TranslationMode;
use crate::error::{Error, Result};
use crate::layout::{
    BonePlan, BoneRetarget, ChannelData, ClipData, Entry, Mat3x4, Xform, CHANNEL_STEP,
    CHANNEL_STRIDE_SHIFT, CLIP_ADDITIVE, CLIP_COMPRESSED, CLIP_GOALS, CLIP_MESH_SPACE, CLIP_PLAN,
    CLIP_SOURCES_SHIFT, PLAN_WORDS, RETARGET_WORDS,
};
use crate::math::affine_rows;
use crate::model::{
    mask_weights, AdditiveSpace, BoneTrack, Channel, Clip, Interpolation, MaskBranch, Skeleton,
};
use crate::Transform;

/// A clip of a library, by its index in [`AnimLibrary::clip_names`] ([`AnimLibrary::find_clip`]
/// finds it by name). Instances, segments and players take it; a plain `u32` index converts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClipId(pub u32);

impl ClipId {
    /// The clip's index, for slices in clip order ([`AnimLibrary::clip_names`]).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<u32> for ClipId {
    fn from(index: u32) -> Self {
        Self(index)
    }
}

/// Names a retarget source of a library: the skeleton a set of clips was authored on and the
/// reference pose they are retargeted from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceId(usize);

impl SourceId {
    /// The library's own skeleton: clips play unchanged.
    pub const TARGET: Self = Self(0);

    /// The source's index in [`AnimLibrary::sources`].
    pub fn index(self) -> usize {
        self.0
    }
}

/// A bone mask of a library ([`LibraryBuilder::add_mask`]), which a layer of an instance
/// references ([`crate::batch::InstanceLayers::with_mask`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MaskId(pub(crate) u32);

/// A bone mask as the library keeps it: its weights are also in the retarget table, four per
/// word, from word `id.0` (word 0 is the target's own table, never a mask: 0 means no mask).
#[derive(Clone, Debug)]
pub(crate) struct Mask {
    pub(crate) name: String,
    pub(crate) id: MaskId,
    pub(crate) weights: Vec<f32>,
}

/// One retarget source of a library: what its clips were authored on and how they play. How
/// it was paired with the target (a bone mapping, a retarget plan) stays with its author: the
/// library keeps only the packed tables its clips play through.
#[derive(Clone, Debug)]
pub struct RetargetSource {
    /// A label for reports (a file name, say).
    pub name: String,
    /// The skeleton the source's clips were authored on.
    pub skeleton: Skeleton,
    /// The named alternative reference pose used as the retarget source; `None` for the
    /// skeleton's own.
    pub pose: Option<String>,
    /// How its clips drive the target's bones.
    pub kind: SourceKind,
    /// A character source's [`PlanSection::kept_signs`], which its clips must keep; empty for
    /// any other.
    pub(crate) kept_signs: Vec<Option<u32>>,
}

/// How a retarget source's clips drive the target's bones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceKind {
    /// UE's translation modes: a cache per target bone ([`AnimLibrary::retarget_caches`]); the
    /// target itself ([`SourceId::TARGET`]) is one, every bone driving itself.
    Modes,
    /// A character source ([`LibraryBuilder::add_character_source`]): a retarget plan's records,
    /// run per target bone by the sampling stage.
    Character,
}

/// A target skeleton and the clips that play on it, packed for evaluation: clips of the
/// skeleton itself and clips of other skeletons through their retarget caches. Immutable;
/// built once ([`AnimLibrary::builder`]) and uploaded once.
///
/// Cloning is cheap: clones share one packed copy (an evaluator keeps a clone, not a copy).
#[derive(Clone, Debug)]
pub struct AnimLibrary {
    data: Arc<LibraryData>,
}

/// The packed arrays, laid out as the GPU buffers (each uploaded byte for byte).
#[derive(Debug)]
pub(crate) struct LibraryData {
    pub(crate) skeleton: Skeleton,
    pub(crate) clip_names: Vec<String>,
    pub(crate) clip_sources: Vec<SourceId>,
    pub(crate) sources: Vec<RetargetSource>,
    /// The `parents` and `inverse_bind` tables of the hierarchy and layer passes.
    pub(crate) parents: Vec<i32>,
    pub(crate) inverse_bind: Vec<Mat3x4>,
    /// The clip table (`clip_table` in `clip.wgsl`): the clips, then their channels kind-major
    /// (`tables.rs`); made by [`LibraryBuilder::build`].
    pub(crate) clip_table: Vec<Entry>,
    /// The key times, each distinct array once, then compressed clips' own
    /// (`library/packed.rs`).
    pub(crate) times: Vec<f32>,
    pub(crate) values: Vec<[f32; 4]>,
    /// The retarget table, 16-byte words: per source, from `source_tables[source]`, its
    /// [`BoneRetarget`]s (one per target bone, field-major), or a character source's plan
    /// (its `BonePlan`s, the target bones' field-major, the source's reference locals, its
    /// path entries); the masks; and once built, the skeleton section. The target's own table
    /// comes first.
    pub(crate) retarget: Vec<Entry>,
    pub(crate) source_tables: Vec<u32>,
    /// Where [`LibraryBuilder::build`] put the skeleton section in `retarget`.
    pub(crate) skeleton_section: SkeletonSection,
    /// The IK table (`IkChain` in `src/layout/ik.rs`): the chains of the target, from its first
    /// character source's plan; empty (no chains) until then.
    pub(crate) ik: Vec<Entry>,
    /// The bone masks, in the order they were added.
    pub(crate) masks: Vec<Mask>,
    /// Every clip's notifies, clip after clip, each clip's in time order; a notify's index
    /// here is its id in events.
    pub(crate) notifies: Vec<NotifyInfo>,
    /// Per clip, its first notify and how many it has.
    pub(crate) clip_notifies: Vec<[u32; 2]>,
    /// The notify table the advance stage reads (16-byte words): per clip `[first, count]`,
    /// then per notify `[time bits, id]` (from word `clip count`); made by
    /// [`LibraryBuilder::build`], one zero word when there is nothing in it.
    pub(crate) notify_table: Vec<Entry>,
    /// The bone root motion is taken from and in-place samples lock (bone 0 unless set).
    pub(crate) root_bone: u32,
    /// Up for root motion's axis masks, in component space, and in the root-motion bone's
    /// parent's frame at the reference pose (where its local transform lives).
    pub(crate) root_up: Vec3,
    pub(crate) root_up_local: Vec3,
    /// The root-motion bone's parent at the reference pose, in component space (the identity
    /// for a root).
    pub(crate) root_parent: Transform,
    /// Every curve name of every clip, in the order first met; a curve's index is its place.
    pub(crate) curve_names: Vec<String>,
    /// Per clip, its curves' channels by curve index (the table is made from these).
    clip_curves: Vec<Vec<(u32, ChannelData)>>,
    /// The curve table the curve stage reads: per clip, one channel per library curve
    /// (`clip * curve count + curve`; none, `count` 0, where the clip lacks the curve); made by
    /// [`LibraryBuilder::build`], one empty channel when there is nothing in it.
    pub(crate) curve_table: Vec<ChannelData>,
}

/// A notify of a library's clip ([`AnimLibrary::notify`]): events name it by its index.
#[derive(Clone, Debug, PartialEq)]
pub struct NotifyInfo {
    /// The clip it belongs to.
    pub clip: ClipId,
    /// Its name.
    pub name: String,
    /// Seconds into the clip.
    pub time: f32,
}

/// Builds an [`AnimLibrary`]: sources and clips in, one packed library out.
pub struct LibraryBuilder {
    lib: LibraryData,
    shared_times: HashMap<Vec<u32>, u32>,
    /// The clip table's two parts, `channel_base` counting from the first channel until
    /// [`Self::build`] joins them.
    clips: Vec<ClipData>,
    channels: Vec<ChannelData>,
    /// What packs the clips added from now on (`LibraryBuilder::compress`); none: plain.
    pub(crate) packer: Option<Arc<dyn ClipPacker>>,
}

impl AnimLibrary {
    /// Packs `clips` (validated clips of `skeleton`), which play unchanged.
    pub fn new(skeleton: &Skeleton, clips: &[Clip]) -> Result<Self> {
        let mut builder = Self::builder(skeleton);
        builder.add_clips(clips)?;
        Ok(builder.build())
    }

    /// Starts a library whose instances all have `target`'s bones.
    pub fn builder(target: &Skeleton) -> LibraryBuilder {
        let modes = vec![TranslationMode::Animation; target.len()];
        let retarget = mode_caches(target.rest(), target.rest(), Some, &modes);
        let own = RetargetSource {
            name: "(the target itself)".to_string(),
            skeleton: target.clone(),
            pose: None,
            kind: SourceKind::Modes,
            kept_signs: Vec::new(),
        };
        LibraryBuilder {
            lib: LibraryData {
                skeleton: target.clone(),
                clip_names: Vec::new(),
                clip_sources: Vec::new(),
                sources: vec![own],
                parents: target.parents().to_vec(),
                inverse_bind: target
                    .inverse_bind()
                    .iter()
                    .map(|m| affine_rows(&m.unwrap_or(Mat4::IDENTITY)))
                    .collect(),
                clip_table: Vec::new(),
                times: Vec::new(),
                values: Vec::new(),
                retarget: field_major(&words(&retarget), RETARGET_WORDS as usize),
                source_tables: vec![0],
                skeleton_section: SkeletonSection::default(),
                ik: Vec::new(),
                masks: Vec::new(),
                notifies: Vec::new(),
                clip_notifies: Vec::new(),
                notify_table: Vec::new(),
                root_bone: 0,
                root_up: Vec3::Y,
                root_up_local: Vec3::Y,
                root_parent: Transform::IDENTITY,
                curve_names: Vec::new(),
                clip_curves: Vec::new(),
                curve_table: Vec::new(),
            },
            shared_times: HashMap::new(),
            packer: None,
            clips: Vec::new(),
            channels: Vec::new(),
        }
    }
}

impl LibraryBuilder {
    /// Adds clips of the target skeleton itself.
    pub fn add_clips(&mut self, clips: &[Clip]) -> Result<&mut Self> {
        self.add_clips_from(SourceId::TARGET, clips)
    }

    /// The target skeleton.
    pub(crate) fn target(&self) -> &Skeleton {
        &self.lib.skeleton
    }

    /// Adds a source of UE's translation modes whose clips are authored on `skeleton`, from its
    /// reference pose or its alternative named `pose`: `caches` (one per target bone) drive the
    /// target's bones.
    pub(crate) fn push_mode_source(
        &mut self,
        name: &str,
        skeleton: &Skeleton,
        pose: Option<&str>,
        caches: &[BoneRetarget],
    ) -> Result<SourceId> {
        self.push_source(
            RetargetSource {
                name: name.to_string(),
                skeleton: skeleton.clone(),
                pose: pose.map(str::to_string),
                kind: SourceKind::Modes,
                kept_signs: Vec::new(),
            },
            field_major(&words(caches), RETARGET_WORDS as usize),
        )
    }

    /// Adds a character source whose clips are authored on `skeleton` and play through a
    /// plan's `section` (built for `skeleton` and the target), and takes the plan's IK chains.
    pub(crate) fn push_plan_source(
        &mut self,
        name: &str,
        skeleton: &Skeleton,
        section: &PlanSection,
    ) -> Result<SourceId> {
        self.check_ik(&section.ik)?;
        // The table: the records, the source's reference locals, the path entries.
        let base = self.lib.retarget.len();
        let records = self.lib.skeleton.len() + section.goals.len();
        let rest = base + records * PLAN_WORDS as usize;
        let paths = rest + skeleton.len() * 3;
        let path_base = to_u32(paths * 4, "retarget table")?;
        let rest = to_u32(rest, "retarget table")?;
        let placed = |records: &[BonePlan]| -> Vec<Entry> {
            let records: Vec<_> = records
                .iter()
                .map(|&record| BonePlan {
                    path_start: record.path_start + path_base,
                    source_rest: rest,
                    ..record
                })
                .collect();
            words(&records)
        };
        // The target bones' records field-major, then the goal records as they are (the IK
        // stage reads goal g at bone count + g).
        let mut table = field_major(&placed(&section.records), PLAN_WORDS as usize);
        table.extend(placed(&section.goals));
        let locals: Vec<Xform> = skeleton.rest().iter().map(|&t| t.into()).collect();
        table.extend(words(&locals));
        table.extend(packed(&section.paths));
        let id = self.push_source(
            RetargetSource {
                name: name.to_string(),
                skeleton: skeleton.clone(),
                pose: None,
                kind: SourceKind::Character,
                kept_signs: section.kept_signs.clone(),
            },
            table,
        )?;
        self.lib.ik = section.ik.clone();
        Ok(id)
    }

    /// Adds a bone mask named `name` (UE's Layered blend per bone branch filters): its weight
    /// per target bone is resolved here, once ([`mask_weights`] gives the rule), and a layer of
    /// any instance may then use it ([`crate::batch::InstanceLayers::with_mask`]).
    pub fn add_mask(&mut self, name: &str, branches: &[MaskBranch]) -> Result<MaskId> {
        if self.lib.masks.iter().any(|m| m.name == name) {
            return Err(Error::Mask {
                mask: name.to_string(),
                what: "the library already has a mask of this name".to_string(),
            });
        }
        let weights = mask_weights(&self.lib.skeleton, name, branches)?;
        let id = MaskId(to_u32(self.lib.retarget.len(), "retarget table")?);
        let table: Vec<Entry> = packed(bytemuck::cast_slice(&weights)).collect();
        to_u32(self.lib.retarget.len() + table.len(), "retarget table")?;
        self.lib.retarget.extend(table);
        self.lib.masks.push(Mask {
            name: name.to_string(),
            id,
            weights,
        });
        Ok(id)
    }

    /// Takes root motion from `bone` (a hips bone where the root does not move, say) instead of
    /// bone 0, with `up` (in component space; glTF's +Y by default, +Z for a Z-up BVH) the up of
    /// the axis masks ([`crate::RootMotionAxes`]). In-place samples lock this bone. Its
    /// ancestors are taken at their reference pose: root motion is the bone's motion in its
    /// parent's frame.
    pub fn set_root_motion_bone(&mut self, bone: &str, up: Vec3) -> Result<&mut Self> {
        let skeleton = &self.lib.skeleton;
        let b = skeleton.find(bone).ok_or_else(|| Error::UnknownBone {
            what: "root-motion bone".into(),
            name: bone.to_string(),
            skeleton: "target",
        })?;
        let up = up.try_normalize().ok_or_else(|| Error::Playback {
            what: format!("root-motion up {up} is not a finite, non-zero direction"),
        })?;
        let parent = skeleton
            .parent(b)
            .map_or(Transform::IDENTITY, |p| skeleton.rest_component()[p]);
        self.lib.root_bone = b as u32;
        self.lib.root_up = up;
        self.lib.root_up_local = (parent.rotation.conjugate() * up).normalize();
        self.lib.root_parent = parent;
        Ok(self)
    }

    /// Checks that a plan's target IK chains (`ik`) can be the library's (the IK stage's table):
    /// every plan of a library must have the same.
    fn check_ik(&self, ik: &[Entry]) -> Result<()> {
        if !self.lib.ik.is_empty() && self.lib.ik != ik {
            return Err(Error::PlanMismatch {
                what: "the plan's target IK chains differ from the library's (plans for one \
                       library must be built for the same target asset)"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// Appends a source and its table.
    fn push_source(&mut self, source: RetargetSource, table: Vec<Entry>) -> Result<SourceId> {
        let base = to_u32(self.lib.retarget.len(), "retarget table")?;
        to_u32(self.lib.retarget.len() + table.len(), "retarget table")?;
        self.lib.retarget.extend(table);
        self.lib.source_tables.push(base);
        self.lib.sources.push(source);
        Ok(SourceId(self.lib.sources.len() - 1))
    }

    /// Adds clips authored on `source`'s skeleton.
    pub fn add_clips_from(&mut self, source: SourceId, clips: &[Clip]) -> Result<&mut Self> {
        self.push_clips(source, clips, &[])
    }

    /// [`Self::add_clips_from`]; clip `i`'s IK goal tracks `goals[i]`, where given, stored after
    /// its bones' (a clip baked with its plan's goals, [`Self::add_baked_clips`]).
    fn push_clips(
        &mut self,
        source: SourceId,
        clips: &[Clip],
        goals: &[Vec<BoneTrack>],
    ) -> Result<&mut Self> {
        let src = self.lib.sources.get(source.0).ok_or(Error::UnknownSource {
            index: source.0,
            count: self.lib.sources.len(),
        })?;
        let (bones, retarget_base) = (src.skeleton.len(), self.lib.source_tables[source.0]);
        let plan_flag = match src.kind {
            SourceKind::Character => CLIP_PLAN,
            SourceKind::Modes => 0,
        };
        for clip in clips {
            if clip.tracks().len() != bones {
                return Err(Error::TrackCount {
                    clip: clip.name().to_string(),
                    expected: bones,
                    got: clip.tracks().len(),
                });
            }
            if plan_flag != 0 && clip.is_additive() {
                return Err(Error::Additive {
                    clip: clip.name().to_string(),
                    what: format!(
                        "character source '{}' plays ordinary clips only: bake the clips the \
                         additive was made from (retarget::bake_clip), then make the additive \
                         on the target",
                        src.name
                    ),
                });
            }
            if src.kind == SourceKind::Character {
                check_clip_reflections(&src.kept_signs, clip, src.skeleton.names())?;
            }
        }
        let lib = &mut self.lib;
        for (i, clip) in clips.iter().enumerate() {
            let goals = goals.get(i).map_or(&[][..], Vec::as_slice);
            let goal_flag = if goals.is_empty() { 0 } else { CLIP_GOALS };
            let c = to_u32(self.clips.len(), "clip table")?;
            let first = to_u32(lib.notifies.len(), "notify table")?;
            lib.clip_notifies
                .push([first, to_u32(clip.notifies().len(), "notify table")?]);
            lib.notifies
                .extend(clip.notifies().iter().map(|n| NotifyInfo {
                    clip: ClipId(c),
                    name: n.name.clone(),
                    time: n.time,
                }));
            lib.clip_names.push(clip.name().to_string());
            lib.clip_sources.push(source);
            // Its channels' stride: one per track (the bones', then the goals').
            let sources = (clip.tracks().len() + goals.len()) as u32;
            let mut data = ClipData {
                duration: clip.duration(),
                channel_base: to_u32(self.channels.len(), "channel table")?,
                retarget_base,
                flags: plan_flag
                    | goal_flag
                    | sources << CLIP_SOURCES_SHIFT
                    | match clip.additive_space() {
                        None => 0,
                        Some(AdditiveSpace::Local) => CLIP_ADDITIVE,
                        Some(AdditiveSpace::Mesh) => CLIP_ADDITIVE | CLIP_MESH_SPACE,
                    },
            };
            let src = &lib.sources[source.0];
            let packing = match &self.packer {
                Some(p) => p.pack(lib, src, retarget_base, clip, goals)?,
                None => None,
            };
            if let Some(c) = &packing {
                packed::place(lib, c, &mut data, sources as usize)?;
                data.flags |= CLIP_COMPRESSED;
            }
            self.clips.push(data);
            // The clip's channels, curves first, then every track's translation (the bones',
            // then the goals'), then every rotation, then every scale (kind-major, as the clip
            // table holds them); their values are laid out once all are known (`push_values`).
            let mut pending = Vec::new();
            let mut curves = Vec::with_capacity(clip.curves().len());
            for curve in clip.curves() {
                let index = match lib.curve_names.iter().position(|n| *n == curve.name) {
                    Some(i) => i,
                    None => {
                        lib.curve_names.push(curve.name.clone());
                        lib.curve_names.len() - 1
                    }
                };
                let ch = lib.push_times(&mut self.shared_times, Some(&curve.channel))?;
                let values = curve.channel.values.iter().map(|v| [*v, 0.0, 0.0, 0.0]);
                pending.push((ch, values.collect::<Vec<_>>()));
                curves.push(to_u32(index, "curve table")?);
            }
            let vec3s = |c: Option<&Channel<Vec3>>| -> Vec<[f32; 4]> {
                c.map_or(Vec::new(), |c| {
                    c.values.iter().map(|v| v.extend(0.0).to_array()).collect()
                })
            };
            let tracks: Vec<&BoneTrack> = if packing.is_some() {
                Vec::new()
            } else {
                clip.tracks().iter().chain(goals).collect()
            };
            for kind in 0..3 {
                for &track in &tracks {
                    let shared = &mut self.shared_times;
                    pending.push(match kind {
                        0 => (
                            lib.push_times(shared, track.translation.as_ref())?,
                            vec3s(track.translation.as_ref()),
                        ),
                        1 => (
                            lib.push_times(shared, track.rotation.as_ref())?,
                            track.rotation.as_ref().map_or(Vec::new(), |c| {
                                c.values.iter().map(|q| q.to_array()).collect()
                            }),
                        ),
                        _ => (
                            lib.push_times(shared, track.scale.as_ref())?,
                            vec3s(track.scale.as_ref()),
                        ),
                    });
                }
            }
            let channels = lib.push_values(pending)?;
            let (curve_channels, track_channels) = channels.split_at(curves.len());
            lib.clip_curves.push(
                curves
                    .into_iter()
                    .zip(curve_channels.iter().copied())
                    .collect(),
            );
            self.channels.extend_from_slice(track_channels);
            if packing.is_none() {
                let reference = tables::reference_channel(track_channels);
                self.channels.push(reference);
                if plan_flag == 0 {
                    let bones = lib.table_bones();
                    let records = (0..bones).map(|b| lib.bone_retarget(retarget_base, b).source);
                    let sources_of = records.map(|s| usize::try_from(s).ok());
                    let keys =
                        tables::bone_keys(track_channels, &reference, sources as usize, sources_of);
                    self.channels.extend(keys);
                }
            }
        }
        Ok(self)
    }

    /// Adds clips of the target baked from a character source with their IK `goals` (per clip,
    /// one track per goal record), and takes the plan's IK chains `ik`.
    pub(crate) fn push_baked_clips(
        &mut self,
        clips: &[Clip],
        goals: &[Vec<BoneTrack>],
        ik: &[Entry],
    ) -> Result<()> {
        self.check_ik(ik)?;
        self.push_clips(SourceId::TARGET, clips, goals)?;
        self.lib.ik = ik.to_vec();
        Ok(())
    }

    /// The library, packed and immutable.
    pub fn build(mut self) -> AnimLibrary {
        let lib = &mut self.lib;
        lib.clip_table = clip_table(&self.clips, &self.channels);
        // The fused pass reads the skeleton from the end of the retarget table.
        let (section, words) = SkeletonSection::new(
            &lib.parents,
            &lib.inverse_bind,
            lib.skeleton.depth_levels(),
            lib.retarget.len() as u32,
        );
        lib.retarget.extend(words);
        lib.skeleton_section = section;
        let clips = lib.clip_notifies.len() as u32;
        lib.notify_table = lib
            .clip_notifies
            .iter()
            .map(|&[first, count]| [clips + first, count, 0, 0])
            .chain(
                lib.notifies
                    .iter()
                    .enumerate()
                    .map(|(id, n)| [n.time.to_bits(), id as u32, 0, 0]),
            )
            .collect();
        if lib.notify_table.is_empty() {
            lib.notify_table.push([0; 4]);
        }
        let count = lib.curve_names.len();
        lib.curve_table = vec![ChannelData::default(); (lib.clip_curves.len() * count).max(1)];
        for (c, curves) in lib.clip_curves.iter().enumerate() {
            for &(index, ch) in curves {
                lib.curve_table[c * count + index as usize] = ch;
            }
        }
        AnimLibrary {
            data: Arc::new(self.lib),
        }
    }
}

impl LibraryData {
    /// `channel`'s key times (stored once for every channel that has the same ones): its
    /// channel record, its values not placed yet; absent (`count` 0) without a channel.
    fn push_times<T>(
        &mut self,
        shared_times: &mut HashMap<Vec<u32>, u32>,
        channel: Option<&Channel<T>>,
    ) -> Result<ChannelData> {
        let Some(c) = channel else {
            return Ok(ChannelData::default());
        };
        let key: Vec<u32> = c.times.iter().map(|t| t.to_bits()).collect();
        let time_offset = match shared_times.get(&key) {
            Some(&o) => o,
            None => {
                let o = to_u32(self.times.len(), "key times")?;
                self.times.extend_from_slice(&c.times);
                shared_times.insert(key, o);
                o
            }
        };
        Ok(ChannelData {
            time_offset,
            value_offset: 0,
            count: to_u32(c.len(), "key count")?,
            flags: match c.interpolation {
                Interpolation::Linear => 0,
                Interpolation::Step => CHANNEL_STEP,
            },
        })
    }

    /// One clip's channel values, in `channels`' order. The channels that share key times form
    /// a group whose values are stored key-major: key `k` of the group's `r`-th channel at
    /// `base + k * members + r`, the stride in the flags from [`CHANNEL_STRIDE_SHIFT`] up. So
    /// the lanes that sample neighbouring bones at one time read neighbouring values. Returns
    /// the channels with their value offsets.
    fn push_values(
        &mut self,
        channels: Vec<(ChannelData, Vec<[f32; 4]>)>,
    ) -> Result<Vec<ChannelData>> {
        let mut out: Vec<ChannelData> = channels.iter().map(|(c, _)| *c).collect();
        let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
        for (i, (c, _)) in channels
            .iter()
            .enumerate()
            .filter(|(_, (c, _))| c.count > 0)
        {
            match groups.iter_mut().find(|(t, _)| *t == c.time_offset) {
                Some((_, members)) => members.push(i),
                None => groups.push((c.time_offset, vec![i])),
            }
        }
        for (_, members) in groups {
            let base = to_u32(self.values.len(), "key values")?;
            // The stride lives in the flags' upper 24 bits.
            let limit = 1u64 << (32 - CHANNEL_STRIDE_SHIFT);
            let stride = members.len() as u32;
            if members.len() as u64 >= limit {
                return Err(Error::TooLarge {
                    what: "channels of one clip that share their key times".to_string(),
                    size: members.len() as u64,
                    limit: limit - 1,
                    unit: "channels",
                    limit_name: "24-bit value stride",
                });
            }
            let keys = channels[members[0]].1.len();
            self.values.reserve(keys * members.len());
            for k in 0..keys {
                self.values
                    .extend(members.iter().map(|&m| channels[m].1[k]));
            }
            for (rank, &m) in members.iter().enumerate() {
                out[m].value_offset = base + rank as u32;
                out[m].flags |= stride << CHANNEL_STRIDE_SHIFT;
            }
        }
        Ok(out)
    }
}

pub(crate) fn to_u32(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::TooLarge {
        what: what.to_string(),
        size: n as u64,
        limit: u32::MAX as u64,
        unit: "entries",
        limit_name: "32-bit index",
    })
}

/// 32-bit values four to a 16-byte word, the last word padded with zeros.
pub(crate) fn packed(values: &[u32]) -> impl Iterator<Item = Entry> + '_ {
    values.chunks(4).map(|c| {
        let mut word = [0; 4];
        word[..c.len()].copy_from_slice(c);
        word
    })
}

/// A table of records as 16-byte words.
fn words<T: Pod>(records: &[T]) -> Vec<Entry> {
    bytemuck::cast_slice(records).to_vec()
}
