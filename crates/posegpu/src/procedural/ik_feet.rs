//! The embedded humanoid with IK-style feet: the shape of rigs whose foot bones are IK controls
//! hanging from the root (a Quaternius robot's, a KayKit knight's) and carry the foot's mesh.

use crate::error::Result;
use crate::model::{component_space, Asset, AssetFrame, Bone, BoneTrack, Channel, Clip, Skeleton};
use crate::{Interpolation, Transform};

/// `asset` with the bones `feet` (each with the bones below it) re-parented to the skeleton's
/// first root, keeping their world rest, and every clip re-baked at its key times (each bone
/// keyed, linearly) so that each foot goes where it went before: on its shin's end, where the
/// clips kept it there. Inverse bind matrices are kept (the world rest is the same). Additive
/// clips are left out. `skinned` is `asset.frame.skinned`'s replacement.
pub fn with_feet_on_root(
    asset: &Asset,
    feet: &[usize],
    skinned: Option<Vec<bool>>,
) -> Result<Asset> {
    let sk = &asset.skeleton;
    let root = (0..sk.len()).find(|&b| sk.parent(b).is_none()).unwrap_or(0);
    let rest_cs = sk.rest_component();
    let bones: Vec<Bone> = (0..sk.len())
        .map(|b| {
            let (parent, rest) = if feet.contains(&b) && b != root {
                (Some(root), Transform::relative(&rest_cs[b], &rest_cs[root]))
            } else {
                (sk.parent(b), sk.rest()[b])
            };
            Bone {
                inverse_bind: sk.inverse_bind()[b],
                ..Bone::new(sk.names()[b].clone(), parent, rest)
            }
        })
        .collect();
    let skeleton = Skeleton::new(bones)?;
    let mut clips = Vec::new();
    for clip in asset.clips.iter().filter(|c| !c.is_additive()) {
        let times = clip.key_times();
        let poses: Vec<Vec<Transform>> = times
            .iter()
            .map(|&t| {
                let mut locals = clip.pose_at(sk.rest(), t);
                let cs = component_space(sk.parents(), &locals);
                for &f in feet.iter().filter(|&&f| f != root) {
                    locals[f] = Transform::relative(&cs[f], &cs[root]);
                }
                locals
            })
            .collect();
        let keys = |b: usize| poses.iter().map(move |p| p[b]);
        let tracks = (0..sk.len())
            .map(|b| BoneTrack {
                translation: linear(&times, keys(b).map(|x| x.translation).collect()),
                rotation: linear(&times, keys(b).map(|x| x.rotation).collect()),
                scale: linear(&times, keys(b).map(|x| x.scale).collect()),
            })
            .collect();
        clips.push(Clip::new(clip.name(), &skeleton, tracks)?);
    }
    Ok(Asset {
        skeleton,
        clips,
        nodes: asset.nodes.clone(),
        frame: AssetFrame {
            skinned,
            ..asset.frame.clone()
        },
    })
}

/// A channel of `values` at `times`, interpolated linearly.
fn linear<T>(times: &[f32], values: Vec<T>) -> Option<Channel<T>> {
    Some(Channel::new(times.to_vec(), values, Interpolation::Linear))
}

/// [`crate::procedural::humanoid_asset`] with IK-style feet ([`with_feet_on_root`]): `foot_l`
/// and `foot_r` (with their toes) hang from the root, and its clips keep them on the shins.
/// Every bone deforms the mesh (skin weights, as the feet of a rig whose foot meshes ride on
/// its IK controls).
pub fn humanoid_ik_feet_asset() -> Asset {
    let base = super::humanoid_asset();
    let names = base.skeleton.names();
    let feet: Vec<usize> = ["foot_l", "foot_r"]
        .iter()
        .filter_map(|f| names.iter().position(|n| n == f))
        .collect();
    let skinned = Some(vec![true; base.skeleton.len()]);
    with_feet_on_root(&base, &feet, skinned).expect("the humanoid re-parents cleanly")
}
