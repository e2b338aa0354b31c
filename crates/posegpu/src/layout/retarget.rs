//! The retarget table's records: UE's translation-mode caches and retarget plans, one record
//! per target bone per source (`src/library.rs` packs them).

use bytemuck::{Pod, Zeroable};

use super::Xform;

/// Everything the sampling stage needs to drive one target bone from one retarget source:
/// built on the host once per (retarget source, target skeleton) pair, uploaded once, read for
/// every instance. 208 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BoneRetarget {
    /// The source bone whose channels drive this bone; -1 for none (the bone keeps its target
    /// reference local).
    pub source: i32,
    /// A [`crate::TranslationMode`] as `u32` (`MODE_*` in `clip.wgsl`).
    pub mode: u32,
    /// [`RETARGET_ORIENT`].
    pub flags: u32,
    /// AnimationScaled: `|T_tgt| / |T_src|`, or exactly 1 where `|T_src| ≤ SMALL`.
    pub length_ratio: f32,
    /// The retarget source's local reference: the value of channels a clip lacks.
    pub source_ref: Xform,
    /// The target's local reference.
    pub target_ref: Xform,
    /// AnimationRelative: `(R_src⁻¹ ⊗ R_tgt, T_tgt − T_src, S_tgt ∘ safeRecip(S_src))`.
    pub relative: Xform,
    /// OrientAndScale: `Δq = findBetweenNormals(ŝ, t̂)`.
    pub orient_rotation: [f32; 4],
    /// OrientAndScale: `s` in xyz, `k = |t| / |s|` in w.
    pub orient_source: [f32; 4],
    /// OrientAndScale: `t` in xyz.
    pub orient_target: [f32; 4],
}

/// [`BoneRetarget::flags`]: the bone has an OrientAndScale entry.
pub(crate) const RETARGET_ORIENT: u32 = 1;

/// 16-byte words of one [`BoneRetarget`] in the retarget table.
pub(crate) const RETARGET_WORDS: u32 = (size_of::<BoneRetarget>() / 16) as u32;
/// 16-byte words of one [`BonePlan`] in the retarget table.
pub(crate) const PLAN_WORDS: u32 = (size_of::<BonePlan>() / 16) as u32;

/// One target bone's retarget plan (`docs/pose-math.md`, "Retargeting between characters"),
/// built once per (source, target) pair by `retarget::RetargetPlan` and run by `apply_plan`
/// in `clip.wgsl` (CPU twin: `drive::plan::apply_bone`). Quaternions are `[x, y, z, w]`.
/// 272 bytes. The retarget table holds a character source as its records (one per target
/// bone), the source skeleton's reference locals ([`Xform`]s, the value of channels a clip
/// lacks) and its path entries (four `u32` per word).
///
/// `X` is the composition of the sampled source locals on the path, entries
/// `path_start .. path_start + path_len`: `X = identity`, then `X = compose(L_e, X)` per entry,
/// `L_e` the local of source bone `e & PATH_BONE` (unmirrored by the entry's mirror bits,
/// [`PATH_MIRROR_SHIFT`]), inverted where `PATH_INVERSE` is set;
/// `Xc` is `X` after the first `t_cap` entries. The chord sub-paths follow: `chord_len`
/// entries (`Y`), then `parent_chord_len` (`Z`, or `X` itself when 0). `Sc` is the smallest
/// rotation taking `swing` to `Y.T`'s direction (identity when `swing` is zero), `Sp` likewise
/// from `parent_swing` and `Z.T`.
///
/// Rotation (`modes & PLAN_ROTATION`), with `E = pre ⊗ ((Sp⁻¹ ⊗ X.R) ⊗ Sc) ⊗ post` and `B` =
/// `E`, or its twist about `twist_axis` when that is not zero: reference `outer_post`; mapped
/// `E`; segment end `outer_pre ⊗ B^(−fraction) ⊗ E ⊗ outer_post` (`B^0` left out); chain share
/// `outer_pre ⊗ B^fraction ⊗ outer_post`. Translation: `t_const`, plus where
/// [`PLAN_DRIVEN`] is set `t_inv_scale ∘ (t_rot · Sp⁻¹ · (t_k · X.T − t_sub) + W)`, with
/// `W = t_par_inv · D · t_w` where `t_cap > 0`, `D = t_wpre ⊗ Xc.R ⊗ t_wpost` (its twist about
/// `t_yaw_axis` when that is not zero). Scale: `scale`. Where `modes` holds a mirror pattern
/// `D` ([`PLAN_MIRROR_SHIFT`]), the rotation `R` becomes `D · R · D` and the translation
/// `D ∘ T` last.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BonePlan {
    pub pre: [f32; 4],
    pub post: [f32; 4],
    pub outer_pre: [f32; 4],
    pub outer_post: [f32; 4],
    pub twist_axis: [f32; 3],
    pub fraction: f32,
    pub t_rot: [f32; 4],
    pub t_inv_scale: [f32; 3],
    pub t_k: f32,
    pub t_w: [f32; 3],
    /// The first path entry, counted in `u32`s (from the plan's own path list; the library
    /// rebases it onto the retarget table).
    pub path_start: u32,
    pub t_const: [f32; 3],
    pub path_len: u32,
    pub t_sub: [f32; 3],
    pub chord_len: u32,
    pub swing: [f32; 3],
    pub parent_chord_len: u32,
    pub parent_swing: [f32; 3],
    /// The rotation mode (`PLAN_REFERENCE`, `PLAN_MAPPED`, `PLAN_CHAIN`, `PLAN_SEGMENT_END`) |
    /// [`PLAN_DRIVEN`] | the parent frame's mirror pattern << [`PLAN_MIRROR_SHIFT`].
    pub modes: u32,
    pub scale: [f32; 3],
    pub t_cap: u32,
    pub t_wpre: [f32; 4],
    pub t_wpost: [f32; 4],
    pub t_par_inv: [f32; 4],
    pub t_yaw_axis: [f32; 3],
    /// The word where the source's reference locals start in the retarget table (0 in a
    /// plan; the library sets it).
    pub source_rest: u32,
}

/// [`BonePlan::modes`]: the bits of the rotation mode.
pub(crate) const PLAN_ROTATION: u32 = 3;
/// Rotation mode: the (aligned) reference rotation.
pub(crate) const PLAN_REFERENCE: u32 = 0;
/// Rotation mode: follows the counterpart's rotation from rest.
pub(crate) const PLAN_MAPPED: u32 = 1;
/// Rotation mode: a share of a chain's rotation.
pub(crate) const PLAN_CHAIN: u32 = 2;
/// Rotation mode: follows the counterpart, less the shares of the chain bones above it.
pub(crate) const PLAN_SEGMENT_END: u32 = 3;
/// [`BonePlan::modes`]: the translation follows the source (driven or a translation delta).
pub(crate) const PLAN_DRIVEN: u32 = 4;
/// A path entry: the source local is inverted (the path goes up).
pub(crate) const PATH_INVERSE: u32 = 1 << 31;
/// A path entry's bits that name the source bone.
pub(crate) const PATH_BONE: u32 = (1 << PATH_MIRROR_SHIFT) - 1;
/// A path entry's mirror bits start here (0 for a bone of an unmirrored frame): the sign
/// pattern (`math::mirror::sign_pattern`) of the bone's parent's component-space reference
/// scale, then (3 bits up) that of the bone's own local scale. The local is read as the
/// unmirrored twin's (`docs/pose-math.md`, "Mirrored characters in retarget plans").
pub(crate) const PATH_MIRROR_SHIFT: u32 = 24;
/// A path entry's mirror bits, both patterns: set where the local is read as its twin's.
pub(crate) const PATH_MIRRORED: u32 = 0x3f << PATH_MIRROR_SHIFT;
/// The bits of one mirror sign pattern (`math::mirror::sign_pattern`, an axis a bit) in a path
/// entry or a plan record's `modes`, and its mask.
pub(crate) const MIRROR_PATTERN_BITS: u32 = 3;
pub(crate) const MIRROR_PATTERN: u32 = (1 << MIRROR_PATTERN_BITS) - 1;
/// [`BonePlan::modes`]: the sign pattern of the target bone's parent frame (of an IK goal
/// record: of its goal frame) starts here, 3 bits (0: unmirrored); the record's rotation and
/// translation are reflected by it last.
pub(crate) const PLAN_MIRROR_SHIFT: u32 = 4;
/// [`BonePlan::modes`] of an IK goal record: the plan has no goal for this chain (the source
/// lacks the bone, or its path is too long); the chain keeps its pose.
pub(crate) const PLAN_NO_GOAL: u32 = 8;
