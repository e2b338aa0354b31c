//! The replay held against the shaders it models: for each replayed pass, the storage buffers
//! its specialised pipeline reads and writes (naga's per-entry-point global use) and the ones
//! the replay's lanes touch. A binding or an access a shader gains that the replay does not
//! model fails here, as does a replayed access no pipeline makes.

use std::collections::{BTreeMap, BTreeSet};

use naga::valid::GlobalUse;
use naga::AddressSpace;

use super::*;
use crate::additive::{make_additive, AdditiveBase};
use crate::compress::{Compression, DEFAULT_TOLERANCE};
use crate::frame_plan::FrameShape;
use crate::gpu::{pass_constants, shader, specialize, GpuOptions, Paths};
use crate::model::{AdditiveSpace, Asset, AssetFrame};
use crate::retarget::{PlanOptions, RetargetPlan, Rig};
use crate::{ClipSample, RootLock, TranslationMode};

/// Every buffer the replay names, with the name its shaders declare it under.
const BUFFERS: [(Buffer, &str); 11] = [
    (Buffer::Frame, "frame"),
    (Buffer::ClipTable, "clip_table"),
    (Buffer::Times, "times"),
    (Buffer::Values, "values"),
    (Buffer::Retarget, "retarget"),
    (Buffer::Locals, "locals"),
    (Buffer::Component, "component"),
    (Buffer::Skinning, "skinning"),
    (Buffer::Deltas, "deltas"),
    (Buffer::Parents, "parents"),
    (Buffer::InverseBind, "inverse_bind"),
];

/// A buffer's name and whether the access writes.
type Use = (&'static str, bool);

/// What a replayed pass's lanes touched.
fn replayed(t: &PassTraffic) -> BTreeSet<Use> {
    let mut out = BTreeSet::new();
    for (b, name) in BUFFERS {
        if t.accessed & b.read_bit() != 0 {
            out.insert((name, false));
        }
        if t.accessed & b.write_bit() != 0 {
            out.insert((name, true));
        }
    }
    out
}

/// What `pass`'s pipeline, specialised as the evaluator specialises it for `batch` on `lib`
/// keeping `outputs`, reads and writes of its storage buffers.
fn pipeline(lib: &AnimLibrary, batch: &PoseBatch, pass: Pass, outputs: Outputs) -> BTreeSet<Use> {
    let options = GpuOptions {
        outputs,
        ..Default::default()
    };
    let mut constants = pass_constants(pass, &options);
    constants.extend(
        Paths::of(lib.data())
            .for_frame(&FrameShape::of(batch))
            .constants(),
    );
    let s = specialize(shader(pass.stage()), &constants).unwrap();
    let entry = s.module.entry_points.iter().position(|e| e.name == "main");
    let used = s.info.get_entry_point(entry.unwrap());
    let mut out = BTreeSet::new();
    for (handle, global) in s.module.global_variables.iter() {
        if !matches!(global.space, AddressSpace::Storage { .. }) {
            continue;
        }
        let name = global.name.as_deref().unwrap_or("");
        let Some(&(_, name)) = BUFFERS.iter().find(|(_, n)| *n == name) else {
            panic!(
                "{}: storage buffer '{name}' is no buffer the replay names",
                pass.label()
            );
        };
        if used[handle].contains(GlobalUse::READ) {
            out.insert((name, false));
        }
        if used[handle].contains(GlobalUse::WRITE) {
            out.insert((name, true));
        }
    }
    out
}

/// The libraries and batches the replay models: single clips and blends, local and mesh
/// layers, root locks, UE's modes, plans and compressed clips.
fn workloads() -> Vec<(&'static str, AnimLibrary, PoseBatch)> {
    let asset = crate::procedural::humanoid_asset();
    let clips = asset.clips.len() as u32;
    // The clips, then a local and a mesh-space additive of the first.
    let (local, mesh_additive) = (clips, clips + 1);
    let additive = |space| {
        let base = AdditiveBase::Frame(0);
        make_additive("additive", &asset.skeleton, &asset.clips[0], base, space).unwrap()
    };
    let mut with_additives = asset.clips.clone();
    with_additives.extend([
        additive(AdditiveSpace::Local),
        additive(AdditiveSpace::Mesh),
    ]);
    let plain = AnimLibrary::new(&asset.skeleton, &with_additives).unwrap();
    let target = Asset {
        skeleton: crate::procedural::humanoid_variant(7),
        clips: Vec::new(),
        nodes: None,
        frame: AssetFrame::Y_UP,
    };
    let modes = {
        let mut b = AnimLibrary::builder(&target.skeleton);
        let rig = Rig::uniform(TranslationMode::AnimationScaled);
        let id = b.add_source("source", &asset.skeleton, None, &rig).unwrap();
        b.add_clips_from(id, &asset.clips).unwrap();
        b.build()
    };
    let planned = |compress: bool| {
        let plan = RetargetPlan::new(&asset, &target, &PlanOptions::default()).unwrap();
        let mut b = AnimLibrary::builder(&target.skeleton);
        if compress {
            b.compress(Some(Compression::all(DEFAULT_TOLERANCE).unwrap()));
        }
        let id = b.add_character_source("humanoid", &asset, &plan).unwrap();
        b.add_clips_from(id, &asset.clips).unwrap();
        b.build()
    };
    let compressed = {
        let mut b = AnimLibrary::builder(&asset.skeleton);
        b.compress(Some(Compression::all(DEFAULT_TOLERANCE).unwrap()));
        b.add_clips(&asset.clips).unwrap();
        b.build()
    };
    let batch = |f: &dyn Fn(&mut PoseBatch, u32)| {
        let mut batch = PoseBatch::new();
        for i in 0..64 {
            f(&mut batch, i);
        }
        batch
    };
    let t = |i: u32| i as f32 * 0.013;
    let single = batch(&|b, i| {
        b.push_clip(i % clips, t(i), true);
    });
    let layered = batch(&|b, i| {
        let two = [
            ClipSample::new(i % clips, t(i), true).with_weight(0.7),
            ClipSample::new((i + 1) % clips, t(i), true).with_weight(0.3),
        ];
        let layer = [ClipSample::new((i + 2) % clips, t(i), true)];
        b.push_blend(&two)
            .additive(
                AdditiveSpace::Local,
                0.5,
                &[ClipSample::new(local, t(i), true)],
            )
            .blend(AdditiveSpace::Local, 0.4, &layer);
    });
    // Blends and a blend layer only: for libraries without the additive clips.
    let blended = batch(&|b, i| {
        let two = [
            ClipSample::new(i % clips, t(i), true).with_weight(0.5),
            ClipSample::new((i + 1) % clips, t(i), true).with_weight(0.5),
        ];
        let layer = [ClipSample::new((i + 2) % clips, t(i), true)];
        b.push_blend(&two).blend(AdditiveSpace::Local, 0.4, &layer);
    });
    let mesh = batch(&|b, i| {
        let layer = [ClipSample::new((i + 1) % clips, t(i), true)];
        b.push_clip(i % clips, t(i), true)
            .blend(AdditiveSpace::Mesh, 0.5, &layer)
            .additive(
                AdditiveSpace::Mesh,
                0.5,
                &[ClipSample::new(mesh_additive, t(i), true)],
            );
    });
    let locked = batch(&|b, i| {
        let lock = Some(RootLock::RefPose);
        b.push_blend(&[ClipSample::new(i % clips, t(i), true).with_root_lock(lock)]);
    });
    vec![
        ("single clips", plain.clone(), single.clone()),
        ("blends and local layers", plain.clone(), layered),
        ("mesh layers", plain.clone(), mesh),
        ("blends", plain.clone(), blended.clone()),
        ("root locks", plain, locked),
        ("UE's modes", modes.clone(), blended),
        ("UE's modes, single clips", modes, single.clone()),
        ("plans", planned(false), single.clone()),
        ("compressed plans", planned(true), single.clone()),
        ("compressed clips", compressed, single),
    ]
}

#[test]
fn the_replay_models_every_storage_access_of_the_passes_it_replays() {
    let outputs = [
        Outputs::ALL,
        Outputs::COMPONENT_AND_SKINNING,
        Outputs::SKINNING,
    ];
    // Per pipeline (its label and kept outputs): what it uses and what the replay touched,
    // over every workload that runs it.
    let mut seen: BTreeMap<String, (BTreeSet<Use>, BTreeSet<Use>)> = BTreeMap::new();
    let mut stray = Vec::new();
    for (what, lib, batch) in workloads() {
        for policy in [FusePolicy::Fused, FusePolicy::Separate] {
            for kept in outputs {
                let options = FrameOptions::fusing(policy == FusePolicy::Fused);
                let plan = FramePlan::of_batch(&lib, &batch, &options);
                let traffic = replay_traffic(&lib, &batch, policy, kept);
                let traffic = traffic.unwrap_or_else(|| panic!("{what}: not replayed"));
                let replayed_passes = plan.passes().iter().filter(|p| p.pass != Pass::Curves);
                assert_eq!(replayed_passes.clone().count(), traffic.len(), "{what}");
                for (planned, t) in replayed_passes.zip(&traffic) {
                    assert_eq!(planned.pass.stage().name(), t.pass, "{what}");
                    let shader = pipeline(&lib, &batch, planned.pass, kept);
                    let lanes = replayed(t);
                    // The replay touches nothing this pipeline cannot.
                    for u in lanes.difference(&shader) {
                        stray.push(format!("{what}, {}, {kept:?}: {u:?}", planned.pass.label()));
                    }
                    let key = format!("{} {kept:?}", planned.pass.label());
                    let entry = seen.entry(key).or_default();
                    entry.0.extend(shader);
                    entry.1.extend(lanes);
                }
            }
        }
    }
    assert!(
        stray.is_empty(),
        "replayed accesses no shader makes: {stray:#?}"
    );
    // Every access a replayed pipeline makes, the replay models on some workload.
    let unmodelled: Vec<String> = seen
        .iter()
        .flat_map(|(key, (shader, lanes))| {
            shader
                .difference(lanes)
                .map(move |u| format!("{key}: {u:?}"))
        })
        .collect();
    assert!(
        unmodelled.is_empty(),
        "shader accesses the replay does not model: {unmodelled:#?}"
    );
    // The passes the replay models, each seen.
    for stage in ["resolve", "sample", "layers", "hierarchy", "fused"] {
        assert!(seen.keys().any(|k| k.starts_with(stage)), "{stage}");
    }
}

#[test]
fn the_binding_check_reads_what_a_pipeline_uses() {
    // The hierarchy pass keeping its locals reads them and writes component transforms and
    // skinning matrices; built in place it reads and writes the component buffer only.
    let asset = crate::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let batch = PoseBatch::from_instances(&[crate::ClipSample::new(0, 0.5, true)]);
    let kept = pipeline(&lib, &batch, Pass::Hierarchy, Outputs::ALL);
    let in_place = pipeline(&lib, &batch, Pass::Hierarchy, Outputs::SKINNING);
    assert!(kept.contains(&("locals", false)), "{kept:?}");
    assert!(!kept.contains(&("locals", true)), "{kept:?}");
    assert!(kept.contains(&("component", true)), "{kept:?}");
    assert!(in_place.contains(&("component", false)), "{in_place:?}");
    assert!(
        !in_place.iter().any(|(n, _)| *n == "locals"),
        "{in_place:?}"
    );
}
