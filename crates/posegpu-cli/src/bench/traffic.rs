//! The compulsory-traffic model: the bytes each GPU pass must move between memory and the chip
//! in one frame, counted from what its shader reads and writes. A model, not a hardware
//! counter: every per-instance byte is counted once, and the tables every instance shares
//! (keys, channels, retarget caches, parents, inverse binds) once per pass, as if the caches
//! held them after the first read. Values a shader reads back after writing them itself (the
//! hierarchy's parent transforms) are not counted.
//!
//! Per pass, for `n` instances of `b` bones (`shaders/*.wgsl`):
//! - **sample** (`sample.wgsl`, `clip.wgsl`): reads every frame entry (a 16-byte head per
//!   instance, a 16-byte header per layer, 16 bytes per clip sample) and the sampling tables
//!   (clips, channels, key times and values, retarget caches) once;
//!   writes the local transform (48 B per bone) and, per deferred mesh-space layer, a 48-byte
//!   weighted delta per bone. The resolve pass before it is counted here too: it reads the
//!   frame entries and writes a 16-byte key search per clip sample, which sampling reads.
//! - **layers** (`layers.wgsl`, only when some instance has a mesh-space layer): reads heads
//!   and layer headers, the parents once; per bone of an instance with deferred layers, reads
//!   and writes its local transform (48 + 48 B); per deferred slot per bone, reads the delta
//!   (48 B) and writes the mesh rotations before and after it back (32 B).
//! - **hierarchy** (`hierarchy.wgsl`): reads parents (4 B) and inverse binds (48 B) per bone
//!   once, per bone of every instance reads its local transform and writes its component
//!   transform and skinning matrix (48 + 48 + 48 B); built in place over the locals when they
//!   are not kept, and without the component writes' cost counted apart.
//! - **fused** (`fused.wgsl`, for batches with no mesh-space layer on skeletons of at most 320
//!   bones): reads what sampling reads and the hierarchy's tables once, and writes only the
//!   outputs kept: locals (48 B), component transforms (48 B), skinning matrices (48 B as
//!   rows, 64 B as 4x4 columns). Counted in `sample`; `hierarchy` is 0.

use posegpu::{AnimLibrary, Mat3x4, Outputs, PoseBatch, Xform};

const XFORM: u64 = std::mem::size_of::<Xform>() as u64;
const MAT: u64 = std::mem::size_of::<Mat3x4>() as u64;
const ENTRY: u64 = 16;
const PARENT: u64 = 4;
/// What the layer stage writes back into a delta slot per bone (two `vec4<f32>` rotations).
const SLOT_WRITEBACK: u64 = 32;
/// The largest skeleton the fused pass takes.
const FUSED_BONES: u64 = 320;

/// Bytes one frame moves, per pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassBytes {
    pub sample: u64,
    /// 0 when the layer pass does not run.
    pub layers: u64,
    pub hierarchy: u64,
}

impl PassBytes {
    pub fn total(&self) -> u64 {
        self.sample + self.layers + self.hierarchy
    }

    /// `[sample, layers, hierarchy, total]`, each divided by the bones evaluated.
    pub fn per_bone(&self, bones_evaluated: u64) -> [f64; 4] {
        let b = bones_evaluated.max(1) as f64;
        [self.sample, self.layers, self.hierarchy, self.total()].map(|x| x as f64 / b)
    }
}

/// The bytes each pass moves to evaluate `batch` with `lib` (the module's rules), with the
/// fused pass where `fused` and the batch allows it, keeping `outputs`.
pub fn model(lib: &AnimLibrary, batch: &PoseBatch, fused: bool, outputs: Outputs) -> PassBytes {
    let bones = lib.bone_count() as u64;
    let n = batch.len() as u64;
    let frame = batch.frame_words() as u64 * ENTRY;
    // The resolve pass: the entries read again, a search per sample written and read back.
    let samples = (batch.frame_words() - batch.len() - batch.layer_count()) as u64;
    let frame = 2 * frame + 2 * samples * ENTRY;
    let hierarchy_tables = bones * (PARENT + MAT);
    // Everything uploaded once that is not the hierarchy's: what the sampling pass binds.
    let sample_tables = lib.asset_bytes().saturating_sub(hierarchy_tables);
    let skin = outputs.skinning.bytes();
    if fused && !batch.has_mesh_layers() && bones <= FUSED_BONES {
        let kept = u64::from(outputs.locals) * XFORM + u64::from(outputs.component) * XFORM;
        return PassBytes {
            sample: frame + sample_tables + hierarchy_tables + n * bones * (kept + skin),
            layers: 0,
            hierarchy: 0,
        };
    }
    let slots = u64::from(batch.slot_count());
    let sample = frame + sample_tables + n * bones * XFORM + slots * bones * XFORM;
    let layers = if batch.has_mesh_layers() {
        let headers = batch.layer_count() as u64;
        let deferred = batch.deferred_instance_count() as u64;
        (n + headers) * ENTRY
            + bones * PARENT
            + deferred * bones * 2 * XFORM
            + slots * bones * (XFORM + SLOT_WRITEBACK)
    } else {
        0
    };
    let hierarchy = hierarchy_tables + n * bones * (XFORM + XFORM + skin);
    PassBytes {
        sample,
        layers,
        hierarchy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};
    use posegpu::{
        AdditiveSpace, Bone, BoneTrack, Channel, Clip, ClipSample, Interpolation, Skeleton,
        Transform,
    };

    /// A 2-bone skeleton whose clip keys bone 0's translation at 0 and 1 s and bone 1's rotation
    /// at 0, 0.5 and 1 s, and an additive clip keying bone 1's rotation at 0 and 1 s (times that
    /// the library stores once, shared with bone 0's).
    fn tiny(space: AdditiveSpace) -> AnimLibrary {
        let rest = Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE);
        let skeleton = Skeleton::new(vec![
            Bone::new("a", None, rest),
            Bone::new("b", Some(0), rest),
        ])
        .unwrap();
        let linear = Interpolation::Linear;
        let turn = Quat::from_rotation_x(0.3);
        let clip = Clip::new(
            "c",
            &skeleton,
            vec![
                BoneTrack {
                    translation: Some(Channel::new(vec![0.0, 1.0], vec![Vec3::Y; 2], linear)),
                    ..Default::default()
                },
                BoneTrack {
                    rotation: Some(Channel::new(
                        vec![0.0, 0.5, 1.0],
                        vec![Quat::IDENTITY, turn, Quat::IDENTITY],
                        linear,
                    )),
                    ..Default::default()
                },
            ],
        )
        .unwrap();
        let delta = BoneTrack {
            rotation: Some(Channel::new(vec![0.0, 1.0], vec![turn; 2], linear)),
            ..Default::default()
        };
        let additive =
            Clip::new_additive("d", &skeleton, vec![BoneTrack::default(), delta], space).unwrap();
        AnimLibrary::new(&skeleton, &[clip, additive]).unwrap()
    }

    fn batch(space: AdditiveSpace) -> PoseBatch {
        let mut batch = PoseBatch::new();
        for i in 0..3 {
            let t = i as f32 * 0.3;
            batch
                .push_clip(0, t, true)
                .additive(space, 0.5, &[ClipSample::new(1, t, true)]);
        }
        batch
    }

    // Counted by hand for 3 instances of 2 bones, one clip sample and one additive layer each:
    // frame: 3 heads + 3 x (base header, sample, layer header, sample) = 15 entries = 240 B;
    // clips 2 x 16 = 32 B; channels 2 clips x 2 bones x 3 x 16 = 192 B, a reference word per
    // clip 2 x 16 = 32 B and the bone-keys words 2 clips x 2 bones x 16 = 64 B; key times
    // {0, 1} and {0, 0.5, 1} = 5 x 4 = 20 B; values 2 + 3 + 2 keys x 16 = 112 B; retarget
    // caches of the target itself 2 x 208 = 416 B; parents 2 x 4 = 8 B; inverse binds 2 x 48
    // = 96 B. The resolve pass reads the frame again and writes 6 searches that sampling
    // reads: 240 + 2 x 6 x 16 B.
    const FRAME: u64 = 240 + 240 + 2 * 6 * 16;
    const SAMPLE_TABLES: u64 = 32 + 192 + 32 + 64 + 20 + 112 + 416;

    #[test]
    fn a_local_layer_costs_the_sampling_pass_nothing_per_bone() {
        let space = AdditiveSpace::Local;
        let bytes = model(&tiny(space), &batch(space), false, Outputs::ALL);
        assert_eq!(bytes.sample, FRAME + SAMPLE_TABLES + 3 * 2 * 48);
        assert_eq!(bytes.layers, 0);
        assert_eq!(bytes.hierarchy, 8 + 96 + 3 * 2 * (48 + 48 + 48));
        let [s, l, h, total] = bytes.per_bone(6);
        assert_eq!(l, 0.0);
        assert!((total - (s + h)).abs() < 1e-9, "{total} {s} {h}");
        assert_eq!(h, (104.0 + 864.0) / 6.0);
    }

    #[test]
    fn a_mesh_layer_adds_a_delta_per_bone_and_the_layer_pass() {
        let space = AdditiveSpace::Mesh;
        let bytes = model(&tiny(space), &batch(space), false, Outputs::ALL);
        // One delta slot per instance: 48 B per bone written by sampling.
        assert_eq!(
            bytes.sample,
            FRAME + SAMPLE_TABLES + 3 * 2 * 48 + 3 * 2 * 48
        );
        // Heads and 2 layer headers per instance, parents, locals read and written, the delta
        // read and its two rotations written back.
        let headers = (3 + 3 * 2) * 16;
        assert_eq!(
            bytes.layers,
            headers + 8 + 3 * 2 * (48 + 48) + 3 * 2 * (48 + 32)
        );
        assert_eq!(bytes.hierarchy, 8 + 96 + 3 * 2 * 144);
    }

    #[test]
    fn the_fused_pass_moves_the_outputs_kept_and_no_locals_between_passes() {
        let space = AdditiveSpace::Local;
        let (lib, batch) = (tiny(space), batch(space));
        let tables = FRAME + SAMPLE_TABLES + 8 + 96;
        let all = model(&lib, &batch, true, Outputs::ALL);
        assert_eq!(all.sample, tables + 3 * 2 * (48 + 48 + 48));
        assert_eq!((all.layers, all.hierarchy), (0, 0));
        let kept = model(&lib, &batch, true, Outputs::COMPONENT_AND_SKINNING);
        assert_eq!(kept.sample, tables + 3 * 2 * (48 + 48));
        let columns = Outputs::SKINNING.with_skinning(posegpu::SkinningLayout::Columns4x4);
        assert_eq!(
            model(&lib, &batch, true, columns).sample,
            tables + 3 * 2 * 64
        );
        // The separate passes move the locals twice more (written, read back).
        let separate = model(&lib, &batch, false, Outputs::ALL);
        assert_eq!(separate.total() - all.total(), 3 * 2 * 48);
        // A mesh-space layer needs the layer stage: never fused.
        let mesh = AdditiveSpace::Mesh;
        let (lib, batch) = (tiny(mesh), super::tests::batch(mesh));
        assert!(model(&lib, &batch, true, Outputs::ALL).layers > 0);
    }

    #[test]
    fn shared_tables_fade_out_of_the_per_bone_figure_with_instances() {
        let lib = posegpu::procedural::humanoid_asset();
        let lib = AnimLibrary::new(&lib.skeleton, &lib.clips).unwrap();
        let per_bone = |n: usize| {
            let b = PoseBatch::from_instances(&crate::workload::crowd(&lib, n, 0.0));
            model(&lib, &b, false, Outputs::ALL).per_bone((n * lib.bone_count()) as u64)[3]
        };
        // One clip sample per instance: 48 + 144 B per bone, plus 48 B of frame per instance (a
        // head, a layer header, a sample) that the resolve pass reads again, and its key search
        // written and read back (2 x 16 B).
        let floor = 192.0 + (2.0 * 48.0 + 32.0) / 67.0;
        let sizes = [1, 10, 1000, 1_000_000].map(per_bone);
        assert!(sizes.windows(2).all(|w| w[0] > w[1]), "{sizes:?}");
        assert!(
            (per_bone(1_000_000) - floor).abs() < 0.1,
            "{}",
            per_bone(1_000_000)
        );
    }
}
