//! The `posegpu` Python module: posegpu's assets, libraries, evaluators (CPU twin and GPU),
//! crowds, blend spaces and retargeting, with NumPy arrays in and out. Every entry point runs
//! its Rust work without the GIL where it is long, and turns any error (or panic) into a
//! `posegpu.Error`.

mod arrays;
mod asset;
mod blend;
mod crowd;
mod dataset;
mod errors;
mod evaluate;
mod gpu;
mod library;
mod npz;
mod player;
mod recycle;
mod retarget;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Skeletal animation poses for huge crowds, evaluated with wgpu compute shaders, with a CPU
/// twin of every GPU stage. Load characters (`load`), gather clips in a `Library`, evaluate
/// them (`Evaluator`) or let a `Crowd` play them; retarget between characters
/// (`Library(target, sources=[...])`, `RetargetPlan`, `retarget`, `retarget_dataset`).
#[pymodule]
#[pyo3(name = "posegpu")]
fn posegpu_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::register(m)?;
    m.add_class::<asset::Asset>()?;
    m.add_class::<library::Library>()?;
    m.add_class::<evaluate::Evaluator>()?;
    m.add_class::<evaluate::Pose>()?;
    m.add_class::<player::Player>()?;
    m.add_class::<crowd::Crowd>()?;
    m.add_class::<blend::BlendSpace1D>()?;
    m.add_class::<blend::BlendSpace2D>()?;
    m.add_class::<retarget::RetargetPlanPy>()?;
    m.add_class::<retarget::QualityReport>()?;
    m.add_function(wrap_pyfunction!(asset::load, m)?)?;
    m.add_function(wrap_pyfunction!(retarget::retarget, m)?)?;
    m.add_function(wrap_pyfunction!(dataset::retarget_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::gpu_adapter, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_TOLERANCE", posegpu::compress::DEFAULT_TOLERANCE)?;

    // `posegpu.procedural`, importable too (`import posegpu.procedural`).
    let procedural = PyModule::new(py, "procedural")?;
    procedural.add(
        "__doc__",
        "Assets built in code: the 67-bone procedural humanoid and its variants, random skeletons.",
    )?;
    procedural.add_function(wrap_pyfunction!(asset::humanoid, &procedural)?)?;
    procedural.add_function(wrap_pyfunction!(asset::humanoid_variant, &procedural)?)?;
    procedural.add_function(wrap_pyfunction!(asset::random_asset, &procedural)?)?;
    m.add_submodule(&procedural)?;
    let modules = py.import("sys")?.getattr("modules")?;
    modules
        .cast_into::<PyDict>()?
        .set_item("posegpu.procedural", &procedural)?;
    Ok(())
}
