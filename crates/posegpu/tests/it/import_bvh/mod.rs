//! BVH importer: hand-computed expectations on small files, the CMU files under
//! `../shared/anim-data/bvh`, and malformed input (always an error naming the line, never a
//! panic).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Quat, Vec3};
use posegpu::component_space;
use posegpu::import::{load, parse_bvh};
use posegpu::{Asset, Error, Transform};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/anim-data/bvh");
const REAL: [&str; 3] = ["cmu_01_01", "cmu_01_03", "cmu_walk_delfem2"];

/// A ZXY root with positions, an XYZ joint, and a joint with a lone Y position channel.
const SMALL: &str = "HIERARCHY
ROOT Hips
{
\tOFFSET 1 2 3
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 5 0
\t\tCHANNELS 3 Xrotation Yrotation Zrotation
\t\tJOINT Head
\t\t{
\t\t\tOFFSET 0 4 0.5
\t\t\tCHANNELS 1 Yposition
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0 1 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.04
0 0 0 0 0 0 0 0 0 7
10 20 30 90 45 30 15 -25 60 8
";

fn parse(text: &str) -> posegpu::Result<Asset> {
    parse_bvh(text, Path::new("test.bvh"))
}

/// Hand-written rotation matrices (column vectors, right-handed), independent of glam's quats.
fn rx(deg: f32, v: Vec3) -> Vec3 {
    let (s, c) = deg.to_radians().sin_cos();
    Vec3::new(v.x, c * v.y - s * v.z, s * v.y + c * v.z)
}
fn ry(deg: f32, v: Vec3) -> Vec3 {
    let (s, c) = deg.to_radians().sin_cos();
    Vec3::new(c * v.x + s * v.z, v.y, -s * v.x + c * v.z)
}
fn rz(deg: f32, v: Vec3) -> Vec3 {
    let (s, c) = deg.to_radians().sin_cos();
    Vec3::new(c * v.x - s * v.y, s * v.x + c * v.y, v.z)
}

fn assert_vec_near(a: Vec3, b: Vec3, tol: f32) {
    assert!((a - b).abs().max_element() <= tol, "{a} vs {b}");
}

fn assert_quat_near(a: Quat, b: Quat) {
    let d = (a - b).length().min((a + b).length());
    assert!(d <= 1e-5, "{a:?} vs {b:?} (up to sign)");
}

/// `q` rotates every basis vector as `matrices` does.
fn assert_rotates_like(q: Quat, matrices: impl Fn(Vec3) -> Vec3) {
    for v in [Vec3::X, Vec3::Y, Vec3::Z] {
        assert_vec_near(q * v, matrices(v), 1e-5);
    }
}

fn bvh_error(result: posegpu::Result<Asset>) -> (usize, String) {
    match result {
        Err(Error::Bvh { line, message, .. }) => (line, message),
        Err(e) => panic!("expected Error::Bvh, got {e:?}"),
        Ok(_) => panic!("expected Error::Bvh, but it loaded"),
    }
}

/// 1-based line number of the first line of `text` that starts (after indentation) with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?}"))
        + 1
}

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(DATA);
    assert!(
        dir.is_dir(),
        "BVH data folder is missing: {} (expected the CMU files there)",
        dir.display()
    );
    dir
}

fn real_text(stem: &str) -> String {
    let path = data_dir().join(format!("{stem}.bvh"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn small_file_hand_computed() {
    let asset = parse(SMALL).unwrap();
    let sk = &asset.skeleton;
    assert_eq!(sk.names(), ["Hips", "Spine", "Head"]);
    assert_eq!(sk.parents(), [-1, 0, 1]);
    let offsets: Vec<Vec3> = sk.rest().iter().map(|t| t.translation).collect();
    assert_eq!(
        offsets,
        [
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(0.0, 5.0, 0.0),
            Vec3::new(0.0, 4.0, 0.5)
        ]
    );
    assert!(sk
        .rest()
        .iter()
        .all(|t| t.rotation == Quat::IDENTITY && t.scale == Vec3::ONE));
    assert!(sk.inverse_bind().iter().all(Option::is_none));

    assert_eq!(asset.clips.len(), 1);
    let clip = &asset.clips[0];
    assert_eq!(clip.name(), "test");
    assert!((clip.duration() - 0.04).abs() < 1e-7);
    let [hips, spine, head] = clip.tracks() else {
        panic!("expected 3 tracks")
    };

    // Hips: positions replace the offset; rotation Rz(90)·Rx(45)·Ry(30).
    let t = hips.translation.as_ref().unwrap();
    assert_eq!(t.times, [0.0, 0.04]);
    assert_eq!(t.values, [Vec3::ZERO, Vec3::new(10.0, 20.0, 30.0)]);
    let r = hips.rotation.as_ref().unwrap();
    assert_eq!(r.times, [0.0, 0.04]);
    assert_quat_near(r.values[0], Quat::IDENTITY);
    let (z, x, y) = (90f32.to_radians(), 45f32.to_radians(), 30f32.to_radians());
    let expected = Quat::from_rotation_z(z) * Quat::from_rotation_x(x) * Quat::from_rotation_y(y);
    assert_quat_near(r.values[1], expected);
    assert_rotates_like(r.values[1], |v| rz(90.0, rx(45.0, ry(30.0, v))));
    assert!(hips.scale.is_none());

    // Spine: no position channels, XYZ rotation Rx(15)·Ry(-25)·Rz(60).
    assert!(spine.translation.is_none());
    let r = spine.rotation.as_ref().unwrap();
    let expected = Quat::from_rotation_x(15f32.to_radians())
        * Quat::from_rotation_y((-25f32).to_radians())
        * Quat::from_rotation_z(60f32.to_radians());
    assert_quat_near(r.values[1], expected);
    assert_rotates_like(r.values[1], |v| rx(15.0, ry(-25.0, rz(60.0, v))));

    // Head: only Y is animated; X and Z keep the offset. No rotation channel.
    assert!(head.rotation.is_none());
    let t = head.translation.as_ref().unwrap();
    assert_eq!(
        t.values,
        [Vec3::new(0.0, 7.0, 0.5), Vec3::new(0.0, 8.0, 0.5)]
    );

    // Frame 1 in component space, by hand: hips + Rh·(spine + Rs·head).
    let locals: Vec<Transform> = clip
        .tracks()
        .iter()
        .zip(sk.rest())
        .map(|(track, rest)| Transform {
            translation: track
                .translation
                .as_ref()
                .map_or(rest.translation, |c| c.values[1]),
            rotation: track
                .rotation
                .as_ref()
                .map_or(rest.rotation, |c| c.values[1]),
            scale: Vec3::ONE,
        })
        .collect();
    let cs = component_space(sk.parents(), &locals);
    let head_local = Vec3::new(0.0, 8.0, 0.5);
    let spine_space = Vec3::new(0.0, 5.0, 0.0) + rx(15.0, ry(-25.0, rz(60.0, head_local)));
    let expected = Vec3::new(10.0, 20.0, 30.0) + rz(90.0, rx(45.0, ry(30.0, spine_space)));
    assert_vec_near(cs[2].translation, expected, 1e-4);
}

#[test]
fn channel_order_matters() {
    let file = |order: &str| {
        format!(
            "HIERARCHY\nROOT A\n{{\n OFFSET 0 0 0\n CHANNELS 3 {order}\n End Site\n {{\n  OFFSET 0 1 0\n }}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.1\n10 20 30\n"
        )
    };
    let rotation = |order: &str, values: &str| {
        let asset = parse(&file(order).replace("10 20 30", values)).unwrap();
        asset.clips[0].tracks()[0].rotation.as_ref().unwrap().values[0]
    };
    // The same angles per axis (Z=10, X=20, Y=30), listed in two orders; values follow the
    // channel order.
    let zxy = rotation("Zrotation Xrotation Yrotation", "10 20 30");
    let xyz = rotation("Xrotation Yrotation Zrotation", "20 30 10");
    assert_rotates_like(zxy, |v| rz(10.0, rx(20.0, ry(30.0, v))));
    assert_rotates_like(xyz, |v| rx(20.0, ry(30.0, rz(10.0, v))));
    let (z, x, y) = (10f32.to_radians(), 20f32.to_radians(), 30f32.to_radians());
    let (qx, qy, qz) = (
        Quat::from_rotation_x(x),
        Quat::from_rotation_y(y),
        Quat::from_rotation_z(z),
    );
    assert_quat_near(zxy, qz * qx * qy);
    assert_quat_near(xyz, qx * qy * qz);
    let d = (zxy - xyz).length().min((zxy + xyz).length());
    assert!(d > 1e-2, "ZXY and XYZ of the same angles should differ");

    // Position channels mixed with rotations, in any order.
    let text = file("Zposition Xrotation Xposition");
    let asset = parse(&text).unwrap();
    let track = &asset.clips[0].tracks()[0];
    assert_eq!(
        track.translation.as_ref().unwrap().values[0],
        Vec3::new(30.0, 0.0, 10.0)
    );
    assert_quat_near(
        track.rotation.as_ref().unwrap().values[0],
        Quat::from_rotation_x(20f32.to_radians()),
    );
}

#[test]
fn several_roots_crlf_and_names_with_spaces() {
    let text = "HIERARCHY\r\nROOT First {\r\n\tOFFSET 1 0 0\r\n\tCHANNELS 1 Xrotation\r\n\tJOINT Left  Arm\r\n\t{ OFFSET 0 1 0 }\r\n}\r\nROOT Second\r\n{\r\n OFFSET 0 0 2\r\n CHANNELS 1 Yposition\r\n}\r\nMOTION\r\nFrames: 2\r\nFrame Time: 0.5\r\n90 3\r\n45 4\r\n\r\n \r\n";
    let asset = parse(text).unwrap();
    assert_eq!(asset.skeleton.names(), ["First", "Left Arm", "Second"]);
    assert_eq!(asset.skeleton.parents(), [-1, 0, -1]);
    let tracks = asset.clips[0].tracks();
    assert!(!tracks[1].is_animated());
    assert_eq!(
        tracks[2].translation.as_ref().unwrap().values,
        [Vec3::new(0.0, 3.0, 2.0), Vec3::new(0.0, 4.0, 2.0)]
    );
    assert_eq!(asset.clips[0].duration(), 0.5);
}

/// (joint count from ROOT/JOINT lines, header frame count, header frame time).
fn header_facts(text: &str) -> (usize, usize, f64) {
    let joints = text
        .lines()
        .filter(|l| matches!(l.split_whitespace().next(), Some("ROOT" | "JOINT")))
        .count();
    let after = |key: &str| {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap();
        line.trim_start()[key.len()..].trim().to_string()
    };
    (
        joints,
        after("Frames:").parse().unwrap(),
        after("Frame Time:").parse().unwrap(),
    )
}

#[test]
fn real_files_load() {
    let dir = data_dir();
    let mut assets = Vec::new();
    for stem in REAL {
        let text = real_text(stem);
        let (joints, frames, frame_time) = header_facts(&text);
        assert_eq!(joints, 31, "{stem}: ROOT+JOINT count");
        let asset = load(dir.join(format!("{stem}.bvh"))).unwrap();
        assert_eq!(asset.skeleton.len(), joints, "{stem}");
        assert_eq!(asset.skeleton.names()[0], "Hips");
        assert_eq!(asset.clips.len(), 1);
        let clip = &asset.clips[0];
        assert_eq!(clip.name(), stem);
        assert_eq!(clip.key_count(), frames, "{stem}");
        let expected = ((frames - 1) as f64 * frame_time) as f32;
        assert!(
            (clip.duration() - expected).abs() <= 1e-5 * expected,
            "{stem}: duration {} vs {expected}",
            clip.duration()
        );
        // Root: translation + rotation; others: rotation only.
        assert!(clip.tracks()[0].translation.is_some());
        assert!(clip.tracks()[1..].iter().all(|t| t.translation.is_none()));
        assert!(clip.tracks().iter().all(|t| t.rotation.is_some()));
        // The library packs it.
        posegpu::AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        assets.push(asset);
    }
    let a = &assets[0].skeleton;
    let b = &assets[1].skeleton;
    assert_eq!(a.names(), b.names());
    assert_eq!(a.parents(), b.parents());
    assert_eq!(a.rest(), b.rest(), "cmu_01_01 and cmu_01_03 rest offsets");
}

#[test]
fn truncated_in_hierarchy() {
    let text = real_text("cmu_01_01");
    let motion = text.find("MOTION").unwrap();
    let cut = &text[..text[..motion / 2].rfind('\n').unwrap()];
    let (line, message) = bvh_error(parse(cut));
    assert_eq!(line, cut.lines().count(), "{message}");
    assert!(message.contains("end of file"), "{message}");
}

#[test]
fn truncated_in_frame_line() {
    let text = real_text("cmu_01_01");
    let first_frame = line_of(&text, "Frame Time:") + 1;
    let target = first_frame + 10;
    let start: usize = text.lines().take(target - 1).map(|l| l.len() + 1).sum();
    let line = text[start..].lines().next().unwrap();
    // Cut just after the 40th value, so the last line has 40 values instead of 96.
    let mut spaces = line.match_indices(' ').map(|(i, _)| i);
    let cut = &text[..start + spaces.nth(39).unwrap()];
    let (line, message) = bvh_error(parse(cut));
    assert_eq!(line, target, "{message}");
    assert!(message.contains("40 values, expected 96"), "{message}");
}

/// `text` with the `value_index`-th value of 1-based line `line` replaced by `value`.
fn replace_value(text: &str, line: usize, value_index: usize, value: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut words: Vec<&str> = lines[line - 1].split_whitespace().collect();
    words[value_index] = value;
    lines[line - 1] = words.join(" ");
    lines.join("\n")
}

#[test]
fn garbage_and_non_finite_numbers() {
    let text = real_text("cmu_01_01");
    let frame = line_of(&text, "Frame Time:") + 5;
    for (bad, expect) in [
        ("1.2.3", "bad number '1.2.3'"),
        ("abc", "bad number 'abc'"),
        ("NaN", "non-finite"),
        ("inf", "non-finite"),
        ("1e40", "non-finite"),
    ] {
        let (line, message) = bvh_error(parse(&replace_value(&text, frame, 7, bad)));
        assert_eq!(line, frame, "{bad}: {message}");
        assert!(message.contains(expect), "{bad}: {message}");
    }
    // In the hierarchy too.
    let offset = line_of(&text, "OFFSET 1.36306");
    let (line, message) = bvh_error(parse(&replace_value(&text, offset, 2, "1,5")));
    assert_eq!(line, offset);
    assert!(message.contains("bad number '1,5'"), "{message}");
    let (line, message) = bvh_error(parse(&replace_value(&text, offset, 3, "nan")));
    assert_eq!(line, offset);
    assert!(message.contains("not finite"), "{message}");
}

#[test]
fn hierarchy_errors() {
    let spine = "CHANNELS 3 Xrotation Yrotation Zrotation";
    let cases = [
        (
            spine,
            "CHANNELS 3 Wrotation Yrotation Zrotation",
            "unknown channel 'Wrotation'",
        ),
        (
            spine,
            "CHANNELS 3 Xrotation Yrotation",
            "says 3 channels but lists 2",
        ),
        ("OFFSET 0 5 0", "OFSET 0 5 0", "unknown keyword 'OFSET'"),
        ("HIERARCHY", "HIERARCHIE", "expected HIERARCHY"),
        ("MOTION", "MOTON", "unknown keyword 'MOTON'"),
        ("Frames: 2", "Frame: 2", "expected 'Frames:'"),
        (
            "Frame Time: 0.04",
            "Frame Time: 0",
            "frame time must be positive",
        ),
    ];
    for (from, to, expect) in cases {
        let text = SMALL.replacen(from, to, 1);
        let (line, message) = bvh_error(parse(&text));
        assert_eq!(line, line_of(&text, to), "{to}: {message}");
        assert!(message.contains(expect), "{to}: {message}");
    }
    for bad_time in ["-1", "nan", "inf"] {
        let text = SMALL.replace("Frame Time: 0.04", &format!("Frame Time: {bad_time}"));
        let (line, _) = bvh_error(parse(&text));
        assert_eq!(line, line_of(&text, "Frame Time:"));
    }
}

#[test]
fn missing_brace() {
    // Drop the root's closing brace (the last one before MOTION).
    let motion = line_of(SMALL, "MOTION");
    let lines: Vec<&str> = SMALL.lines().collect();
    assert_eq!(lines[motion - 2], "}");
    let text = [&lines[..motion - 2], &lines[motion - 1..]]
        .concat()
        .join("\n");
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, motion - 1, "{message}");
    assert!(message.contains("missing '}'"), "{message}");
    assert!(
        message.contains("line 2"),
        "names the open block: {message}"
    );

    // Missing at the end of the file.
    let text = "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n";
    let (line, message) = bvh_error(parse(text));
    assert_eq!(line, 4);
    assert!(message.contains("missing '}'"), "{message}");

    // No brace after the name.
    let (line, message) = bvh_error(parse("HIERARCHY\nROOT A\nOFFSET 0 0 0\n"));
    assert_eq!(line, 3);
    assert!(message.contains("expected '{'"), "{message}");
}

#[test]
fn missing_motion_parts() {
    let hierarchy = &SMALL[..SMALL.find("MOTION").unwrap()];
    let (_, message) = bvh_error(parse(hierarchy));
    assert!(message.contains("expected MOTION"), "{message}");
    let (_, message) = bvh_error(parse(&format!("{hierarchy}MOTION\n")));
    assert!(message.contains("'Frames:'"), "{message}");
    let (_, message) = bvh_error(parse(&format!("{hierarchy}MOTION\nFrames: 2\n")));
    assert!(message.contains("'Frame'"), "{message}");
    let (line, message) = bvh_error(parse(&format!(
        "{hierarchy}MOTION\nFrames: 2\nFrame Time: 0.1\n\n"
    )));
    assert!(message.contains("no frame lines"), "{message}");
    assert_eq!(line, line_of(SMALL, "Frame Time:"));
    // Too many values on a frame line.
    let text = SMALL.replace("0 0 0 0 0 0 0 0 0 7", "0 0 0 0 0 0 0 0 0 7 1");
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, line_of(SMALL, "Frame Time:") + 1);
    assert!(message.contains("11 values, expected 10"), "{message}");
}

#[test]
fn frame_count_mismatch_is_an_error() {
    let frames_line = line_of(SMALL, "Frames:");
    // Fewer frame lines than declared: a cut file.
    let text = SMALL.replace("Frames: 2", "Frames: 5");
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, frames_line, "{message}");
    assert!(message.contains("Frames: 5 but 2 frame lines"), "{message}");
    // More well-formed lines than declared (an exporter's miscount): all are read.
    for declared in [0, 1] {
        let text = SMALL.replace("Frames: 2", &format!("Frames: {declared}"));
        let asset = parse(&text).unwrap();
        assert_eq!(asset.clips[0].key_times().len(), 2);
    }

    // A real file cut after 100 of its frames at a line boundary.
    let real = real_text("cmu_walk_delfem2");
    let (_, frames, _) = header_facts(&real);
    let keep = line_of(&real, "Frame Time:") + 100; // header lines + 100 frames
    let cut: String = real.lines().take(keep).collect::<Vec<_>>().join("\n");
    assert!(frames > 100);
    let (line, message) = bvh_error(parse(&cut));
    assert_eq!(line, line_of(&real, "Frames:"), "{message}");
    assert!(
        message.contains(&format!("Frames: {frames} but 100 frame lines")),
        "{message}"
    );

    // Trailing blank (or whitespace-only) lines are not frames.
    let asset = parse(&format!("{SMALL}\n  \n\t\n\n")).unwrap();
    assert_eq!(asset.clips[0].key_count(), 2);
}

#[test]
fn blank_line_among_frames() {
    let first = line_of(SMALL, "Frame Time:") + 1;
    let mut lines: Vec<&str> = SMALL.lines().collect();
    lines.insert(first, "");
    let text = lines.join("\n");
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, first + 1, "{message}");
    assert!(
        message.contains("frame 2: 0 values (a blank line), expected 10"),
        "{message}"
    );

    // The same with the frame count raised to match: still the blank line, not a lost frame.
    let text = text.replace("Frames: 2", "Frames: 3");
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, first + 1, "{message}");
    assert!(message.contains("blank line"), "{message}");

    // A blank line between 'Frame Time:' and the first frame.
    let mut lines: Vec<&str> = SMALL.lines().collect();
    lines.insert(first - 1, "   ");
    let (line, message) = bvh_error(parse(&lines.join("\n")));
    assert_eq!(line, first, "{message}");
    assert!(message.contains("frame 1: 0 values"), "{message}");

    // Too few values on a frame line names both counts.
    let text = SMALL.replace("0 0 0 0 0 0 0 0 0 7", "0 0 0 0 0 0 0 0 7");
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, first, "{message}");
    assert!(message.contains("9 values, expected 10"), "{message}");
}

#[test]
fn byte_order_mark_is_skipped() {
    let plain = parse(SMALL).unwrap();
    let with_bom = parse(&format!("\u{feff}{SMALL}")).unwrap();
    assert_same_asset(&with_bom, &plain);

    // From a file: the three bytes EF BB BF, then the text.
    let (scratch_a, scratch_b) = (Scratch::new("bom"), Scratch::new("plain"));
    let bom_path = scratch_a.write("small.bvh", &[b"\xEF\xBB\xBF", SMALL.as_bytes()].concat());
    let plain_path = scratch_b.write("small.bvh", SMALL.as_bytes());
    assert_same_asset(&load(&bom_path).unwrap(), &load(&plain_path).unwrap());

    // Only at the very start: anywhere else it is not whitespace and not a keyword.
    let text = SMALL.replacen("ROOT", "\u{feff}ROOT", 1);
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, 2, "{message}");
    assert!(message.contains("unknown keyword"), "{message}");
}

fn assert_same_asset(a: &Asset, b: &Asset) {
    assert_eq!(a.skeleton.names(), b.skeleton.names());
    assert_eq!(a.skeleton.parents(), b.skeleton.parents());
    assert_eq!(a.skeleton.rest(), b.skeleton.rest());
    assert_eq!(a.clips, b.clips);
}

#[test]
fn invalid_utf8_names_its_line() {
    let scratch = Scratch::new("utf8");
    // A bad byte inside a joint name.
    let name_line = line_of(SMALL, "JOINT Spine");
    let bytes = SMALL.replacen("Spine", "Sp\u{1}ine", 1).into_bytes();
    let bytes: Vec<u8> = bytes
        .into_iter()
        .map(|b| if b == 1 { 0xFF } else { b })
        .collect();
    let path = scratch.write("name.bvh", &bytes);
    let (line, message) = load_error(&path);
    assert_eq!(line, name_line, "{message}");
    assert!(message.contains("invalid UTF-8"), "{message}");
    assert!(message.contains("0xFF at column 10"), "{message}"); // "\tJOINT Sp" is 9 bytes

    // A multi-byte sequence cut short at the end of the second frame line.
    let last = line_of(SMALL, "10 20 30");
    let cut = SMALL.find("60 8").unwrap() + 4;
    let bytes = [&SMALL.as_bytes()[..cut], b"\xC3", &SMALL.as_bytes()[cut..]].concat();
    let path = scratch.write("motion.bvh", &bytes);
    let (line, message) = load_error(&path);
    assert_eq!(line, last, "{message}");
    assert!(message.contains("0xC3"), "{message}");

    // UTF-16 is named as such.
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(SMALL.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let path = scratch.write("utf16.bvh", &utf16);
    let (line, message) = load_error(&path);
    assert_eq!(line, 1, "{message}");
    assert!(message.contains("UTF-16"), "{message}");
}

#[test]
fn duplicate_channel() {
    let spine = "CHANNELS 3 Xrotation Yrotation Zrotation";
    let text = SMALL.replacen(spine, "CHANNELS 3 Yrotation Yrotation Xrotation", 1);
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, line_of(SMALL, spine), "{message}");
    assert!(message.contains("joint 'Spine'"), "{message}");
    assert!(
        message.contains("channel 'Yrotation' is listed twice"),
        "{message}"
    );

    // Channel names are case-insensitive, so a different spelling is still the same channel.
    let hips = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation";
    let text = SMALL.replacen(
        hips,
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation xposition",
        1,
    );
    let (line, message) = bvh_error(parse(&text));
    assert_eq!(line, line_of(SMALL, hips), "{message}");
    assert!(message.contains("joint 'Hips'"), "{message}");
    assert!(message.contains("'xposition' is listed twice"), "{message}");
}

#[test]
fn offset_needs_three_numbers() {
    for (from, to, found) in [
        ("OFFSET 0 5 0", "OFFSET 0 5 0 4", 4),
        ("OFFSET 0 5 0", "OFFSET 0 5", 2),
        ("OFFSET 0 5 0", "OFFSET", 0),
        ("OFFSET 0 1 0", "OFFSET 0 1 0 1", 4), // in the End Site
        ("OFFSET 1 2 3", "OFFSET 1 2 3 4 5 6", 6),
    ] {
        let text = SMALL.replacen(from, to, 1);
        let (line, message) = bvh_error(parse(&text));
        assert_eq!(line, line_of(SMALL, from), "{to}: {message}");
        assert!(
            message.contains(&format!("OFFSET takes 3 numbers, found {found}")),
            "{to}: {message}"
        );
    }
    // A one-line block: the closing brace ends the numbers.
    let one_line = "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n JOINT B\n { OFFSET 0 1 }\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n5\n";
    let (line, message) = bvh_error(parse(one_line));
    assert_eq!(line, 7, "{message}");
    assert!(
        message.contains("OFFSET takes 3 numbers, found 2"),
        "{message}"
    );
    let asset = parse(&one_line.replace("OFFSET 0 1 }", "OFFSET 0 1 2 }")).unwrap();
    assert_eq!(
        asset.skeleton.rest()[1].translation,
        Vec3::new(0.0, 1.0, 2.0)
    );
}

#[test]
fn non_finite_offsets_and_values() {
    let offset = line_of(SMALL, "OFFSET 0 4 0.5");
    for bad in ["nan", "inf", "-inf", "infinity", "1e39", "-1e39"] {
        let text = SMALL.replacen("OFFSET 0 4 0.5", &format!("OFFSET 0 {bad} 0.5"), 1);
        let (line, message) = bvh_error(parse(&text));
        assert_eq!(line, offset, "{bad}: {message}");
        assert!(
            message.contains(&format!("OFFSET y '{bad}' is not finite")),
            "{bad}: {message}"
        );
    }
    let frame = line_of(SMALL, "10 20 30");
    for bad in ["NaN", "inf", "1e39", "-3.5e38"] {
        let text = SMALL.replacen("10 20 30", &format!("10 {bad} 30"), 1);
        let (line, message) = bvh_error(parse(&text));
        assert_eq!(line, frame, "{bad}: {message}");
        assert!(
            message.contains(&format!("frame 2: non-finite value '{bad}'")),
            "{bad}: {message}"
        );
    }
    // The largest finite f32 still loads.
    let text = SMALL.replacen("10 20 30", "10 3.4e38 30", 1);
    let asset = parse(&text).unwrap();
    let t = asset.clips[0].tracks()[0].translation.as_ref().unwrap();
    assert_eq!(t.values[1].y, 3.4e38);
}

/// A fresh folder of its own under the system's temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "posegpu-bvh-{}-{what}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The line and message of the [`Error::Bvh`] that loading `path` gives, checking it names
/// `path`.
fn load_error(path: &Path) -> (usize, String) {
    match load(path) {
        Err(Error::Bvh {
            path: named,
            line,
            message,
        }) => {
            assert_eq!(named, path, "{message}");
            (line, message)
        }
        Err(e) => panic!("{}: expected Error::Bvh, got {e:?}", path.display()),
        Ok(_) => panic!("{}: expected Error::Bvh, but it loaded", path.display()),
    }
}

mod limits;
