//! Layered blend per bone and bone masks: the mask's weights down a branch, blends in local and
//! mesh space against hand-computed poses, masked additives, GPU against CPU on real clips, and
//! bad masks as typed errors.

use crate::common;

use glam::{Quat, Vec3};
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::{
    AdditiveSpace, AnimLibrary, Asset, Bone, Clip, ClipSample, CpuEvaluator, Error, LibraryBuilder,
    MaskBranch, PoseBatch, Poses, Skeleton, Transform,
};

use common::{assert_batch_gpu_matches_cpu, cpu_eval_batch, gpu};

const LOCAL: AdditiveSpace = AdditiveSpace::Local;
const MESH: AdditiveSpace = AdditiveSpace::Mesh;

fn load(rel: &str) -> Asset {
    let path = common::anim_data().join(rel);
    posegpu::import::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn clip(asset: &Asset, name: &str) -> Clip {
    asset.clips[Clip::find(&asset.clips, name).unwrap()].clone()
}

/// root → spine → chest → arm, all along +Y but the arm (+X).
fn skeleton() -> Skeleton {
    let at = |v: Vec3| Transform::new(v, Quat::IDENTITY, Vec3::ONE);
    Skeleton::new(vec![
        Bone::new("root", None, at(Vec3::ZERO)),
        Bone::new("spine", Some(0), at(Vec3::Y)),
        Bone::new("chest", Some(1), at(Vec3::Y * 0.5)),
        Bone::new("arm", Some(2), at(Vec3::X * 0.4)),
    ])
    .unwrap()
}

/// A one-frame clip of `skeleton` whose bones have `rotations` (about Z, radians).
fn pose(skeleton: &Skeleton, name: &str, rotations: [f32; 4]) -> Clip {
    let mut locals = skeleton.rest().to_vec();
    for (x, a) in locals.iter_mut().zip(rotations) {
        x.rotation = Quat::from_rotation_z(a);
    }
    Clip::from_pose(name, skeleton, &locals).unwrap()
}

fn assert_quat(got: Quat, want: Quat, what: &str) {
    assert!(
        got.abs_diff_eq(want, 1e-5) || got.abs_diff_eq(-want, 1e-5),
        "{what}: {got:?}, expected {want:?}"
    );
}

/// The library of the small skeleton: base (root turned 0.6 rad), layer (spine 1.2, arm
/// -0.8) and an additive of the layer; masks: the spine's branch ramped over 2 bones, and the
/// chest's branch at full weight.
fn small_library() -> AnimLibrary {
    let skeleton = skeleton();
    let base = pose(&skeleton, "base", [0.6, 0.0, 0.0, 0.0]);
    let layer = pose(&skeleton, "layer", [0.0, 1.2, 0.0, -0.8]);
    let additive = make_additive(
        "layer additive",
        &skeleton,
        &layer,
        AdditiveBase::ReferencePose,
        LOCAL,
    )
    .unwrap();
    let mut builder = AnimLibrary::builder(&skeleton);
    builder.add_clips(&[base, layer, additive]).unwrap();
    builder
        .add_mask("ramp", &[MaskBranch::new("spine", 2)])
        .unwrap();
    builder
        .add_mask("chest", &[MaskBranch::new("chest", 0)])
        .unwrap();
    builder.build()
}

#[test]
fn a_mask_resolves_to_the_branch_weights_ue_gives() {
    let lib = small_library();
    let ramp = lib.mask("ramp").unwrap();
    assert_eq!(lib.mask_weights(ramp).unwrap(), [0.0, 0.5, 1.0, 1.0]);
    let chest = lib.mask("chest").unwrap();
    assert_eq!(lib.mask_weights(chest).unwrap(), [0.0, 0.0, 1.0, 1.0]);
    assert_eq!(lib.mask("legs"), None);
}

#[test]
fn a_local_blend_follows_the_mask_bone_by_bone() {
    let lib = small_library();
    let mut batch = PoseBatch::new();
    let layer = [ClipSample::new(1, 0.0, false)];
    let ramp = lib.mask("ramp").unwrap();
    batch
        .push_clip(0, 0.0, false)
        .blend(LOCAL, 1.0, &layer)
        .with_mask(ramp);
    // Half the layer's weight: the spine at a quarter, the chest and arm at half.
    batch
        .push_clip(0, 0.0, false)
        .blend(LOCAL, 0.5, &layer)
        .with_mask(ramp);
    // No mask: every bone takes the layer.
    batch.push_clip(0, 0.0, false).blend(LOCAL, 1.0, &layer);
    let poses = cpu_eval_batch(&lib, &batch);
    let z = Quat::from_rotation_z;
    // Mask weight 0: the base's root; 0.5 of 0 → 1.2 is 0.6 (nlerp of a symmetric pair); 1:
    // the layer.
    assert_quat(poses.local(0, 0).rotation, z(0.6), "root");
    assert_quat(poses.local(0, 1).rotation, z(0.6), "spine at half");
    assert_quat(poses.local(0, 3).rotation, z(-0.8), "arm at full");
    // nlerp(0, 1.2, 0.25) is not a quarter of the angle: the spec's rule, written out.
    let nlerp = |a: Quat, b: Quat, w: f32| (a * (1.0 - w) + b * w).normalize();
    assert_quat(
        poses.local(1, 1).rotation,
        nlerp(Quat::IDENTITY, z(1.2), 0.25),
        "spine at a quarter",
    );
    assert_quat(poses.local(1, 3).rotation, z(-0.4), "arm at half");
    assert_quat(poses.local(2, 0).rotation, Quat::IDENTITY, "unmasked root");
    // Translations are blended too; here they agree, so they stay.
    assert!(poses
        .local(0, 3)
        .translation
        .abs_diff_eq(Vec3::X * 0.4, 1e-6));
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "local blend");
    }
}

#[test]
fn a_mesh_space_blend_keeps_the_branch_orientation_in_the_character_space() {
    let lib = small_library();
    let chest = lib.mask("chest").unwrap();
    let layer = [ClipSample::new(1, 0.0, false)];
    let mut batch = PoseBatch::new();
    batch.push_clip(1, 0.0, false); // the layer alone
    for space in [LOCAL, MESH] {
        batch
            .push_clip(0, 0.0, false)
            .blend(space, 1.0, &layer)
            .with_mask(chest);
    }
    let poses = cpu_eval_batch(&lib, &batch);
    let (alone, local, mesh) = (0, 1, 2);
    let (chest, arm) = (2, 3);
    // Mesh space: the chest and arm point where they do in the layer, whatever the base's
    // root (turned 0.6) and the layer's spine (turned 1.2) do above them.
    for bone in [chest, arm] {
        assert_quat(
            poses.component(mesh, bone).rotation,
            poses.component(alone, bone).rotation,
            &format!("mesh-space bone {bone}"),
        );
    }
    // The spine is outside the mask: the base's (the root's turn, no spine turn of its own).
    assert_quat(poses.local(mesh, 1).rotation, Quat::IDENTITY, "spine");
    // Local space: the layer's local rotations under the base's bones above.
    let z = Quat::from_rotation_z;
    assert_quat(
        poses.component(local, arm).rotation,
        z(0.6 - 0.8),
        "local arm",
    );
    assert_quat(
        poses.component(mesh, arm).rotation,
        z(1.2 - 0.8),
        "mesh arm",
    );
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "mesh blend");
    }
}

#[test]
fn a_masked_additive_changes_only_the_bones_of_its_mask() {
    let lib = small_library();
    let chest = lib.mask("chest").unwrap();
    let additive = [ClipSample::new(2, 0.0, false)];
    let mut batch = PoseBatch::new();
    batch.push_clip(0, 0.0, false);
    batch
        .push_clip(0, 0.0, false)
        .additive(LOCAL, 1.0, &additive);
    batch
        .push_clip(0, 0.0, false)
        .additive(LOCAL, 1.0, &additive)
        .with_mask(chest);
    let poses = cpu_eval_batch(&lib, &batch);
    let (base, full, masked) = (0, 1, 2);
    for bone in 0..4 {
        let want = if bone >= 2 { full } else { base };
        let (got, want) = (poses.local(masked, bone), poses.local(want, bone));
        assert_quat(got.rotation, want.rotation, &format!("bone {bone}"));
    }
    // The additive turns the spine, which the mask leaves alone.
    assert!(poses.local(full, 1).rotation.angle_between(Quat::IDENTITY) > 1.0);
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "masked additive");
    }
}

/// A crowd of the Knight walking and idling with an upper-body layer in every form: local and
/// mesh blends, partial weights, deferred behind a mesh additive, masked additives of both
/// spaces and a masked dynamic additive.
#[test]
fn kaykit_upper_body_layers_gpu_matches_cpu() {
    let knight = load("gltf/kaykit-adventurers/Knight.glb");
    let skeleton = &knight.skeleton;
    let names = ["Walking_A", "Idle", "Cheer", "1H_Melee_Attack_Chop"];
    let mut clips: Vec<Clip> = names.iter().map(|n| clip(&knight, n)).collect();
    for space in AdditiveSpace::ALL {
        let base = AdditiveBase::ClipFrame(&clips[1], 0);
        let name = format!("hit {}", space.name());
        let hit = clip(&knight, "Hit_A");
        clips.push(make_additive(&name, skeleton, &hit, base, space).unwrap());
    }
    let mut builder = AnimLibrary::builder(skeleton);
    builder.add_clips(&clips).unwrap();
    let upper = builder
        .add_mask("upper", &[MaskBranch::new("spine", 2)])
        .unwrap();
    let arms = builder
        .add_mask(
            "arms",
            &[
                MaskBranch::new("chest", 0),
                MaskBranch::new("head", -1),
                MaskBranch::new("upperarm.l", -3),
            ],
        )
        .unwrap();
    let lib = builder.build();
    let w = lib.mask_weights(arms).unwrap();
    let bone = |n: &str| skeleton.find(n).unwrap();
    assert_eq!(w[bone("head")], 0.0);
    assert_eq!(w[bone("upperarm.r")], 1.0);
    assert!((w[bone("upperarm.l")] - 2.0 / 3.0).abs() < 1e-6);
    assert_eq!(w[bone("hips")], 0.0);

    let (hit_local, hit_mesh) = (4, 5);
    let mut batch = PoseBatch::new();
    for i in 0..40u32 {
        let t = i as f32 * 0.137;
        let mask = if i % 3 == 0 { arms } else { upper };
        let space = if i % 2 == 0 { LOCAL } else { MESH };
        let weight = [1.0, 0.5, 0.0, 0.8][(i % 4) as usize];
        let layer = [ClipSample::new(2 + i % 2, t * 1.3, true)];
        let mut instance = batch.push_clip(i % 2, t, true);
        if i % 5 == 4 {
            // A mesh additive first: the blend is then applied by the layer stage.
            let s = [ClipSample::new(hit_mesh, t * 0.5, false)];
            instance = instance.additive(MESH, 0.7, &s);
        }
        instance = instance.blend(space, weight, &layer).with_mask(mask);
        match i % 4 {
            1 => {
                let s = [ClipSample::new(hit_local, t * 0.4, false)];
                instance.additive(LOCAL, 1.0, &s).with_mask(upper);
            }
            2 => {
                let s = [ClipSample::new(hit_mesh, t * 0.4, false)];
                instance.additive(MESH, 0.6, &s).with_mask(arms);
            }
            3 => {
                let (p, b) = (ClipSample::new(3, t, true), ClipSample::new(1, 0.0, false));
                instance.dynamic(MESH, 0.9, p, b).with_mask(upper);
            }
            _ => {}
        }
    }
    let poses = cpu_eval_batch(&lib, &batch);
    // What a user sees: the legs walk as the base walks, whatever the upper body does.
    let mut plain = PoseBatch::new();
    plain.push_clip(0, 0.0, true);
    let walking = cpu_eval_batch(&lib, &plain);
    for leg in ["upperleg.l", "lowerleg.r", "foot.l"] {
        let (a, b) = (poses.local(0, bone(leg)), walking.local(0, bone(leg)));
        assert_quat(a.rotation, b.rotation, leg);
    }
    assert_ne!(
        poses.local(0, bone("upperarm.r")).rotation,
        walking.local(0, bone("upperarm.r")).rotation
    );
    if let Some(ctx) = gpu() {
        assert_batch_gpu_matches_cpu(&ctx, &lib, &batch, "knight upper-body layers");
    }
}

fn evaluate(lib: &AnimLibrary, batch: &PoseBatch) -> Result<(), Error> {
    CpuEvaluator::new(lib).evaluate(batch, &mut Poses::default())
}

#[test]
fn bad_masks_and_blend_layers_are_typed_errors() {
    let skeleton = skeleton();
    let mut builder = AnimLibrary::builder(&skeleton);
    builder
        .add_clips(&[pose(&skeleton, "base", [0.0; 4])])
        .unwrap();
    let e = builder
        .add_mask("upper", &[MaskBranch::new("spine_01", 0)])
        .unwrap_err();
    assert!(
        matches!(&e, Error::UnknownBone { name, .. } if name == "spine_01"),
        "{e}"
    );
    builder
        .add_mask("upper", &[MaskBranch::new("spine", 0)])
        .unwrap();
    let e = builder
        .add_mask("upper", &[MaskBranch::new("chest", 0)])
        .unwrap_err();
    assert!(
        matches!(&e, Error::Mask { mask, .. } if mask == "upper"),
        "{e}"
    );
    let e = builder.add_mask("empty", &[]).unwrap_err();
    assert!(matches!(&e, Error::Mask { .. }), "{e}");
    let lib = builder.build();
    let mask = lib.mask("upper").unwrap();

    let check = |batch: PoseBatch, needle: &str| {
        let e = evaluate(&lib, &batch).unwrap_err();
        assert!(
            matches!(&e, Error::BadInstance { instance: 0, .. }) && e.to_string().contains(needle),
            "{e}"
        );
    };
    let s = [ClipSample::new(0, 0.0, false)];
    let mut b = PoseBatch::new();
    b.push_clip(0, 0.0, false).with_mask(mask);
    check(b, "the base takes no mask");
    let mut b = PoseBatch::new();
    b.push_clip(0, 0.0, false).blend(LOCAL, 1.5, &s);
    check(b, "outside 0..=1");
    let mut b = PoseBatch::new();
    b.push_clip(0, 0.0, false).blend(MESH, f32::NAN, &s);
    check(b, "not finite");
    // A mask of another library.
    let other = small_library();
    let foreign = other.mask("chest").unwrap();
    let mut b = PoseBatch::new();
    b.push_clip(0, 0.0, false)
        .blend(LOCAL, 1.0, &s)
        .with_mask(foreign);
    check(b, "not a mask of this library");
    // An additive clip in a blend layer.
    let mut b = PoseBatch::new();
    b.push_clip(0, 0.0, false)
        .blend(LOCAL, 1.0, &[ClipSample::new(2, 0.0, false)]);
    let e = evaluate(&other, &b).unwrap_err();
    assert!(
        e.to_string().contains("the layer needs an ordinary clip"),
        "{e}"
    );
    // The caller's batch is left as it was.
    let mut kept = PoseBatch::new();
    kept.push_clip(0, 0.0, false).blend(LOCAL, 2.0, &s);
    let copy = kept.clone();
    assert!(evaluate(&lib, &kept).is_err());
    assert_eq!(kept, copy);
}

#[test]
fn masks_survive_in_a_library_builder_alongside_sources() {
    // A mask added after a retarget source sits past its table, and still reads its weights.
    let skeleton = skeleton();
    let mut builder: LibraryBuilder = AnimLibrary::builder(&skeleton);
    builder
        .add_clips(&[pose(&skeleton, "a", [0.0, 0.3, 0.0, 0.0])])
        .unwrap();
    builder
        .add_source("same", &skeleton, None, &posegpu::retarget::Rig::default())
        .unwrap();
    let mask = builder
        .add_mask("arm", &[MaskBranch::new("arm", 0)])
        .unwrap();
    let lib = builder.build();
    assert_eq!(lib.mask_weights(mask).unwrap(), [0.0, 0.0, 0.0, 1.0]);
}
