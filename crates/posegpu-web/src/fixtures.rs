//! What the browser tests compare against: scenes described in the package's own words
//! ([`crate::spec`]) and the native CPU twin's numbers for them, written by the
//! `posegpu-web-fixtures` binary as JSON that the test page fetches. The same recipes run in
//! the browser through the JavaScript API, so a difference is the web build's.

use posegpu::compress::Compression;
use posegpu::retarget::RetargetPlan;
use posegpu::{AnimLibrary, Asset, Poses, Skeleton, Transform, Xform};
use serde::{Deserialize, Serialize};

use crate::spec::{AgentSpec, PlanSpec, SampleSpec};

/// Files of `../shared/anim-data` the scenes use.
pub const CHARACTER: &str = "gltf/quaternius/Mech_Mike.glb";
/// Motion capture retargeted onto the character (a walk that travels: root motion).
pub const MOCAP: &str = "bvh/cmu_walk_delfem2.bvh";
/// The clips of the character that the crowd mixes with the retargeted walk.
pub const OWN_CLIPS: [&str; 3] = ["Walk", "Run", "Idle"];

/// Everything the browser tests compare, from one native run.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fixtures {
    /// The character, under anim-data.
    pub character: String,
    /// The motion capture, under anim-data.
    pub mocap: String,
    /// `posegpu check`'s tolerance for the character, relative to its size.
    pub tolerance: f32,
    /// The character skeleton's size (`Skeleton::extent`).
    pub extent: f32,
    /// Component-space transforms of the character's own clips.
    pub poses: PoseFixture,
    /// The character's clips compressed: the CPU twin's output, as hashes.
    pub compressed: CompressedFixture,
    /// The retargeted library compressed.
    pub retargeted: RetargetedFixture,
    /// A crowd stepped with root motion.
    pub crowd: CrowdFixture,
    /// Bad files and the messages posegpu gives for them.
    pub bad_files: Vec<BadFile>,
}

/// A frame of clip samples on the character's own library (`AnimLibrary::new`).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct PoseFixture {
    /// One sample per instance.
    pub samples: Vec<SampleSpec>,
    /// 12 floats per bone and instance ([`xform_floats`]), instance-major.
    pub component: Vec<f32>,
}

/// The character's own clips ([`OWN_CLIPS`]) compressed into a library on its skeleton,
/// evaluated by the CPU twin: glTF keys are read without arithmetic, so every bit is the
/// compressor's and the decoder's.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompressedFixture {
    /// The compression tolerance.
    pub tolerance: f32,
    /// [`compression_fingerprint`] of the clips.
    pub fingerprint: String,
    /// One sample per instance.
    pub samples: Vec<SampleSpec>,
    /// The library's table bytes (`AnimLibrary::asset_bytes`).
    pub asset_bytes: u64,
    /// [`hash`] of the locals, component transforms and skinning matrices.
    pub locals: String,
    /// As above.
    pub component: String,
    /// As above.
    pub skinning: String,
}

/// The retargeted library ([`retargeted_library`]) compressed, evaluated by the CPU twin. The
/// BVH's rotations are built with `sin`/`cos`, whose last bits differ between the platform's
/// libm and wasm's, so its numbers are compared within the tolerance, and its hashes are
/// reported.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetargetedFixture {
    /// One sample per instance.
    pub samples: Vec<SampleSpec>,
    /// 12 floats per bone and instance.
    pub component: Vec<f32>,
    /// [`hash`] of the motion capture exported as `.glb` (its keys as imported).
    pub mocap_glb: String,
    /// [`compression_fingerprint`] of the motion capture's clip.
    pub mocap_fingerprint: String,
}

/// A crowd on the retargeted library (uncompressed), stepped by the CPU twin.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct CrowdFixture {
    /// The instances.
    pub agents: Vec<AgentSpec>,
    /// Each step's seconds.
    pub dt: f32,
    /// Steps taken.
    pub steps: u32,
    /// The placements after them, 10 floats each ([`transform_floats`]).
    pub placements: Vec<f32>,
}

/// Bytes that fail to load: a prefix of a real file, or text.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BadFile {
    /// The name given to `load` (named in the message).
    pub name: String,
    /// `"glb"`, `"gltf"` or `"bvh"`.
    pub format: String,
    /// The first `prefix` bytes of this anim-data file, or none.
    pub file: Option<String>,
    /// How many bytes of `file`.
    pub prefix: usize,
    /// Else these bytes, as text.
    pub text: Option<String>,
    /// posegpu's message.
    pub message: String,
}

/// The retargeting recipe of the tests and the demo: the character's own clips named in
/// [`OWN_CLIPS`], then the motion capture through a character plan (default options), the
/// clips compressed at `compress` when given.
pub fn retargeted_library(
    target: &Asset,
    mocap: &Asset,
    compress: Option<f32>,
) -> Result<AnimLibrary, String> {
    let text = |e: posegpu::Error| e.to_string();
    let mut builder = AnimLibrary::builder(&target.skeleton);
    if let Some(tolerance) = compress {
        builder.compress(Some(Compression::all(tolerance).map_err(text)?));
    }
    builder.add_clips(&own_clips(target)?).map_err(text)?;
    let options = PlanSpec::default().resolve()?;
    let plan = RetargetPlan::new(mocap, target, &options).map_err(text)?;
    let source = (builder.add_character_source("mocap", mocap, &plan)).map_err(text)?;
    builder.add_clips_from(source, &mocap.clips).map_err(text)?;
    Ok(builder.build())
}

/// A hash of what the compressor made of `asset`'s clips named `names` (all when empty) at
/// `tolerance`: each clip's per-track bit rates, packed size and worst error, and its keys
/// decoded (`CompressedClip::pose_at`) at 16 times across it. Equal fingerprints: the same
/// packed keys, decoded to the same bits.
pub fn compression_fingerprint(
    asset: &Asset,
    names: &[String],
    tolerance: f32,
) -> Result<String, String> {
    let mut bytes = Vec::new();
    for clip in
        (asset.clips.iter()).filter(|c| names.is_empty() || names.iter().any(|n| n == c.name()))
    {
        let packed = posegpu::compress::CompressedClip::new(&asset.skeleton, clip, tolerance)
            .map_err(|e| e.to_string())?;
        let rates: Vec<_> = packed.rates().collect();
        bytes.extend(format!("{}: {rates:?} {} ", clip.name(), packed.packed_bytes()).as_bytes());
        bytes.extend(packed.worst_error().to_le_bytes());
        let duration = packed.times().last().copied().unwrap_or(0.0);
        for k in 0..16 {
            for t in packed.pose_at(duration * k as f32 / 15.0) {
                bytes.extend(transform_floats(&t).iter().flat_map(|f| f.to_le_bytes()));
            }
        }
    }
    Ok(hash(&bytes))
}

/// The character's clips named in [`OWN_CLIPS`], in that order (as `addClips` takes names).
pub fn own_clips(asset: &Asset) -> Result<Vec<posegpu::Clip>, String> {
    (OWN_CLIPS.iter())
        .map(|name| {
            (asset.clips.iter())
                .find(|c| c.name() == *name)
                .cloned()
                .ok_or_else(|| format!("the character has no clip {name}"))
        })
        .collect()
}

/// `posegpu check`'s tolerance: 1e-4 times the larger of 1 and the skeleton's reach (its
/// longest chain of bone offsets, straightened) over its size.
pub fn tolerance(skeleton: &Skeleton) -> f32 {
    let mut path = vec![0.0f32; skeleton.len()];
    for i in 0..skeleton.len() {
        if let Some(p) = skeleton.parent(i) {
            path[i] = path[p] + skeleton.rest()[i].translation.length();
        }
    }
    let reach = path.into_iter().fold(0.0, f32::max);
    1e-4 * (reach / skeleton.extent()).max(1.0)
}

/// An `Xform` as 12 floats: rotation `xyzw`, translation `xyz0`, scale `xyz0`.
pub fn xform_floats(x: &Xform) -> [f32; 12] {
    let mut out = [0.0; 12];
    out[..4].copy_from_slice(&x.rotation);
    out[4..8].copy_from_slice(&x.translation);
    out[8..].copy_from_slice(&x.scale);
    out
}

/// A transform as 10 floats: translation `xyz`, rotation `xyzw`, scale `xyz`.
pub fn transform_floats(t: &Transform) -> [f32; 10] {
    let mut out = [0.0; 10];
    out[..3].copy_from_slice(&t.translation.to_array());
    out[3..7].copy_from_slice(&t.rotation.to_array());
    out[7..].copy_from_slice(&t.scale.to_array());
    out
}

/// FNV-1a (64 bits) of `bytes`, as 16 hex digits: equal hashes, equal bits.
pub fn hash(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{h:016x}")
}

/// The three hashes of a CPU evaluation: locals, component, skinning.
pub fn pose_hashes(poses: &Poses) -> [String; 3] {
    [
        hash(bytemuck::cast_slice(&poses.locals)),
        hash(bytemuck::cast_slice(&poses.component)),
        hash(bytemuck::cast_slice(&poses.skinning)),
    ]
}

/// The largest deviation of `actual`'s component transforms (12 floats each) from
/// `expected`'s, as `posegpu::Deviation::relative` measures it: translations over `extent`,
/// rotations up to sign, scales absolute. `None` when their sizes differ.
pub fn component_deviation(actual: &[f32], expected: &[f32], extent: f32) -> Option<f32> {
    if actual.len() != expected.len() || !actual.len().is_multiple_of(12) {
        return None;
    }
    let mut worst = 0.0f32;
    for (a, e) in actual.chunks_exact(12).zip(expected.chunks_exact(12)) {
        let diff = |r: std::ops::Range<usize>, sign: f32| {
            r.map(|k| (a[k] - sign * e[k]).abs()).fold(0.0f32, f32::max)
        };
        let rotation = diff(0..4, 1.0).min(diff(0..4, -1.0));
        let translation = diff(4..7, 1.0) / extent;
        let scale = diff(8..11, 1.0);
        worst = worst.max(rotation).max(translation).max(scale);
    }
    Some(worst)
}

/// The crowd of the tests and the demo: `n` agents on a grid of `columns` columns `spacing`
/// apart (x across, z along), each a synced blend of the retargeted walk (the library's last
/// clip) and one of the character's own clips, in place on its reference pose with the root's
/// motion on the ground plane moving the placement.
pub fn grid_agents(lib: &AnimLibrary, n: usize, columns: usize, spacing: f32) -> Vec<AgentSpec> {
    use crate::spec::{ClipRef, PlacementSpec, PlayerSpec};
    let mocap_clip = lib.clip_count().saturating_sub(1) as u32;
    (0..n)
        .map(|i| {
            let f = i as f32;
            let mix = (i % 4) as f32 * 0.1;
            let own = ClipRef::Name(OWN_CLIPS[i % OWN_CLIPS.len()].into());
            AgentSpec {
                players: vec![
                    PlayerSpec {
                        clip: ClipRef::Index(mocap_clip),
                        start: (f * 0.37) % 2.0,
                        rate: 1.0,
                        looping: true,
                        weight: 1.0 - mix,
                    },
                    PlayerSpec {
                        clip: own,
                        start: 0.0,
                        rate: 1.0,
                        looping: true,
                        weight: mix.max(0.05),
                    },
                ],
                synced: true,
                root_motion: Some("refPose".into()),
                root_axes: Some("groundPlane".into()),
                placement: Some(PlacementSpec {
                    translation: [
                        (i % columns.max(1)) as f32 * spacing,
                        0.0,
                        (i / columns.max(1)) as f32 * spacing,
                    ],
                    rotation: [0.0, 0.0, 0.0, 1.0],
                    scale: [1.0; 3],
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_fnv1a() {
        // FNV-1a 64 of "" and "a", from the reference.
        assert_eq!(hash(b""), "cbf29ce484222325");
        assert_eq!(hash(b"a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn deviations_take_rotations_up_to_sign_and_translations_over_the_size() {
        let x = |r: [f32; 4], t: [f32; 4]| {
            let mut v = r.to_vec();
            v.extend(t);
            v.extend([1.0, 1.0, 1.0, 0.0]);
            v
        };
        let a = x([0.0, 0.0, 0.0, 1.0], [1.0, 2.0, 3.0, 0.0]);
        let flipped = x([0.0, 0.0, 0.0, -1.0], [1.0, 2.0, 3.0, 0.0]);
        assert_eq!(component_deviation(&a, &flipped, 2.0), Some(0.0));
        let moved = x([0.0, 0.0, 0.0, 1.0], [1.0, 2.5, 3.0, 0.0]);
        assert_eq!(component_deviation(&a, &moved, 2.0), Some(0.25));
        assert_eq!(component_deviation(&a, &a[..11], 2.0), None);
    }

    #[test]
    fn the_grid_crowd_resolves_on_a_library() {
        let asset = posegpu::procedural::humanoid_asset();
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        // The grid names the character's own clips: a library without them says so.
        let agents = grid_agents(&lib, 3, 2, 4.0);
        let err = agents[0].resolve(&lib).unwrap_err();
        assert!(err.contains("Walk"), "{err}");
        let spec = &agents[2];
        assert_eq!(
            spec.placement.as_ref().unwrap().translation,
            [0.0, 0.0, 4.0]
        );
        assert_eq!(spec.players[0].clip, crate::spec::ClipRef::Index(3));
    }
}
