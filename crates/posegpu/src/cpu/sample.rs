//! CPU twin of `shaders/sample.wgsl`: every instance's local pose ([`super::local_pose`])
//! written to the locals, and its deferred layers' deltas to their slots.

use super::local_pose::{sample_instance, Scratch};
use crate::batch::PoseBatch;
use crate::layout::Xform;
use crate::library::AnimLibrary;

/// The stage: local transforms of every instance, instance-major (`locals[i * bones + b]`),
/// and the deferred layers' deltas (`deltas[(head.slot + slot) * bones + b]`). The batch must
/// have been validated ([`AnimLibrary::validate_batch`]).
pub(crate) fn run(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    locals: &mut [Xform],
    deltas: &mut [Xform],
) {
    let bones = lib.bone_count();
    let mut scratch = Scratch::default();
    for (i, out) in locals.chunks_exact_mut(bones).enumerate() {
        let h = &batch.heads[i];
        let d = &mut deltas[h.slot as usize * bones..(h.slot + h.slots) as usize * bones];
        sample_instance(lib, batch, i, out, d, &mut scratch);
    }
}
