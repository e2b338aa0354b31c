//! Compressed keys on the real files of `../shared/anim-data`: every clip decodes within the
//! threshold, and motion capture shrinks.

mod common;

use posegpu::component_space;
use posegpu::compress::{skeleton_height, CompressedClip, DEFAULT_TOLERANCE};

/// The worst error of `c` against `clip` at every key, decoded through `sample`, measured at
/// the bone origins and the virtual vertices (height / 60), as a fraction of the height.
fn decoded_error(asset: &posegpu::Asset, clip: &posegpu::Clip, c: &CompressedClip) -> f32 {
    let s = &asset.skeleton;
    let height = skeleton_height(s);
    let d = height / 60.0;
    let mut worst = 0.0f32;
    for &t in c.times() {
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
fn real_clips_round_trip_within_the_threshold() {
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
            // The decoder and the optimizer agree, within f32 noise.
            assert!(e <= DEFAULT_TOLERANCE * 1.01, "{rel} {}: {e}", clip.name());
            if mocap {
                let ratio = c.raw_bytes() as f64 / c.packed_bytes() as f64;
                assert!(ratio > 4.0, "{rel} {}: {ratio}", clip.name());
            }
        }
    }
}
