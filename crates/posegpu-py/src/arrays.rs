//! NumPy in and out: arguments read as scalars or 1-D arrays (checked, with the argument named
//! in every error), and results handed to NumPy without a copy where the Rust layout is
//! NumPy's (the array then owns the Rust allocation).

use std::sync::Weak;

use numpy::ndarray::{Array1, Array2, Ix3, Ix4};
use numpy::{PyArray1, PyArray2, PyArray3, PyArray4, PyArrayMethods};
use posegpu::{Mat3x4, Transform, Xform};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use rayon::prelude::*;

use crate::errors::arg_error;
use crate::recycle::{self, Pool, Recycler};

/// Floats per transform in every array posegpu returns: quaternion x y z w, translation x y z,
/// scale x y z (the order of the GPU's `Xform`, without its padding).
pub const XFORM_FLOATS: usize = 10;

/// One value, or one per instance.
pub enum Arg<T> {
    /// A scalar, broadcast to every instance.
    One(T),
    /// A 1-D array.
    Many(Vec<T>),
}

impl<T: Clone> Arg<T> {
    fn len(&self) -> Option<usize> {
        match self {
            Self::One(_) => None,
            Self::Many(v) => Some(v.len()),
        }
    }

    /// `n` values: the scalar repeated, or the array (whose length was checked).
    pub fn expand(self, n: usize) -> Vec<T> {
        match self {
            Self::One(v) => vec![v; n],
            Self::Many(v) => v,
        }
    }
}

/// The instance count two arguments give together: the arrays' common length, or 1 for two
/// scalars.
pub fn broadcast_len<A: Clone, B: Clone>(
    (a, a_name): (&Arg<A>, &str),
    (b, b_name): (&Arg<B>, &str),
) -> PyResult<usize> {
    match (a.len(), b.len()) {
        (Some(x), Some(y)) if x != y => Err(arg_error(format!(
            "{a_name} has {x} values but {b_name} has {y}: give one per instance, or a scalar"
        ))),
        (Some(x), _) | (None, Some(x)) => Ok(x),
        (None, None) => Ok(1),
    }
}

static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(NUMPY
        .get_or_try_init(py, || py.import("numpy").map(Bound::unbind))?
        .bind(py))
}

/// `obj` as a NumPy array of at most one dimension, with its dtype's kind (`f`, `i`, `U`...).
fn as_vector<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<(Bound<'py, PyAny>, char)> {
    let py = obj.py();
    let array = numpy(py)?
        .call_method1("asarray", (obj,))
        .map_err(|e| arg_error(format!("{name}: not an array or a number ({e})")))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim > 1 {
        let shape = array.getattr("shape")?;
        return Err(arg_error(format!(
            "{name}: expected a scalar or a 1-D array, got shape {shape}"
        )));
    }
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    Ok((array, kind.chars().next().unwrap_or('?')))
}

fn dtype_name(array: &Bound<'_, PyAny>) -> String {
    array
        .getattr("dtype")
        .map(|d| d.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A float or a 1-D array of floats (any float or integer dtype, converted to float32); each
/// value finite.
pub fn floats(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Arg<f32>> {
    let arg = read_floats(obj, name)?;
    let check = |i: Option<usize>, v: f32| {
        if v.is_finite() {
            return Ok(());
        }
        let at = i.map_or(String::new(), |i| format!("[{i}]"));
        Err(arg_error(format!(
            "{name}{at} is {v}: values must be finite"
        )))
    };
    match &arg {
        Arg::One(v) => check(None, *v)?,
        Arg::Many(vs) => {
            if let Some(i) = vs.iter().position(|v| !v.is_finite()) {
                check(Some(i), vs[i])?;
            }
        }
    }
    Ok(arg)
}

fn read_floats(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Arg<f32>> {
    // The common cases first: a float32 array, a Python number.
    if let Ok(a) = obj.cast::<PyArray1<f32>>() {
        return Ok(Arg::Many(a.readonly().as_array().to_vec()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(arg_error(format!("{name}: expected a number, got a bool")));
    }
    if obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>() {
        return Ok(Arg::One(obj.extract::<f64>()? as f32));
    }
    let (array, kind) = as_vector(obj, name)?;
    if !matches!(kind, 'f' | 'i' | 'u') {
        return Err(arg_error(format!(
            "{name}: expected floats, got dtype {}",
            dtype_name(&array)
        )));
    }
    let array = array.call_method1("astype", ("float32",))?;
    if array.getattr("ndim")?.extract::<usize>()? == 0 {
        return Ok(Arg::One(
            array.call_method0("item")?.extract::<f64>()? as f32
        ));
    }
    let array = array.cast_into::<PyArray1<f32>>()?;
    Ok(Arg::Many(array.readonly().as_array().to_vec()))
}

/// A clip (or track) reference: its index, or its name.
#[derive(Clone, Debug)]
pub enum ClipRef {
    /// An index, not yet checked against a library.
    Index(i64),
    /// A name, not yet looked up.
    Name(String),
}

/// One clip: an index or a name (looked up in a library later).
pub fn clip_ref(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ClipRef> {
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(ClipRef::Index(i));
    }
    obj.extract::<String>()
        .map(ClipRef::Name)
        .map_err(|_| arg_error(format!("{what}: the clip is an index or a name")))
}

/// An int, a str, or a 1-D array of ints or strs.
pub fn clip_refs(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Arg<ClipRef>> {
    if let Ok(a) = obj.cast::<PyArray1<i32>>() {
        let v = a
            .readonly()
            .as_array()
            .iter()
            .map(|&i| ClipRef::Index(i64::from(i)))
            .collect();
        return Ok(Arg::Many(v));
    }
    if let Ok(a) = obj.cast::<PyArray1<i64>>() {
        let v: Vec<ClipRef> = a
            .readonly()
            .as_array()
            .iter()
            .map(|&i| ClipRef::Index(i))
            .collect();
        return Ok(Arg::Many(v));
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(arg_error(format!(
            "{name}: expected a clip index or name, got a bool"
        )));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Arg::One(ClipRef::Index(obj.extract()?)));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Arg::One(ClipRef::Name(s.extract::<String>()?)));
    }
    let (array, kind) = as_vector(obj, name)?;
    let scalar = array.getattr("ndim")?.extract::<usize>()? == 0;
    match kind {
        'i' | 'u' => {
            let array = array.call_method1("astype", ("int64",))?;
            if scalar {
                return Ok(Arg::One(ClipRef::Index(
                    array.call_method0("item")?.extract()?,
                )));
            }
            let array = array.cast_into::<PyArray1<i64>>()?;
            let v = array
                .readonly()
                .as_array()
                .iter()
                .map(|&i| ClipRef::Index(i))
                .collect();
            Ok(Arg::Many(v))
        }
        'U' | 'O' => {
            let list = array.call_method0("tolist")?;
            if scalar {
                let s: String = list.extract().map_err(|_| bad_clips(name, &array))?;
                return Ok(Arg::One(ClipRef::Name(s)));
            }
            let names: Vec<String> = list.extract().map_err(|_| bad_clips(name, &array))?;
            Ok(Arg::Many(names.into_iter().map(ClipRef::Name).collect()))
        }
        _ => Err(bad_clips(name, &array)),
    }
}

fn bad_clips(name: &str, array: &Bound<'_, PyAny>) -> PyErr {
    arg_error(format!(
        "{name}: expected clip indices (integers) or names (str), got dtype {}",
        dtype_name(array)
    ))
}

/// Transforms as `(N, B, 10)` float32 rows (quaternion, translation, scale), built without
/// the GIL on every core: the padded GPU layout (12 floats) is compacted, the one copy there
/// is, into a buffer `home` kept from an earlier frame where it has one.
pub fn xform_array<'py>(
    py: Python<'py>,
    xforms: &[Xform],
    instances: usize,
    bones: usize,
    home: Option<&Weak<Recycler>>,
) -> PyResult<Bound<'py, PyArray3<f32>>> {
    let len = xforms.len() * XFORM_FLOATS;
    let recycler = home.and_then(Weak::upgrade);
    let flat = py.detach(|| {
        let mut flat = match &recycler {
            Some(r) => r.take(Pool::Floats, len),
            None => vec![0f32; len],
        };
        flat.par_chunks_mut(XFORM_FLOATS * 4096)
            .zip(xforms.par_chunks(4096))
            .for_each(|(out, xs)| {
                for (o, x) in out.chunks_exact_mut(XFORM_FLOATS).zip(xs) {
                    o[..4].copy_from_slice(&x.rotation);
                    o[4..7].copy_from_slice(&x.translation[..3]);
                    o[7..].copy_from_slice(&x.scale[..3]);
                }
            });
        flat
    });
    let home = home.map(|h| (h.clone(), Pool::Floats));
    recycle::array(py, flat, Ix3(instances, bones, XFORM_FLOATS), home)
}

/// One transform as its 10 floats.
pub fn xform_row(t: &Transform) -> [f32; XFORM_FLOATS] {
    let mut o = [0f32; XFORM_FLOATS];
    o[..4].copy_from_slice(&t.rotation.to_array());
    o[4..7].copy_from_slice(&t.translation.to_array());
    o[7..].copy_from_slice(&t.scale.to_array());
    o
}

/// Transforms as `(N, 10)` float32 rows.
pub fn transform_rows<'py>(py: Python<'py>, ts: &[Transform]) -> Bound<'py, PyArray2<f32>> {
    let flat: Vec<f32> = ts.iter().flat_map(xform_row).collect();
    let array = Array2::from_shape_vec((ts.len(), XFORM_FLOATS), flat).expect("rows of 10");
    PyArray2::from_owned_array(py, array)
}

/// A transform from 10 floats (quaternion, translation, scale), named `name` in errors.
pub fn transform_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Transform> {
    let v: Vec<f32> = match floats(obj, name)? {
        Arg::Many(v) if v.len() == XFORM_FLOATS => v,
        _ => {
            return Err(arg_error(format!(
                "{name}: expected 10 floats (quaternion x y z w, translation x y z, scale x y z)"
            )))
        }
    };
    let rotation = glam::Quat::from_slice(&v[..4]);
    if rotation.length() < 1e-6 {
        return Err(arg_error(format!("{name}: the quaternion has zero length")));
    }
    Ok(Transform {
        rotation: rotation.normalize(),
        translation: glam::Vec3::from_slice(&v[4..7]),
        scale: glam::Vec3::from_slice(&v[7..]),
    })
}

/// Skinning matrices as `(N, B, 3, 4)` float32, NumPy viewing the evaluator's own buffer (no
/// copy), which goes back to `home` when NumPy is done with it.
pub fn skinning_array<'py>(
    py: Python<'py>,
    skinning: Vec<Mat3x4>,
    instances: usize,
    bones: usize,
    home: Option<&Weak<Recycler>>,
) -> PyResult<Bound<'py, PyArray4<f32>>> {
    // [f32; 12] and f32 share their alignment, so the allocation is reused as it is.
    let flat: Vec<f32> = bytemuck::allocation::cast_vec(skinning);
    let home = home.map(|h| (h.clone(), Pool::Skinning));
    recycle::array(py, flat, Ix4(instances, bones, 3, 4), home)
}

/// A float32 vector NumPy owns.
pub fn f32_vector(py: Python<'_>, v: Vec<f32>) -> Bound<'_, PyArray1<f32>> {
    PyArray1::from_owned_array(py, Array1::from_vec(v))
}

/// Floats per instance as `(N, K)`.
pub fn f32_matrix(
    py: Python<'_>,
    v: Vec<f32>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let array =
        Array2::from_shape_vec((rows, cols), v).map_err(|e| arg_error(format!("shape: {e}")))?;
    Ok(PyArray2::from_owned_array(py, array))
}
