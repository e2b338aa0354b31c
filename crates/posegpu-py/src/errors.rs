//! posegpu's errors as Python exceptions: one base class, `posegpu.Error`, whose message is what
//! the command line prints (`posegpu::Error`'s Display), subclasses by subject, and a guard that
//! turns a Rust panic into a `posegpu.Error` before it reaches Python.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

create_exception!(
    posegpu,
    Error,
    PyException,
    "Every error posegpu raises: its message is the one the `posegpu` command prints, and \
     `causes` lists the errors behind it (wgpu's, the operating system's)."
);
create_exception!(
    posegpu,
    LoadError,
    Error,
    "A file could not be read: missing, too large, of an unknown type, or malformed glTF or BVH \
     (the message names the file)."
);
create_exception!(
    posegpu,
    DataError,
    Error,
    "A skeleton, clip, notify, curve or compression setting that does not hold together."
);
create_exception!(
    posegpu,
    RetargetError,
    Error,
    "Retargeting cannot be done as asked: a skeleton that is not a humanoid, a rig file or bone \
     map in error, a plan used with other skeletons."
);
create_exception!(
    posegpu,
    PlaybackError,
    Error,
    "An instance, crowd, player, montage, transition or blend space that cannot play as asked."
);
create_exception!(
    posegpu,
    GpuError,
    Error,
    "No GPU adapter, or a device operation that failed (wgpu's error is in `causes`)."
);

/// `posegpu.ArgumentError`: a bad argument (wrong dtype or shape, an unknown clip or bone name,
/// a NaN time). A subclass of both `posegpu.Error` and the builtin `ValueError`, made at import
/// (an exception class with two bases cannot come from `create_exception!`).
static ARGUMENT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn argument_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let ty = ARGUMENT_ERROR.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let bases = PyTuple::new(py, [py.get_type::<Error>(), py.get_type::<PyValueError>()])?;
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "posegpu")?;
        namespace.set_item(
            "__doc__",
            "A bad argument: wrong dtype or shape, an unknown clip or bone name, a NaN time, an \
             unknown option. Also a ValueError.",
        )?;
        let ty =
            py.import("builtins")?
                .getattr("type")?
                .call1(("ArgumentError", bases, namespace))?;
        Ok(ty.cast_into::<PyType>()?.unbind())
    })?;
    Ok(ty.bind(py))
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("LoadError", py.get_type::<LoadError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("RetargetError", py.get_type::<RetargetError>())?;
    m.add("PlaybackError", py.get_type::<PlaybackError>())?;
    m.add("GpuError", py.get_type::<GpuError>())?;
    m.add("ArgumentError", argument_error(py)?)?;
    Ok(())
}

/// A `posegpu.ArgumentError` with `message` (which names the argument).
pub fn arg_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match argument_error(py) {
        Ok(ty) => PyErr::from_type(ty.clone(), message),
        Err(e) => e,
    })
}

/// posegpu's error as the Python exception of its subject, with its Display as the message and
/// its causes' as `causes`.
pub fn to_py(e: posegpu::Error) -> PyErr {
    use posegpu::Error as E;
    let message = e.to_string();
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    let err = match &e {
        E::Io { .. }
        | E::Gltf { .. }
        | E::Bvh { .. }
        | E::InFile { .. }
        | E::FileTooLarge { .. }
        | E::UnknownFormat { .. }
        | E::FeatureDisabled { .. } => LoadError::new_err(message),
        E::Rig { .. }
        | E::MapShadowed { .. }
        | E::NotHumanoid { .. }
        | E::RetargetPath { .. }
        | E::MirroredRetarget { .. }
        | E::PlanMismatch { .. }
        | E::UnknownSource { .. }
        | E::UnknownReferencePose { .. } => RetargetError::new_err(message),
        E::Playback { .. } | E::BadInstance { .. } | E::BlendSpace { .. } => {
            PlaybackError::new_err(message)
        }
        E::NoAdapter | E::Gpu { .. } | E::TooLarge { .. } | E::Render { .. } | E::Mesh { .. } => {
            GpuError::new_err(message)
        }
        E::UnknownAnimation { .. } | E::UnknownBone { .. } | E::BadRequest { .. } => {
            arg_error(message)
        }
        _ => DataError::new_err(message),
    };
    Python::attach(|py| {
        // The attribute is a convenience: an exception that cannot take it still carries its
        // message.
        let _ = err.value(py).setattr("causes", causes);
    });
    err
}

/// A `posegpu.Error` for a Rust panic's payload: none is expected, but one must not cross into
/// Python as pyo3's PanicException (a BaseException that `except Exception` misses).
fn panic_error(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string());
    Error::new_err(format!(
        "internal error in posegpu (a Rust panic, please report it): {what}"
    ))
}

/// Runs `f`, turning a panic into a `posegpu.Error`.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p)))
}

/// Runs `f` without the GIL (other Python threads run meanwhile), turning a panic into a
/// `posegpu.Error` and posegpu's errors into theirs.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> posegpu::Result<T> + Send,
) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)))
        .map_err(panic_error)?
        .map_err(to_py)
}

/// Converts posegpu's results.
pub trait IntoPy<T> {
    /// The value, or the Python exception of the error.
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for posegpu::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
