//! Pipeline variants compiled down to what their workload can run.
//!
//! A stage's override constants (which outputs it keeps, whether the library has plan or
//! compressed clips, whether the frame locks roots, ...) are resolved here, every `if` whose
//! condition they decide is replaced by the branch it takes, and whatever no branch left calls
//! is dropped, before the module reaches wgpu. wgpu resolves overrides too, but leaves both
//! branches of such an `if` in the module it hands the driver (naga does no dead-code
//! elimination), so every pipeline carried the code, and the register demand, of paths its
//! workload never takes.
//!
//! Written here rather than with a WGSL preprocessor (naga_oil's `#ifdef`) so that each shader
//! stays plain WGSL that naga validates as it is, every path on; a variant is that module with
//! constants.

use naga::back::pipeline_constants::process_overrides;
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{BinaryOperator, Block, Expression, Function, Literal, Module, Statement};

use super::shaders::{source, Shader};
use crate::frame_plan::FrameShape;
use crate::layout::{
    CHANNEL_STRIDE_SHIFT, CLIP_ADDITIVE, CLIP_COMPRESSED, CLIP_PLAN, CLIP_SOURCES_SHIFT,
};
use crate::library::{clip_channel_word, LibraryData};

/// The paths a pipeline's workload can take; each one off compiles its code out of the
/// pipeline (the override constants of the same names in `clip.wgsl` and `common.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Paths {
    /// The library has clips retargeted through a character source's plan.
    pub plan_clips: bool,
    /// The library has compressed clips.
    pub packed_clips: bool,
    /// The frame has a sample that locks its root.
    pub root_locks: bool,
    /// A scale can come out negative (a mirrored bone), so composing takes the matrix path.
    pub negative_scales: bool,
}

impl Paths {
    /// Every path: what the shaders compile to unspecialised.
    #[cfg(test)]
    pub(crate) const ALL: Paths = Paths {
        plan_clips: true,
        packed_clips: true,
        root_locks: true,
        negative_scales: true,
    };

    /// The paths the library's clips can take; the frame's are off ([`Paths::for_frame`]).
    ///
    /// A scale stays non-negative through sampling (keys and references non-negative, lerped),
    /// blending (convex weights), retargeting by UE's modes (a copy or a positive ratio) and
    /// applying a delta `S ∘ (1 + w·D.S)` while `w ≤ 1` and `D.S ≥ -1` (a stored delta, or
    /// one made at run time between non-negative scales; mask weights lie in [0, 1]). Plans
    /// (mirrored bones) and compressed clips (keys not scanned) count as negative.
    pub(crate) fn of(data: &LibraryData) -> Paths {
        let flags = |c| data.clip_data(c as u32).flags;
        let any = |bit: u32| (0..data.clip_count()).any(|c| flags(c) & bit != 0);
        let (plan_clips, packed_clips) = (any(CLIP_PLAN), any(CLIP_COMPRESSED));
        Paths {
            plan_clips,
            packed_clips,
            root_locks: false,
            negative_scales: plan_clips || packed_clips || negative_scale(data),
        }
    }

    /// These library paths with a frame of `shape`'s: its root locks, and negative scales
    /// where a layer weighs more than 1 or an inertialized transition's offset (whose decay
    /// carries a velocity, so it overshoots) may carry a scale past zero.
    pub(crate) fn for_frame(self, shape: &FrameShape) -> Paths {
        Paths {
            root_locks: shape.root_locks,
            negative_scales: self.negative_scales || shape.heavy_layers || shape.inertia,
            ..self
        }
    }

    /// The override constants of these paths.
    pub(crate) fn constants(self) -> [(&'static str, f64); 4] {
        let flag = |on: bool| f64::from(u8::from(on));
        [
            ("PLAN_CLIPS", flag(self.plan_clips)),
            ("PACKED_CLIPS", flag(self.packed_clips)),
            ("ROOT_LOCKS", flag(self.root_locks)),
            ("NEGATIVE_SCALES", flag(self.negative_scales)),
        ]
    }

    /// The paths on, `+`-joined (`plain` for none): a variant's name in reports.
    pub(crate) fn name(self) -> String {
        let on: Vec<_> = [
            (self.plan_clips, "plan"),
            (self.packed_clips, "packed"),
            (self.root_locks, "root-locks"),
            (self.negative_scales, "negative-scales"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if on.is_empty() {
            "plain".into()
        } else {
            on.join("+")
        }
    }
}

/// Whether a reference pose of the library's skeletons, a plain clip's scale key or an
/// additive clip's scale delta lets a scale go negative (see [`Paths::of`]).
fn negative_scale(data: &LibraryData) -> bool {
    let skeletons = std::iter::once(&data.skeleton).chain(data.sources.iter().map(|s| &s.skeleton));
    let poses = skeletons.flat_map(|s| {
        let alternatives = s.alternatives().iter().map(|p| p.locals.as_slice());
        [s.rest(), s.bind_pose()].into_iter().chain(alternatives)
    });
    if poses.flatten().any(|t| t.scale.min_element() < 0.0) {
        return true;
    }
    (0..data.clip_count() as u32).any(|c| {
        let clip = data.clip_data(c);
        let floor = if clip.flags & CLIP_ADDITIVE != 0 {
            -1.0
        } else {
            0.0
        };
        (0..clip.flags >> CLIP_SOURCES_SHIFT).any(|source| {
            let ch = data.channel_data(clip_channel_word(&clip, source, 2));
            let stride = ch.flags >> CHANNEL_STRIDE_SHIFT;
            (0..ch.count).any(|k| {
                let v = data.values[(ch.value_offset + k * stride) as usize];
                // A NaN key counts as negative.
                v[..3].iter().any(|&x| x < floor || x.is_nan())
            })
        })
    })
}

/// A stage's module specialised for one set of constants, validated.
pub(crate) struct Specialized {
    pub module: Module,
    pub info: ModuleInfo,
}

/// The entry point every compute stage runs.
pub(crate) const ENTRY: &str = "main";

fn validate(module: &Module) -> Result<ModuleInfo, String> {
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(module)
        .map_err(|e| format!("{e:?}"))
}

/// `stage` with `constants` applied (those the stage does not declare are ignored: a variant
/// names every path, a stage declares the ones it has), its decided branches folded and what
/// they left unused dropped; only the entry point `main` is kept.
pub(crate) fn specialize(stage: &Shader, constants: &[(&str, f64)]) -> Result<Specialized, String> {
    let src = source(stage);
    let module = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    let info = validate(&module)?;
    let declared = |name: &str| {
        module
            .overrides
            .iter()
            .any(|(_, o)| o.name.as_deref() == Some(name))
    };
    let map: naga::back::PipelineConstants = constants
        .iter()
        .filter(|(name, _)| declared(name))
        .map(|&(name, value)| (name.to_string(), value))
        .collect();
    let entry = module
        .entry_points
        .iter()
        .find(|e| e.name == ENTRY)
        .map(|e| (e.stage, ENTRY));
    let (resolved, _) =
        process_overrides(&module, &info, entry, &map).map_err(|e| format!("{e:?}"))?;
    let mut module = resolved.into_owned();
    let consts = bool_constants(&module);
    for (_, f) in module.functions.iter_mut() {
        fold(f, &consts);
    }
    for e in module.entry_points.iter_mut() {
        fold(&mut e.function, &consts);
    }
    naga::compact::compact(&mut module, naga::compact::KeepUnused::No);
    let info = validate(&module)?;
    Ok(Specialized { module, info })
}

/// Each constant's value where it is a `bool`, by handle index.
fn bool_constants(module: &Module) -> Vec<Option<bool>> {
    module
        .constants
        .iter()
        .map(|(_, c)| match module.global_expressions[c.init] {
            Expression::Literal(Literal::Bool(b)) => Some(b),
            _ => None,
        })
        .collect()
}

/// The value of boolean expression `h` of `f` where constants alone decide it.
fn decided(f: &Function, consts: &[Option<bool>], h: naga::Handle<Expression>) -> Option<bool> {
    let eval = |h| decided(f, consts, h);
    match f.expressions[h] {
        Expression::Literal(Literal::Bool(b)) => Some(b),
        Expression::Constant(c) => consts.get(c.index()).copied().flatten(),
        Expression::Unary {
            op: naga::UnaryOperator::LogicalNot,
            expr,
        } => eval(expr).map(|b| !b),
        Expression::Binary { op, left, right } => {
            let (l, r) = (eval(left), eval(right));
            match op {
                // `&` and `|` on booleans evaluate both sides, as the folded branch would.
                BinaryOperator::LogicalAnd | BinaryOperator::And => match (l, r) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                },
                BinaryOperator::LogicalOr | BinaryOperator::InclusiveOr => match (l, r) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                },
                BinaryOperator::Equal => Some(l? == r?),
                BinaryOperator::NotEqual => Some(l? != r?),
                _ => None,
            }
        }
        Expression::Select {
            condition,
            accept,
            reject,
        } => eval(if eval(condition)? { accept } else { reject }),
        _ => None,
    }
}

/// Replaces each `if` of `f` whose condition constants decide by the branch it takes, and
/// drops the statements a block can no longer reach (after `if (SINGLE_CLIP) { return ...; }`
/// folds to its return, the general path below it).
fn fold(f: &mut Function, consts: &[Option<bool>]) {
    let mut body = std::mem::take(&mut f.body);
    fold_block(f, consts, &mut body);
    f.body = body;
    // A `let` names its expression even where the code that computed it is gone; naga's
    // compaction keeps named expressions, and would keep a dropped call's result naming a
    // function nothing calls any more. Names of what the body no longer computes go.
    let mut computed = std::collections::HashSet::new();
    computed_by(&f.body, &mut computed);
    let expressions = &f.expressions;
    f.named_expressions.retain(|h, _| {
        let e = &expressions[*h];
        match e {
            _ if e.needs_pre_emit() || computed.contains(h) => true,
            Expression::CallResult(_) => false,
            // Other results of statements (atomics, ...) name no function: kept.
            Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. }
            | Expression::RayQueryProceedResult
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. } => true,
            _ => false,
        }
    });
}

/// The expressions `block`'s statements emit or produce (a call's result), nested blocks in.
fn computed_by(block: &Block, out: &mut std::collections::HashSet<naga::Handle<Expression>>) {
    for statement in block.iter() {
        match statement {
            Statement::Emit(range) => out.extend(range.clone()),
            Statement::Call {
                result: Some(r), ..
            } => {
                out.insert(*r);
            }
            Statement::Block(b) => computed_by(b, out),
            Statement::If { accept, reject, .. } => {
                computed_by(accept, out);
                computed_by(reject, out);
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                computed_by(body, out);
                computed_by(continuing, out);
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    computed_by(&case.body, out);
                }
            }
            _ => {}
        }
    }
}

fn fold_block(f: &Function, consts: &[Option<bool>], block: &mut Block) {
    let old = std::mem::take(block);
    for (mut statement, span) in old.span_into_iter() {
        match &mut statement {
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                if let Some(taken) = decided(f, consts, *condition) {
                    let mut kept = std::mem::take(if taken { accept } else { reject });
                    fold_block(f, consts, &mut kept);
                    statement = Statement::Block(kept);
                    let ends = exits(&statement);
                    block.push(statement, span);
                    if ends {
                        return;
                    }
                    continue;
                }
                fold_block(f, consts, accept);
                fold_block(f, consts, reject);
            }
            Statement::Block(b) => fold_block(f, consts, b),
            Statement::Loop {
                body, continuing, ..
            } => {
                fold_block(f, consts, body);
                fold_block(f, consts, continuing);
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    fold_block(f, consts, &mut case.body);
                }
            }
            _ => {}
        }
        let ends = exits(&statement);
        block.push(statement, span);
        if ends {
            return;
        }
    }
}

/// Whether `statement` always leaves its block (returns, or breaks or continues its loop).
fn exits(statement: &Statement) -> bool {
    match statement {
        Statement::Return { .. } | Statement::Kill | Statement::Break | Statement::Continue => true,
        Statement::Block(b) => b.last().is_some_and(exits),
        Statement::If { accept, reject, .. } => {
            accept.last().is_some_and(exits) && reject.last().is_some_and(exits)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shader_stats::ShaderStats;
    use crate::gpu::shaders::STAGES;

    const NONE: Paths = Paths {
        plan_clips: false,
        packed_clips: false,
        root_locks: false,
        negative_scales: false,
    };

    fn instructions(stage: &Shader, paths: Paths, more: &[(&str, f64)]) -> u64 {
        let mut constants = paths.constants().to_vec();
        constants.extend_from_slice(more);
        let s = specialize(stage, &constants).unwrap_or_else(|e| panic!("{}: {e}", stage.name));
        ShaderStats::of(&s).unwrap().0.instructions
    }

    #[test]
    fn every_stage_specialises_to_a_valid_module_on_every_path() {
        for stage in STAGES.iter().filter(|s| s.name != "skin") {
            for bits in 0..16u8 {
                let on = |k: u8| bits & (1 << k) != 0;
                let paths = Paths {
                    plan_clips: on(0),
                    packed_clips: on(1),
                    root_locks: on(2),
                    negative_scales: on(3),
                };
                instructions(stage, paths, &[]);
            }
        }
    }

    #[test]
    fn a_path_turned_off_compiles_its_code_out() {
        let fused = STAGES.iter().find(|s| s.name == "fused").unwrap();
        let all = instructions(fused, Paths::ALL, &[]);
        let none = instructions(fused, NONE, &[]);
        println!("fused: {all} instructions with every path, {none} with none");
        for (name, paths) in [
            (
                "plan",
                Paths {
                    plan_clips: false,
                    ..Paths::ALL
                },
            ),
            (
                "packed",
                Paths {
                    packed_clips: false,
                    ..Paths::ALL
                },
            ),
            (
                "root locks",
                Paths {
                    root_locks: false,
                    ..Paths::ALL
                },
            ),
            (
                "negative scales",
                Paths {
                    negative_scales: false,
                    ..Paths::ALL
                },
            ),
        ] {
            let n = instructions(fused, paths, &[]);
            println!("  without {name}: {n}");
            assert!(n < all, "{name}: {n} of {all}");
        }
        assert!(none < all / 2, "{none} of {all}");
    }

    #[test]
    fn code_after_a_folded_return_is_dropped() {
        // sample.wgsl's single-clip pipeline returns at `if (SINGLE_CLIP)`: the layer loop
        // below it, and its writes to the delta slots, are gone from the module.
        let sample = STAGES.iter().find(|s| s.name == "sample").unwrap();
        let specialized = |single: f64| {
            let mut constants = NONE.constants().to_vec();
            constants.push(("SINGLE_CLIP", single));
            specialize(sample, &constants).unwrap()
        };
        let writes_deltas = |s: &Specialized| {
            let main = s.info.get_entry_point(0);
            s.module.global_variables.iter().any(|(h, g)| {
                g.name.as_deref() == Some("deltas")
                    && main[h].contains(naga::valid::GlobalUse::WRITE)
            })
        };
        let (single, general) = (specialized(1.0), specialized(0.0));
        assert!(writes_deltas(&general));
        assert!(!writes_deltas(&single));
        // naga's SPIR-V writer already stops a block at its return, so the instructions
        // barely change; what changes is the module's declared use of the delta slots.
        let count = |s: &Specialized| ShaderStats::of(s).unwrap().0.instructions;
        assert!(count(&single) < count(&general));
    }
}
