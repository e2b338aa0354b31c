//! The GPU: one device per process, opened on first use and shared by every evaluator and
//! crowd (opening one costs far more than an evaluation, lavapipe's especially).

use std::sync::Mutex;

use posegpu::GpuContext;
use pyo3::prelude::*;

use crate::errors::{arg_error, GpuError};

static CONTEXT: Mutex<Option<GpuContext>> = Mutex::new(None);

/// Where an evaluator or crowd runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The CPU twin, on every core.
    Cpu,
    /// wgpu's best adapter (lavapipe where there is no GPU).
    Gpu,
}

impl Backend {
    /// `backend="cpu"|"gpu"`.
    pub fn parse(s: &str) -> PyResult<Self> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            _ => Err(arg_error(format!("backend: '{s}' is not 'cpu' or 'gpu'"))),
        }
    }

    /// Its name, as given.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        }
    }
}

/// The shared device (opened on first use), a panic inside wgpu reported as an error.
fn open() -> posegpu::Result<GpuContext> {
    std::panic::catch_unwind(open_once).unwrap_or_else(|_| {
        Err(posegpu::Error::Gpu {
            what: "internal error (a panic) while opening the device".into(),
            source: None,
        })
    })
}

fn open_once() -> posegpu::Result<GpuContext> {
    let mut slot = CONTEXT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(ctx) = slot.as_ref() {
        return Ok(ctx.clone());
    }
    let ctx = GpuContext::new()?;
    *slot = Some(ctx.clone());
    Ok(ctx)
}

/// The shared device, opened without the GIL; no adapter is a `posegpu.GpuError` naming the
/// `backend` argument.
pub fn context(py: Python<'_>) -> PyResult<GpuContext> {
    match py.detach(open) {
        Ok(ctx) => Ok(ctx),
        Err(posegpu::Error::NoAdapter) => Err(GpuError::new_err(format!(
            "backend='gpu': {} (on a machine without a GPU, install Mesa's lavapipe)",
            posegpu::Error::NoAdapter
        ))),
        Err(e) => Err(crate::errors::to_py(e)),
    }
}

/// The adapter the GPU backend uses (its name, type and backend), or None when there is none.
#[pyfunction]
pub fn gpu_adapter(py: Python<'_>) -> PyResult<Option<String>> {
    match py.detach(open) {
        Ok(ctx) => Ok(Some(ctx.describe())),
        Err(posegpu::Error::NoAdapter) => Ok(None),
        Err(e) => Err(crate::errors::to_py(e)),
    }
}
