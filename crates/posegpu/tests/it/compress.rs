//! Compressed keys on the real files of `../shared/anim-data`: every clip plays within the
//! threshold at its keys and between them, and motion capture shrinks.

use crate::common;

use posegpu::component_space;
use posegpu::compress::{skeleton_height, CompressedClip, DEFAULT_TOLERANCE};

/// The worst error of `c` against `clip` at every key of either and a third and halfway of the
/// way to the next, decoded through `sample`, measured at the bone origins and the virtual
/// vertices (height / 60), as a fraction of the height.
fn decoded_error(asset: &posegpu::Asset, clip: &posegpu::Clip, c: &CompressedClip) -> f32 {
    let s = &asset.skeleton;
    let height = skeleton_height(s);
    let d = height / 60.0;
    let mut worst = 0.0f32;
    let own = clip.key_times();
    let times = [&own[..], c.times()].into_iter().flat_map(|keys| {
        let between = keys
            .windows(2)
            .flat_map(|w| [w[0] + (w[1] - w[0]) / 3.0, 0.5 * (w[0] + w[1])]);
        keys.iter().copied().chain(between)
    });
    for t in times {
        let want = component_space(s.parents(), &clip.pose_at(s.rest(), t));
        let got = component_space(s.parents(), &c.pose_at(t));
        for (a, b) in want.iter().zip(&got) {
            for p in [
                glam::Vec3::ZERO,
                glam::Vec3::X * d,
                glam::Vec3::Y * d,
                glam::Vec3::Z * d,
            ] {
                let pa = a.rotation * (a.scale * p) + a.translation;
                let pb = b.rotation * (b.scale * p) + b.translation;
                worst = worst.max(pa.distance(pb));
            }
        }
    }
    worst / height
}

#[test]
fn real_clips_play_within_the_threshold_at_their_keys_and_between() {
    let files = [
        ("bvh/cmu_walk_delfem2.bvh", true),
        ("gltf/khronos/Fox.glb", false),
        ("gltf/kaykit-rig-medium/Med_General.glb", false),
    ];
    for (rel, mocap) in files {
        let path = common::anim_data().join(rel);
        let asset = posegpu::import::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for clip in &asset.clips {
            let c = CompressedClip::new(&asset.skeleton, clip, DEFAULT_TOLERANCE).unwrap();
            let e = decoded_error(&asset, clip, &c);
            // The decoder and the optimizer agree, within f32 noise, and the optimizer
            // measured where the clip is played (Med_General's two Spawn clips played up to
            // 16 times the threshold halfway between keys when it measured at keys only).
            assert!(e <= DEFAULT_TOLERANCE * 1.01, "{rel} {}: {e}", clip.name());
            let played = c.played_error(&asset.skeleton, clip);
            assert!(
                played <= DEFAULT_TOLERANCE * 1.01,
                "{rel} {}: {played}",
                clip.name()
            );
            if mocap {
                let ratio = c.raw_bytes() as f64 / c.packed_bytes() as f64;
                assert!(ratio > 4.0, "{rel} {}: {ratio}", clip.name());
            }
        }
    }
}
