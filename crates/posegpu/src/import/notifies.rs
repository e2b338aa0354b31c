//! Notifies from files: a sidecar JSON next to an animation file, and glTF animations' `extras`.
//! Both use one record, `{"name": "footstep_l", "time": 0.25}` (seconds into the clip).
//!
//! Sidecar: an object from clip name to its notifies,
//! `{"Walking_A": [{"name": "footstep_l", "time": 0.25}, {"name": "footstep_r", "time": 0.75}]}`.
//! glTF: an animation's `"extras": {"notifies": [...]}` (what an exporter's custom properties
//! give).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::{Asset, Clip};

/// One notify as files write it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotifyRecord {
    pub name: String,
    pub time: f32,
}

/// A glTF animation's `extras`: its notifies, other keys left alone.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct AnimationExtras {
    #[serde(default)]
    pub notifies: Vec<NotifyRecord>,
}

/// `clip` with `records` added as notifies (each checked against the clip's range).
pub(crate) fn with_notifies(mut clip: Clip, records: &[NotifyRecord]) -> Result<Clip> {
    for r in records {
        clip = clip.with_notify(r.name.clone(), r.time)?;
    }
    Ok(clip)
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
