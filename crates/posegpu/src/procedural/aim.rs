//! Aim content for the embedded humanoid: nine single-key aim poses over a yaw × pitch grid,
//! the base of an aim offset (a mesh-space additive blend space).

use glam::{Quat, Vec3};

use super::humanoid::{rx, ry};
use crate::model::{component_space, Clip, Skeleton};

/// Yaw angles (degrees, + turns left) of the humanoid's aim poses.
pub const AIM_YAWS: [f32; 3] = [-90.0, 0.0, 90.0];
/// Pitch angles (degrees, + looks up) of the humanoid's aim poses.
pub const AIM_PITCHES: [f32; 3] = [-45.0, 0.0, 45.0];

/// The rotation that turns the humanoid's forward (+Z) by `yaw` and `pitch` degrees:
/// `Ry(yaw) ⊗ Rx(−pitch)`.
pub fn aim_rotation(yaw: f32, pitch: f32) -> Quat {
    ry(yaw) * rx(-pitch)
}

/// Yaw and pitch (degrees) that point the humanoid's forward along `direction`.
pub fn aim_angles(direction: Vec3) -> (f32, f32) {
    let flat = (direction.x * direction.x + direction.z * direction.z).sqrt();
    (
        direction.x.atan2(direction.z).to_degrees(),
        direction.y.atan2(flat).to_degrees(),
    )
}

/// The humanoid's aim poses: single-key clips named `aim_{yaw}_{pitch}`, one per grid point
/// of [`AIM_YAWS`] × [`AIM_PITCHES`] (index `pitch * 3 + yaw`, the order of a
/// [`crate::blend::space::BlendGrid`]), in which everything from `spine_03` up turns by
/// [`aim_rotation`] in the component frame. `skeleton` needs a `spine_03` bone.
pub fn humanoid_aim_poses(skeleton: &Skeleton) -> crate::Result<Vec<Clip>> {
    let chest = skeleton
        .find("spine_03")
        .ok_or_else(|| crate::Error::UnknownBone {
            what: "aim poses".into(),
            name: "spine_03".into(),
            skeleton: "target",
        })?;
    let rest = skeleton.rest();
    let parent =
        component_space(skeleton.parents(), rest)[skeleton.parent(chest).unwrap_or(0)].rotation;
    let mut clips = Vec::new();
    for pitch in AIM_PITCHES {
        for yaw in AIM_YAWS {
            let mut pose = rest.to_vec();
            // In mesh space the chest becomes R ⊗ M_chest; its local is M_parent⁻¹ ⊗ that.
            pose[chest].rotation =
                (parent.conjugate() * aim_rotation(yaw, pitch) * parent * rest[chest].rotation)
                    .normalize();
            clips.push(Clip::from_pose(
                format!("aim_{yaw}_{pitch}"),
                skeleton,
                &pose,
            )?);
        }
    }
    Ok(clips)
}
