//! Which source bone drives each target bone.

use std::collections::HashMap;

use super::Rig;
use crate::error::{Error, Result};
use crate::model::Skeleton;

/// How a target bone found its source bone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MatchKind {
    /// The same name.
    Exact,
    /// The same name once the rig's prefixes are stripped and case is ignored.
    Stripped,
    /// The rig's `bone_map`.
    Mapped,
}

impl MatchKind {
    /// A short label for reports: `exact`, `prefix/case` or `bone_map`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Stripped => "prefix/case",
            Self::Mapped => "bone_map",
        }
    }
}

/// The correspondence from target bones to source bones. Matching runs in rounds, each for the
/// bones still unmatched: exact names, then names with the rig's prefixes stripped and case
/// ignored, then the rig's explicit map. Empty names never match (glTF nodes may be unnamed),
/// and neither does a stripped name that two source bones share.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneMapping {
    matches: Vec<Option<(usize, MatchKind)>>,
    source_len: usize,
}

impl BoneMapping {
    /// Matches every bone of `target` to a bone of `source` where it can, by `rig`'s names,
    /// prefixes and map. A `bone_map` entry naming a bone its skeleton lacks is an
    /// [`Error::UnknownBone`]; one that contradicts a name match is an [`Error::MapShadowed`].
    pub fn new(source: &Skeleton, target: &Skeleton, rig: &Rig) -> Result<Self> {
        let mut matches: Vec<Option<(usize, MatchKind)>> = target
            .names()
            .iter()
            .map(|n| {
                let s = if n.is_empty() { None } else { source.find(n) };
                s.map(|s| (s, MatchKind::Exact))
            })
            .collect();

        // Stripped keys; a key two source bones share matches neither.
        let mut by_key: HashMap<String, Option<usize>> = HashMap::new();
        for (i, name) in source.names().iter().enumerate() {
            let key = rig.match_key(name);
            if !key.is_empty() {
                by_key
                    .entry(key)
                    .and_modify(|e| *e = None)
                    .or_insert(Some(i));
            }
        }
        for (m, name) in matches.iter_mut().zip(target.names()) {
            if m.is_none() {
                if let Some(&Some(s)) = by_key.get(&rig.match_key(name)) {
                    *m = Some((s, MatchKind::Stripped));
                }
            }
        }

        for (t_name, s_name) in &rig.bone_map {
            let unknown = |name: &str, skeleton| Error::UnknownBone {
                what: "rig bone_map".to_string(),
                name: name.to_string(),
                skeleton,
            };
            let t = target
                .find(t_name)
                .ok_or_else(|| unknown(t_name, "target"))?;
            let s = source
                .find(s_name)
                .ok_or_else(|| unknown(s_name, "source"))?;
            match matches[t] {
                None => matches[t] = Some((s, MatchKind::Mapped)),
                Some((found, _)) if found == s => {}
                Some((found, _)) => {
                    return Err(Error::MapShadowed {
                        target: t_name.clone(),
                        mapped: s_name.clone(),
                        matched: source.names()[found].clone(),
                    })
                }
            }
        }
        Ok(Self {
            matches,
            source_len: source.len(),
        })
    }

    /// Every bone drives itself (a clip on its own skeleton).
    pub fn identity(skeleton: &Skeleton) -> Self {
        Self {
            matches: (0..skeleton.len())
                .map(|i| Some((i, MatchKind::Exact)))
                .collect(),
            source_len: skeleton.len(),
        }
    }

    /// Per target bone: the source bone and how it matched.
    pub fn matches(&self) -> &[Option<(usize, MatchKind)>] {
        &self.matches
    }

    /// The source bone driving `target_bone`; `None` when it has none (it keeps its reference
    /// pose).
    pub fn source_of(&self, target_bone: usize) -> Option<usize> {
        self.matches[target_bone].map(|(s, _)| s)
    }

    /// The number of target bones that have a source bone.
    pub fn matched_count(&self) -> usize {
        self.matches.iter().flatten().count()
    }

    /// Source bones that drive no target bone (their tracks are ignored).
    pub fn unused_sources(&self) -> Vec<usize> {
        let mut used = vec![false; self.source_len];
        for &(s, _) in self.matches.iter().flatten() {
            used[s] = true;
        }
        (0..self.source_len).filter(|&s| !used[s]).collect()
    }
}
