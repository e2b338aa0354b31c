//! The CPU backend: the twins of the GPU stages, and an evaluator that runs them on every core.
//! It is the test oracle for the GPU and the fallback where there is no adapter.

pub mod hierarchy;
pub mod sample;

use rayon::prelude::*;

use crate::error::Result;
use crate::library::{AnimLibrary, Instance};
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

    /// Evaluates `instances` into `out` (resized to fit).
    pub fn evaluate(&self, instances: &[Instance], out: &mut Poses) -> Result<()> {
        self.lib.validate_instances(instances)?;
        let bones = self.lib.bone_count();
        out.resize(bones, instances.len());
        let chunk = INSTANCES_PER_TASK * bones;
        instances
            .par_chunks(INSTANCES_PER_TASK)
            .zip(out.locals.par_chunks_mut(chunk))
            .zip(out.component.par_chunks_mut(chunk))
            .zip(out.skinning.par_chunks_mut(chunk))
            .for_each(|(((insts, l), c), s)| {
                for (j, inst) in insts.iter().enumerate() {
                    let r = j * bones..(j + 1) * bones;
                    sample::sample_instance(self.lib, inst, &mut l[r.clone()]);
                    hierarchy::run_instance(self.lib, &l[r.clone()], &mut c[r.clone()], &mut s[r]);
                }
            });
        Ok(())
    }

    /// The same on the calling thread only (for single-core measurements).
    pub fn evaluate_single_thread(&self, instances: &[Instance], out: &mut Poses) -> Result<()> {
        self.lib.validate_instances(instances)?;
        out.resize(self.lib.bone_count(), instances.len());
        sample::run(self.lib, instances, &mut out.locals);
        hierarchy::run(self.lib, &out.locals, &mut out.component, &mut out.skinning);
        Ok(())
    }
}
