//! BVH (Biovision hierarchy) motion capture: a joint hierarchy with offsets, then one line of
//! channel values per frame.
//!
//! Conventions (those of Blender's importer and most mocap tools):
//! - a joint's rotation is the product of its rotation channels in the order listed, in
//!   degrees: `Zrotation Xrotation Yrotation` is `Rz · Rx · Ry` (column vectors);
//! - a position channel is the joint's local position on that axis: it replaces that component
//!   of the OFFSET;
//! - `End Site` blocks only mark where a chain ends and are not bones.

use std::iter::Enumerate;
use std::path::Path;
use std::str::{FromStr, Lines, SplitWhitespace};

use glam::{Quat, Vec3};

use super::Asset;
use crate::error::{Error, Result};
use crate::math::Transform;
use crate::model::AssetFrame;
use crate::model::{Bone, Skeleton};
use crate::model::{BoneTrack, Channel, Clip, Interpolation};

/// Reads and parses the BVH file at `path` (see [`parse_bvh`]).
pub fn load_bvh(path: &Path) -> Result<Asset> {
    let text = std::fs::read_to_string(path).map_err(|source| crate::Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_bvh(&text, path)
}

/// Parses BVH text into a skeleton and one clip named after the file stem; `path` only names
/// the file in errors and the clip.
pub fn parse_bvh(text: &str, path: &Path) -> Result<Asset> {
    let mut tokens = Tokens {
        path,
        lines: text.lines().enumerate(),
        words: "".split_whitespace(),
        line: 1,
    };
    let joints = parse_hierarchy(&mut tokens)?;
    let width = joints.iter().map(|j| j.dofs.len()).sum();
    let motion = parse_motion(&mut tokens, width)?;

    let bones = joints
        .iter()
        .map(|j| {
            let rest = Transform::new(j.offset, Quat::IDENTITY, Vec3::ONE);
            Bone::new(j.name.clone(), j.parent, rest)
        })
        .collect();
    let skeleton = Skeleton::new(bones)?;
    let name = path
        .file_stem()
        .map_or_else(|| "bvh".into(), |s| s.to_string_lossy().into_owned());
    let clip = Clip::new(name, &skeleton, tracks(&joints, &motion))?;
    Ok(Asset {
        skeleton,
        clips: vec![clip],
        nodes: None,
        // BVH has no world: Y-up and Z-up files exist, in any unit.
        frame: AssetFrame::UNKNOWN,
    })
}

/// One degree of freedom a frame value drives: position or rotation about axis 0, 1 or 2.
#[derive(Clone, Copy)]
enum Dof {
    Position(usize),
    Rotation(usize),
}

impl Dof {
    fn parse(word: &str) -> Option<Self> {
        let lower = word.to_ascii_lowercase();
        let axis = match lower.as_bytes().first()? {
            b'x' => 0,
            b'y' => 1,
            b'z' => 2,
            _ => return None,
        };
        match &lower[1..] {
            "position" => Some(Self::Position(axis)),
            "rotation" => Some(Self::Rotation(axis)),
            _ => None,
        }
    }
}

/// A joint as read: its OFFSET and the channels its frame values fill, in file order.
struct Joint {
    name: String,
    parent: Option<usize>,
    offset: Vec3,
    dofs: Vec<Dof>,
}

/// The MOTION section: `frames` rows of `width` values each, row-major.
struct Motion {
    frame_time: f64,
    frames: usize,
    values: Vec<f32>,
}

/// Whitespace-separated words with the 1-based line of the last one read. The hierarchy is
/// read word by word; frames are read line by line, since a frame is exactly one line.
struct Tokens<'a> {
    path: &'a Path,
    lines: Enumerate<Lines<'a>>,
    words: SplitWhitespace<'a>,
    line: usize,
}

impl<'a> Tokens<'a> {
    fn err_at(&self, line: usize, message: impl Into<String>) -> Error {
        bvh_error(self.path, line, message)
    }

    fn err(&self, message: impl Into<String>) -> Error {
        self.err_at(self.line, message)
    }

    /// The next word, moving on to later lines as needed; `None` at the end of the text.
    fn next(&mut self) -> Option<&'a str> {
        loop {
            if let Some(word) = self.words.next() {
                return Some(word);
            }
            let (index, line) = self.lines.next()?;
            self.line = index + 1;
            self.words = line.split_whitespace();
        }
    }

    fn expect(&mut self, what: &str) -> Result<&'a str> {
        self.next()
            .ok_or_else(|| self.err(format!("unexpected end of file, expected {what}")))
    }

    fn keyword(&mut self, keyword: &str) -> Result<()> {
        match self.expect(&format!("'{keyword}'"))? {
            w if w.eq_ignore_ascii_case(keyword) => Ok(()),
            w => Err(self.err(format!("expected '{keyword}', found '{w}'"))),
        }
    }

    fn number<T: FromStr>(&mut self, what: &str) -> Result<T> {
        let word = self.expect(what)?;
        word.parse()
            .map_err(|_| self.err(format!("bad number '{word}' for {what}")))
    }

    fn float(&mut self, what: &str) -> Result<f32> {
        let v: f32 = self.number(what)?;
        if !v.is_finite() {
            return Err(self.err(format!("{what} is not finite ({v})")));
        }
        Ok(v)
    }

    /// The words of a block header (`ROOT name`, `End Site`) left on the current line, then its
    /// opening brace, which may end that line or start the next.
    fn header(&mut self, keyword: &str) -> Result<Vec<&'a str>> {
        let mut words: Vec<&str> = self.words.by_ref().collect();
        if words.last() == Some(&"{") {
            words.pop();
        } else {
            match self.expect(&format!("'{{' after {keyword}"))? {
                "{" => {}
                w => return Err(self.err(format!("expected '{{' after {keyword}, found '{w}'"))),
            }
        }
        Ok(words)
    }
}

const KEYWORDS: [&str; 8] = [
    "HIERARCHY",
    "ROOT",
    "JOINT",
    "END",
    "OFFSET",
    "CHANNELS",
    "}",
    "MOTION",
];

/// An open `{ }` block: a joint, or an End Site (`joint: None`), with the line that opened it.
struct Block {
    joint: Option<usize>,
    line: usize,
    has_offset: bool,
}

/// Reads from `HIERARCHY` up to and including `MOTION`. Blocks are tracked on an explicit stack
/// rather than by recursion, so that deeply nested input cannot overflow the call stack.
fn parse_hierarchy(t: &mut Tokens) -> Result<Vec<Joint>> {
    match t.next() {
        Some(w) if w.eq_ignore_ascii_case("HIERARCHY") => {}
        Some(w) => return Err(t.err(format!("expected HIERARCHY, found '{w}'"))),
        None => return Err(t.err("empty file: expected HIERARCHY")),
    }
    let mut joints: Vec<Joint> = Vec::new();
    let mut open: Vec<Block> = Vec::new();
    loop {
        let Some(word) = t.next() else {
            return Err(match open.last() {
                Some(b) => t.err(format!(
                    "unexpected end of file: missing '}}' for the block opened on line {}",
                    b.line
                )),
                None if joints.is_empty() => t.err("unexpected end of file, expected ROOT"),
                None => t.err("unexpected end of file, expected MOTION"),
            });
        };
        let keyword = word.to_ascii_uppercase();
        // None: top level; Some(None): inside an End Site; Some(Some(j)): inside joint j.
        let top = open.last().map(|b| b.joint);
        match (keyword.as_str(), top) {
            ("ROOT", None) | ("JOINT", Some(Some(_))) => {
                let line = t.line;
                let name = t.header(word)?.join(" ");
                if name.is_empty() {
                    return Err(t.err_at(line, format!("{word} without a name")));
                }
                joints.push(Joint {
                    name,
                    parent: top.flatten(),
                    offset: Vec3::ZERO,
                    dofs: Vec::new(),
                });
                open.push(Block {
                    joint: Some(joints.len() - 1),
                    line,
                    has_offset: false,
                });
            }
            ("END", Some(Some(_))) => {
                let line = t.line;
                match t.header("End")?.as_slice() {
                    [site] if site.eq_ignore_ascii_case("site") => {}
                    _ => return Err(t.err_at(line, "expected 'End Site'")),
                }
                open.push(Block {
                    joint: None,
                    line,
                    has_offset: false,
                });
            }
            ("OFFSET", Some(joint)) => {
                let offset = Vec3::new(
                    t.float("OFFSET x")?,
                    t.float("OFFSET y")?,
                    t.float("OFFSET z")?,
                );
                if let Some(block) = open.last_mut() {
                    if block.has_offset {
                        return Err(t.err("second OFFSET in the same block"));
                    }
                    block.has_offset = true;
                }
                if let Some(j) = joint {
                    joints[j].offset = offset;
                }
            }
            ("CHANNELS", Some(Some(j))) => {
                if !joints[j].dofs.is_empty() {
                    return Err(t.err("second CHANNELS in the same joint"));
                }
                let count: usize = t.number("channel count")?;
                // The names are on the CHANNELS line; reading only those catches a wrong count.
                let names: Vec<&str> = t.words.by_ref().collect();
                if names.len() != count {
                    return Err(t.err(format!(
                        "CHANNELS says {count} channels but lists {}",
                        names.len()
                    )));
                }
                joints[j].dofs = names
                    .iter()
                    .map(|w| Dof::parse(w).ok_or_else(|| t.err(format!("unknown channel '{w}'"))))
                    .collect::<Result<_>>()?;
            }
            ("}", Some(_)) => match open.pop() {
                Some(block) if !block.has_offset => {
                    let line = block.line;
                    return Err(t.err(format!("block opened on line {line} has no OFFSET")));
                }
                _ => {}
            },
            ("MOTION", None) if !joints.is_empty() => return Ok(joints),
            ("MOTION", None) => return Err(t.err("MOTION before any ROOT")),
            ("MOTION", Some(_)) => {
                let line = open.last().map_or(0, |b| b.line);
                return Err(t.err(format!(
                    "MOTION before the hierarchy is closed: missing '}}' for the block opened on line {line}"
                )));
            }
            _ if !KEYWORDS.contains(&keyword.as_str()) => {
                return Err(t.err(format!("unknown keyword '{word}'")));
            }
            _ => {
                let place = match top {
                    None => "outside any ROOT block",
                    Some(None) => "inside an End Site",
                    Some(Some(_)) => "here",
                };
                return Err(t.err(format!("'{word}' is not allowed {place}")));
            }
        }
    }
}

/// Reads `Frames:`, `Frame Time:` and the frame lines (each exactly `width` values).
fn parse_motion(t: &mut Tokens, width: usize) -> Result<Motion> {
    if width == 0 {
        return Err(t.err("no joint has CHANNELS, so there is nothing to animate"));
    }
    t.keyword("Frames:")?;
    let declared: usize = t.number("frame count")?;
    t.keyword("Frame")?;
    t.keyword("Time:")?;
    let frame_time: f64 = t.number("frame time")?;
    let time_line = t.line;
    if !(frame_time.is_finite() && frame_time > 0.0) {
        return Err(t.err(format!("frame time must be positive, got {frame_time}")));
    }
    if let Some(w) = t.words.next() {
        return Err(t.err(format!("unexpected '{w}' after the frame time")));
    }

    let path = t.path;
    let mut values = Vec::new();
    let mut frames = 0;
    for (index, line) in t.lines.by_ref() {
        let err = |message: String| bvh_error(path, index + 1, message);
        let start = values.len();
        for word in line.split_whitespace() {
            let v: f32 = word
                .parse()
                .map_err(|_| err(format!("bad number '{word}' in frame {}", frames + 1)))?;
            if !v.is_finite() {
                return Err(err(format!(
                    "non-finite value '{word}' in frame {}",
                    frames + 1
                )));
            }
            values.push(v);
        }
        match values.len() - start {
            0 => continue, // blank lines, such as a trailing one, are not frames
            n if n != width => {
                return Err(err(format!(
                    "frame {} has {n} values, expected {width} (the sum of the CHANNELS counts)",
                    frames + 1
                )))
            }
            _ => frames += 1,
        }
    }
    if frames == 0 {
        return Err(t.err("no frame lines after 'Frame Time:'"));
    }
    if frames != declared {
        log::warn!(
            "{}: header says Frames: {declared} but {frames} frame lines follow; using {frames}",
            t.path.display()
        );
    }
    if !(((frames - 1) as f64 * frame_time) as f32).is_finite() {
        return Err(t.err_at(
            time_line,
            "frame time too large: the clip's duration overflows",
        ));
    }
    Ok(Motion {
        frame_time,
        frames,
        values,
    })
}

/// One track per joint: a rotation channel if it has rotation channels, a translation channel
/// if it has position channels, one key per frame.
fn tracks(joints: &[Joint], motion: &Motion) -> Vec<BoneTrack> {
    let times: Vec<f32> = (0..motion.frames)
        .map(|f| (f as f64 * motion.frame_time) as f32)
        .collect();
    let width = motion.values.len() / motion.frames;
    let mut first = 0;
    joints
        .iter()
        .map(|joint| {
            let has_position = joint.dofs.iter().any(|d| matches!(d, Dof::Position(_)));
            let has_rotation = joint.dofs.iter().any(|d| matches!(d, Dof::Rotation(_)));
            let (mut positions, mut rotations) = (Vec::new(), Vec::new());
            for frame in motion.values.chunks_exact(width) {
                let mut position = joint.offset;
                let mut rotation = Quat::IDENTITY;
                for (dof, &v) in joint.dofs.iter().zip(&frame[first..]) {
                    match *dof {
                        Dof::Position(axis) => position[axis] = v,
                        Dof::Rotation(axis) => rotation *= axis_rotation(axis, v.to_radians()),
                    }
                }
                if has_position {
                    positions.push(position);
                }
                if has_rotation {
                    rotations.push(rotation.normalize());
                }
            }
            first += joint.dofs.len();
            BoneTrack {
                translation: has_position.then(|| keys(&times, positions)),
                rotation: has_rotation.then(|| keys(&times, rotations)),
                scale: None,
            }
        })
        .collect()
}

fn keys<T>(times: &[f32], values: Vec<T>) -> Channel<T> {
    Channel::new(times.to_vec(), values, Interpolation::Linear)
}

fn bvh_error(path: &Path, line: usize, message: impl Into<String>) -> Error {
    Error::Bvh {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

fn axis_rotation(axis: usize, radians: f32) -> Quat {
    match axis {
        0 => Quat::from_rotation_x(radians),
        1 => Quat::from_rotation_y(radians),
        _ => Quat::from_rotation_z(radians),
    }
}
