//! Evaluated poses brought to host memory.

use crate::layout::{Mat3x4, Xform};
use crate::Transform;

/// Local transforms, component-space transforms and skinning matrices of many instances,
/// instance-major (`[instance * bone_count + bone]`), the layout of the GPU output buffers;
/// and the library's curves per instance (`[instance * curve_count + curve]`).
///
/// Read back from a GPU evaluator asked for fewer outputs ([`crate::Outputs`]), `locals` or
/// `component` are empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Poses {
    /// Bones per instance.
    pub bone_count: usize,
    /// Local transforms.
    pub locals: Vec<Xform>,
    /// Component-space transforms.
    pub component: Vec<Xform>,
    /// Skinning matrices (component-space transform times inverse bind).
    pub skinning: Vec<Mat3x4>,
    /// Curves per instance ([`crate::AnimLibrary::curve_names`]).
    pub curve_count: usize,
    /// Curve values (morph-target weights, parameters of the user's).
    pub curves: Vec<f32>,
    /// The CPU evaluator's inertialization state: each bone's stored offsets while a transition
    /// blends (the GPU keeps its own in the output chunks). Kept from frame to frame: evaluate
    /// a crowd's frames into the same `Poses`.
    pub(crate) inertia: Vec<Xform>,
}

impl Poses {
    /// The number of instances (0 when `bone_count` is 0).
    pub fn instance_count(&self) -> usize {
        self.skinning
            .len()
            .checked_div(self.bone_count)
            .unwrap_or(0)
    }

    pub(crate) fn resize(&mut self, bone_count: usize, curve_count: usize, instances: usize) {
        let n = bone_count * instances;
        self.bone_count = bone_count;
        self.locals.resize(n, Xform::default());
        self.component.resize(n, Xform::default());
        self.skinning.resize(n, [0.0; 12]);
        self.curve_count = curve_count;
        self.curves.resize(curve_count * instances, 0.0);
    }

    /// Sizes the inertialization state to the poses when `needed` (keeping what it holds), or
    /// drops it.
    pub(crate) fn keep_inertia(&mut self, needed: bool) {
        let n = if needed { self.locals.len() } else { 0 };
        self.inertia.resize(n, Xform::default());
    }

    /// Curve `curve` of `instance`.
    pub fn curve(&self, instance: usize, curve: usize) -> f32 {
        self.curves[instance * self.curve_count + curve]
    }

    /// The local transform of `bone` in `instance`.
    pub fn local(&self, instance: usize, bone: usize) -> Transform {
        self.locals[instance * self.bone_count + bone].into()
    }

    /// The component-space transform of `bone` in `instance`.
    pub fn component(&self, instance: usize, bone: usize) -> Transform {
        self.component[instance * self.bone_count + bone].into()
    }

    /// The skinning matrix of `bone` in `instance`.
    pub fn skinning(&self, instance: usize, bone: usize) -> &Mat3x4 {
        &self.skinning[instance * self.bone_count + bone]
    }

    /// The poses of the chosen instances, in the order given.
    pub fn select(&self, instances: &[usize]) -> Poses {
        let b = self.bone_count;
        let (b, k) = (b, self.curve_count);
        let mut out = Poses {
            bone_count: b,
            curve_count: k,
            ..Default::default()
        };
        for &i in instances {
            out.curves
                .extend_from_slice(&self.curves[i * k..(i + 1) * k]);
            let r = i * b..(i + 1) * b;
            out.locals.extend_from_slice(&self.locals[r.clone()]);
            out.component.extend_from_slice(&self.component[r.clone()]);
            out.skinning.extend_from_slice(&self.skinning[r]);
        }
        out
    }
}

/// The largest difference between two sets of poses: translations in absolute units, rotations
/// as a quaternion distance (up to sign), scales absolute, skinning-matrix entries relative to
/// the matrix's largest entry (at least 1), since inverse bind matrices may carry unit scales.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Deviation {
    /// Largest difference of a component-space or local translation component (in the
    /// skeleton's units).
    pub translation: f32,
    /// Largest difference of a quaternion component, against the nearer of `q` and `-q`.
    pub rotation: f32,
    /// Largest difference of a scale component.
    pub scale: f32,
    /// Largest difference of a skinning-matrix entry, divided by the larger of 1 and the first
    /// pose's largest absolute entry in that matrix.
    pub matrix: f32,
    /// Largest difference of a curve value.
    pub curve: f32,
}

impl Deviation {
    /// Compares `a` and `b` (same shape) on the local and component-space poses and skinning;
    /// locals or component transforms that one side does not have (a GPU read-back asked for
    /// fewer [`crate::Outputs`]) are not compared.
    pub fn between(a: &Poses, b: &Poses) -> Self {
        assert_eq!(
            a.skinning.len(),
            b.skinning.len(),
            "pose sets differ in size"
        );
        // Same size or one side empty: zip compares what both have.
        let mut d = Self::default();
        for (x, y) in a
            .locals
            .iter()
            .zip(&b.locals)
            .chain(a.component.iter().zip(&b.component))
        {
            d.add_xform(x, y);
        }
        assert_eq!(a.curves.len(), b.curves.len(), "curve sets differ in size");
        for (x, y) in a.curves.iter().zip(&b.curves) {
            d.curve = d.curve.max((x - y).abs());
        }
        for (x, y) in a.skinning.iter().zip(&b.skinning) {
            let size = x.iter().fold(1.0f32, |m, v| m.max(v.abs()));
            for (p, q) in x.iter().zip(y) {
                d.matrix = d.matrix.max((p - q).abs() / size);
            }
        }
        d
    }

    fn add_xform(&mut self, x: &Xform, y: &Xform) {
        let diff = |a: &[f32; 4], b: &[f32; 4]| {
            a.iter()
                .zip(b)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0f32, f32::max)
        };
        let neg = y.rotation.map(|v| -v);
        self.translation = self.translation.max(diff(&x.translation, &y.translation));
        self.rotation = self
            .rotation
            .max(diff(&x.rotation, &y.rotation).min(diff(&x.rotation, &neg)));
        self.scale = self.scale.max(diff(&x.scale, &y.scale));
    }

    /// The largest deviation, translations taken relative to `extent` (the skeleton's size).
    pub fn relative(&self, extent: f32) -> f32 {
        (self.translation / extent)
            .max(self.rotation)
            .max(self.scale)
            .max(self.matrix)
            .max(self.curve)
    }
}
