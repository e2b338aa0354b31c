//! CPU twin of `shaders/fused.wgsl`: for batches with no stage between sampling and the
//! hierarchy, an instance's local pose ([`super::local_pose`]), then its hierarchy walked level by
//! level (bones `d` steps below a root once level `d - 1` is done), the order the fused pass
//! composes in. Each bone is composed with its parent exactly as the parents-first walk of
//! [`super::hierarchy`] does, so both give the same bits (a test checks it).

use super::hierarchy::skinning_matrix;
use super::local_pose::{sample_instance, Scratch};
use crate::batch::PoseBatch;
use crate::frame_plan::fused_group_instances;
use crate::layout::{Mat3x4, Xform};
use crate::library::AnimLibrary;
use crate::Transform;

/// Instance `instance` of a batch whose plan is fused: `locals`, `component` and `skinning` hold
/// one entry per bone.
pub(super) fn run_instance(
    lib: &AnimLibrary,
    batch: &PoseBatch,
    instance: usize,
    (locals, component, skinning): (&mut [Xform], &mut [Xform], &mut [Mat3x4]),
    scratch: &mut Scratch,
) {
    sample_instance(lib, batch, instance, locals, &mut [], scratch);
    // The skeleton as the fused pass reads it: its section of the retarget table, the tasks of
    // a block's first instance (whose pose indices are bone indices).
    let (data, s) = (lib.data(), lib.data().skeleton_section);
    let bones = data.table_bones();
    let g = fused_group_instances(bones);
    // The task table's words as u32s, as `table_u32` reads them (one slice, not an index
    // computation and two bounds checks per task).
    let tasks: &[u32] = bytemuck::cast_slice(&data.retarget[s.tasks as usize..]);
    // Composed as `Transform`s, each pose converted from and to an `Xform` once, not at every
    // compose that reads or writes it.
    let poses = &mut scratch.poses;
    poses.clear();
    poses.extend(locals.iter().map(|x| Transform::from(*x)));
    for d in 1..s.levels {
        let lo = data.table_u32(s.level_starts, d);
        let n = data.table_u32(s.level_starts, d + 1) - lo;
        let first = (g * lo) as usize;
        for &task in &tasks[first..first + n as usize] {
            let (b, p) = ((task & 0xffff) as usize, (task >> 16) as usize);
            poses[b] = Transform::compose(&poses[b], &poses[p]);
        }
    }
    // The inverse bind matrices' three rows, each a field-major run of the section.
    let row = |r: u32| {
        let first = s.inverse_bind_word(bones, 0, r) as usize;
        &data.retarget[first..first + component.len()]
    };
    let rows = (row(0).iter().zip(row(1)).zip(row(2))).map(|((a, b), c)| [*a, *b, *c]);
    for (((cs, m), rows), pose) in component.iter_mut().zip(skinning).zip(rows).zip(&*poses) {
        let rows: [[f32; 4]; 3] = bytemuck::cast(rows);
        *cs = (*pose).into();
        *m = skinning_matrix(bytemuck::cast_ref(&rows), pose);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::hierarchy;

    #[test]
    fn level_order_gives_the_parents_first_walk_bit_for_bit() {
        for (seed, bones) in [(1, 1), (2, 17), (3, 67), (4, 150), (5, 320)] {
            let asset = crate::procedural::random_asset(seed, bones, 2);
            let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
            let mut batch = PoseBatch::new();
            batch.push_clip(0, 0.4, true);
            batch.push_clip(1, 0.1, false);
            let options = crate::frame_plan::FrameOptions {
                fuse: true,
                crowd: None,
            };
            assert!(crate::frame_plan::FramePlan::of_batch(&lib, &batch, &options).is_fused());
            for i in 0..batch.len() {
                let mut l = vec![Xform::default(); bones];
                let (mut c, mut s) = (l.clone(), vec![[0.0; 12]; bones]);
                let mut scratch = Scratch::default();
                run_instance(&lib, &batch, i, (&mut l, &mut c, &mut s), &mut scratch);
                let (mut c2, mut s2) = (l.clone(), s.clone());
                hierarchy::run_instance(&lib, &l, &mut c2, &mut s2);
                assert_eq!(c, c2, "{bones} bones, instance {i}");
                assert_eq!(s, s2, "{bones} bones, instance {i}");
            }
        }
    }
}
