//! What a built library says of itself: its skeleton, clips, sources, masks, notifies and
//! curves, by name and by index.

use glam::{Vec3, Vec4};

use super::{
    AnimLibrary, ClipId, LibraryData, Mask, MaskId, NotifyInfo, RetargetSource, SourceId,
    SourceKind,
};
use crate::drive::BoneCache;
use crate::error::Result;
use crate::layout::{Entry, CLIP_ADDITIVE, CLIP_MESH_SPACE};
use crate::model::{find_named, AdditiveSpace, Skeleton};

impl AnimLibrary {
    /// The packed arrays (what the GPU buffers and the CPU twin read).
    pub(crate) fn data(&self) -> &LibraryData {
        &self.data
    }

    /// The target skeleton, which every instance has.
    pub fn skeleton(&self) -> &Skeleton {
        &self.data.skeleton
    }

    /// The target skeleton's bone count.
    pub fn bone_count(&self) -> usize {
        self.data.parents.len()
    }

    /// The number of clips, over all sources.
    pub fn clip_count(&self) -> usize {
        self.data.clip_count()
    }

    /// Each clip's name, by clip index.
    pub fn clip_names(&self) -> &[String] {
        &self.data.clip_names
    }

    /// Every clip, in index order.
    pub fn clip_ids(&self) -> impl ExactSizeIterator<Item = ClipId> {
        (0..self.data.clip_count() as u32).map(ClipId)
    }

    /// The duration of `clip` in seconds (its last key time).
    pub fn clip_duration(&self, clip: impl Into<ClipId>) -> f32 {
        self.data.clip_data(clip.into().0).duration
    }

    /// The retarget source a clip plays through.
    pub fn clip_source(&self, clip: impl Into<ClipId>) -> SourceId {
        self.data.clip_sources[clip.into().index()]
    }

    /// The retarget sources; [`SourceId::TARGET`] (index 0) is the target itself.
    pub fn sources(&self) -> &[RetargetSource] {
        &self.data.sources
    }

    /// One retarget source (from [`crate::LibraryBuilder::add_source`] of this library).
    pub fn source(&self, source: SourceId) -> &RetargetSource {
        &self.data.sources[source.0]
    }

    /// How each target bone is driven by one source of UE's translation modes: its source
    /// bone, mode and cache values. Empty for a character source, whose plan
    /// ([`crate::retarget::RetargetPlan::bones`]) says it instead.
    pub fn retarget_caches(&self, source: SourceId) -> Vec<BoneCache> {
        if self.source(source).kind == SourceKind::Character {
            return Vec::new();
        }
        let base = self.data.source_tables[source.0];
        (0..self.bone_count() as u32)
            .map(|b| BoneCache::from(&self.data.bone_retarget(base, b)))
            .collect()
    }

    /// The bone root motion is taken from ([`crate::LibraryBuilder::set_root_motion_bone`]).
    pub fn root_motion_bone(&self) -> usize {
        self.data.root_bone as usize
    }

    /// Up for root motion's axis masks, in component space.
    pub fn root_motion_up(&self) -> Vec3 {
        self.data.root_up
    }

    /// Every notify of every clip; an event's notify id indexes this.
    pub fn notifies(&self) -> &[NotifyInfo] {
        &self.data.notifies
    }

    /// Notify `id` (from an event).
    pub fn notify(&self, id: u32) -> Option<&NotifyInfo> {
        self.data.notifies.get(id as usize)
    }

    /// The notifies of `clip`, in time order, with their ids.
    pub fn clip_notifies(
        &self,
        clip: impl Into<ClipId>,
    ) -> impl Iterator<Item = (u32, &NotifyInfo)> + '_ {
        let [first, count] = self.data.clip_notifies[clip.into().index()];
        (first..first + count).map(|id| (id, &self.data.notifies[id as usize]))
    }

    /// Every curve of every clip, by name; the curve stage writes one value per instance per
    /// curve in this order ([`crate::Poses::curve`]).
    pub fn curve_names(&self) -> &[String] {
        &self.data.curve_names
    }

    /// The index of the curve named `name`.
    pub fn find_curve(&self, name: &str) -> Option<usize> {
        self.data.curve_names.iter().position(|n| n == name)
    }

    /// The bone mask named `name` ([`crate::LibraryBuilder::add_mask`]).
    pub fn mask(&self, name: &str) -> Option<MaskId> {
        self.data
            .masks
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.id)
    }

    /// A mask's weight per target bone; `None` for a mask of another library.
    pub fn mask_weights(&self, mask: MaskId) -> Option<&[f32]> {
        self.mask_entry(mask).map(|m| m.weights.as_slice())
    }

    pub(crate) fn mask_entry(&self, mask: MaskId) -> Option<&Mask> {
        self.data.masks.iter().find(|m| m.id == mask)
    }

    /// Finds a clip by name, or by index when `name` is a number.
    pub fn find_clip(&self, name: &str) -> Result<ClipId> {
        let index = find_named(self.data.clip_names.iter().map(String::as_str), name)?;
        Ok(ClipId(index as u32))
    }

    /// The space of an additive clip's deltas; `None` for an ordinary clip.
    pub fn clip_additive_space(&self, clip: impl Into<ClipId>) -> Option<AdditiveSpace> {
        let flags = self.data.clip_data(clip.into().0).flags;
        match (flags & CLIP_ADDITIVE != 0, flags & CLIP_MESH_SPACE != 0) {
            (false, _) => None,
            (true, false) => Some(AdditiveSpace::Local),
            (true, true) => Some(AdditiveSpace::Mesh),
        }
    }

    /// Bytes of the asset buffers the pose stages read (uploaded once): the curve table and a
    /// crowd's notify table are left out, and so is the retarget table's skeleton section (it
    /// repeats the parents and inverse binds counted here).
    pub fn asset_bytes(&self) -> u64 {
        let d = &self.data;
        let retarget = d.skeleton_section.parents as usize * size_of::<Entry>();
        (std::mem::size_of_val(d.parents.as_slice())
            + retarget
            + std::mem::size_of_val(d.ik.as_slice())
            + std::mem::size_of_val(d.inverse_bind.as_slice())
            + std::mem::size_of_val(d.clip_table.as_slice())
            + std::mem::size_of_val(d.times.as_slice())
            + std::mem::size_of_val(d.values.as_slice())) as u64
    }

    pub(crate) fn value3(&self, i: u32) -> Vec3 {
        Vec4::from(self.data.values[i as usize]).truncate()
    }

    pub(crate) fn value4(&self, i: u32) -> Vec4 {
        Vec4::from(self.data.values[i as usize])
    }
}
