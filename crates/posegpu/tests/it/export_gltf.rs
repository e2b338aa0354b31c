//! glTF export: skeletons and clips written as .glb load back the same, through posegpu and the
//! gltf crate; a template's document survives with only its animations replaced.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Quat, Vec3};
use posegpu::export::{write_glb, Template};
use posegpu::{Asset, BoneTrack, Channel, Clip, Error, Interpolation, Skeleton, Transform};

const EPS: f32 = 1e-6;

/// A fresh folder of its own under the system's temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "posegpu-export-{}-{what}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn load(path: &Path) -> Asset {
    posegpu::import::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// For each bone of `a`, the bone of `b` it is: by name, or by index for unnamed bones.
fn bone_map(a: &Skeleton, b: &Skeleton) -> Vec<usize> {
    assert_eq!(a.len(), b.len(), "bone count");
    (0..a.len())
        .map(|i| {
            let name = &a.names()[i];
            if name.is_empty() {
                assert!(b.names()[i].is_empty(), "bone {i}: unnamed in one only");
                i
            } else {
                b.find(name)
                    .unwrap_or_else(|| panic!("bone '{name}' missing"))
            }
        })
        .collect()
}

fn close3(a: Vec3, b: Vec3) -> bool {
    a.abs_diff_eq(b, EPS)
}

fn close_q(a: Quat, b: Quat) -> bool {
    a.abs_diff_eq(b, EPS)
}

fn close_t(a: &Transform, b: &Transform) -> bool {
    close3(a.translation, b.translation)
        && close_q(a.rotation, b.rotation)
        && close3(a.scale, b.scale)
}

/// Same names, parents and rest transforms; the inverse bind matrices where `a` has them.
fn assert_same_skeleton(a: &Skeleton, b: &Skeleton) -> Vec<usize> {
    let map = bone_map(a, b);
    for (i, &j) in map.iter().enumerate() {
        let name = &a.names()[i];
        assert_eq!(
            a.parent(i).map(|p| map[p]),
            b.parent(j),
            "bone '{name}': parent"
        );
        assert!(
            close_t(&a.rest()[i], &b.rest()[j]),
            "bone '{name}': rest {:?} vs {:?}",
            a.rest()[i],
            b.rest()[j]
        );
        if let Some(m) = a.inverse_bind()[i] {
            let back = b.inverse_bind()[j].expect("an inverse bind matrix");
            assert!(m.abs_diff_eq(back, 1e-5), "bone '{name}': inverse bind");
        }
    }
    map
}

fn assert_same_channel<T: std::fmt::Debug>(
    what: &str,
    a: &Option<Channel<T>>,
    b: &Option<Channel<T>>,
    close: impl Fn(&T, &T) -> bool,
) {
    match (a, b) {
        (None, None) => {}
        (Some(a), Some(b)) => {
            assert_eq!(a.interpolation, b.interpolation, "{what}: interpolation");
            assert_eq!(a.times.len(), b.times.len(), "{what}: key count");
            for (k, (x, y)) in a.times.iter().zip(&b.times).enumerate() {
                assert!((x - y).abs() <= EPS, "{what}: time {k}: {x} vs {y}");
            }
            for (k, (x, y)) in a.values.iter().zip(&b.values).enumerate() {
                assert!(close(x, y), "{what}: value {k}: {x:?} vs {y:?}");
            }
        }
        _ => panic!("{what}: present in one clip only"),
    }
}

/// Same clip names in the same order, every channel's keys equal (bones matched by `map`).
fn assert_same_clips(skeleton: &Skeleton, a: &[Clip], b: &[Clip], map: &[usize]) {
    let names = |clips: &[Clip]| {
        clips
            .iter()
            .map(|c| c.name().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(a), names(b), "clip names");
    for (ca, cb) in a.iter().zip(b) {
        for (i, ta) in ca.tracks().iter().enumerate() {
            let tb = &cb.tracks()[map[i]];
            let what =
                |ch: &str| format!("clip '{}', bone '{}', {ch}", ca.name(), skeleton.names()[i]);
            assert_same_channel(
                &what("translation"),
                &ta.translation,
                &tb.translation,
                |x, y| close3(*x, *y),
            );
            // Written normalized, as glTF wants.
            assert_same_channel(&what("rotation"), &ta.rotation, &tb.rotation, |x, y| {
                close_q(x.normalize(), *y)
            });
            assert_same_channel(&what("scale"), &ta.scale, &tb.scale, |x, y| close3(*x, *y));
        }
    }
}

/// Writes `asset` without a template and checks that it loads back the same.
fn round_trip(asset: &Asset, dir: &Path, what: &str) -> PathBuf {
    let path = dir.join(format!("{what}.glb"));
    write_glb(&path, &asset.skeleton, &asset.clips, None).unwrap();
    // In memory, the same bytes; and they load back from memory as the file does.
    let bytes = posegpu::export::glb_bytes(&path, &asset.skeleton, &asset.clips, None).unwrap();
    assert!(
        bytes == std::fs::read(&path).unwrap(),
        "{what}: glb_bytes is the file"
    );
    let format = posegpu::import::Format::Gltf;
    let from_memory = posegpu::import::load_bytes(&bytes, format, &path).unwrap();
    let map = assert_same_skeleton(&asset.skeleton, &from_memory.skeleton);
    assert_same_clips(&asset.skeleton, &asset.clips, &from_memory.clips, &map);
    let (doc, buffers, _) =
        gltf::import(&path).unwrap_or_else(|e| panic!("{what}: gltf::import: {e}"));
    // glTF wants affine inverse bind matrices, last row exactly 0 0 0 1.
    let skin = doc.skins().next().unwrap();
    let ibms = skin
        .reader(|b| Some(&buffers[b.index()].0[..]))
        .read_inverse_bind_matrices();
    assert!(
        ibms.unwrap()
            .all(|m| m.iter().map(|c| c[3]).eq([0.0, 0.0, 0.0, 1.0])),
        "{what}: affine inverse binds"
    );
    let back = load(&path);
    let map = assert_same_skeleton(&asset.skeleton, &back.skeleton);
    assert_same_clips(&asset.skeleton, &asset.clips, &back.clips, &map);
    path
}

#[test]
fn procedural_humanoid_round_trips() {
    let asset = posegpu::procedural::humanoid_asset();
    let dir = Scratch::new("humanoid");
    let path = round_trip(&asset, &dir, "humanoid");
    // Channels of a clip that share key times share one input accessor.
    let (doc, _, _) = gltf::import(&path).unwrap();
    for animation in doc.animations() {
        let samplers = animation.samplers().count();
        let mut inputs: Vec<usize> = animation.samplers().map(|s| s.input().index()).collect();
        inputs.sort();
        inputs.dedup();
        assert!(
            inputs.len() < samplers,
            "{:?}: {} inputs for {samplers} samplers",
            animation.name(),
            inputs.len()
        );
    }
}

#[test]
fn random_skeletons_with_several_roots_round_trip() {
    let mut several_roots = 0;
    for seed in 0..6 {
        let asset = posegpu::procedural::random_asset(seed, 40, 3);
        several_roots +=
            usize::from(asset.skeleton.parents().iter().filter(|&&p| p < 0).count() > 1);
        round_trip(&asset, &Scratch::new("random"), &format!("random{seed}"));
    }
    assert!(several_roots > 0, "no seed gave several roots");
}

#[test]
fn bvh_round_trips() {
    let asset = load(&common::anim_data().join("bvh/cmu_walk_delfem2.bvh"));
    let dir = Scratch::new("bvh");
    let path = round_trip(&asset, &dir, "bvh");
    // BVH has no inverse bind matrices; the written ones make the rest pose skin to identity.
    let back = load(&path);
    for (rest, ibm) in back
        .skeleton
        .rest_component()
        .iter()
        .zip(back.skeleton.inverse_bind())
    {
        let m = rest.to_matrix() * ibm.unwrap();
        assert!(m.abs_diff_eq(glam::Mat4::IDENTITY, 1e-4), "{m}");
    }
}

/// Parses `path` with the gltf crate, from the file's own folder and with every buffer and
/// image resolved.
fn gltf_import(
    path: &Path,
) -> (
    gltf::Document,
    Vec<gltf::buffer::Data>,
    Vec<Option<gltf::image::Data>>,
) {
    let gltf::Gltf { document, blob } =
        gltf::Gltf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let buffers = gltf::import_buffers(&document, path.parent(), blob)
        .unwrap_or_else(|e| panic!("{}: gltf::import_buffers: {e}", path.display()));
    // An image whose file does not exist (as some files ship) is `None`.
    let images = document
        .images()
        .map(|i| gltf::image::Data::from_source(i.source(), path.parent(), &buffers).ok())
        .collect();
    (document, buffers, images)
}

/// Each mesh primitive's positions and indices.
fn geometry(
    doc: &gltf::Document,
    buffers: &[gltf::buffer::Data],
) -> Vec<(Vec<[f32; 3]>, Vec<u32>)> {
    doc.meshes()
        .flat_map(|m| m.primitives())
        .map(|p| {
            let r = p.reader(|b| Some(&buffers[b.index()].0[..]));
            let positions = r.read_positions().map_or_else(Vec::new, Iterator::collect);
            let indices = r
                .read_indices()
                .map_or_else(Vec::new, |i| i.into_u32().collect());
            (positions, indices)
        })
        .collect()
}

/// Writes `clips` onto `template` and checks the document: one buffer, aligned views, the
/// template's meshes, skins, nodes, materials and image pixels, and the skeleton and clips
/// loading back. Returns the output.
fn write_on_template(
    template: &Path,
    asset: &Asset,
    clips: &[Clip],
    dir: &Path,
    what: &str,
) -> PathBuf {
    let nodes = asset
        .nodes
        .as_deref()
        .expect("glTF assets know their nodes");
    let path = dir.join(format!("{what}.glb"));
    write_glb(
        &path,
        &asset.skeleton,
        clips,
        Some(&Template {
            path: template,
            nodes,
        }),
    )
    .unwrap();

    let (before, before_buffers, before_images) = gltf_import(template);
    let (after, after_buffers, after_images) = gltf_import(&path);
    assert_eq!(after.buffers().count(), 1, "{what}: one buffer");
    assert!(matches!(
        after.buffers().next().unwrap().source(),
        gltf::buffer::Source::Bin
    ));
    assert!(
        after.views().all(|v| v.offset() % 4 == 0),
        "{what}: views 4-byte aligned"
    );
    // Images are embedded, except those whose file does not exist: their URI stays.
    let uri = |image: gltf::Image| match image.source() {
        gltf::image::Source::Uri { uri, .. } => Some(uri.to_string()),
        gltf::image::Source::View { .. } => None,
    };
    for ((b, a), data) in before.images().zip(after.images()).zip(&before_images) {
        match data {
            Some(_) => assert!(
                uri(a.clone()).is_none_or(|u| u.starts_with("data:")),
                "{what}: image {} embedded",
                a.index()
            ),
            None => assert_eq!(uri(a), uri(b), "{what}: a missing image keeps its URI"),
        }
    }
    let counts = |d: &gltf::Document| {
        [
            d.meshes().count(),
            d.skins().count(),
            d.nodes().count(),
            d.materials().count(),
            d.textures().count(),
            d.images().count(),
        ]
    };
    assert_eq!(
        counts(&after),
        counts(&before),
        "{what}: meshes, skins, nodes, materials, textures, images"
    );
    assert_eq!(
        after.animations().count(),
        clips.len(),
        "{what}: animations"
    );
    for (a, b) in before.nodes().zip(after.nodes()) {
        assert_eq!(a.name(), b.name(), "{what}: node names");
        assert_eq!(
            a.transform().decomposed(),
            b.transform().decomposed(),
            "{what}: node transforms"
        );
        assert_eq!(
            a.children().map(|c| c.index()).collect::<Vec<_>>(),
            b.children().map(|c| c.index()).collect::<Vec<_>>()
        );
    }
    assert_eq!(
        geometry(&before, &before_buffers),
        geometry(&after, &after_buffers),
        "{what}: geometry"
    );
    assert_eq!(before_images.len(), after_images.len(), "{what}: images");
    for (a, b) in before_images.iter().zip(&after_images) {
        match (a, b) {
            (Some(a), Some(b)) => assert!(
                a.pixels == b.pixels && a.width == b.width,
                "{what}: image pixels"
            ),
            (None, None) => {}
            _ => panic!("{what}: an image was lost or invented"),
        }
    }

    let back = load(&path);
    let map = assert_same_skeleton(&asset.skeleton, &back.skeleton);
    assert_eq!(back.nodes, asset.nodes, "{what}: the same nodes");
    assert_same_clips(&asset.skeleton, clips, &back.clips, &map);
    path
}

#[test]
fn a_glb_template_keeps_its_document() {
    let template = common::anim_data().join("gltf/quaternius/Mech_Stan.glb");
    let asset = load(&template);
    let dir = Scratch::new("stan");
    write_on_template(&template, &asset, &asset.clips, &dir, "all");
    let subset = write_on_template(&template, &asset, &asset.clips[2..5], &dir, "subset");
    // The dropped clips' keys do not come along.
    let before = std::fs::metadata(&template).unwrap().len();
    let after = std::fs::metadata(&subset).unwrap().len();
    assert!(
        after < before,
        "{after} bytes from a {before}-byte template"
    );
}

/// A clip on any skeleton: every bone turns about its own axis, the first bone moves (STEP),
/// and the last one scales.
fn made_up_clip(skeleton: &Skeleton) -> Clip {
    let times = vec![0.0, 0.5, 1.25];
    let tracks = (0..skeleton.len())
        .map(|bone| {
            let rest = skeleton.rest()[bone];
            let axis = Vec3::new(1.0, bone as f32, 2.0).normalize();
            let mut track = BoneTrack {
                rotation: Some(Channel::new(
                    times.clone(),
                    times
                        .iter()
                        .map(|t| rest.rotation * Quat::from_axis_angle(axis, t * 0.7))
                        .collect(),
                    Interpolation::Linear,
                )),
                ..BoneTrack::default()
            };
            if bone == 0 {
                track.translation = Some(Channel::new(
                    vec![0.0, 1.0],
                    vec![rest.translation, rest.translation + Vec3::X],
                    Interpolation::Step,
                ));
            }
            if bone == skeleton.len() - 1 {
                track.scale = Some(Channel::new(
                    vec![0.25],
                    vec![Vec3::new(1.0, 2.0, 0.5)],
                    Interpolation::Linear,
                ));
            }
            track
        })
        .collect();
    Clip::new("made_up", skeleton, tracks).unwrap()
}

#[test]
fn a_gltf_template_with_external_files_becomes_self_contained() {
    let template = common::anim_data().join("gltf/kaykit-rig-medium/manny_med_mod.gltf");
    let asset = load(&template);
    assert!(asset.clips.is_empty(), "manny has no clips of its own");
    let clip = made_up_clip(&asset.skeleton);
    let dir = Scratch::new("manny");
    let path = write_on_template(
        &template,
        &asset,
        std::slice::from_ref(&clip),
        &dir,
        "manny",
    );
    // Nothing outside the file is needed: it loads from a folder of its own.
    let elsewhere = Scratch::new("manny-moved");
    let moved = elsewhere.join("manny.glb");
    std::fs::copy(&path, &moved).unwrap();
    let (doc, _, images) = gltf_import(&moved);
    assert_eq!(images.len(), 1);
    let image = doc.images().next().unwrap();
    assert!(matches!(
        image.source(),
        gltf::image::Source::View {
            mime_type: "image/png",
            ..
        }
    ));
    let back = load(&moved);
    assert_same_clips(
        &asset.skeleton,
        &[clip],
        &back.clips,
        &bone_map(&asset.skeleton, &back.skeleton),
    );
}

#[test]
fn a_data_uri_template() {
    let template = common::anim_data().join("gltf/khronos/SimpleSkin.gltf");
    let asset = load(&template);
    assert_eq!(asset.clips.len(), 1);
    write_on_template(
        &template,
        &asset,
        &asset.clips,
        &Scratch::new("simple-skin"),
        "simple-skin",
    );
}

#[test]
fn bad_input_is_an_error() {
    let template = common::anim_data().join("gltf/khronos/Fox.glb");
    let asset = load(&template);
    let nodes = asset.nodes.clone().unwrap();
    let dir = Scratch::new("bad");
    let out = dir.join("out.glb");
    let write = |path: &Path, nodes: &[usize], clips: &[Clip]| {
        write_glb(
            &out,
            &asset.skeleton,
            clips,
            Some(&Template { path, nodes }),
        )
    };
    let gltf_error = |result: posegpu::Result<()>, needle: &str| {
        let err = result.unwrap_err();
        assert!(matches!(err, Error::Gltf { .. }), "{err}");
        assert!(
            err.to_string().contains(needle),
            "'{err}' does not say '{needle}'"
        );
    };

    gltf_error(
        write(&template, &nodes[1..], &asset.clips),
        "maps 23 bones to nodes but the skeleton has 24",
    );
    gltf_error(
        write(&template, &[&nodes[..23], &[999]].concat(), &asset.clips),
        "node 999",
    );
    gltf_error(
        write(
            &template,
            &[&nodes[..23], &[nodes[0]]].concat(),
            &asset.clips,
        ),
        "both map to node",
    );
    gltf_error(
        write(
            &template,
            &[&[nodes[1], nodes[0]], &nodes[2..]].concat(),
            &asset.clips,
        ),
        "is this the file",
    );
    let err = write(Path::new("/nonexistent/template.glb"), &nodes, &asset.clips).unwrap_err();
    assert!(
        matches!(err, Error::Io { .. }) && err.to_string().contains("/nonexistent/template.glb"),
        "{err}"
    );

    // Clips of another skeleton.
    let humanoid = posegpu::procedural::humanoid_asset();
    gltf_error(
        write(&template, &nodes, &humanoid.clips[..1]),
        "bone tracks but the skeleton has 24",
    );
    gltf_error(
        write_glb(&out, &asset.skeleton, &humanoid.clips[..1], None),
        "bone tracks",
    );

    // Key times that posegpu accepts but glTF forbids.
    for (times, needle) in [
        (vec![-0.5, 1.0], "negative"),
        (vec![0.0, 1.0, 1.0], "strictly increase"),
    ] {
        let mut tracks = vec![BoneTrack::default(); asset.skeleton.len()];
        tracks[1].rotation = Some(Channel::new(
            times.clone(),
            vec![Quat::IDENTITY; times.len()],
            Interpolation::Linear,
        ));
        let clip = Clip::new("odd", &asset.skeleton, tracks).unwrap();
        gltf_error(write_glb(&out, &asset.skeleton, &[clip], None), needle);
    }
    assert!(!out.exists(), "nothing written on failure");

    // Not a glTF file at all, and a truncated one.

    let junk = dir.join("junk.glb");
    std::fs::write(&junk, b"glTF\x02\0\0\0garbage").unwrap();
    assert!(matches!(
        write(&junk, &nodes, &asset.clips),
        Err(Error::Gltf { .. })
    ));
    let bytes = std::fs::read(&template).unwrap();
    let cut = dir.join("cut.glb");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(
        write(&cut, &nodes, &asset.clips),
        Err(Error::Gltf { .. })
    ));
    // A missing external buffer is an error naming it.
    let gltf_dir = dir.join("missing-bin");
    std::fs::create_dir_all(&gltf_dir).unwrap();
    let manny = common::anim_data().join("gltf/kaykit-rig-medium/manny_med_mod.gltf");
    std::fs::copy(&manny, gltf_dir.join("manny.gltf")).unwrap();
    let manny_asset = load(&manny);
    let err = write_glb(
        &out,
        &manny_asset.skeleton,
        &[],
        Some(&Template {
            path: &gltf_dir.join("manny.gltf"),
            nodes: manny_asset.nodes.as_deref().unwrap(),
        }),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::Gltf { .. }) && err.to_string().contains("manny_med_mod.bin"),
        "{err}"
    );
}

#[test]
fn every_gltf_file_is_its_own_template() {
    for file in common::anim_files() {
        if file.extension().is_some_and(|e| e == "bvh") {
            continue;
        }
        let asset = load(&file);
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        write_on_template(&file, &asset, &asset.clips, &Scratch::new(&stem), &stem);
    }
}

/// The JSON chunk of a .glb.
fn glb_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap();
    let length = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + length]).unwrap()
}

#[test]
fn unknown_extensions_and_fields_survive() {
    let template = common::anim_data().join("gltf/khronos/SimpleSkin.gltf");
    let asset = load(&template);
    let nodes = asset.nodes.as_deref().unwrap();
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&template).unwrap()).unwrap();
    let dir = Scratch::new("extensions");
    let write = |json: &serde_json::Value, name: &str| {
        let path = dir.join(format!("{name}.gltf"));
        std::fs::write(&path, serde_json::to_vec(json).unwrap()).unwrap();
        let out = dir.join(format!("{name}.glb"));
        let template = Template { path: &path, nodes };
        write_glb(&out, &asset.skeleton, &asset.clips, Some(&template)).map(|()| out)
    };
    let count = |json: &serde_json::Value, key: &str| json[key].as_array().unwrap().len();

    // 7 accessors, 5 views; the animation's 2 accessors and 1 view go, 2 and 1 new ones come.
    let plain = glb_json(&write(&original, "plain").unwrap());
    assert_eq!(
        (count(&plain, "accessors"), count(&plain, "bufferViews")),
        (7, 5)
    );

    // An extension posegpu does not know might point at any accessor or view: all are kept.
    let mut json = original.clone();
    json["extensionsUsed"] = serde_json::json!(["EXT_from_the_future"]);
    json["extensions"] = serde_json::json!({"EXT_from_the_future": {"answer": 42}});
    json["nodes"][1]["extras"] = serde_json::json!({"note": "kept"});
    let out = write(&json, "future").unwrap();
    gltf_import(&out);
    let future = glb_json(&out);
    assert_eq!(
        (count(&future, "accessors"), count(&future, "bufferViews")),
        (9, 6)
    );
    assert_eq!(future["extensions"], json["extensions"]);
    assert_eq!(future["extensionsUsed"], json["extensionsUsed"]);
    assert_eq!(future["nodes"], json["nodes"]);
    let back = load(&out);
    assert_same_clips(&asset.skeleton, &asset.clips, &back.clips, &[0, 1]);

    // Buffer views that address buffers directly cannot be merged.
    json["extensionsUsed"] = serde_json::json!(["EXT_meshopt_compression"]);
    let err = write(&json, "meshopt").unwrap_err();
    assert!(
        matches!(err, Error::Gltf { .. }) && err.to_string().contains("EXT_meshopt_compression"),
        "{err}"
    );
}

#[test]
fn notifies_and_curves_survive_export_retargeting_and_additives() {
    // The humanoid's walk with a footstep and a curve: written to a .glb and read back, remapped
    // onto another skeleton, baked through a character plan, and made additive, it keeps them.
    let humanoid = posegpu::procedural::humanoid_asset();
    let walk = humanoid.clips[Clip::find(&humanoid.clips, "walk").unwrap()]
        .clone()
        .with_notify("footstep_l", 0.25)
        .and_then(|c| {
            let ch = posegpu::Channel::new(
                vec![0.0, 0.5, 1.0],
                vec![0.0, 1.0, 0.25],
                posegpu::Interpolation::Linear,
            );
            c.with_curve("effort", ch)
        })
        .unwrap();
    let same = |clip: &Clip, what: &str| {
        let n = clip.notifies();
        assert_eq!(n.len(), 1, "{what}");
        assert_eq!(
            (n[0].name.as_str(), n[0].time),
            ("footstep_l", 0.25),
            "{what}"
        );
        let c = clip
            .curve("effort")
            .unwrap_or_else(|| panic!("{what}: no curve"));
        assert_eq!(c.channel.values, [0.0, 1.0, 0.25], "{what}");
    };
    let dir = Scratch::new("markers");
    let path = dir.join("walk.glb");
    write_glb(&path, &humanoid.skeleton, std::slice::from_ref(&walk), None).unwrap();
    same(&load(&path).clips[0], "exported");

    let variant = posegpu::procedural::humanoid_variant(7);
    let mapping = posegpu::retarget::BoneMapping::new(
        &humanoid.skeleton,
        &variant,
        &posegpu::retarget::Rig::humanoid(),
    )
    .unwrap();
    let remapped =
        posegpu::retarget::remap_clip(&walk, &humanoid.skeleton, &variant, &mapping).unwrap();
    same(&remapped, "remapped");

    let with_walk = Asset {
        clips: vec![walk.clone()],
        ..humanoid.clone()
    };
    let target = Asset {
        skeleton: variant.clone(),
        clips: Vec::new(),
        ..humanoid.clone()
    };
    let plan = posegpu::retarget::RetargetPlan::new(
        &with_walk,
        &target,
        &posegpu::retarget::PlanOptions::default(),
    )
    .unwrap();
    let baked =
        posegpu::retarget::bake_clip(&plan, &with_walk, &walk, &variant, posegpu::IkWeights::NONE)
            .unwrap();
    same(&baked, "baked");

    // An additive's curve is its delta against the base's: here frame 0 (value 0) of the same
    // clip, so the values stay; against a base whose curve is 1, each drops by 1.
    let additive = posegpu::additive::make_additive(
        "walk delta",
        &humanoid.skeleton,
        &walk,
        posegpu::additive::AdditiveBase::Frame(0),
        posegpu::AdditiveSpace::Local,
    )
    .unwrap();
    same(&additive, "additive against frame 0");
    let lifted = humanoid.clips[0]
        .clone()
        .with_curve(
            "effort",
            posegpu::Channel::new(vec![0.0], vec![1.0], posegpu::Interpolation::Linear),
        )
        .unwrap();
    let against = posegpu::additive::make_additive(
        "walk over idle",
        &humanoid.skeleton,
        &walk,
        posegpu::additive::AdditiveBase::ClipFrame(&lifted, 0),
        posegpu::AdditiveSpace::Local,
    )
    .unwrap();
    assert_eq!(
        against.curve("effort").unwrap().channel.values,
        [-1.0, 0.0, -0.75]
    );
}
