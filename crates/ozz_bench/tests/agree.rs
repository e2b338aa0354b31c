//! posegpu's CPU twin and ozz-animation-rs agree on ozz's playback sample: the model-space
//! matrices of a crowd, frame after frame (forward playback through ozz's sampling contexts,
//! loops included), within 1e-5: the upper 3x3 entries absolutely (unitless: the skeleton has
//! unit scales), translations relative to the skeleton's size (posegpu's `Skeleton::extent`),
//! the sampled locals too, and
//! the skinning matrices (model times the inverse of the rest pose's model matrix) the same way.

use ozz_bench::{compare, extent, posegpu_library, to_posegpu, OzzCrowd, OzzData, PosegpuCrowd};

const TOLERANCE: f32 = 1e-5;

#[test]
fn the_converted_clip_has_ozz_tracks() {
    let data = OzzData::load_default().unwrap();
    let (skeleton, clip) = to_posegpu(&data).unwrap();
    assert_eq!(skeleton.len(), data.skeleton.num_joints());
    assert!(skeleton.len() > 1);
    assert_eq!(clip.duration(), data.duration());
    let keys: usize = clip
        .tracks()
        .iter()
        .map(|t| {
            let (tr, r, s) = (
                t.translation.as_ref(),
                t.rotation.as_ref(),
                t.scale.as_ref(),
            );
            let (tr, r, s) = (tr.unwrap(), r.unwrap(), s.unwrap());
            for c in [tr.times.as_slice(), &r.times, &s.times] {
                assert!(c.len() >= 2, "ozz keeps two keys per track at least");
                assert_eq!(c[0], 0.0);
                assert_eq!(*c.last().unwrap(), data.duration());
            }
            tr.len() + r.len() + s.len()
        })
        .sum();
    // Every key of ozz's but those of the padding tracks (up to 3, two keys each).
    let ozz = data.animation.translations().len()
        + data.animation.rotations().len()
        + data.animation.scales().len();
    let padding = data.animation.num_aligned_tracks() - data.animation.num_tracks();
    assert_eq!(keys + padding * 2 * 3, ozz);
}

#[test]
fn model_matrices_agree_within_1e_5() {
    let data = OzzData::load_default().unwrap();
    let lib = posegpu_library(&data).unwrap();
    let size = extent(&lib);
    let n = 300;
    let mut ozz = OzzCrowd::new(&data, n);
    let mut pg = PosegpuCrowd::new(&lib, n, 1);
    // Forward playback at 60 Hz over more than one loop, then jumps (backwards too).
    let frames = (data.duration() * 60.0 * 1.5) as usize;
    let times = (0..frames)
        .map(|f| f as f32 / 60.0)
        .chain([7.3, 0.5, 100.25, 3.0]);
    let mut checked = 0;
    for (k, t) in times.enumerate() {
        ozz.set_time(t);
        // Every other frame with skinning matrices too (compared with posegpu's).
        if k % 2 == 0 {
            ozz.frame();
        } else {
            ozz.frame_skinned();
        }
        pg.set_time(t);
        pg.frame();
        let a = compare(&ozz, &pg.poses, size);
        assert_eq!(a.matrices, n * lib.bone_count());
        assert!(
            a.worst() <= TOLERANCE,
            "at t = {t}: posegpu and ozz-animation-rs disagree: {a:?} (skeleton size {size})"
        );
        checked += 1;
    }
    assert!(checked > 60);
}

/// The comparison is not vacuous: a crowd a frame apart fails it.
#[test]
fn a_frame_apart_disagrees() {
    let data = OzzData::load_default().unwrap();
    let lib = posegpu_library(&data).unwrap();
    let n = 50;
    let mut ozz = OzzCrowd::new(&data, n);
    let mut pg = PosegpuCrowd::new(&lib, n, 1);
    ozz.set_time(1.0);
    ozz.frame();
    pg.set_time(1.0 + 1.0 / 60.0);
    pg.frame();
    let a = compare(&ozz, &pg.poses, extent(&lib));
    assert!(a.worst() > 100.0 * TOLERANCE, "{a:?}");
}

/// The sampling stage alone (one batch per thread) writes what the frame's locals hold.
#[test]
fn sampling_stage_matches_the_frame() {
    let data = OzzData::load_default().unwrap();
    let lib = posegpu_library(&data).unwrap();
    let n = 101;
    let mut pg = PosegpuCrowd::new(&lib, n, 3);
    pg.set_time(0.7);
    pg.sample();
    pg.frame();
    let sampled: Vec<_> = pg.sampled_locals().copied().collect();
    assert_eq!(sampled, pg.poses.locals);
}
