//! Inertialization (Bollo, "Inertialization: High-Performance Animation Transitions in Gears of
//! War", GDC 2018; UE5's Inertialization node): a transition switches to the new pose at once
//! and carries the difference to the old pose, and its velocity, as an offset that decays to 0
//! over the blend time with a quintic. Per bone: the translation offset along its direction,
//! the rotation offset about its axis. The GPU twin is `shaders/inertialize.wgsl`. Spec:
//! `docs/pose-math.md`, "Inertialized transitions".

use glam::{Quat, Vec3, Vec4};

use super::{normalize_quat, Transform};
use crate::layout::{Xform, NO_OFFSET};

/// The offset's magnitude at `t` seconds into the blend for an offset that starts at `x0`
/// moving at `v0` (units per second, toward 0 when negative) and is gone at `t1`: Bollo's
/// quintic, with `v0` and `t1` as [`offset`] clamps them (0 from `t1` on).
pub fn decay(x0: f32, v0: f32, t1: f32, t: f32) -> f32 {
    if t >= t1 || t1 <= 0.0 {
        return 0.0;
    }
    let (t1_2, t1_3) = (t1 * t1, t1 * t1 * t1);
    let a0 = (-8.0 * v0 * t1 - 20.0 * x0) / t1_2;
    let a = -(a0 * t1_2 + 6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t1_3 * t1_2);
    let b = (3.0 * a0 * t1_2 + 16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t1_2 * t1_2);
    let c = -(3.0 * a0 * t1_2 + 12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t1_3);
    ((((a * t + b) * t + c) * t + 0.5 * a0) * t + v0) * t + x0
}

/// One offset's start, `(x0, v0, t1)`: `x0` now and `x_before` one step of `dt` earlier (both
/// along the offset's direction); the velocity `(x0 − x_before) / dt` is clamped to at most 0
/// (an offset growing away is not carried: no overshoot), and the blend shortened to
/// `−5·x0 / v0` where that is shorter (the quintic does not cross 0 before its end).
pub fn offset(x0: f32, x_before: f32, dt: f32, blend_time: f32) -> [f32; 3] {
    if x0 < NO_OFFSET {
        return [0.0; 3];
    }
    let v0 = if dt > 0.0 {
        ((x0 - x_before) / dt).min(0.0)
    } else {
        0.0
    };
    let t1 = if v0 < 0.0 {
        blend_time.min(-5.0 * x0 / v0)
    } else {
        blend_time
    };
    [x0, v0, t1]
}

/// A bone's offsets at the start of a transition, stored as one [`Xform`]: translation
/// direction and `x0`, rotation axis and `x0` (radians), then `v0` and `t1` of each. `old` and
/// `before` are the old pose now and one step of `dt` earlier, `new` the new pose now.
pub(crate) fn start(
    old: &Transform,
    before: &Transform,
    new: &Transform,
    dt: f32,
    blend_time: f32,
) -> Xform {
    // Translation: along the offset now.
    let d = old.translation - new.translation;
    let len = d.length();
    let n = if len >= NO_OFFSET {
        d / len
    } else {
        Vec3::ZERO
    };
    let [x0, v0, t1] = offset(
        len,
        (before.translation - new.translation).dot(n),
        dt,
        blend_time,
    );
    // Rotation: about the offset's axis now, the shorter way round.
    let q = hemisphere(Vec4::from(old.rotation * new.rotation.conjugate()), Vec4::W);
    let s = q.truncate().length();
    let axis = if s >= NO_OFFSET {
        q.truncate() / s
    } else {
        Vec3::ZERO
    };
    let angle = 2.0 * s.atan2(q.w);
    let p = hemisphere(Vec4::from(before.rotation * new.rotation.conjugate()), q);
    let angle_before = 2.0 * p.truncate().dot(axis).atan2(p.w);
    let [r0, rv0, rt1] = offset(angle, angle_before, dt, blend_time);
    Xform {
        rotation: n.extend(x0).to_array(),
        translation: axis.extend(r0).to_array(),
        scale: [v0, t1, rv0, rt1],
    }
}

/// `q` or `−q`, whichever lies in `toward`'s hemisphere.
fn hemisphere(q: Vec4, toward: Vec4) -> Vec4 {
    if q.dot(toward) < 0.0 {
        -q
    } else {
        q
    }
}

/// `new` with a bone's offsets ([`start`]) at `t` seconds into the blend added: the rotation
/// offset first (`offset ⊗ R`), the translation offset to `T`; the scale is `new`'s.
pub(crate) fn apply(state: &Xform, new: &Transform, t: f32) -> Transform {
    let [nx, ny, nz, x0] = state.rotation;
    let [ax, ay, az, r0] = state.translation;
    let [v0, t1, rv0, rt1] = state.scale;
    let moved = Vec3::new(nx, ny, nz) * decay(x0, v0, t1, t);
    let angle = decay(r0, rv0, rt1, t);
    let (sin, cos) = (0.5 * angle).sin_cos();
    let turn = Quat::from_vec4((Vec3::new(ax, ay, az) * sin).extend(cos));
    Transform {
        rotation: normalize_quat(Vec4::from(turn * new.rotation)),
        translation: new.translation + moved,
        scale: new.scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quintic_starts_at_the_offset_with_its_velocity_and_ends_at_rest() {
        let (x0, v0, t1) = (0.8, -1.5, 0.5);
        let h = 1e-4;
        assert!((decay(x0, v0, t1, 0.0) - x0).abs() < 1e-6);
        // Its slope at 0 is v0, and at t1 it is 0 with no slope left.
        let slope = (decay(x0, v0, t1, h) - decay(x0, v0, t1, 0.0)) / h;
        assert!((slope - v0).abs() < 1e-2, "{slope}");
        assert!(decay(x0, v0, t1, t1 - 1e-4).abs() < 1e-5);
        assert_eq!(decay(x0, v0, t1, t1), 0.0);
        // Bollo's coefficients written out at a chosen time.
        let t = 0.2f32;
        let a0 = (-8.0 * v0 * t1 - 20.0 * x0) / (t1 * t1);
        let a = -(a0 * t1.powi(2) + 6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t1.powi(5));
        let b = (3.0 * a0 * t1.powi(2) + 16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t1.powi(4));
        let c = -(3.0 * a0 * t1.powi(2) + 12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t1.powi(3));
        let want = a * t.powi(5) + b * t.powi(4) + c * t.powi(3) + 0.5 * a0 * t * t + v0 * t + x0;
        assert!((decay(x0, v0, t1, t) - want).abs() < 1e-5);
    }

    #[test]
    fn velocity_away_is_dropped_and_a_fast_approach_shortens_the_blend() {
        // Growing from 0.5 to 0.6 in 0.1 s: moving away, so no velocity.
        assert_eq!(offset(0.6, 0.5, 0.1, 0.4), [0.6, 0.0, 0.4]);
        // Closing at 10/s from 1.0: t1 = min(0.4, 5 · 1 / 10) = 0.4; at 40/s, 0.125.
        let [_, v, t1] = offset(1.0, 2.0, 0.1, 0.4);
        assert_eq!((v, t1), (-10.0, 0.4));
        let [_, _, t1] = offset(1.0, 5.0, 0.1, 0.4);
        assert!((t1 - 0.125).abs() < 1e-6);
        assert_eq!(offset(0.0, 1.0, 0.1, 0.4), [0.0; 3]);
    }

    #[test]
    fn the_offset_takes_the_old_pose_at_the_start_and_nothing_at_the_end() {
        let new = Transform::new(
            Vec3::new(0.0, 1.0, 0.0),
            Quat::from_rotation_y(0.3),
            Vec3::ONE,
        );
        let old = Transform::new(
            Vec3::new(0.5, 1.2, 0.0),
            Quat::from_rotation_x(0.9),
            Vec3::ONE,
        );
        let before = Transform::new(
            Vec3::new(0.6, 1.2, 0.0),
            Quat::from_rotation_x(1.0),
            Vec3::ONE,
        );
        let state = start(&old, &before, &new, 1.0 / 30.0, 0.3);
        let at0 = apply(&state, &new, 0.0);
        assert!(at0.translation.abs_diff_eq(old.translation, 1e-5));
        assert!(at0.rotation.abs_diff_eq(old.rotation, 1e-5));
        let end = apply(&state, &new, 0.3);
        assert!(end.translation.abs_diff_eq(new.translation, 1e-6));
        assert!(end.rotation.abs_diff_eq(new.rotation, 1e-6));
    }
}
