//! BVH (Biovision hierarchy) motion capture: a joint hierarchy with offsets, then one line of
//! channel values per frame.
//!
//! Conventions (those of Blender's importer and most mocap tools):
//! - a joint's rotation is the product of its rotation channels in the order listed, in
//!   degrees: `Zrotation Xrotation Yrotation` is `Rz · Rx · Ry` (column vectors);
//! - a position channel is the joint's local position on that axis: it replaces that component
//!   of the OFFSET;
//! - `End Site` blocks only mark where a chain ends and are not bones.
//!
//! Input is checked, never repaired: a bad number, a duplicated channel, an OFFSET without
//! exactly three numbers, a frame line of the wrong width (a blank one included) or fewer frame
//! lines than the header declares is an [`Error::Bvh`] naming the file and line. A leading
//! UTF-8 byte-order mark and trailing blank lines are skipped (they carry nothing); more
//! well-formed frame lines than declared (an exporter's miscount) are all read, with a warning.

use std::iter::Enumerate;
use std::path::Path;
use std::str::{FromStr, Lines, SplitWhitespace};

use glam::{Quat, Vec3};

use crate::error::{Error, Result};
use crate::model::Asset;
use crate::model::AssetFrame;
use crate::model::{Bone, Skeleton};
use crate::model::{BoneTrack, Channel, Clip, Interpolation};
use crate::Transform;

/// Reads and parses the BVH file at `path` (see [`parse_bvh`]); bytes that are not UTF-8 are
/// an [`Error::Bvh`] naming their line.
pub fn load_bvh(path: &Path) -> Result<Asset> {
    let bytes = super::read_bounded(path)?;
    parse_bvh(decode(&bytes, path)?, path)
}

/// [`load_bvh`] of a file's bytes: `name` names the data in errors and the clip.
pub fn load_bvh_bytes(bytes: &[u8], name: &Path) -> Result<Asset> {
    super::check_size(bytes, name)?;
    parse_bvh(decode(bytes, name)?, name)
}

/// `bytes` as text, or an error naming the line and column of the first byte that is not UTF-8
/// (`read_to_string` would only say that some byte somewhere is not).
fn decode<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str> {
    let error = match std::str::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(error) => error,
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(bvh_error(
            path,
            1,
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8 or ASCII",
        ));
    }
    let at = error.valid_up_to();
    let before = &bytes[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = at - line_start + 1;
    Err(bvh_error(
        path,
        line,
        format!(
            "invalid UTF-8: byte 0x{:02X} at column {column} (BVH files are ASCII or UTF-8 text)",
            bytes[at]
        ),
    ))
}

/// Parses BVH text into a skeleton and one clip named after the file stem; `path` only names
/// the file in errors and the clip. A leading byte-order mark (`U+FEFF`) is skipped.
pub fn parse_bvh(text: &str, path: &Path) -> Result<Asset> {
    // Windows tools write a UTF-8 byte-order mark; it marks the encoding and is not content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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
    let skeleton = Skeleton::new(bones).map_err(|e| super::in_file(path, e))?;
    let name = path
        .file_stem()
        .map_or_else(|| "bvh".into(), |s| s.to_string_lossy().into_owned());
    let clip = Clip::new(name, &skeleton, tracks(&joints, &motion))
        .map_err(|e| super::in_file(path, e))?;
    Ok(Asset {
        skeleton,
        clips: vec![clip],
        nodes: None,
        // BVH has no world: Y-up and Z-up files exist, in any unit.
        frame: AssetFrame::UNKNOWN,
    })
}

/// One degree of freedom a frame value drives: position or rotation about axis 0, 1 or 2.
#[derive(Clone, Copy, PartialEq)]
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
        self.parse(word, what)
    }

    fn parse<T: FromStr>(&self, word: &str, what: &str) -> Result<T> {
        word.parse()
            .map_err(|_| self.err(format!("bad number '{word}' for {what}")))
    }

    /// `word` as a finite `f32`: `nan`, `inf` and values past the `f32` range (`1e39`) are errors.
    fn float(&self, word: &str, what: &str) -> Result<f32> {
        let v: f32 = self.parse(word, what)?;
        if !v.is_finite() {
            return Err(self.err(format!("{what} '{word}' is not finite ({NON_FINITE})")));
        }
        Ok(v)
    }

    /// The words left on the current line up to the next keyword, such as the `}` that closes
    /// a one-line block (`{ OFFSET 0 1 0 }`).
    fn operands(&mut self) -> Vec<&'a str> {
        let mut words = Vec::new();
        loop {
            let mut ahead = self.words.clone();
            match ahead.next() {
                Some(w) if !is_keyword(w) => {
                    words.push(w);
                    self.words = ahead;
                }
                _ => return words,
            }
        }
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

fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// Why a value that parsed is still refused.
const NON_FINITE: &str = "NaN, infinite, or beyond the f32 range";

/// An open `{ }` block: a joint, or an End Site (`joint: None`), with the line that opened it.
struct Block {
    joint: Option<usize>,
    line: usize,
    has_offset: bool,
}

/// Reads from `HIERARCHY` up to and including `MOTION`. Blocks are tracked on an explicit stack
/// rather than by recursion, so that any nesting depth loads without overflowing the call stack
/// (a chain of 32,768 joints is tested) and no depth limit is needed.
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
                let offset = parse_offset(t)?;
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
                joints[j].dofs = parse_channels(t, &joints[j].name)?;
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

/// The three numbers of an OFFSET line (after the keyword).
fn parse_offset(t: &mut Tokens) -> Result<Vec3> {
    // Only the OFFSET line's own words: a missing or extra number is named as such rather than
    // taking a word of the next line or reading as an unknown keyword.
    let words = t.operands();
    let [x, y, z] = words[..] else {
        return Err(t.err(format!("OFFSET takes 3 numbers, found {}", words.len())));
    };
    Ok(Vec3::new(
        t.float(x, "OFFSET x")?,
        t.float(y, "OFFSET y")?,
        t.float(z, "OFFSET z")?,
    ))
}

/// The channels of `joint`'s CHANNELS line (after the keyword), each listed once.
fn parse_channels(t: &mut Tokens, joint: &str) -> Result<Vec<Dof>> {
    let count: usize = t.number("channel count")?;
    // The names are on the CHANNELS line; reading only those catches a wrong count.
    let names: Vec<&str> = t.words.by_ref().collect();
    if names.len() != count {
        return Err(t.err(format!(
            "CHANNELS says {count} channels but lists {}",
            names.len()
        )));
    }
    let mut dofs: Vec<Dof> = Vec::with_capacity(count);
    for name in names {
        let dof = Dof::parse(name).ok_or_else(|| t.err(format!("unknown channel '{name}'")))?;
        // A second value for one axis would silently overwrite (position) or compound (rotation)
        // the first.
        if dofs.contains(&dof) {
            return Err(t.err(format!(
                "joint '{joint}': channel '{name}' is listed twice in CHANNELS"
            )));
        }
        dofs.push(dof);
    }
    Ok(dofs)
}

/// Reads `Frames:`, `Frame Time:` and the frame lines: exactly as many as `Frames:` declares,
/// each exactly `width` values, then nothing but blank lines.
fn parse_motion(t: &mut Tokens, width: usize) -> Result<Motion> {
    if width == 0 {
        return Err(t.err("no joint has CHANNELS, so there is nothing to animate"));
    }
    t.keyword("Frames:")?;
    let declared: usize = t.number("frame count")?;
    let frames_line = t.line;
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

    // Every line up to the last non-blank one is a frame: a blank line among them is a frame
    // with no values, not one to skip, so that a lost frame is never passed over.
    let mut rows: Vec<(usize, &str)> = t.lines.by_ref().map(|(i, l)| (i + 1, l)).collect();
    while rows.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        rows.pop();
    }
    let (Some(&(first, _)), Some(&(last, _))) = (rows.first(), rows.last()) else {
        return Err(t.err("no frame lines after 'Frame Time:'"));
    };
    let mut values = Vec::new();
    for (frame, &(line, text)) in rows.iter().enumerate() {
        parse_frame(text, width, &mut values)
            .map_err(|message| t.err_at(line, format!("frame {}: {message}", frame + 1)))?;
    }
    let frames = rows.len();
    // Fewer lines than declared is a cut file; more is an exporter's miscount (assimp's
    // Boxing_Toes.bvh declares one frame less than it has): every well-formed line is read.
    if frames < declared {
        return Err(t.err_at(
            frames_line,
            format!(
                "header says Frames: {declared} but {frames} frame lines follow (lines {first} to {last}): truncated?"
            ),
        ));
    }
    if frames > declared {
        log::warn!(
            "BVH line {frames_line}: header says Frames: {declared} but {frames} well-formed frame lines follow; all are read"
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

/// Appends the values of one frame line to `values`, or says why the line is not a frame of
/// `width` values.
fn parse_frame(line: &str, width: usize, values: &mut Vec<f32>) -> Result<(), String> {
    let start = values.len();
    let mut found = 0;
    for word in line.split_whitespace() {
        let v: f32 = word.parse().map_err(|_| format!("bad number '{word}'"))?;
        if !v.is_finite() {
            return Err(format!("non-finite value '{word}' ({NON_FINITE})"));
        }
        found += 1;
        // Values past `width` are only counted, so one endless line cannot fill memory.
        if found <= width {
            values.push(v);
        }
    }
    let expected = format!("expected {width} (the sum of the CHANNELS counts)");
    match found {
        n if n == width => Ok(()),
        0 => Err(format!("0 values (a blank line), {expected}")),
        n => {
            values.truncate(start);
            Err(format!("{n} values, {expected}"))
        }
    }
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
