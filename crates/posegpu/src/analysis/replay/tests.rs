//! The replay against hand counts, and the traffic aims of the fused pass.

use glam::{Quat, Vec3};

use super::*;
use crate::model::{Bone, BoneTrack, Channel, Clip, Interpolation, Skeleton};
use crate::Transform;

/// A root and its child, and a clip that moves the root.
fn two_bones() -> AnimLibrary {
    let rest = Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE);
    let skeleton = Skeleton::new(vec![
        Bone::new("a", None, rest),
        Bone::new("b", Some(0), rest),
    ])
    .unwrap();
    let keys = vec![Vec3::ZERO, Vec3::X];
    let track = BoneTrack {
        translation: Some(Channel::new(vec![0.0, 1.0], keys, Interpolation::Linear)),
        ..Default::default()
    };
    let clip = Clip::new("c", &skeleton, vec![track, BoneTrack::default()]).unwrap();
    AnimLibrary::new(&skeleton, &[clip]).unwrap()
}

// The hierarchy of 3 instances of 2 bones, counted by hand. One warp, 3 lanes; lane i at
// bone b reads its local at (2i + b) * 48 + 16k: for b = 0, k = 0 offsets 0, 96, 192 are
// sectors 0, 3, 6 in lines 0, 0, 1 (3 sectors, 2 lines, 48 bytes: 2 compulsory). Over the
// six loads of the locals: 18 sectors, 2 + 2 + 2 + 2 + 3 + 3 = 14 lines, 12 compulsory;
// the same for the component and skinning stores. Parents: one 4-byte word per bone for
// every lane (2, 2, 2). The parent's component (bone 1 only): 9, 6, 6. Inverse binds: six
// loads every lane shares (6, 6, 6).
#[test]
fn the_hierarchy_replays_as_counted_by_hand() {
    let lib = two_bones();
    let batch = PoseBatch::from_instances(&[crate::ClipSample::new(0, 0.5, true); 3]);
    let passes = replay_traffic(&lib, &batch, FusePolicy::Separate, Outputs::ALL).unwrap();
    let h = passes.iter().find(|p| p.pass == "hierarchy").unwrap();
    assert_eq!(h.sectors, 18 + 2 + 9 + 18 + 6 + 18);
    assert_eq!(h.lines, 14 + 2 + 6 + 14 + 6 + 14);
    assert_eq!(h.compulsory_sectors, 12 + 2 + 6 + 12 + 6 + 12);
    // Each lane's loads: six of its locals, two parents, three of the parent's component,
    // six of the inverse binds.
    assert_eq!(h.loads, 3 * (6 + 2 + 3 + 6));
    // DRAM: the locals (288 bytes: 9 sectors), the parents (1), the inverse binds (96
    // bytes: 3) read; the component transforms and skinning matrices (9 + 9) written. The
    // parent's component, written before in the pass, is not read from DRAM.
    assert_eq!(h.dram_bytes, (9 + 1 + 3 + 9 + 9) * 32);
    // Skinning only: built in place, the component stores land on the locals' sectors.
    let skin = replay_traffic(&lib, &batch, FusePolicy::Separate, Outputs::SKINNING).unwrap();
    let h = skin.iter().find(|p| p.pass == "hierarchy").unwrap();
    assert_eq!(h.dram_bytes, (9 + 1 + 3 + 9 + 9) * 32);
}

/// A mesh-space layer takes the separate passes and the layer pass, whatever the plan;
/// what the replay does not model is refused, not guessed.
#[test]
fn mesh_layers_replay_three_passes_and_unmodelled_batches_are_refused() {
    let asset = crate::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..40 {
        let layer = [crate::ClipSample::new(2, 0.1 * i as f32, true)];
        batch.push_clip(i % 2, 0.05 * i as f32, true).blend(
            crate::AdditiveSpace::Mesh,
            0.5,
            &layer,
        );
    }
    let passes = replay_traffic(&lib, &batch, FusePolicy::Fused, Outputs::ALL).unwrap();
    let names: Vec<_> = passes.iter().map(|p| p.pass).collect();
    assert_eq!(names, ["resolve", "sample", "layers", "hierarchy"]);
    let layers = &passes[2];
    // The layer pass reads and writes each instance's locals and its delta slot.
    assert!(layers.dram_bytes >= 40 * 67 * 48 * 3, "{layers:?}");
    assert!(layers.sectors >= layers.compulsory_sectors, "{layers:?}");
    batch.clear();
    batch
        .push_clip(0, 0.0, true)
        .ik(crate::IkWeights::default());
    assert!(replay_traffic(&lib, &batch, FusePolicy::Fused, Outputs::ALL).is_none());
}

/// Retargeting between characters (a plan from the humanoid onto a variant of other
/// proportions and rest orientations): replayed, and its record reads coalesced as the UE
/// modes' are.
#[test]
fn plan_clips_replay_with_coalesced_records() {
    use crate::retarget::{PlanOptions, RetargetPlan};
    let source = crate::procedural::humanoid_asset();
    let target = crate::model::Asset {
        skeleton: crate::procedural::humanoid_variant(7),
        clips: Vec::new(),
        nodes: None,
        frame: crate::model::AssetFrame::Y_UP,
    };
    let plan = RetargetPlan::new(&source, &target, &PlanOptions::default()).unwrap();
    let mut builder = AnimLibrary::builder(&target.skeleton);
    let id = builder
        .add_character_source("humanoid", &source, &plan)
        .unwrap();
    builder.add_clips_from(id, &source.clips).unwrap();
    let lib = builder.build();
    let mut batch = PoseBatch::new();
    for i in 0..320 {
        batch.push_clip(i % 4, i as f32 * 0.01, true);
    }
    let fused = replay_traffic(&lib, &batch, FusePolicy::Fused, Outputs::SKINNING).unwrap();
    let f = fused.iter().find(|p| p.pass == "fused").unwrap();
    let bones = (batch.len() * lib.bone_count()) as f64;
    let figures = format!(
        "{:.2} sectors/bone, {:.2} compulsory, x{:.2}, {:.1} DRAM B/bone",
        f.sectors as f64 / bones,
        f.compulsory_sectors as f64 / bones,
        f.sector_ratio(),
        f.dram_bytes as f64 / bones
    );
    eprintln!("plan, fused, skinning only: {figures}");
    assert_eq!(f.pass, "fused");
    // The plan reads several source bones per target bone: more per bone than the UE
    // modes, still within 1.3x of what its instructions need.
    assert!(f.compulsory_sectors as f64 / bones > 15.0, "{figures}");
    assert!(f.sector_ratio() <= 1.3, "{figures}");
}

/// The aims for the fused pass, on the humanoid (67 bones) playing its clips: at most 1.3x
/// the compulsory sectors, at most 110 DRAM bytes per bone with component and skinning
/// kept and 60 with skinning alone; the separate passes miss the DRAM aim.
#[test]
fn the_fused_pass_meets_the_traffic_aims_the_separate_passes_miss() {
    let asset = crate::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for i in 0..320 {
        let t = i as f32 * 0.01;
        batch.push_clip(i % 4, t, true);
    }
    let bones = (batch.len() * lib.bone_count()) as f64;
    let per_bone = |p: &[PassTraffic]| p.iter().map(|p| p.dram_bytes).sum::<u64>() as f64 / bones;
    let ratio = |p: &[PassTraffic]| {
        p.iter().map(|p| p.sectors).sum::<u64>() as f64
            / p.iter().map(|p| p.compulsory_sectors).sum::<u64>() as f64
    };
    let kept = Outputs::COMPONENT_AND_SKINNING;
    let fused = replay_traffic(&lib, &batch, FusePolicy::Fused, kept).unwrap();
    let separate = replay_traffic(&lib, &batch, FusePolicy::Separate, kept).unwrap();
    let skin = replay_traffic(&lib, &batch, FusePolicy::Fused, Outputs::SKINNING).unwrap();
    let figures = format!(
        "fused {:.1} B/bone x{:.2}, separate {:.1} B/bone x{:.2}, skinning {:.1} B/bone",
        per_bone(&fused),
        ratio(&fused),
        per_bone(&separate),
        ratio(&separate),
        per_bone(&skin)
    );
    let names: Vec<_> = fused.iter().map(|p| p.pass).collect();
    assert_eq!(names, ["resolve", "fused"], "{figures}");
    assert!(per_bone(&fused) <= 110.0, "{figures}");
    assert!(per_bone(&skin) <= 60.0, "{figures}");
    assert!(per_bone(&separate) > 110.0, "{figures}");
    assert!(ratio(&fused) <= 1.3, "{figures}");
    assert!(ratio(&fused) < ratio(&separate), "{figures}");
}

/// Compressed clips replay from their packed blocks (`packed.wgsl`), never from channel words
/// the clip table does not hold, and move fewer key bytes per bone than the same clips plain.
#[test]
fn compressed_clips_replay_with_fewer_key_bytes() {
    use crate::compress::{Compression, DEFAULT_TOLERANCE};
    let asset = crate::procedural::humanoid_asset();
    let build = |compress: bool| {
        let mut b = AnimLibrary::builder(&asset.skeleton);
        if compress {
            b.compress(Some(Compression::all(DEFAULT_TOLERANCE).unwrap()));
        }
        b.add_clips(&asset.clips).unwrap();
        b.build()
    };
    let (plain, packed) = (build(false), build(true));
    let mut batch = PoseBatch::new();
    for i in 0..320 {
        batch.push_clip(i % asset.clips.len() as u32, i as f32 * 0.013, true);
    }
    let bones = (batch.len() * plain.bone_count()) as f64;
    // The sampling pass's DRAM bytes per bone: the same records, frame words and locals'
    // stores either way; the keys (and the clip table's channel words) differ.
    let sample = |lib: &AnimLibrary| {
        let r = replay_traffic(lib, &batch, FusePolicy::Separate, Outputs::ALL).unwrap();
        let sample = r.iter().find(|p| p.pass == "sample").unwrap();
        (sample.dram_bytes as f64 / bones, sample.sector_ratio())
    };
    let (plain_bytes, plain_ratio) = sample(&plain);
    let (packed_bytes, packed_ratio) = sample(&packed);
    let figures = format!(
        "plain {plain_bytes:.1} B/bone x{plain_ratio:.2}, \
         compressed {packed_bytes:.1} B/bone x{packed_ratio:.2}"
    );
    eprintln!("sample pass: {figures}");
    assert!(packed_bytes < plain_bytes, "{figures}");
    // The fused pass replays too.
    let fused = replay_traffic(&packed, &batch, FusePolicy::Fused, Outputs::SKINNING).unwrap();
    assert_eq!(fused[1].pass, "fused");
    // And plans over compressed clips (`source_local`).
    use crate::retarget::{PlanOptions, RetargetPlan};
    let target = crate::model::Asset {
        skeleton: crate::procedural::humanoid_variant(7),
        clips: Vec::new(),
        nodes: None,
        frame: crate::model::AssetFrame::Y_UP,
    };
    let plan = RetargetPlan::new(&asset, &target, &PlanOptions::default()).unwrap();
    let mut builder = AnimLibrary::builder(&target.skeleton);
    builder.compress(Some(Compression::all(DEFAULT_TOLERANCE).unwrap()));
    let id = builder
        .add_character_source("humanoid", &asset, &plan)
        .unwrap();
    builder.add_clips_from(id, &asset.clips).unwrap();
    let lib = builder.build();
    let fused = replay_traffic(&lib, &batch, FusePolicy::Fused, Outputs::SKINNING).unwrap();
    let f = &fused[1];
    assert_eq!(f.pass, "fused");
    eprintln!("compressed plan, fused: x{:.2}", f.sector_ratio());
    assert!(f.compulsory_sectors > 0, "{f:?}");
}

/// `two_bones` with a rotation on bone b keyed at 0, 0.5 and 1, and its translation on bone a
/// keyed at the same times where `shared`, else at 0 and 1.
fn two_bones_turning(shared: bool) -> AnimLibrary {
    let skeleton = two_bones().skeleton().clone();
    let (times, moves) = if shared {
        (vec![0.0, 0.5, 1.0], vec![Vec3::ZERO, Vec3::X, Vec3::Y])
    } else {
        (vec![0.0, 1.0], vec![Vec3::ZERO, Vec3::X])
    };
    let turn = vec![
        Quat::IDENTITY,
        Quat::from_rotation_z(0.5),
        Quat::from_rotation_z(1.0),
    ];
    let tracks = vec![
        BoneTrack {
            translation: Some(Channel::new(times, moves, Interpolation::Linear)),
            ..Default::default()
        },
        BoneTrack {
            rotation: Some(Channel::new(
                vec![0.0, 0.5, 1.0],
                turn,
                Interpolation::Linear,
            )),
            ..Default::default()
        },
    ];
    let clip = Clip::new("c", &skeleton, tracks).unwrap();
    AnimLibrary::new(&skeleton, &[clip]).unwrap()
}

/// The dependent-load depth of the keys, counted by hand. `two_bones_turning` with its two
/// channels on different times: one bone moves on the clip's reference times and one does
/// not. From its sample's frame entry (depth 0), the first reads the clip word (1), its
/// bone-keys word (2), then its keys (3), the search coming from the resolve pass. The other
/// reads its channel words after the bone-keys word (3), the ends of its times (4), one
/// halving at t = 0.25 (5), the two keys found (6), then its keys (7). Each bone loads two
/// keys: a mean of 5. With both channels on the same times (their ends shared), every key is
/// three loads from its sample (the aim of issue 38), alone or blended.
#[test]
fn key_loads_are_as_deep_as_counted_by_hand() {
    let depths = |lib: &AnimLibrary, batch: &PoseBatch, policy| {
        let passes = replay_traffic(lib, batch, policy, Outputs::ALL).unwrap();
        let p = passes.iter().find(|p| p.key_loads > 0).unwrap();
        (p.key_loads, p.key_depth_max, p.mean_key_depth())
    };
    let single = PoseBatch::from_instances(&[crate::ClipSample::new(0, 0.25, true); 3]);
    let mut blended = PoseBatch::new();
    for _ in 0..3 {
        blended.push_blend(&[
            crate::ClipSample::new(0, 0.25, true),
            crate::ClipSample::new(0, 0.75, true).with_weight(0.5),
        ]);
    }
    let (own_times, shared) = (two_bones_turning(false), two_bones_turning(true));
    for policy in [FusePolicy::Fused, FusePolicy::Separate] {
        let what = format!("{policy:?}");
        assert_eq!(
            depths(&own_times, &single, policy),
            (3 * 4, 7, 5.0),
            "{what}"
        );
        assert_eq!(
            depths(&own_times, &blended, policy),
            (3 * 8, 7, 5.0),
            "{what}"
        );
        assert_eq!(depths(&shared, &single, policy), (3 * 4, 3, 3.0), "{what}");
        assert_eq!(depths(&shared, &blended, policy), (3 * 8, 3, 3.0), "{what}");
    }
}
