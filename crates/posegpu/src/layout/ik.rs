//! IK after retargeting: the IK table (`src/retarget/goals.rs` builds the chains, `src/drive/ik.rs`
//! and `shaders/ik.wgsl` run them).

use bytemuck::{Pod, Zeroable};

/// The head of the IK table (`ik` buffer), an array of 16-byte words: this header, the
/// [`IkChain`]s, then their bone paths (four `u32` per word; path starts count `u32`s from the
/// table's start).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct IkHeader {
    pub chain_count: u32,
    /// The bone that carries both legs (the hips), lowered where the legs cannot reach their
    /// goals; [`IK_NO_BONE`] for none.
    pub pelvis: u32,
    /// The bones from the skeleton's root down to the pelvis's parent (empty for a root
    /// pelvis).
    pub pelvis_path_start: u32,
    pub pelvis_path_len: u32,
    /// The most the pelvis is lowered, in component units.
    pub max_drop: f32,
    /// How many chains are [`IK_ATTACHED`]: where any is, the IK stage runs for every
    /// instance, with an IK layer or without.
    pub attached: u32,
    pub _pad1: u32,
    pub _pad2: u32,
}

/// The most chains an IK table holds (the torso, both legs and the left arm).
pub(crate) const IK_MAX_CHAINS: u32 = 4;

/// Words of the [`IkHeader`]; the chains start after it.
pub(crate) const IK_HEADER_WORDS: u32 = (size_of::<IkHeader>() / 16) as u32;

/// One two-bone IK chain of the library's skeleton, in the IK table after its [`IkHeader`].
///
/// `root` → `mid` → `end` (thigh, shin, foot; upper arm, forearm, hand), each a descendant of
/// the one before (96 bytes); or, [`IK_CARRIED`], an IK-style leg whose foot hangs elsewhere
/// (Mech's): its end is the point the shin carries, `tip`; its goal is in component space, as
/// a leg's, and `goal_parent` is its foot bone, which a sample without a goal gives. `bend` is
/// the way `mid` bends, in `root`'s local frame. The path lists the bones from the skeleton's
/// root down to `end` (a carried chain's: to `mid`), root first; the goal path those down to
/// `goal_parent` (empty for a goal in component space). Or, [`IK_TORSO`], the torso: `root`
/// the spine bone below the chest `mid`, `end` the neck's base, `goal_parent` the hips and
/// `tip` the pelvis in the hips' frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct IkChain {
    pub root: u32,
    pub mid: u32,
    pub end: u32,
    /// The bone the goal is relative to, or [`IK_NO_BONE`] (component space).
    pub goal_parent: u32,
    pub bend: [f32; 3],
    /// [`IK_HAND`], [`IK_CARRIED`] (with [`IK_ATTACHED`] or not), [`IK_TORSO`] or 0 (a leg).
    pub flags: u32,
    pub path_start: u32,
    pub path_len: u32,
    pub goal_path_start: u32,
    pub goal_path_len: u32,
    /// A leg's up direction (component space) and its end's rest height along it.
    pub up: [f32; 3],
    pub rest_height: f32,
    /// A leg's contact band: a goal up to `contact_lo` above the rest height is in contact (its
    /// height is reached in full); from `contact_hi` on the foot swings, and its height is
    /// reached within `slack`; smoothly in between.
    pub contact_lo: f32,
    pub contact_hi: f32,
    /// A leg's toe bone, a child of `end` whose height the IK stage brings to the toe goal's
    /// by turning the foot about the ankle; [`IK_NO_BONE`] for none.
    pub toe: u32,
    pub slack: f32,
    /// An [`IK_CARRIED`] chain's end: the point `mid` carries, in `mid`'s frame; the
    /// [`IK_TORSO`] chain's pelvis, in the hips' frame.
    pub tip: [f32; 3],
    pub _pad2: u32,
}

/// [`IkChain::flags`]: a hand chain: weighted by the hands weight, and its goal sets the
/// hand's rotation too (a foot keeps its own).
pub(crate) const IK_HAND: u32 = 1;
/// [`IkChain::flags`]: the end is the point `mid` carries (`tip`), the goal the `goal_parent`
/// bone itself.
pub(crate) const IK_CARRIED: u32 = 2;
/// [`IkChain::flags`]: the torso: `root` turns so that the line from the pelvis (`tip` in the
/// `goal_parent` hips' frame) to `end` points at the goal, `mid` (the chest) keeping its turn.
pub(crate) const IK_TORSO: u32 = 4;
/// [`IkChain::flags`], with [`IK_CARRIED`]: the foot bone (`goal_parent`) stays on the leg: after
/// the chain runs (or without it, where the instance has no IK weight), an instance playing a
/// retargeted sample has its foot moved to the point the shin carries (`tip`), the foot's
/// rotation and the bones below it following (`docs/pose-math.md`, "IK after retargeting").
pub(crate) const IK_ATTACHED: u32 = 8;
/// [`IkChain::goal_parent`]: the goal is in component space.
pub(crate) const IK_NO_BONE: u32 = u32::MAX;
/// Words of one [`IkChain`].
pub(crate) const IK_CHAIN_WORDS: u32 = (size_of::<IkChain>() / 16) as u32;

/// How much of the chain's bend direction (in root lengths) steadies the pose's own bend: it
/// decides only where the pose bends the mid joint by less than about 3°.
pub(crate) const BEND_BIAS: f32 = 0.05;

/// The most of its length a chain stretches to: a knee never locks quite straight, where the
/// mid joint's place would hang on rounding (its offset is the square root of the slack).
pub(crate) const MAX_REACH: f32 = 0.999;
