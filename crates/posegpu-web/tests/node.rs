//! The wasm build's own tests, run by wasm-bindgen-test-runner in Node (no WebGPU there: the
//! CPU side of the JavaScript API). The browser tests (web/test) cover the GPU.
#![cfg(target_arch = "wasm32")]

use posegpu_web::js::asset::load;
use posegpu_web::js::crowd::Crowd;
use posegpu_web::js::evaluator::evaluate_cpu;
use posegpu_web::js::library::{Library, LibraryBuilder};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

/// Khronos' SimpleSkin: a .gltf with its buffer as a data URI (anim-data, read at build time).
const SIMPLE_SKIN: &[u8] =
    include_bytes!("../../../../shared/anim-data/gltf/khronos/SimpleSkin.gltf");

fn json(text: &str) -> JsValue {
    js_sys::JSON::parse(text).expect("test JSON")
}

fn message(e: wasm_bindgen::JsError) -> String {
    let value = JsValue::from(e);
    js_sys::Error::from(value).message().into()
}

#[wasm_bindgen_test]
async fn a_gltf_in_memory_loads_and_evaluates_on_the_cpu_twin() {
    let asset = load(
        SIMPLE_SKIN.to_vec(),
        "gltf".into(),
        Some("SimpleSkin.gltf".into()),
    )
    .await
    .map_err(message)
    .unwrap();
    assert_eq!(asset.bone_count(), 2);
    assert_eq!(asset.clip_names().len(), 1);
    let lib = Library::from_asset(&asset).map_err(message).unwrap();
    let samples = json(r#"[{"clip": 0, "time": 0.5}, {"clip": 0, "time": 2.25}]"#);
    let poses = evaluate_cpu(&lib, samples).map_err(message).unwrap();
    assert_eq!((poses.instance_count(), poses.bone_count()), (2, 2));
    let component = poses.component();
    assert_eq!(component.len(), 2 * 2 * 12);
    // The two times pose the second bone differently.
    assert_ne!(component[12..24], component[36..48]);
}

#[wasm_bindgen_test]
async fn bad_bytes_reject_with_posegpus_message() {
    let err = load(b"not a glb".to_vec(), "glb".into(), Some("junk.glb".into()))
        .await
        .err()
        .map(message)
        .expect("a rejection");
    let native =
        posegpu::import::load_bytes(b"not a glb", posegpu::import::Format::Gltf, "junk.glb")
            .expect_err("an error")
            .to_string();
    assert_eq!(err, native);
    let format = load(b"x".to_vec(), "fbx".into(), None)
        .await
        .err()
        .map(message)
        .unwrap();
    assert!(format.contains("fbx"), "{format}");
}

#[wasm_bindgen_test]
async fn a_crowd_advances_on_the_cpu_twin_and_refuses_bad_agents() {
    let asset = load(SIMPLE_SKIN.to_vec(), "gltf".into(), None)
        .await
        .map_err(message)
        .unwrap();
    let lib = Library::from_asset(&asset).map_err(message).unwrap();
    let mut crowd = Crowd::new(&lib);
    let agent = json(
        r#"{"players": [{"clip": 0, "start": 0.25}], "placement": {"translation": [1, 2, 3]}}"#,
    );
    assert_eq!(crowd.add(agent).map_err(message).unwrap(), 0);
    assert_eq!(crowd.placements()[..3], [1.0, 2.0, 3.0]);
    crowd.advance(0.5).map_err(message).unwrap();
    assert!(crowd.advance(f32::NAN).is_err());
    let bad = json(r#"{"players": [{"clip": 7}]}"#);
    assert!(message(crowd.add(bad).unwrap_err()).contains("clip 7"));
    let some_bad = json(r#"[{"players": [{"clip": 0}]}, {"players": [{"clip": "nope"}]}]"#);
    let err = message(crowd.add_all(some_bad).unwrap_err());
    assert!(err.starts_with("agent 1: "), "{err}");
    assert_eq!(crowd.length(), 1, "a refused batch adds nothing");
}

#[wasm_bindgen_test]
async fn a_compressed_library_plays_within_its_tolerance() {
    let asset = load(SIMPLE_SKIN.to_vec(), "gltf".into(), None)
        .await
        .map_err(message)
        .unwrap();
    let plain = Library::from_asset(&asset).map_err(message).unwrap();
    let mut builder = LibraryBuilder::new(&asset);
    builder
        .compress(JsValue::UNDEFINED)
        .map_err(message)
        .unwrap();
    builder.add_clips(&asset, None).map_err(message).unwrap();
    let packed = builder.build();
    let samples = || json(r#"[{"clip": 0, "time": 0.3}, {"clip": 0, "time": 1.7}]"#);
    let p = evaluate_cpu(&plain, samples()).map_err(message).unwrap();
    let q = evaluate_cpu(&packed, samples()).map_err(message).unwrap();
    let d = q
        .component_deviation(p.component(), asset.extent())
        .map_err(message)
        .unwrap();
    // 3e-4 of the height at virtual vertices height / 60 from each bone: rotations within
    // 3e-4 * 60 = 1.8e-2 rad.
    assert!(d <= 1.8e-2, "compressed keys {d} from the plain ones");
    let mut bad = LibraryBuilder::new(&asset);
    let err = message(bad.compress(JsValue::from("fine")).unwrap_err());
    assert!(err.contains("tolerance"), "{err}");
    let err = message(bad.compress(JsValue::from(-1.0)).unwrap_err());
    let native = posegpu::compress::Compression::all(-1.0)
        .err()
        .unwrap()
        .to_string();
    assert_eq!(err, native);
}
