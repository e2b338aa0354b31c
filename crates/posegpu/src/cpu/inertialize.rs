//! CPU twin of `shaders/inertialize.wgsl`: per instance with an inertialized transition, after
//! the pose layers and before IK. On the frame it begins, each bone's offset to the old pose
//! (sampled now and one step earlier) is stored in the instance's state; on every frame of the
//! blend it is added to the new pose as the quintic has it then ([`crate::math::inertia`]).

use super::clip::{KeySearch, Prepared, Records};
use crate::batch::{self, LayerKind};
use crate::layout::{Entry, Head, Xform};
use crate::library::AnimLibrary;
use crate::math::inertia::{apply, start};

/// One instance: `locals` after its pose layers, `state` its stored offsets (one per bone).
pub(super) fn run_instance(
    lib: &AnimLibrary,
    entries: &[Entry],
    head: &Head,
    locals: &mut [Xform],
    state: &mut [Xform],
) {
    let layer = batch::layers(entries, head)
        .map_while(|l| l)
        .find(|l| l.kind == LayerKind::Inertialize);
    let Some([blend_time, elapsed, dt]) = layer.and_then(|l| l.inertialization()) else {
        return;
    };
    if blend_time <= 0.0 {
        return;
    }
    let layer = layer.expect("found above");
    if dt > 0.0 {
        let prepared = |e: &Entry| Prepared::from_entry(lib, e);
        let (now, before) = (prepared(&layer.samples[0]), prepared(&layer.samples[1]));
        // Interrupting a transition: the old pose is the one shown, its offsets included.
        let interrupted = now.weight;
        let (mut a, mut b) = (KeySearch::default(), KeySearch::default());
        for (bone, (x, s)) in locals.iter().zip(state.iter_mut()).enumerate() {
            let mut old = now.bone(lib, bone, &mut a, &Records::default());
            let mut earlier = before.bone(lib, bone, &mut b, &Records::default());
            if interrupted >= 0.0 {
                old = apply(s, &old, interrupted);
                earlier = apply(s, &earlier, (interrupted - dt).max(0.0));
            }
            *s = start(&old, &earlier, &(*x).into(), dt, blend_time);
        }
    }
    for (x, s) in locals.iter_mut().zip(state.iter()) {
        *x = apply(s, &(*x).into(), elapsed).into();
    }
}
