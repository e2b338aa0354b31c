//! Buffers kept between evaluations. A frame of 10,000 humanoids is ~100 MB of poses; fresh
//! allocations that large are fresh pages from the kernel, and their page faults cost more than
//! the evaluation itself (87 ms against 33 ms with a reused `Poses` on the 2-core reference
//! machine). So an evaluator keeps the buffers of the poses Python has dropped and evaluates
//! into them: a frame loop (`pose = ev.evaluate(...)`) then runs at Rust's steady state.
//!
//! NumPy arrays are views of a [`Buffer`] (their base object), which hands its memory back
//! when the last array over it goes.

use std::sync::{Mutex, Weak};

use numpy::ndarray::{ArrayView, Dimension};
use numpy::PyArray;
use posegpu::Poses;
use pyo3::prelude::*;

/// The buffers one evaluator keeps: one frame's `Poses`, and the float buffers of the arrays
/// made from one frame (component, locals, skinning).
#[derive(Default)]
pub struct Recycler {
    poses: Mutex<Option<Poses>>,
    floats: Mutex<Vec<Vec<f32>>>,
    skinning: Mutex<Vec<Vec<f32>>>,
}

/// Which pool a buffer goes back to: skinning buffers stay whole 3x4 matrices.
#[derive(Clone, Copy)]
pub enum Pool {
    Floats,
    Skinning,
}

/// Float buffers kept per pool: a frame's component and locals.
const KEPT: usize = 2;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Recycler {
    /// Poses to evaluate into: the last ones dropped (with a skinning buffer back from NumPy
    /// where one is), or new ones.
    pub fn take_poses(&self) -> Poses {
        let mut poses = lock(&self.poses).take().unwrap_or_default();
        if poses.skinning.is_empty() {
            if let Some(v) = lock(&self.skinning).pop() {
                // Skinning buffers hold whole matrices (their length and capacity are 12-float
                // multiples); one that is not is dropped.
                poses.skinning = bytemuck::allocation::try_cast_vec(v).unwrap_or_default();
            }
        }
        poses
    }

    /// Keeps `poses` for the next evaluation.
    pub fn give_poses(&self, poses: Poses) {
        *lock(&self.poses) = Some(poses);
    }

    /// A buffer of `len` floats (its values stale), reused where one is large enough.
    pub fn take(&self, pool: Pool, len: usize) -> Vec<f32> {
        let mut kept = lock(self.pool(pool));
        let mut v = match kept.iter().position(|v| v.capacity() >= len) {
            Some(i) => kept.swap_remove(i),
            None => Vec::with_capacity(len),
        };
        drop(kept);
        // Within its capacity: no allocation, and no page faults once it was written.
        v.resize(len, 0.0);
        v
    }

    /// Keeps `v` for a later array.
    pub fn give(&self, pool: Pool, v: Vec<f32>) {
        let mut kept = lock(self.pool(pool));
        if kept.len() < KEPT {
            kept.push(v);
        }
    }

    fn pool(&self, pool: Pool) -> &Mutex<Vec<Vec<f32>>> {
        match pool {
            Pool::Floats => &self.floats,
            Pool::Skinning => &self.skinning,
        }
    }
}

/// The memory behind NumPy arrays (their base object): the buffer goes back to its evaluator
/// when the last array over it is gone.
#[pyclass(module = "posegpu", frozen)]
pub struct Buffer {
    data: Vec<f32>,
    home: Option<(Weak<Recycler>, Pool)>,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some((home, pool)) = &self.home {
            if let Some(r) = home.upgrade() {
                r.give(*pool, std::mem::take(&mut self.data));
            }
        }
    }
}

/// `data` as a NumPy array of `shape`, without a copy: NumPy's base object owns it, and gives
/// it back to `home` when NumPy is done with it.
pub fn array<'py, D: Dimension>(
    py: Python<'py>,
    data: Vec<f32>,
    shape: D,
    home: Option<(Weak<Recycler>, Pool)>,
) -> PyResult<Bound<'py, PyArray<f32, D>>> {
    if shape.size() != data.len() {
        return Err(crate::errors::Error::new_err(format!(
            "internal error: {} floats for an array of shape {:?}",
            data.len(),
            shape.slice()
        )));
    }
    let ptr = data.as_ptr();
    let container = Bound::new(py, Buffer { data, home })?;
    // SAFETY: the view covers exactly the buffer's floats (checked above); the buffer is never
    // touched again until the container, the array's base object, is dropped.
    unsafe {
        let view = ArrayView::from_shape_ptr(shape, ptr);
        Ok(PyArray::borrow_from_array(&view, container.into_any()))
    }
}
