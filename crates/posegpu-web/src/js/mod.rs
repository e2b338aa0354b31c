//! The JavaScript API (wasm-bindgen). Every failure reaches JavaScript as a thrown `Error` or a
//! rejected promise whose message is posegpu's (`posegpu::Error`'s Display) or names the bad
//! field of a description; nothing here panics on bad input.

pub mod asset;
pub mod context;
pub mod crowd;
pub mod evaluator;
pub mod gpu_crowd;
pub mod library;
pub mod poses;

use wasm_bindgen::prelude::*;

/// Installs the panic hook (a panic would be a bug: it then shows in the console with its
/// place).
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// posegpu's error as a JavaScript `Error`.
pub(crate) fn error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The same as a rejection value.
pub(crate) fn rejection(e: impl std::fmt::Display) -> JsValue {
    error(e).into()
}

/// A plain JavaScript description, through JSON, into one of `crate::spec`'s.
pub(crate) fn describe<T: for<'de> serde::Deserialize<'de>>(
    what: &str,
    value: &JsValue,
) -> Result<T, JsError> {
    let json = js_sys::JSON::stringify(value)
        .map_err(|_| error(format!("{what}: not representable as JSON")))?;
    let json = json
        .as_string()
        .ok_or_else(|| error(format!("{what}: not representable as JSON")))?;
    crate::spec::parse(what, &json).map_err(error)
}

/// A description that may be absent (`undefined` or `null`): its default.
pub(crate) fn describe_or_default<T: for<'de> serde::Deserialize<'de> + Default>(
    what: &str,
    value: &JsValue,
) -> Result<T, JsError> {
    if value.is_undefined() || value.is_null() {
        return Ok(T::default());
    }
    describe(what, value)
}

/// A Rust value as a plain JavaScript value (through JSON).
pub(crate) fn plain(value: &impl serde::Serialize) -> Result<JsValue, JsError> {
    let json = serde_json::to_string(value).map_err(error)?;
    js_sys::JSON::parse(&json).map_err(|_| error("a value JSON cannot hold"))
}

/// The plain objects the API takes and gives, for the generated `.d.ts`.
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** A clip by index or by name. */
export type ClipRef = number | string;
/** One sequence player of an agent. */
export interface PlayerSpec { clip: ClipRef; start?: number; rate?: number; looping?: boolean; weight?: number; }
/** Where an instance stands: translation xyz, rotation quaternion xyzw, scale xyz. */
export interface Placement { translation?: [number, number, number]; rotation?: [number, number, number, number]; scale?: [number, number, number]; }
/** One instance of a crowd. */
export interface AgentSpec {
  players: PlayerSpec[];
  synced?: boolean;
  /** null: no root motion; "keep": extracted, the pose keeps its root; a lock: in place. */
  rootMotion?: null | "keep" | "refPose" | "firstFrame" | "zero";
  rootAxes?: "everything" | "groundPlane" | "yawOnly";
  placement?: Placement;
}
/** One instance of an evaluator's frame. */
export interface ClipSampleSpec { clip: ClipRef; time: number; looping?: boolean; }
/** GpuOptions. */
export interface GpuOptions {
  outputs?: "all" | "componentAndSkinning" | "skinning";
  /** rows3x4: 48 bytes a bone, three rows [r | t]; columns4x4: a column-major mat4x4f. */
  skinning?: "rows3x4" | "columns4x4";
  passes?: "auto" | "fused" | "separate";
  maxBindingSize?: number;
}
/** retarget::PlanOptions. */
export interface PlanOptions { alignRest?: boolean; matchNames?: boolean; translationDeltas?: boolean; rest?: "bind" | "nodes"; boneMap?: Record<string, string>; }
/** A frame's GPU time per pass. */
export interface PassTimesSpec { totalMs: number; passes: { pass: string; ms: number }[]; }
/** The output buffers of instances first .. first + count, instance-major (instance - first) * bones + bone. */
export interface OutputChunkSpec {
  first: number;
  count: number;
  skinning: GPUBuffer;
  component: GPUBuffer | null;
  locals: GPUBuffer | null;
  skinningLayout: "rows3x4" | "columns4x4";
  /** GpuCrowd only: 96 bytes an instance, the last step's delta then the placement. */
  rootMotion?: GPUBuffer;
}
"#;
