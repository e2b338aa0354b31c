//! CPU twin of `shaders/hierarchy.wgsl`: the parent-ordered pass from local transforms to
//! component-space transforms and skinning matrices (spec: `docs/pose-math.md`, "Skeleton and
//! hierarchy"). The twin walks four instances at once, one per lane ([`lanes`]): each
//! lane composes as `Transform::compose` does, so the order of the walk changes no bit.

mod lanes;

use crate::layout::{Mat3x4, Xform};
use crate::library::AnimLibrary;
pub(super) use lanes::{Pose, LANES};

/// One to four instances (`locals`, `component` and `skinning` hold one entry per bone of
/// each), composed in a scratch `poses` of a lane group per bone; `inverse_bind(b)` is bone
/// `b`'s inverse bind matrix, from the table the calling pass reads. Lanes past the last
/// instance repeat it and are not written.
pub(super) fn run_group(
    lib: &AnimLibrary,
    (locals, component, skinning): (&[Xform], &mut [Xform], &mut [Mat3x4]),
    inverse_bind: impl Fn(usize) -> Mat3x4,
    poses: &mut Vec<Pose>,
) {
    let bones = lib.bone_count();
    let instances = locals.len() / bones;
    debug_assert!((1..=LANES).contains(&instances));
    let lanes: [usize; LANES] = std::array::from_fn(|k| k.min(instances - 1) * bones);
    poses.clear();
    for (b, &parent) in lib.data().parents.iter().enumerate() {
        let local = Pose::gather(lanes.map(|at| &locals[at + b]));
        // Parents come first (the skeleton is validated so).
        let pose = match usize::try_from(parent) {
            Ok(p) => Pose::compose(&local, &poses[p]),
            Err(_) => local,
        };
        let outputs = pose
            .scatter()
            .into_iter()
            .zip(pose.skinning_matrices(&inverse_bind(b)));
        for (at, (x, m)) in lanes.into_iter().zip(outputs).take(instances) {
            component[at + b] = x;
            skinning[at + b] = m;
        }
        poses.push(pose);
    }
}

/// The stage for every instance (instance-major buffers).
pub(super) fn run(
    lib: &AnimLibrary,
    locals: &[Xform],
    component: &mut [Xform],
    skinning: &mut [Mat3x4],
) {
    let group = LANES * lib.bone_count();
    let inverse_bind = |b: usize| lib.data().inverse_bind[b];
    let mut poses = Vec::new();
    for ((l, c), s) in locals
        .chunks(group)
        .zip(component.chunks_mut(group))
        .zip(skinning.chunks_mut(group))
    {
        run_group(lib, (l, c, s), inverse_bind, &mut poses);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transform;

    /// Groups of one to four instances, and a last group short of four, against each
    /// instance's parents-first walk through `Transform::compose` (bit for bit on x86_64,
    /// where the lanes follow glam's SSE2 operations).
    #[test]
    fn groups_give_each_instance_its_own_walk() {
        let asset = crate::procedural::random_asset(3, 67, 2);
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        let bones = lib.bone_count();
        let mut rng = crate::procedural::Rng(11);
        for instances in 1..=6 {
            let locals: Vec<Xform> = (0..instances * bones)
                .map(|i| {
                    let mut x = Xform::from(asset.skeleton.rest()[i % bones]);
                    x.translation[0] += rng.range(-0.1, 0.1);
                    x.scale[1] *= if rng.chance(0.05) { -1.0 } else { 1.0 };
                    x
                })
                .collect();
            let mut component = vec![Xform::default(); locals.len()];
            let mut skinning = vec![[0.0; 12]; locals.len()];
            run(&lib, &locals, &mut component, &mut skinning);
            for (i, l) in locals.chunks(bones).enumerate() {
                let mut cs: Vec<Transform> = Vec::new();
                for (b, x) in l.iter().enumerate() {
                    let local = Transform::from(*x);
                    let t = match usize::try_from(lib.data().parents[b]) {
                        Ok(p) => Transform::compose(&local, &cs[p]),
                        Err(_) => local,
                    };
                    cs.push(t);
                    let got = Transform::from(component[i * bones + b]);
                    if cfg!(target_arch = "x86_64") {
                        assert_eq!(got, t, "{instances} instances: instance {i}, bone {b}");
                    } else {
                        assert!(got.translation.abs_diff_eq(t.translation, 1e-5));
                    }
                }
            }
        }
    }
}
