//! What a specialised pipeline asks of a GPU, read without one: the SPIR-V instructions of
//! its entry point with every function it calls inlined, and its workgroup memory. A proxy
//! for register pressure and occupancy (drivers inline every call, and workgroup memory caps
//! the workgroups an SM holds). The evaluator reads the fused pass's workgroup memory here;
//! `crate::analysis::shader_stats` gives every pipeline of a frame.

use std::collections::HashMap;

use naga::back::spv;

use super::evaluator::pass_constants;
use super::shaders::shader;
use super::specialize::{specialize, Paths, Specialized, ENTRY};
use super::GpuOptions;
use crate::error::{Error, Result};
use crate::frame_plan::Pass;

/// The statistics and SPIR-V of `pass`'s pipeline with `options`, specialised for `paths`.
pub(crate) fn pipeline_stats(
    pass: Pass,
    options: &GpuOptions,
    paths: Paths,
) -> Result<(ShaderStats, Vec<u32>)> {
    let mut constants = pass_constants(pass, options);
    constants.extend(paths.constants());
    specialize(shader(pass.stage()), &constants)
        .and_then(|s| ShaderStats::of(&s))
        .map_err(|e| Error::Gpu {
            what: format!("specialising {}: {e}", pass.label()),
            source: None,
        })
}

/// One pipeline's statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderStats {
    /// SPIR-V instructions of the entry point, each called function counted at every call.
    pub instructions: u64,
    /// Bytes of workgroup memory the module declares (after specialisation: what it uses).
    pub workgroup_bytes: u64,
}

const OP_ENTRY_POINT: u32 = 15;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_END: u32 = 56;
const OP_FUNCTION_CALL: u32 = 57;

impl ShaderStats {
    /// The statistics of `s`, and its SPIR-V.
    pub(crate) fn of(s: &Specialized) -> Result<(Self, Vec<u32>), String> {
        let stage = s
            .module
            .entry_points
            .iter()
            .find(|e| e.name == ENTRY)
            .ok_or("no entry point `main`")?
            .stage;
        let options = spv::Options {
            // The counts describe the shader, not wgpu's checks around it.
            bounds_check_policies: naga::proc::BoundsCheckPolicies::default(),
            ..Default::default()
        };
        let pipeline = spv::PipelineOptions {
            shader_stage: stage,
            entry_point: ENTRY.to_string(),
        };
        let words = spv::write_vec(&s.module, &s.info, &options, Some(&pipeline))
            .map_err(|e| format!("{e}"))?;
        let instructions = inlined_instructions(&words).ok_or("malformed SPIR-V")?;
        let mut layouter = naga::proc::Layouter::default();
        layouter
            .update(s.module.to_ctx())
            .map_err(|e| format!("{e}"))?;
        let workgroup_bytes = s
            .module
            .global_variables
            .iter()
            .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
            .map(|(_, g)| u64::from(layouter[g.ty].size))
            .sum();
        let stats = Self {
            instructions,
            workgroup_bytes,
        };
        Ok((stats, words))
    }
}

/// The instructions of the (single) entry point of SPIR-V module `words`, counting a called
/// function's own, inlined likewise, at each call. `None` for words that are not a module.
fn inlined_instructions(words: &[u32]) -> Option<u64> {
    // Each function's own instruction count and the functions it calls.
    let mut functions: HashMap<u32, (u64, Vec<u32>)> = HashMap::new();
    let mut entry = None;
    let mut current: Option<u32> = None;
    let mut at = 5;
    while at < words.len() {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        let operands = words.get(at + 1..at + count)?;
        if count == 0 {
            return None;
        }
        match op {
            OP_ENTRY_POINT => entry = Some(*operands.get(1)?),
            OP_FUNCTION => current = Some(*operands.get(1)?),
            _ => {}
        }
        if let Some(f) = current {
            let record = functions.entry(f).or_default();
            record.0 += 1;
            if op == OP_FUNCTION_CALL {
                record.1.push(*operands.get(2)?);
            }
        }
        if op == OP_FUNCTION_END {
            current = None;
        }
        at += count;
    }
    let mut memo = HashMap::new();
    inlined(entry?, &functions, &mut memo, 0)
}

fn inlined(
    f: u32,
    functions: &HashMap<u32, (u64, Vec<u32>)>,
    memo: &mut HashMap<u32, u64>,
    depth: usize,
) -> Option<u64> {
    if let Some(&n) = memo.get(&f) {
        return Some(n);
    }
    // WGSL has no recursion; a cycle would be a malformed module.
    if depth > functions.len() {
        return None;
    }
    let (own, calls) = functions.get(&f)?;
    let mut n = *own;
    for &callee in calls {
        n += inlined(callee, functions, memo, depth + 1)?;
    }
    memo.insert(f, n);
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instruction word: its count (with itself) and opcode, then the operands.
    fn op(opcode: u32, operands: &[u32]) -> Vec<u32> {
        let mut w = vec![((operands.len() as u32 + 1) << 16) | opcode];
        w.extend_from_slice(operands);
        w
    }

    #[test]
    fn a_called_function_counts_at_each_call() {
        let mut words = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        words.extend(op(OP_ENTRY_POINT, &[5, 1, 0x6e69_616d, 0]));
        // Function 2: OpFunction, one instruction, OpFunctionEnd (3).
        words.extend(op(OP_FUNCTION, &[9, 2, 0, 8]));
        words.extend(op(248, &[3]));
        words.extend(op(OP_FUNCTION_END, &[]));
        // Function 1 (the entry): OpFunction, two calls of 2, OpFunctionEnd (4 + 2 * 3).
        words.extend(op(OP_FUNCTION, &[9, 1, 0, 8]));
        words.extend(op(OP_FUNCTION_CALL, &[9, 10, 2]));
        words.extend(op(OP_FUNCTION_CALL, &[9, 11, 2]));
        words.extend(op(OP_FUNCTION_END, &[]));
        assert_eq!(inlined_instructions(&words), Some(10));
        // A truncated module is refused, not miscounted.
        assert_eq!(inlined_instructions(&words[..words.len() - 3]), None);
    }
}
