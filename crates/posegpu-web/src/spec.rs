//! The plain descriptions JavaScript passes (agents, clip samples, GPU options, retarget plan
//! options), as JSON, and what they become in posegpu. Native too: the fixtures describe their
//! scenes in the same words, so the browser builds exactly what the native run built.
//!
//! A failure is a message: posegpu's own (`Error`'s Display) where posegpu refuses a value,
//! else one naming the field.

use posegpu::glam::{Quat, Vec3};
use posegpu::playback::{Agent, PlayRate, Player};
use posegpu::retarget::PlanOptions;
use posegpu::{
    AnimLibrary, ClipId, ClipSample, FusePolicy, GpuOptions, Outputs, RestPose, RootLock,
    RootMotionAxes, SkinningLayout, Transform,
};
use serde::{Deserialize, Serialize};

/// What a failure says: posegpu's message, or one about a description.
pub type Message = String;

/// A clip by index or by name.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ClipRef {
    /// The clip's index in the library.
    Index(u32),
    /// The clip's name (`AnimLibrary::find_clip`).
    Name(String),
}

impl ClipRef {
    /// The library's clip.
    pub fn resolve(&self, lib: &AnimLibrary) -> Result<ClipId, Message> {
        match self {
            ClipRef::Index(i) if (*i as usize) < lib.clip_count() => Ok(ClipId(*i)),
            ClipRef::Index(i) => Err(format!(
                "clip {i} is past the library's {} clips",
                lib.clip_count()
            )),
            ClipRef::Name(name) => lib.find_clip(name).map_err(|e| e.to_string()),
        }
    }
}

/// One sequence player (`playback::Player`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlayerSpec {
    /// The clip it plays (its track).
    pub clip: ClipRef,
    /// Start position, seconds.
    #[serde(default)]
    pub start: f32,
    /// Play rate (UE's PlayRate; negative plays backwards).
    #[serde(default = "one")]
    pub rate: f32,
    /// Loops (default) or stops at the end.
    #[serde(default = "yes")]
    pub looping: bool,
    /// Blend weight.
    #[serde(default = "one")]
    pub weight: f32,
}

/// A placement: where an instance stands.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlacementSpec {
    /// `[x, y, z]`.
    #[serde(default)]
    pub translation: [f32; 3],
    /// A quaternion `[x, y, z, w]` (normalized here).
    #[serde(default = "identity")]
    pub rotation: [f32; 4],
    /// `[x, y, z]`.
    #[serde(default = "ones")]
    pub scale: [f32; 3],
}

/// One instance of a crowd (`playback::Agent`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentSpec {
    /// Its players, blended by weight.
    pub players: Vec<PlayerSpec>,
    /// Players kept in step by normalized phase.
    #[serde(default)]
    pub synced: bool,
    /// Root motion: absent or `null`: none; `"keep"`: extracted, the pose keeps its root;
    /// `"refPose"`, `"firstFrame"`, `"zero"`: extracted in place, the root showing that lock.
    #[serde(default)]
    pub root_motion: Option<String>,
    /// Which parts are extracted: `"everything"` (default), `"groundPlane"`, `"yawOnly"`.
    #[serde(default)]
    pub root_axes: Option<String>,
    /// Where the instance starts (default: the origin).
    #[serde(default)]
    pub placement: Option<PlacementSpec>,
}

impl AgentSpec {
    /// The agent, its clips found in `lib`, and its starting placement.
    pub fn resolve(&self, lib: &AnimLibrary) -> Result<(Agent, Option<Transform>), Message> {
        let players = (self.players.iter())
            .map(|p| {
                Ok(Player::new(p.clip.resolve(lib)?)
                    .starting_at(p.start)
                    .with_rate(PlayRate::new(p.rate))
                    .looping(p.looping)
                    .with_weight(p.weight))
            })
            .collect::<Result<Vec<_>, Message>>()?;
        let mut agent = Agent::blend(&players);
        if self.synced {
            agent = agent.synced();
        }
        match self.root_motion.as_deref() {
            None => {}
            Some("keep") => agent = agent.with_root_motion(None),
            Some(lock) => agent = agent.with_root_motion(Some(root_lock(lock)?)),
        }
        if let Some(axes) = self.root_axes.as_deref() {
            agent = agent.with_root_axes(root_axes(axes)?);
        }
        Ok((agent, self.placement.as_ref().map(PlacementSpec::transform)))
    }
}

impl PlacementSpec {
    /// The placement as a transform.
    pub fn transform(&self) -> Transform {
        Transform {
            rotation: Quat::from_array(self.rotation).normalize(),
            translation: Vec3::from_array(self.translation),
            scale: Vec3::from_array(self.scale),
        }
    }
}

/// One instance of an evaluator's frame: a clip at a time.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SampleSpec {
    /// The clip.
    pub clip: ClipRef,
    /// Seconds.
    pub time: f32,
    /// Wraps the time into the clip (default) or clamps it.
    #[serde(default = "yes")]
    pub looping: bool,
}

impl SampleSpec {
    /// The clip sample.
    pub fn resolve(&self, lib: &AnimLibrary) -> Result<ClipSample, Message> {
        Ok(ClipSample::new(
            self.clip.resolve(lib)?,
            self.time,
            self.looping,
        ))
    }
}

/// `GpuOptions` as JavaScript names them.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OptionsSpec {
    /// `"all"` (default), `"componentAndSkinning"` or `"skinning"`.
    #[serde(default)]
    pub outputs: Option<String>,
    /// `"rows3x4"` (default: 48 bytes a bone) or `"columns4x4"` (64 bytes, `mat4x4f`).
    #[serde(default)]
    pub skinning: Option<String>,
    /// `"auto"` (default), `"fused"` or `"separate"`.
    #[serde(default)]
    pub passes: Option<String>,
    /// At most this many bytes per storage binding (smaller chunks).
    #[serde(default)]
    pub max_binding_size: Option<u64>,
}

impl OptionsSpec {
    /// The options.
    pub fn resolve(&self) -> Result<GpuOptions, Message> {
        let outputs = match self.outputs.as_deref() {
            None | Some("all") => Outputs::ALL,
            Some("componentAndSkinning") => Outputs::COMPONENT_AND_SKINNING,
            Some("skinning") => Outputs::SKINNING,
            Some(o) => return Err(unknown("outputs", o, "all, componentAndSkinning, skinning")),
        };
        let layout = match self.skinning.as_deref() {
            None | Some("rows3x4") => SkinningLayout::Rows3x4,
            Some("columns4x4") => SkinningLayout::Columns4x4,
            Some(s) => return Err(unknown("skinning", s, "rows3x4, columns4x4")),
        };
        let passes = match self.passes.as_deref() {
            None | Some("auto") => FusePolicy::Auto,
            Some("fused") => FusePolicy::Fused,
            Some("separate") => FusePolicy::Separate,
            Some(p) => return Err(unknown("passes", p, "auto, fused, separate")),
        };
        Ok(GpuOptions {
            outputs: outputs.with_skinning(layout),
            passes,
            max_binding_size: self.max_binding_size,
            ..GpuOptions::default()
        })
    }
}

/// `retarget::PlanOptions` as JavaScript names them; absent fields keep posegpu's defaults.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanSpec {
    /// Rest-pose alignment.
    pub align_rest: Option<bool>,
    /// Pair role-less bones of equal names.
    pub match_names: Option<bool>,
    /// Carry translation changes of one-to-one bones.
    pub translation_deltas: Option<bool>,
    /// `"bind"` or `"nodes"`.
    pub rest: Option<String>,
    /// Target bone → source bone.
    pub bone_map: Option<std::collections::BTreeMap<String, String>>,
}

impl PlanSpec {
    /// The plan options.
    pub fn resolve(&self) -> Result<PlanOptions, Message> {
        let mut o = PlanOptions::default();
        o.align_rest = self.align_rest.unwrap_or(o.align_rest);
        o.match_names = self.match_names.unwrap_or(o.match_names);
        o.translation_deltas = self.translation_deltas.unwrap_or(o.translation_deltas);
        o.rest = match self.rest.as_deref() {
            None => o.rest,
            Some("bind") => RestPose::Bind,
            Some("nodes") => RestPose::Nodes,
            Some(r) => return Err(unknown("rest", r, "bind, nodes")),
        };
        if let Some(map) = &self.bone_map {
            o.bone_map = map.clone();
        }
        Ok(o)
    }
}

/// Parses a JSON description, naming what it describes in the message.
pub fn parse<T: for<'de> Deserialize<'de>>(what: &str, json: &str) -> Result<T, Message> {
    serde_json::from_str(json).map_err(|e| format!("{what}: {e}"))
}

fn root_lock(name: &str) -> Result<RootLock, Message> {
    match name {
        "refPose" => Ok(RootLock::RefPose),
        "firstFrame" => Ok(RootLock::FirstFrame),
        "zero" => Ok(RootLock::Zero),
        _ => Err(unknown(
            "rootMotion",
            name,
            "null, keep, refPose, firstFrame, zero",
        )),
    }
}

fn root_axes(name: &str) -> Result<RootMotionAxes, Message> {
    match name {
        "everything" => Ok(RootMotionAxes::EVERYTHING),
        "groundPlane" => Ok(RootMotionAxes::GROUND_PLANE),
        "yawOnly" => Ok(RootMotionAxes::YAW_ONLY),
        _ => Err(unknown(
            "rootAxes",
            name,
            "everything, groundPlane, yawOnly",
        )),
    }
}

fn unknown(field: &str, value: &str, known: &str) -> Message {
    format!("{field}: unknown value {value:?} (one of {known})")
}

fn one() -> f32 {
    1.0
}

fn yes() -> bool {
    true
}

fn identity() -> [f32; 4] {
    [0.0, 0.0, 0.0, 1.0]
}

fn ones() -> [f32; 3] {
    [1.0; 3]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library() -> AnimLibrary {
        let asset = posegpu::procedural::humanoid_asset();
        AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap()
    }

    #[test]
    fn an_agent_resolves_with_its_defaults() {
        let lib = library();
        let json = r#"{"players": [{"clip": "walk"}, {"clip": 2, "start": 0.5, "rate": -1,
            "looping": false, "weight": 0.25}], "synced": true, "rootMotion": "firstFrame",
            "rootAxes": "groundPlane", "placement": {"translation": [1, 0, 2]}}"#;
        let spec: AgentSpec = parse("agent", json).unwrap();
        let (agent, placement) = spec.resolve(&lib).unwrap();
        assert_eq!(agent.players.len(), 2);
        let walk = lib.find_clip("walk").unwrap();
        assert_eq!(agent.players[0], Player::new(walk));
        let second = agent.players[1];
        assert_eq!(
            (second.position, second.looping, second.weight),
            (0.5, false, 0.25)
        );
        assert_eq!(second.rate.rate, -1.0);
        assert!(agent.sync && agent.root_motion);
        assert_eq!(agent.in_place, Some(RootLock::FirstFrame));
        assert_eq!(agent.root_axes, RootMotionAxes::GROUND_PLANE);
        let p = placement.unwrap();
        assert_eq!(p.translation, Vec3::new(1.0, 0.0, 2.0));
        assert_eq!((p.rotation, p.scale), (Quat::IDENTITY, Vec3::ONE));
    }

    #[test]
    fn root_motion_kept_in_the_pose_or_absent() {
        let lib = library();
        let keep: AgentSpec =
            parse("agent", r#"{"players":[{"clip":0}],"rootMotion":"keep"}"#).unwrap();
        let (agent, _) = keep.resolve(&lib).unwrap();
        assert!(agent.root_motion && agent.in_place.is_none());
        let none: AgentSpec = parse("agent", r#"{"players":[{"clip":0}]}"#).unwrap();
        let (agent, placement) = none.resolve(&lib).unwrap();
        assert!(!agent.root_motion && placement.is_none());
    }

    #[test]
    fn bad_descriptions_name_the_field_or_give_posegpus_message() {
        let lib = library();
        let unknown_field = parse::<AgentSpec>("agent", r#"{"players":[{"clip":0,"speed":2}]}"#);
        assert!(unknown_field.unwrap_err().contains("speed"));
        let lock: AgentSpec =
            parse("agent", r#"{"players":[{"clip":0}],"rootMotion":"hips"}"#).unwrap();
        assert!(lock.resolve(&lib).unwrap_err().contains("rootMotion"));
        let clip: AgentSpec = parse("agent", r#"{"players":[{"clip":"moonwalk"}]}"#).unwrap();
        let message = clip.resolve(&lib).unwrap_err();
        assert_eq!(message, lib.find_clip("moonwalk").unwrap_err().to_string());
        let past: AgentSpec = parse("agent", r#"{"players":[{"clip":99}]}"#).unwrap();
        assert!(past.resolve(&lib).unwrap_err().contains("99"));
        let options: OptionsSpec = parse("options", r#"{"outputs":"bones"}"#).unwrap();
        assert!(options.resolve().unwrap_err().contains("outputs"));
        let plan: PlanSpec = parse("plan", r#"{"rest":"a-pose"}"#).unwrap();
        assert!(plan.resolve().unwrap_err().contains("rest"));
    }

    #[test]
    fn options_and_plans_resolve() {
        let o: OptionsSpec = parse(
            "options",
            r#"{"outputs":"skinning","skinning":"columns4x4","passes":"separate","maxBindingSize":4096}"#,
        )
        .unwrap();
        let o = o.resolve().unwrap();
        assert_eq!(
            o.outputs,
            Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4)
        );
        assert_eq!(
            (o.passes, o.max_binding_size),
            (FusePolicy::Separate, Some(4096))
        );
        assert_eq!(
            OptionsSpec::default().resolve().unwrap().outputs,
            Outputs::ALL
        );
        let p: PlanSpec = parse(
            "plan",
            r#"{"alignRest":false,"rest":"nodes","boneMap":{"a":"b"}}"#,
        )
        .unwrap();
        let p = p.resolve().unwrap();
        assert!(!p.align_rest && p.rest == RestPose::Nodes);
        assert_eq!(p.bone_map.get("a").map(String::as_str), Some("b"));
    }
}
