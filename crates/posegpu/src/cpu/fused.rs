//! CPU twin of `shaders/fused.wgsl`: for batches with no stage between sampling and the
//! hierarchy, each instance's local pose ([`super::local_pose`]), then the hierarchy of up to
//! four instances at once ([`super::hierarchy::run_group`]). The fused pass walks level by
//! level where the twin walks parents first; each bone is composed with its parent alike, so
//! the order changes no bit.

use super::hierarchy;
use super::local_pose::{sample_instance, Scratch};
use crate::batch::PoseBatch;
use crate::layout::{Mat3x4, Xform};
use crate::library::AnimLibrary;

/// Instances `first..` of a batch whose plan is fused, one to four of them: `locals`,
/// `component` and `skinning` hold one entry per bone of each.
pub(super) fn run_group(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    first: usize,
    (locals, component, skinning): (&mut [Xform], &mut [Xform], &mut [Mat3x4]),
    scratch: &mut Scratch,
) {
    for (i, l) in locals.chunks_mut(lib.bone_count()).enumerate() {
        sample_instance(lib, batch, first + i, l, &mut [], scratch);
    }
    // The inverse bind matrices as the fused pass reads them: the skeleton's section of the
    // retarget table, each row a field-major run.
    let (data, s) = (lib.data(), lib.data().skeleton_section);
    let bones = data.table_bones();
    let row = |r: u32| s.inverse_bind_word(bones, 0, r) as usize;
    let rows = [row(0), row(1), row(2)];
    let inverse_bind = |b: usize| bytemuck::cast(rows.map(|r| data.retarget[r + b]));
    let outputs = (&*locals, component, skinning);
    hierarchy::run_group(lib, outputs, inverse_bind, &mut scratch.poses);
}
