use glam::{Quat, Vec3};

use super::optimize::vertex_error;
use super::*;
use crate::procedural::humanoid_asset;
use crate::{component_space, BoneTrack, Channel, Interpolation};

/// The worst error of `c`'s decoded keys against `clip` at `c`'s own key times (decoded
/// through `sample`, not the optimizer), as a fraction of the height.
fn decoded_error(skeleton: &Skeleton, clip: &Clip, c: &CompressedClip) -> f32 {
    error_at(skeleton, clip, c, c.times())
}

#[test]
fn procedural_clips_round_trip_within_the_threshold_and_shrink() {
    let asset = humanoid_asset();
    for clip in &asset.clips {
        let c = CompressedClip::new(&asset.skeleton, clip, DEFAULT_TOLERANCE).unwrap();
        let e = decoded_error(&asset.skeleton, clip, &c);
        assert!(e <= DEFAULT_TOLERANCE, "{}: error {e}", clip.name());
        assert!(c.worst_error() <= DEFAULT_TOLERANCE);
        assert!(
            c.packed_bytes() < c.raw_bytes(),
            "{}: {} >= {}",
            clip.name(),
            c.packed_bytes(),
            c.raw_bytes()
        );
    }
}

/// A root and a tip one unit above it.
fn root_and_tip() -> Skeleton {
    Skeleton::new(vec![
        crate::Bone::new("root", None, Transform::IDENTITY),
        crate::Bone::new(
            "tip",
            Some(0),
            Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE),
        ),
    ])
    .unwrap()
}

/// A two-bone skeleton and a clip of 40 keys: bone 0 turns about Y, bone 1 holds `hold`.
fn two_bones(hold: Option<Transform>) -> (Skeleton, Clip) {
    let skeleton = root_and_tip();
    let times: Vec<f32> = (0..40).map(|k| k as f32 / 30.0).collect();
    let turn = times
        .iter()
        .map(|t| Quat::from_rotation_y(t * 2.0))
        .collect();
    let root = BoneTrack {
        rotation: Some(Channel::new(times.clone(), turn, Interpolation::Linear)),
        ..BoneTrack::default()
    };
    let tip = hold.map_or_else(BoneTrack::default, |h| BoneTrack::holding(&h));
    let clip = Clip::new("turn", &skeleton, vec![root, tip]).unwrap();
    (skeleton, clip)
}

#[test]
fn constant_and_reference_tracks_cost_no_bits() {
    let held = Transform::new(Vec3::new(0.0, 1.0, 0.5), Quat::IDENTITY, Vec3::ONE);
    let (skeleton, clip) = two_bones(Some(held));
    let c = CompressedClip::new(&skeleton, &clip, DEFAULT_TOLERANCE).unwrap();
    let rates: Vec<Rate> = c.rates().collect();
    // The root's translation and scale and the tip's rotation and scale are the reference;
    // the tip's translation is constant, away from the reference.
    assert!(matches!(rates[0], Rate::Bits(_)), "{rates:?}");
    assert_eq!(
        rates[1..],
        [
            Rate::Reference,
            Rate::Reference,
            Rate::Reference,
            Rate::Constant,
            Rate::Reference
        ]
    );
    assert!(decoded_error(&skeleton, &clip, &c) <= DEFAULT_TOLERANCE);
    let t = c.sample(1, 0.3);
    assert!((t.translation - held.translation).length() < 1e-6);
}

#[test]
fn bad_thresholds_are_typed_errors_naming_the_clip() {
    let (skeleton, clip) = two_bones(None);
    for bad in [0.0, -1e-4, f32::NAN, f32::INFINITY, 1.5] {
        match CompressedClip::new(&skeleton, &clip, bad) {
            Err(Error::CompressTolerance { clip, value }) => {
                assert_eq!(clip, "turn");
                assert!(value.to_bits() == bad.to_bits());
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    let other = humanoid_asset().skeleton;
    let err = CompressedClip::new(&other, &clip, DEFAULT_TOLERANCE).unwrap_err();
    assert!(matches!(err, Error::BadRequest { .. }), "{err}");
}

#[test]
fn a_track_that_cannot_meet_the_threshold_keeps_full_precision() {
    // A root that jumps across a huge range: 16 bits of a 1e6 extent cannot keep 1e-9 of the
    // height, so the track is raw and decodes exactly.
    let skeleton = root_and_tip();
    let times: Vec<f32> = (0..20).map(|k| k as f32).collect();
    let values = times
        .iter()
        .map(|t| Vec3::new(t * 5e4 + 0.123, 0.0, 0.0))
        .collect();
    let root = BoneTrack {
        translation: Some(Channel::new(times, values, Interpolation::Linear)),
        ..BoneTrack::default()
    };
    let clip = Clip::new("far", &skeleton, vec![root, BoneTrack::default()]).unwrap();
    let c = CompressedClip::new(&skeleton, &clip, 1e-9).unwrap();
    assert_eq!(c.rates().nth(1), Some(Rate::Raw));
    assert_eq!(c.worst_error(), 0.0);
    for (k, &t) in c.times().iter().enumerate() {
        let want = clip.tracks()[0].translation.as_ref().unwrap().values[k];
        assert_eq!(c.sample(0, t).translation, want);
    }
}

#[test]
fn bit_stream_reads_back_what_was_written() {
    let mut w = pack::BitWriter::default();
    let items = [
        (5u32, 3u32),
        (0xffff, 16),
        (1, 1),
        (0xdead_beef, 32),
        (77, 7),
    ];
    items.iter().for_each(|&(v, n)| w.push(v, n));
    let mut at = 0;
    for &(v, n) in &items {
        assert_eq!(crate::cpu::packed::read_bits(&w.words[..], at, n), v);
        at += n;
    }
}

#[test]
fn additive_clips_keep_the_identity_delta_and_meet_the_threshold_on_the_reference_pose() {
    let (skeleton, plain) = two_bones(None);
    let clip = Clip::new_additive(
        "turn_delta",
        &skeleton,
        plain.tracks().to_vec(),
        crate::AdditiveSpace::Local,
    )
    .unwrap();
    let c = CompressedClip::new(&skeleton, &clip, DEFAULT_TOLERANCE).unwrap();
    let rates: Vec<Rate> = c.rates().collect();
    assert!(matches!(rates[0], Rate::Bits(_)), "{rates:?}");
    assert!(
        rates[1..].iter().all(|r| *r == Rate::Reference),
        "{rates:?}"
    );
    let height = skeleton_height(&skeleton);
    for &t in c.times() {
        // The missing channels decode to the identity delta (scale delta 0).
        assert_eq!(c.sample(1, t), crate::math::delta::IDENTITY_DELTA);
        let on_rest = |locals: Vec<Transform>| {
            let posed: Vec<Transform> = locals
                .iter()
                .zip(skeleton.rest())
                .map(|(d, r)| crate::math::delta::apply_delta(r, d))
                .collect();
            component_space(skeleton.parents(), &posed)
        };
        let want = on_rest(clip.pose_at(&[crate::math::delta::IDENTITY_DELTA; 2], t));
        let got = on_rest(c.pose_at(t));
        for (a, b) in want.iter().zip(&got) {
            assert!(vertex_error(a, b, height / 60.0) <= DEFAULT_TOLERANCE * height);
        }
    }
}

/// A root-and-tip clip keyed at `times`, the root turning smoothly about Y.
fn turning(times: Vec<f32>) -> (Skeleton, Clip) {
    let skeleton = root_and_tip();
    let turn = times
        .iter()
        .map(|t| Quat::from_rotation_y(t * 1.5))
        .collect();
    let tracks = vec![
        BoneTrack {
            rotation: Some(Channel::new(times, turn, Interpolation::Linear)),
            ..BoneTrack::default()
        },
        BoneTrack::default(),
    ];
    let clip = Clip::new("turn", &skeleton, tracks).unwrap();
    (skeleton, clip)
}

/// The worst error of `c` against `clip` at `times`, in component space at the virtual
/// vertices, as a fraction of the height.
fn error_at(skeleton: &Skeleton, clip: &Clip, c: &CompressedClip, times: &[f32]) -> f32 {
    let height = skeleton_height(skeleton);
    let mut worst = 0.0f32;
    for &t in times {
        let want = component_space(skeleton.parents(), &clip.pose_at(skeleton.rest(), t));
        let got = component_space(skeleton.parents(), &c.pose_at(t));
        for (a, b) in want.iter().zip(&got) {
            worst = worst.max(vertex_error(a, b, height / 60.0));
        }
    }
    worst / height
}

#[test]
fn dense_keys_off_a_grid_go_onto_one_and_sparse_keys_keep_their_times() {
    // 120 keys at 30 Hz, each jittered by up to a millisecond: a grid replays them.
    let jittered: Vec<f32> = (0..120)
        .map(|k| k as f32 / 30.0 + if k % 2 == 1 { 1e-3 } else { 0.0 })
        .collect();
    let (skeleton, clip) = turning(jittered.clone());
    let c = CompressedClip::new(&skeleton, &clip, DEFAULT_TOLERANCE).unwrap();
    assert!(c.uniform(), "the dense clip kept its times");
    assert_eq!(
        c.raw_bytes(),
        2 * 120 * RAW_BYTES_PER_KEY,
        "raw counts the clip's own keys"
    );
    let e = error_at(&skeleton, &clip, &c, &jittered);
    assert!(e <= DEFAULT_TOLERANCE, "error at the original keys {e}");
    assert!(c.worst_error() <= DEFAULT_TOLERANCE);
    // Four keys, far apart and irregular, with a sharp turn between: no grid of 4 or 7 keys
    // replays them, so they stay.
    let (skeleton, _) = turning(vec![0.0]);
    let sparse = vec![0.0, 0.1, 0.9, 1.0];
    let turn = [0.0f32, 2.5, -2.5, 0.0].map(Quat::from_rotation_y).to_vec();
    let tracks = vec![
        BoneTrack {
            rotation: Some(Channel::new(sparse.clone(), turn, Interpolation::Linear)),
            ..BoneTrack::default()
        },
        BoneTrack::default(),
    ];
    let clip = Clip::new("snap", &skeleton, tracks).unwrap();
    let c = CompressedClip::new(&skeleton, &clip, DEFAULT_TOLERANCE).unwrap();
    assert!(!c.uniform(), "the sparse clip was moved onto a grid");
    assert_eq!(c.times(), &sparse[..]);
    assert!(error_at(&skeleton, &clip, &c, &sparse) <= DEFAULT_TOLERANCE);
}

/// The sampling stage's shared keys (`DecodedKeys`): a key is decoded for sharing the second
/// time it is asked for, plays every bone to the bit as the bone-by-bone decode does, and past
/// the capacity the cache starts afresh.
#[test]
fn shared_keys_come_on_the_second_ask_play_alike_and_start_afresh_when_full() {
    use crate::cpu::packed::DecodedKeys;
    use crate::layout::PackedHeader;
    let asset = humanoid_asset();
    let clip = &asset.clips[0];
    let c = CompressedClip::new(&asset.skeleton, clip, DEFAULT_TOLERANCE).unwrap();
    let (w, times) = (&c.block[..], &c.times[..]);
    let h = PackedHeader::read(w, 0);
    let bones = h.descriptors() as usize;
    assert_eq!(bones, asset.skeleton.len());
    let duration = times[times.len() - 1] - times[0];
    let (early, late) = (
        h.cursor(w, times, times[0] + 0.1 * duration),
        h.cursor(w, times, times[0] + 0.7 * duration),
    );
    assert!(
        early.keys[1] < late.keys[0],
        "{:?} {:?}",
        early.keys,
        late.keys
    );
    // Room for two keys: one pair.
    let mut keys = DecodedKeys::with_capacity(2 * bones);
    assert!(
        keys.pair(w, 0, &early).is_none(),
        "the first ask decodes nothing"
    );
    let [a, b] = keys
        .pair(w, 0, &early)
        .expect("the second ask shares the keys");
    for bone in 0..bones {
        let fill = c.reference[bone];
        let d = h.bone(w, bone as u32);
        let alone = early.local(w, d, fill, true);
        let shared = early.local_decoded(d, [&a[bone], &b[bone]], fill, true);
        assert_eq!(shared, alone, "bone {bone}");
    }
    assert!(
        keys.pair(w, 0, &early).is_some(),
        "kept while there is room"
    );
    assert!(keys.pair(w, 0, &late).is_none());
    assert!(
        keys.pair(w, 0, &late).is_some(),
        "the late pair replaces the early one"
    );
    assert!(
        keys.pair(w, 0, &early).is_none(),
        "the early pair was let go"
    );
}
