//! Inputs at the limits: a 100,000-deep chain, empty and binary files.

use super::*;

/// A chain of `depth` joints, each the child of the one before, with one Z rotation channel
/// each and one frame.
fn chain(depth: usize) -> String {
    let mut text = String::from("HIERARCHY\n");
    for i in 0..depth {
        let keyword = if i == 0 { "ROOT" } else { "JOINT" };
        text += &format!("{keyword} J{i}\n{{\nOFFSET 0 1 0\nCHANNELS 1 Zrotation\n");
    }
    text += "End Site\n{\nOFFSET 0 1 0\n}\n";
    text += &"}\n".repeat(depth);
    text += "MOTION\nFrames: 1\nFrame Time: 0.1\n";
    text += &"5 ".repeat(depth);
    text + "\n"
}

#[test]
fn deep_chain_loads_without_recursion() {
    const DEPTH: usize = 32_768;
    let text = chain(DEPTH);
    // A small stack: a parser that recursed once per joint would overflow it.
    let asset = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || parse(&text))
        .unwrap()
        .join()
        .expect("parsing a deep chain panicked (stack overflow aborts the process)")
        .unwrap();
    let sk = &asset.skeleton;
    assert_eq!(sk.len(), DEPTH);
    assert_eq!(sk.depth(), DEPTH);
    assert!(sk
        .parents()
        .iter()
        .enumerate()
        .all(|(i, &p)| p == i as i32 - 1));
    assert_eq!(sk.names()[DEPTH - 1], format!("J{}", DEPTH - 1));
    let tracks = asset.clips[0].tracks();
    assert_eq!(tracks.len(), DEPTH);
    assert_quat_near(
        tracks[DEPTH - 1].rotation.as_ref().unwrap().values[0],
        Quat::from_rotation_z(5f32.to_radians()),
    );
}

#[test]
fn empty_and_binary_input() {
    let (line, message) = bvh_error(parse(""));
    assert_eq!(line, 1);
    assert!(message.contains("empty"), "{message}");
    let (line, _) = bvh_error(parse(" \n\t\n"));
    assert!(line >= 1);

    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let garbage = String::from_utf8_lossy(&bytes);
    let (line, _) = bvh_error(parse(&garbage));
    assert!(line >= 1);
    // Garbage after a valid header, and a valid file with bytes cut at random points.
    let (_, _) = bvh_error(parse(&format!("HIERARCHY\n{garbage}")));
    for cut in (0..SMALL.len()).step_by(7) {
        let _ = parse(&SMALL[..cut]);
    }
}

#[test]
fn duplicate_names_and_deep_nesting() {
    let text = SMALL.replace("JOINT Head", "JOINT Spine");
    // A skeleton error, with the file named.
    match parse(&text) {
        Err(Error::InFile { path, source }) => {
            assert_eq!(path, Path::new("test.bvh"));
            assert!(
                matches!(*source, Error::DuplicateBoneName { .. }),
                "{source}"
            );
        }
        other => panic!("{other:?}"),
    }

    // Deep nesting is an error (missing braces), not a stack overflow.
    let deep = format!("HIERARCHY\nROOT A\n{{\n{}", "JOINT B\n{\n".repeat(200_000));
    let (_, message) = bvh_error(parse(&deep));
    assert!(message.contains("JOINT without a name") || message.contains("missing '}'"));
}

#[test]
fn assimp_test_models_never_panic() {
    let dir = Path::new("/usr/share/assimp/models/BVH");
    let Ok(entries) = std::fs::read_dir(dir) else {
        eprintln!("{} not present; skipped", dir.display());
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("bvh") {
            continue;
        }
        match load(&path) {
            Ok(a) => eprintln!(
                "{}: {} bones, {:.3} s",
                path.display(),
                a.skeleton.len(),
                a.clips[0].duration()
            ),
            Err(e) => eprintln!("{}: error: {e}", path.display()),
        }
    }
}
