//! Bad input gets a typed error naming what is wrong, never a panic.

use glam::{Quat, Vec3};
use posegpu::{
    AnimLibrary, Bone, BoneTrack, Channel, Clip, ClipId, ClipSample, CpuEvaluator, Error,
    Interpolation, Poses, Skeleton, Transform,
};

fn bone(name: &str, parent: Option<usize>) -> Bone {
    Bone::new(
        name,
        parent,
        Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE),
    )
}

fn chain() -> Skeleton {
    Skeleton::new(vec![
        bone("a", None),
        bone("b", Some(0)),
        bone("c", Some(1)),
    ])
    .unwrap()
}

fn rotation_track(times: Vec<f32>, values: Vec<Quat>) -> BoneTrack {
    BoneTrack {
        rotation: Some(Channel::new(times, values, Interpolation::Linear)),
        ..Default::default()
    }
}

fn clip_with(track: BoneTrack) -> Result<Clip, Error> {
    let s = chain();
    Clip::new(
        "bad",
        &s,
        vec![BoneTrack::default(), track, BoneTrack::default()],
    )
}

#[test]
fn parents_out_of_order_are_rejected_and_reordered_on_request() {
    let bones = vec![
        bone("child", Some(1)),
        bone("root", None),
        bone("leaf", Some(0)),
    ];
    let err = Skeleton::new(bones.clone()).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::ParentOrder {
                bone: 0,
                parent: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("child"));
    // from_unordered keeps every bone and the mapping back to the given order.
    let s = Skeleton::from_unordered(bones).unwrap();
    assert_eq!(s.names(), ["root", "child", "leaf"]);
    assert_eq!(s.parents(), [-1, 0, 1]);
    assert_eq!(s.source_index(), [1, 0, 2]);
    // An already ordered list is kept as it is.
    let s = Skeleton::from_unordered(vec![
        bone("r", None),
        bone("x", Some(0)),
        bone("y", Some(0)),
    ])
    .unwrap();
    assert_eq!(s.source_index(), [0, 1, 2]);
}

#[test]
fn broken_hierarchies() {
    let err = Skeleton::new(vec![bone("a", None), bone("b", Some(7))]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::ParentOutOfRange {
                bone: 1,
                parent: 7,
                ..
            }
        ),
        "{err}"
    );
    let err = Skeleton::from_unordered(vec![
        bone("r", None),
        bone("a", Some(2)),
        bone("b", Some(1)),
    ])
    .unwrap_err();
    assert!(matches!(err, Error::Cycle { .. }), "{err}");
    let err = Skeleton::new(vec![bone("a", None), bone("a", Some(0))]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DuplicateBoneName {
                first: 0,
                second: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(
        Skeleton::new(vec![]).unwrap_err(),
        Error::EmptySkeleton
    ));
    let mut b = bone("nan", None);
    b.rest.translation.x = f32::NAN;
    assert!(matches!(
        Skeleton::new(vec![b]).unwrap_err(),
        Error::NonFinite { .. }
    ));
    // A negative scale is a mirrored bone, not an error (the matrix path evaluates it).
    let mut b = bone("neg", None);
    b.rest.scale.y = -1.0;
    Skeleton::new(vec![b]).unwrap();
    let err = chain()
        .with_reference_pose("short", vec![Transform::IDENTITY])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::PoseLength {
                expected: 3,
                got: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_nan_in_a_key_names_clip_bone_and_channel() {
    let err = clip_with(rotation_track(
        vec![0.0, 1.0],
        vec![Quat::IDENTITY, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)],
    ))
    .unwrap_err();
    assert!(matches!(&err, Error::NonFinite { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("'bad'") && msg.contains("'b'") && msg.contains("rotation"),
        "{msg}"
    );
    let err = clip_with(rotation_track(vec![0.0, f32::NAN], vec![Quat::IDENTITY; 2])).unwrap_err();
    assert!(err.to_string().contains("key time 1"), "{err}");
}

#[test]
fn malformed_channels() {
    let err = clip_with(rotation_track(
        vec![0.0, 1.0],
        vec![Quat::IDENTITY, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)],
    ))
    .unwrap_err();
    assert!(matches!(err, Error::ZeroQuaternion { .. }), "{err}");
    let err = clip_with(rotation_track(vec![1.0, 0.5], vec![Quat::IDENTITY; 2])).unwrap_err();
    assert!(
        matches!(err, Error::TimesDecrease { index: 1, .. }),
        "{err}"
    );
    let err = clip_with(rotation_track(vec![0.0, 1.0, 2.0], vec![Quat::IDENTITY; 2])).unwrap_err();
    assert!(
        matches!(
            err,
            Error::KeyCountMismatch {
                times: 3,
                values: 2,
                ..
            }
        ),
        "{err}"
    );
    let err = clip_with(rotation_track(vec![], vec![])).unwrap_err();
    assert!(matches!(err, Error::EmptyChannel { .. }), "{err}");
    let scale = BoneTrack {
        scale: Some(Channel::new(
            vec![0.0],
            vec![Vec3::new(1.0, -2.0, 1.0)],
            Interpolation::Step,
        )),
        ..Default::default()
    };
    // A negative scale key mirrors the bone; a NaN one is refused.
    clip_with(scale).unwrap();
    let nan_scale = BoneTrack {
        scale: Some(Channel::new(
            vec![0.0],
            vec![Vec3::new(1.0, f32::NAN, 1.0)],
            Interpolation::Step,
        )),
        ..Default::default()
    };
    assert!(matches!(
        clip_with(nan_scale).unwrap_err(),
        Error::NonFinite { .. }
    ));
}

#[test]
fn an_empty_clip_and_a_clip_for_another_skeleton() {
    let err = clip_with(BoneTrack::default()).unwrap_err();
    assert!(
        matches!(&err, Error::EmptyClip { clip } if clip == "bad"),
        "{err}"
    );
    let err = Clip::new("short", &chain(), vec![BoneTrack::default()]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TrackCount {
                expected: 3,
                got: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn unknown_animations_and_bad_instances() {
    let s = chain();
    let clip = clip_with(rotation_track(vec![0.0, 1.0], vec![Quat::IDENTITY; 2])).unwrap();
    let lib = AnimLibrary::new(&s, &[clip]).unwrap();
    assert_eq!(lib.find_clip("bad").unwrap(), ClipId(0));
    assert_eq!(lib.find_clip("0").unwrap(), ClipId(0));
    let err = lib.find_clip("walk").unwrap_err();
    assert!(
        matches!(err, Error::UnknownAnimation { .. }) && err.to_string().contains("bad"),
        "{err}"
    );
    assert!(lib.find_clip("1").is_err());

    let mut poses = Poses::default();
    let cpu = CpuEvaluator::new(&lib);
    let err = cpu
        .evaluate(
            &[
                ClipSample::new(0, 0.0, false),
                ClipSample::new(3, 0.0, false),
            ],
            &mut poses,
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::BadInstance { instance: 1, .. }),
        "{err}"
    );
    let err = cpu
        .evaluate(&[ClipSample::new(0, f32::NAN, true)], &mut poses)
        .unwrap_err();
    assert!(
        matches!(err, Error::BadInstance { instance: 0, .. }) && err.to_string().contains("NaN"),
        "{err}"
    );
}

#[test]
fn a_bone_or_clip_out_of_range_is_a_bad_request_naming_the_library() {
    // Not any instance's fault: the error says what the call asked and what the library has.
    let skeleton = chain();
    let clip = clip_with(rotation_track(vec![0.0, 1.0], vec![Quat::IDENTITY; 2])).unwrap();
    let lib = AnimLibrary::new(&skeleton, &[clip]).unwrap();
    let cpu = CpuEvaluator::new(&lib);
    assert!(cpu.sample_bone(0, 1, 0.5, false).is_ok());
    for (clip, bone, time) in [(1, 0, 0.5), (0, 9, 0.5), (0, 0, f32::NAN)] {
        let e = cpu.sample_bone(clip, bone, time, false).unwrap_err();
        assert!(matches!(e, Error::BadRequest { .. }), "{e:?}");
        assert!(e.to_string().contains("the library has 1 clips and"), "{e}");
    }
}
