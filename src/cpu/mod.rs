//! The CPU backend: the twins of the GPU stages, and an evaluator that runs them on every core.
//! It is the test oracle for the GPU and the fallback where there is no adapter.

pub mod hierarchy;
pub mod layers;
pub mod sample;

use rayon::prelude::*;

use crate::batch::PoseBatch;
use crate::error::Result;
use crate::library::{AnimLibrary, Instance, Xform};
use crate::pose::Poses;

/// Instances per parallel task: large enough to amortise scheduling, small enough to balance.
const INSTANCES_PER_TASK: usize = 64;

/// Evaluates sampling and the hierarchy on the CPU, instance by instance, over all cores.
pub struct CpuEvaluator<'a> {
    lib: &'a AnimLibrary,
}

impl<'a> CpuEvaluator<'a> {
    pub fn new(lib: &'a AnimLibrary) -> Self {
        Self { lib }
    }

    /// Evaluates `instances` (one clip each) into `out` (resized to fit).
    pub fn evaluate(&self, instances: &[Instance], out: &mut Poses) -> Result<()> {
        self.evaluate_batch(&PoseBatch::from_instances(instances), out)
    }

    /// Evaluates every instance of `batch` (bases, blends, additive layers) into `out`.
    pub fn evaluate_batch(&self, batch: &PoseBatch, out: &mut Poses) -> Result<()> {
        self.lib.validate_batch(batch)?;
        let bones = self.lib.bone_count();
        out.resize(bones, batch.len());
        let chunk = INSTANCES_PER_TASK * bones;
        (0..batch.len())
            .into_par_iter()
            .step_by(INSTANCES_PER_TASK)
            .zip(out.locals.par_chunks_mut(chunk))
            .zip(out.component.par_chunks_mut(chunk))
            .zip(out.skinning.par_chunks_mut(chunk))
            .for_each(|(((first, l), c), s)| {
                let mut scratch = sample::Scratch::default();
                let mut deltas = Vec::new();
                for j in 0..l.len() / bones {
                    let (i, r) = (first + j, j * bones..(j + 1) * bones);
                    let head = &batch.heads[i];
                    deltas.resize(head.slots as usize * bones, Xform::default());
                    let l = &mut l[r.clone()];
                    sample::sample_instance(self.lib, batch, i, l, &mut deltas, &mut scratch);
                    layers::run_instance(self.lib, &batch.entries, head, l, &mut deltas);
                    hierarchy::run_instance(self.lib, l, &mut c[r.clone()], &mut s[r]);
                }
            });
        Ok(())
    }

    /// The same on the calling thread only, stage after stage over the whole batch (for
    /// single-core measurements).
    pub fn evaluate_single_thread(&self, batch: &PoseBatch, out: &mut Poses) -> Result<()> {
        self.lib.validate_batch(batch)?;
        let bones = self.lib.bone_count();
        out.resize(bones, batch.len());
        let mut deltas = vec![Xform::default(); batch.slot_count() as usize * bones];
        sample::run(self.lib, batch, &mut out.locals, &mut deltas);
        layers::run(self.lib, batch, &mut out.locals, &mut deltas);
        hierarchy::run(self.lib, &out.locals, &mut out.component, &mut out.skinning);
        Ok(())
    }
}
