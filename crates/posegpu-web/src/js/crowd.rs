//! A crowd's description (`posegpu::Crowd`): agents added from plain objects; it is also the
//! CPU twin that steps on the host.

use posegpu::{AnimLibrary, CpuEvaluator};
use wasm_bindgen::prelude::*;

use super::library::Library;
use super::poses::Poses;
use super::{describe, error};
use crate::fixtures::transform_floats;
use crate::spec::{AgentSpec, PlacementSpec};

/// The instances of a crowd and their players: what `GpuCrowd.create` uploads, and a CPU
/// twin that advances on the host (`advance`, `evaluate`).
#[wasm_bindgen]
pub struct Crowd {
    pub(crate) lib: AnimLibrary,
    pub(crate) inner: posegpu::Crowd,
}

#[wasm_bindgen]
impl Crowd {
    /// An empty crowd playing `library`'s clips (track k plays clip k).
    #[wasm_bindgen(constructor)]
    pub fn new(library: &Library) -> Crowd {
        Crowd {
            lib: library.inner.clone(),
            inner: posegpu::Crowd::new(&library.inner),
        }
    }

    /// Adds an instance: `{players: [{clip, start, rate, looping, weight}], synced,
    /// rootMotion: null | "keep" | "refPose" | "firstFrame" | "zero", rootAxes: "everything" |
    /// "groundPlane" | "yawOnly", placement: {translation, rotation, scale}}`. Returns its index.
    pub fn add(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "AgentSpec")] agent: JsValue,
    ) -> Result<usize, JsError> {
        let spec: AgentSpec = describe("agent", &agent)?;
        self.add_spec(&spec).map_err(error)
    }

    /// Adds every agent of an array (as `add`); nothing is added when one is refused.
    #[wasm_bindgen(js_name = addAll)]
    pub fn add_all(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "AgentSpec[]")] agents: JsValue,
    ) -> Result<(), JsError> {
        let specs: Vec<AgentSpec> = describe("agents", &agents)?;
        let before = self.inner.clone();
        for (k, spec) in specs.iter().enumerate() {
            if let Err(e) = self.add_spec(spec) {
                self.inner = before;
                return Err(error(format!("agent {k}: {e}")));
            }
        }
        Ok(())
    }

    /// The number of instances.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// Moves an instance (`{translation, rotation, scale}`).
    #[wasm_bindgen(js_name = setPlacement)]
    pub fn set_placement(
        &mut self,
        instance: usize,
        #[wasm_bindgen(unchecked_param_type = "Placement")] placement: JsValue,
    ) -> Result<(), JsError> {
        let p: PlacementSpec = describe("placement", &placement)?;
        self.inner
            .set_placement(instance, p.transform())
            .map_err(error)
    }

    /// The CPU twin: advances every player by `dt` seconds on the host.
    pub fn advance(&mut self, dt: f32) -> Result<(), JsError> {
        self.inner.advance(&self.lib, dt).map_err(error)
    }

    /// The CPU twin's poses of the current state.
    pub fn evaluate(&self) -> Result<Poses, JsError> {
        let mut out = posegpu::Poses::default();
        CpuEvaluator::new(&self.lib)
            .evaluate(&self.inner.batch(), &mut out)
            .map_err(error)?;
        Ok(Poses::new(out))
    }

    /// Each instance's placement, 10 floats: translation xyz, rotation xyzw, scale xyz.
    pub fn placements(&self) -> Vec<f32> {
        (self.inner.placements().iter())
            .flat_map(transform_floats)
            .collect()
    }
}

impl Crowd {
    fn add_spec(&mut self, spec: &AgentSpec) -> Result<usize, String> {
        let (agent, placement) = spec.resolve(&self.lib)?;
        let i = self.inner.add(&agent).map_err(|e| e.to_string())?;
        if let Some(p) = placement {
            (self.inner.set_placement(i, p)).map_err(|e| e.to_string())?;
        }
        Ok(i)
    }
}

/// The crowd of the tests and the demo (`fixtures::grid_agents`), as agent descriptions: `n`
/// agents on a grid of `columns` columns `spacing` apart, each a synced blend of the library's
/// last clip (the retargeted walk) and one of the character's own, moving by root motion.
#[wasm_bindgen(js_name = gridAgents, unchecked_return_type = "AgentSpec[]")]
pub fn grid_agents(
    library: &Library,
    n: usize,
    columns: usize,
    spacing: f32,
) -> Result<JsValue, JsError> {
    if library.inner.clip_count() == 0 {
        return Err(error("gridAgents: the library has no clips"));
    }
    super::plain(&crate::fixtures::grid_agents(
        &library.inner,
        n,
        columns,
        spacing,
    ))
}
