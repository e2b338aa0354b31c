//! Loading from bytes in memory: the same asset as from the file, the same checks, and errors
//! that name what the caller called the data.

use std::path::Path;

use posegpu::import::{load, load_bytes, Format};
use posegpu::Error;

use crate::common::anim_data;

/// What an asset holds, as text: the skeleton's bones (names, parents, rest, bind pose, inverse
/// binds), the clips (every key and name), the nodes and the frame. `Asset` has no
/// `PartialEq`, and the skeleton's name index is a hash map, printed in no fixed order.
fn described(a: &posegpu::Asset) -> String {
    let s = &a.skeleton;
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
        s.names(),
        s.parents(),
        s.rest(),
        s.bind_pose(),
        s.inverse_bind(),
        s.alternatives(),
        a.clips,
        a.nodes,
        a.frame
    )
}

/// The asset from the file and from its bytes, [`described`].
fn both(rel: &str) -> (String, String) {
    let path = anim_data().join(rel);
    let bytes = std::fs::read(&path).unwrap();
    let format = Format::of_path(&path).unwrap();
    let from_bytes = load_bytes(&bytes, format, Path::new(rel).file_name().unwrap()).unwrap();
    let from_file = load(&path).unwrap();
    (described(&from_file), described(&from_bytes))
}

#[test]
fn bytes_load_as_the_file_does() {
    // A GLB, a .gltf with a data-URI buffer, and a BVH (whose clip is named after the file).
    for rel in [
        "gltf/quaternius/Mech_Mike.glb",
        "gltf/khronos/SimpleSkin.gltf",
        "bvh/cmu_01_01.bvh",
    ] {
        let (file, bytes) = both(rel);
        if file != bytes {
            let at = file
                .bytes()
                .zip(bytes.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let near = |s: &str| s[at.saturating_sub(80)..(at + 80).min(s.len())].to_string();
            panic!(
                "{rel}: from bytes differs at {at}: {} / {}",
                near(&file),
                near(&bytes)
            );
        }
    }
}

#[test]
fn formats_are_named_by_extension_or_name() {
    assert_eq!(Format::of_path(Path::new("a/b.GLB")), Some(Format::Gltf));
    assert_eq!(Format::of_path(Path::new("b.gltf")), Some(Format::Gltf));
    assert_eq!(Format::of_path(Path::new("b.bvh")), Some(Format::Bvh));
    assert_eq!(Format::of_path(Path::new("b.fbx")), None);
    assert_eq!(Format::of_path(Path::new("glb")), None);
    assert_eq!(Format::from_name("glb"), Some(Format::Gltf));
    assert_eq!(Format::from_name("BVH"), Some(Format::Bvh));
    assert_eq!(Format::from_name("obj"), None);
}

#[test]
fn bad_bytes_are_errors_naming_the_data() {
    // Not glTF, not UTF-8 BVH, truncated BVH: typed errors that carry the caller's name.
    let cases: [(&[u8], Format); 3] = [
        (b"not a gltf at all", Format::Gltf),
        (&[b'H', 0xff, 0xfe, b'\n'], Format::Bvh),
        (b"HIERARCHY\nROOT Hips\n{\n", Format::Bvh),
    ];
    for (bytes, format) in cases {
        let e = load_bytes(bytes, format, "upload.dat").unwrap_err();
        assert!(
            matches!(e, Error::Gltf { .. } | Error::Bvh { .. }),
            "{format:?}: {e:?}"
        );
        assert!(e.to_string().contains("upload.dat"), "{e}");
    }
}

#[test]
fn a_gltf_whose_buffer_is_a_file_beside_it_is_refused_from_bytes() {
    // The same document loads from its file (the buffer read beside it) and not from bytes,
    // which have no directory; the error says what to do.
    let path = anim_data().join("gltf/khronos/SimpleSkin.gltf");
    let json = std::fs::read_to_string(&path).unwrap();
    let start = json.find("data:application").unwrap();
    let end = start + json[start..].find('"').unwrap();
    let external = format!("{}skin.bin{}", &json[..start], &json[end..]);
    let e = load_bytes(external.as_bytes(), Format::Gltf, "skin.gltf").unwrap_err();
    let message = e.to_string();
    assert!(matches!(e, Error::Gltf { .. }), "{e:?}");
    assert!(
        message.contains("skin.bin") && message.contains("embed"),
        "{message}"
    );
}
