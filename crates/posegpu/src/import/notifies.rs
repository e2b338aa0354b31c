//! Notifies from files: a sidecar JSON next to an animation file, and glTF animations' `extras`.
//! Both use one record, `{"name": "footstep_l", "time": 0.25}` (seconds into the clip). A glTF
//! animation's extras may also hold curves, `{"name", "times", "values", "step"}`, as posegpu's
//! exporter writes them.
//!
//! Sidecar: an object from clip name to its notifies,
//! `{"Walking_A": [{"name": "footstep_l", "time": 0.25}, {"name": "footstep_r", "time": 0.75}]}`.
//! glTF: an animation's `"extras": {"notifies": [...]}` (what an exporter's custom properties
//! give).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Asset, Clip};
#[cfg(feature = "gltf")]
use crate::model::{Channel, Interpolation};

/// One notify as files write it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotifyRecord {
    pub name: String,
    pub time: f32,
}

/// A glTF animation's `extras`: its notifies and curves, other keys left alone.
#[cfg(feature = "gltf")]
#[derive(Debug, Default, Deserialize)]
pub(crate) struct AnimationExtras {
    #[serde(default)]
    pub notifies: Vec<NotifyRecord>,
    #[serde(default)]
    pub curves: Vec<CurveRecord>,
}

/// One curve as the exporter writes it.
#[cfg(feature = "gltf")]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CurveRecord {
    pub name: String,
    pub times: Vec<f32>,
    pub values: Vec<f32>,
    #[serde(default)]
    pub step: bool,
}

/// The extras the exporter writes for `clip`: its notifies and curves.
#[cfg(feature = "gltf")]
pub(crate) fn clip_extras(clip: &Clip) -> serde_json::Value {
    let notifies: Vec<NotifyRecord> = clip
        .notifies()
        .iter()
        .map(|n| NotifyRecord {
            name: n.name.clone(),
            time: n.time,
        })
        .collect();
    let curves: Vec<CurveRecord> = clip
        .curves()
        .iter()
        .map(|c| CurveRecord {
            name: c.name.clone(),
            times: c.channel.times.clone(),
            values: c.channel.values.clone(),
            step: c.channel.interpolation == Interpolation::Step,
        })
        .collect();
    serde_json::json!({ "notifies": notifies, "curves": curves })
}

/// `clip` with `records` added as notifies (each checked against the clip's range).
pub(crate) fn with_notifies(mut clip: Clip, records: &[NotifyRecord]) -> Result<Clip> {
    for r in records {
        clip = clip.with_notify(r.name.clone(), r.time)?;
    }
    Ok(clip)
}

/// `clip` with an animation's extras: its curves (replacing morph curves of the same name),
/// then its notifies.
#[cfg(feature = "gltf")]
pub(crate) fn with_extras(mut clip: Clip, extras: &AnimationExtras) -> Result<Clip> {
    for c in &extras.curves {
        let interpolation = if c.step {
            Interpolation::Step
        } else {
            Interpolation::Linear
        };
        let channel = Channel::new(c.times.clone(), c.values.clone(), interpolation);
        clip = clip.with_curve(c.name.clone(), channel)?;
    }
    with_notifies(clip, &extras.notifies)
}

/// Adds the notifies of the sidecar JSON at `path` to `asset`'s clips, by clip name. A clip
/// the file names that the asset lacks, malformed JSON, or a time outside a clip's range is an
/// error naming the file; the asset is changed only when the whole file applies.
pub fn apply_sidecar(asset: &mut Asset, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let in_file = |source: Error| Error::InFile {
        path: path.to_path_buf(),
        source: Box::new(source),
    };
    let bytes = super::read_bounded(path)?;
    let sidecar: BTreeMap<String, Vec<NotifyRecord>> =
        serde_json::from_slice(&bytes).map_err(|e| {
            in_file(Error::Notify {
                clip: "(sidecar)".into(),
                what: format!("not a map from clip name to [{{\"name\", \"time\"}}]: {e}"),
            })
        })?;
    let mut clips = asset.clips.clone();
    for (name, records) in &sidecar {
        let Some(k) = clips.iter().position(|c| c.name() == name) else {
            let available: Vec<&str> = asset.clips.iter().map(Clip::name).collect();
            return Err(in_file(Error::Notify {
                clip: name.clone(),
                what: format!("no such clip (the asset has: {})", available.join(", ")),
            }));
        };
        clips[k] = with_notifies(clips[k].clone(), records).map_err(in_file)?;
    }
    asset.clips = clips;
    Ok(())
}
