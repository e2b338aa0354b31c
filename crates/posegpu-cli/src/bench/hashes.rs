//! The bench workloads' outputs, hashed: a fence for refactors that must change no result
//! (issue 30's frame plan). The CPU twin's hashes hold where the libm and the target are this
//! machine's (CI's: x86-64, glibc); the GPU's are lavapipe's (llvmpipe), the same in both pass
//! plans, and are compared only on that adapter: another device rounds otherwise. Recorded
//! 2026-11-27, before the frame-plan refactor. 97 instances at 0.37 s of each workload.

use posegpu::{
    AdditiveSpace, AnimLibrary, CpuEvaluator, FusePolicy, GpuEvaluator, GpuOptions, Outputs,
};
use posegpu::{PoseBatch, Poses};

use super::workload::Workload;

/// FNV-1a over every output's bytes (locals, component, skinning, curves).
fn hash(p: &Poses) -> u64 {
    let bytes = [
        bytemuck::cast_slice::<_, u8>(&p.locals),
        bytemuck::cast_slice(&p.component),
        bytemuck::cast_slice(&p.skinning),
        bytemuck::cast_slice(&p.curves),
    ];
    bytes
        .iter()
        .flat_map(|b| b.iter())
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

/// The workloads, by name.
fn workloads() -> Vec<(&'static str, Workload)> {
    vec![
        (
            "16 bones, local layer",
            Workload::for_bones(16, AdditiveSpace::Local, None),
        ),
        (
            "67 bones, local layer",
            Workload::for_bones(67, AdditiveSpace::Local, None),
        ),
        (
            "67 bones, mesh layer",
            Workload::for_bones(67, AdditiveSpace::Mesh, None),
        ),
        (
            "256 bones, local layer",
            Workload::for_bones(256, AdditiveSpace::Local, None),
        ),
        ("plain, 67 bones", Workload::plain(67, None)),
        ("character plan, feet IK", Workload::character(false, None)),
        ("baked clips, feet IK", Workload::character(true, None)),
    ]
    .into_iter()
    .map(|(name, w)| (name, w.unwrap_or_else(|e| panic!("{name}: {e}"))))
    .collect()
}

/// Per workload (the demo's crowd first): the CPU twin's hash, then lavapipe's with fused and with separate passes.
const RECORDED: [(&str, [u64; 3]); 8] = [
    (
        "demo",
        [0xb248e3e7dadb67c8, 0x5cf4c8ef0d6aaaad, 0x5cf4c8ef0d6aaaad],
    ),
    (
        "16 bones, local layer",
        [0x30bc597d24f539a5, 0x9befb9da24f04d9f, 0x9befb9da24f04d9f],
    ),
    (
        "67 bones, local layer",
        [0xab3ab934f1d1a2f5, 0x1ae2e30a17eea822, 0x1ae2e30a17eea822],
    ),
    (
        "67 bones, mesh layer",
        [0x14c3e3f927c43287, 0xe0a43ce1601dc47c, 0xe0a43ce1601dc47c],
    ),
    (
        "256 bones, local layer",
        [0xa79d91e2ceeb57de, 0x6286d24d89daa845, 0x6286d24d89daa845],
    ),
    (
        "plain, 67 bones",
        [0xd69f769d3d9577c8, 0x81b0cb5a03c059ea, 0x81b0cb5a03c059ea],
    ),
    (
        "character plan, feet IK",
        [0x4f77f9392c7d6a75, 0xed3a27d29d2c32f5, 0xed3a27d29d2c32f5],
    ),
    (
        "baked clips, feet IK",
        [0xb9a171837e003fb4, 0xb44262c7c9b809eb, 0xb44262c7c9b809eb],
    ),
];

#[test]
fn outputs_are_the_recorded_ones() {
    let ctx = crate::test_common::gpu();
    let lavapipe = ctx
        .as_ref()
        .filter(|c| c.info.name.to_lowercase().contains("llvmpipe"));
    let mut got = Vec::new();
    // The demo's crowd (`posegpu demo`), then the bench's workloads.
    let demo = posegpu::procedural::humanoid_asset();
    let demo = AnimLibrary::new(&demo.skeleton, &demo.clips).unwrap();
    let demo_batch = PoseBatch::from_instances(&crate::workload::crowd(&demo, 97, 0.37));
    let benches = workloads().into_iter().map(|(name, w)| {
        let mut batch = PoseBatch::new();
        w.batch(97, 0.37, &mut batch);
        (name, w.lib, batch)
    });
    for (name, lib, batch) in std::iter::once(("demo", demo, demo_batch)).chain(benches) {
        let mut cpu = Poses::default();
        CpuEvaluator::new(&lib).evaluate(&batch, &mut cpu).unwrap();
        let mut row = [hash(&cpu), 0, 0];
        if let Some(ctx) = lavapipe {
            for (slot, passes) in [(1, FusePolicy::Fused), (2, FusePolicy::Separate)] {
                let options = GpuOptions {
                    outputs: Outputs::ALL,
                    passes,
                    ..GpuOptions::default()
                };
                let mut gpu = GpuEvaluator::new(ctx, &lib, batch.len(), &options).unwrap();
                gpu.evaluate(&batch).unwrap();
                row[slot] = hash(&gpu.read_back().unwrap());
            }
        }
        println!(
            "    (\"{name}\", [{:#x}, {:#x}, {:#x}]),",
            row[0], row[1], row[2]
        );
        got.push((name, row));
    }
    for ((name, row), (recorded_name, recorded)) in got.iter().zip(RECORDED) {
        assert_eq!(*name, recorded_name);
        assert_eq!(
            row[0], recorded[0],
            "{name}: the CPU twin's outputs changed"
        );
        if lavapipe.is_some() {
            assert_eq!(
                row[1..],
                recorded[1..],
                "{name}: lavapipe's outputs changed"
            );
        }
    }
}
