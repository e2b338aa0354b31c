//! Skeletons: bone names, parents stored parents-first, reference poses, inverse bind matrices.

use std::collections::HashMap;

use glam::Mat4;

use super::bind::{self, BindOrigin, BindPose, BindSpace, RestPose};
use crate::error::{Error, Result};
use crate::Transform;

/// One bone of a skeleton being built (the raw form that [`Skeleton`] validates).
#[derive(Clone, Debug)]
pub struct Bone {
    /// The bone's name; unique, except that several bones may have the empty name.
    pub name: String,
    /// Index of the parent in the same list; `None` for a root.
    pub parent: Option<usize>,
    /// Local reference (rest) transform.
    pub rest: Transform,
    /// Inverse bind matrix, where the asset has one.
    pub inverse_bind: Option<Mat4>,
}

impl Bone {
    /// A bone without an inverse bind matrix.
    pub fn new(name: impl Into<String>, parent: Option<usize>, rest: Transform) -> Self {
        Self {
            name: name.into(),
            parent,
            rest,
            inverse_bind: None,
        }
    }
}

/// A named alternative reference pose (a retarget source, one per character proportion).
#[derive(Clone, Debug)]
pub struct ReferencePose {
    /// The pose's name, which retarget sources refer to it by.
    pub name: String,
    /// Local transforms, one per bone in the skeleton's order.
    pub locals: Vec<Transform>,
}

/// An immutable, validated skeleton. Bones are stored parents-first: every parent index is
/// smaller than its child's, so one forward loop is a hierarchy pass. A skeleton may have
/// several roots. It holds two poses: the rest (node transforms, what unanimated channels
/// hold) and the bind pose (what the mesh was skinned in, what retargeting measures from).
#[derive(Clone, Debug)]
pub struct Skeleton {
    names: Vec<String>,
    parents: Vec<i32>,
    rest: Vec<Transform>,
    bind: Vec<Transform>,
    bind_origin: Vec<BindOrigin>,
    bind_space: Option<BindSpace>,
    inverse_bind: Vec<Option<Mat4>>,
    source_index: Vec<usize>,
    alternatives: Vec<ReferencePose>,
    by_name: HashMap<String, usize>,
}

impl Skeleton {
    /// Validates bones already stored parents-first. A bone whose parent comes after it is an
    /// [`Error::ParentOrder`]; [`Skeleton::from_unordered`] reorders instead.
    pub fn new(bones: Vec<Bone>) -> Result<Self> {
        if bones.is_empty() {
            return Err(Error::EmptySkeleton);
        }
        let count = bones.len();
        for (i, b) in bones.iter().enumerate() {
            if let Some(p) = b.parent {
                if p >= count {
                    return Err(Error::ParentOutOfRange {
                        bone: i,
                        name: b.name.clone(),
                        parent: p as i64,
                        count,
                    });
                }
                if p >= i {
                    return Err(Error::ParentOrder {
                        bone: i,
                        name: b.name.clone(),
                        parent: p,
                    });
                }
            }
            check_transform(&b.rest, &format!("bone {i} '{}' reference pose", b.name))?;
            if let Some(m) = &b.inverse_bind {
                if !m.is_finite() {
                    return Err(Error::NonFinite {
                        what: format!("bone {i} '{}' inverse bind matrix", b.name),
                    });
                }
            }
        }
        let mut by_name = HashMap::with_capacity(count);
        for (i, b) in bones.iter().enumerate() {
            if let Some(first) = by_name.insert(b.name.clone(), i) {
                // Unnamed bones (glTF nodes without a name) may repeat the empty name.
                if !b.name.is_empty() {
                    return Err(Error::DuplicateBoneName {
                        name: b.name.clone(),
                        first,
                        second: i,
                    });
                }
                by_name.insert(b.name.clone(), first);
            }
        }
        Ok(Self {
            names: bones.iter().map(|b| b.name.clone()).collect(),
            parents: bones
                .iter()
                .map(|b| b.parent.map_or(-1, |p| p as i32))
                .collect(),
            rest: bones.iter().map(|b| b.rest).collect(),
            bind: bones.iter().map(|b| b.rest).collect(),
            bind_origin: vec![BindOrigin::Nodes; count],
            bind_space: None,
            inverse_bind: bones.iter().map(|b| b.inverse_bind).collect(),
            source_index: (0..count).collect(),
            alternatives: Vec::new(),
            by_name,
        })
    }

    /// Builds a skeleton from bones in any order (parents given as indices into `bones`),
    /// reordering them parents-first where needed. [`Skeleton::source_index`] maps each stored
    /// bone back to its position in `bones`.
    pub fn from_unordered(bones: Vec<Bone>) -> Result<Self> {
        let order = parents_first_order(&bones)?;
        let mut new_index = vec![0usize; bones.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let sorted = order
            .iter()
            .map(|&old| {
                let mut b = bones[old].clone();
                b.parent = b.parent.map(|p| new_index[p]);
                b
            })
            .collect();
        let mut skeleton = Self::new(sorted)?;
        skeleton.source_index = order;
        Ok(skeleton)
    }

    /// Sets the bind pose (locals one per bone, as the importer rebuilds them from a skin's
    /// inverse bind matrices). A bone whose bind local is not a valid transform keeps its node
    /// transform and is marked [`BindOrigin::Singular`].
    pub fn with_bind_pose(mut self, pose: BindPose) -> Result<Self> {
        if pose.locals.len() != self.len() || pose.origin.len() != self.len() {
            return Err(Error::PoseLength {
                pose: "bind pose".to_string(),
                expected: self.len(),
                got: pose.locals.len().min(pose.origin.len()),
            });
        }
        self.bind = pose.locals;
        self.bind_origin = pose.origin;
        self.bind_space = pose.space;
        for b in 0..self.len() {
            if check_transform(&self.bind[b], "").is_err() {
                self.bind[b] = self.rest[b];
                self.bind_origin[b] = BindOrigin::Singular;
            }
        }
        Ok(self)
    }

    /// Rebuilds the bind pose from the inverse bind matrices held per bone (see
    /// [`Skeleton::with_bind_pose`] and `docs/pose-math.md`, "The bind pose"); `spaces` are the
    /// candidate spaces of the matrices, each with the matrix taking it to component space
    /// (the first wins a tie). `has_matrix[b]` says whether bone `b`'s matrix came from the
    /// file (glTF gives non-joint nodes between joints none): the others keep their rest.
    pub fn with_bind_from_matrices(
        self,
        has_matrix: &[bool],
        spaces: &[(BindSpace, Mat4)],
    ) -> Result<Self> {
        let ibms: Vec<Option<Mat4>> = (0..self.len())
            .map(|b| self.inverse_bind[b].filter(|_| has_matrix.get(b).copied().unwrap_or(false)))
            .collect();
        let pose = bind::rebuild(&self.parents, &self.rest, &ibms, spaces);
        self.with_bind_pose(pose)
    }

    /// Adds a named alternative reference pose (local transforms, one per bone).
    pub fn with_reference_pose(
        mut self,
        name: impl Into<String>,
        locals: Vec<Transform>,
    ) -> Result<Self> {
        let name = name.into();
        if locals.len() != self.len() {
            return Err(Error::PoseLength {
                pose: name,
                expected: self.len(),
                got: locals.len(),
            });
        }
        for (i, t) in locals.iter().enumerate() {
            check_transform(
                t,
                &format!("reference pose '{name}', bone {i} '{}'", self.names[i]),
            )?;
        }
        self.alternatives.push(ReferencePose { name, locals });
        Ok(self)
    }

    /// The number of bones.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: a skeleton has at least one bone.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Bone names, parents-first.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Parent index per bone, `-1` for a root; always smaller than the bone's own index.
    pub fn parents(&self) -> &[i32] {
        &self.parents
    }

    /// The bones level by level, the order the fused pass walks the hierarchy in: bones sorted
    /// by depth (steps below a root), then index, and where each level starts in that order
    /// (`levels + 1` entries, so level `d` is `order[starts[d]..starts[d + 1]]`).
    pub(crate) fn depth_levels(&self) -> (Vec<u32>, Vec<u32>) {
        // Parents precede their children, so one forward pass finds every depth.
        let mut depth = vec![0u32; self.parents.len()];
        for b in 0..depth.len() {
            if let Ok(p) = usize::try_from(self.parents[b]) {
                depth[b] = depth[p] + 1;
            }
        }
        let levels = depth.iter().max().map_or(1, |d| d + 1) as usize;
        let mut order: Vec<u32> = (0..depth.len() as u32).collect();
        order.sort_by_key(|&b| (depth[b as usize], b));
        let mut starts = vec![0u32; levels + 1];
        for &d in &depth {
            starts[d as usize + 1] += 1;
        }
        for d in 1..starts.len() {
            starts[d] += starts[d - 1];
        }
        (order, starts)
    }

    /// The parent of `bone`; `None` for a root.
    pub fn parent(&self, bone: usize) -> Option<usize> {
        usize::try_from(self.parents[bone]).ok()
    }

    /// The reference (rest) pose, local transforms.
    pub fn rest(&self) -> &[Transform] {
        &self.rest
    }

    /// The bind pose, local transforms: the pose the mesh was skinned in, rebuilt from the
    /// skin's inverse bind matrices; the rest pose where the asset has none.
    pub fn bind_pose(&self) -> &[Transform] {
        &self.bind
    }

    /// Per bone, where its bind local came from.
    pub fn bind_origin(&self) -> &[BindOrigin] {
        &self.bind_origin
    }

    /// The space the inverse bind matrices were found in; `None` where no bone had one.
    pub fn bind_space(&self) -> Option<BindSpace> {
        self.bind_space
    }

    /// The pose `which` names: [`Skeleton::bind_pose`] or [`Skeleton::rest`].
    pub fn reference(&self, which: RestPose) -> &[Transform] {
        match which {
            RestPose::Bind => &self.bind,
            RestPose::Nodes => &self.rest,
        }
    }

    /// This skeleton with `which` as its rest pose: borrowed where that is already the rest.
    /// Retargeting builds its plans on such a view (the node rest still fills unanimated
    /// channels when clips are sampled); [`crate::retarget::remap_clip`] takes one to convert
    /// from and onto bind poses.
    pub fn with_rest_as(&self, which: RestPose) -> std::borrow::Cow<'_, Skeleton> {
        if which == RestPose::Nodes || self.bind == self.rest {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut view = self.clone();
        view.rest = self.bind.clone();
        std::borrow::Cow::Owned(view)
    }

    /// Replaces bone `b`'s rest local (a measured view's adjustment).
    pub(crate) fn set_rest_local(&mut self, b: usize, local: Transform) {
        self.rest[b] = local;
    }

    /// The pose `which` names, in component space.
    pub fn reference_component(&self, which: RestPose) -> Vec<Transform> {
        component_space(&self.parents, self.reference(which))
    }

    /// The bones whose node transform turns away from the bind pose by more than
    /// `min_degrees`, with the angle in degrees, largest first (`posegpu info`).
    pub fn posed_bones(&self, min_degrees: f32) -> Vec<(usize, f32)> {
        bind::posed(&self.rest, &self.bind, min_degrees)
    }

    /// Inverse bind matrix per bone; `None` where the asset has none (the identity is used).
    pub fn inverse_bind(&self) -> &[Option<Mat4>] {
        &self.inverse_bind
    }

    /// For each stored bone, its index in the order the bones were given (the file's order).
    pub fn source_index(&self) -> &[usize] {
        &self.source_index
    }

    /// The named alternative reference poses, in the order added.
    pub fn alternatives(&self) -> &[ReferencePose] {
        &self.alternatives
    }

    /// The local transforms of the alternative reference pose named `name`; `None` if there is
    /// none.
    pub fn reference_pose(&self, name: &str) -> Option<&[Transform]> {
        self.alternatives
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.locals.as_slice())
    }

    /// The index of the bone named `name`; `None` if there is none. The empty name finds the
    /// first unnamed bone.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Number of bones on the longest root-to-leaf chain.
    pub fn depth(&self) -> usize {
        let mut depth = vec![0usize; self.len()];
        for i in 0..self.len() {
            depth[i] = self.parent(i).map_or(1, |p| depth[p] + 1);
        }
        depth.into_iter().max().unwrap_or(0)
    }

    /// Component-space reference pose.
    pub fn rest_component(&self) -> Vec<Transform> {
        component_space(&self.parents, &self.rest)
    }

    /// Size of the reference pose: the largest distance of a bone from the origin (at least a
    /// tiny positive number), the scale that tolerances are relative to.
    pub fn extent(&self) -> f32 {
        self.rest_component()
            .iter()
            .map(|t| t.translation.length())
            .fold(1e-6, f32::max)
    }
}

fn check_transform(t: &Transform, what: &str) -> Result<()> {
    if !t.is_finite() {
        return Err(Error::NonFinite {
            what: what.to_string(),
        });
    }
    if t.rotation.length_squared() < 1e-12 {
        return Err(Error::ZeroQuaternion {
            what: what.to_string(),
        });
    }
    Ok(())
}

/// A parents-first order of `bones`: the given order wherever it is already parents-first,
/// otherwise each bone moves just after what it needs (a topological order that always takes
/// the lowest given index among the bones whose parent is placed).
fn parents_first_order(bones: &[Bone]) -> Result<Vec<usize>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let count = bones.len();
    let mut children = vec![Vec::new(); count];
    let mut ready = BinaryHeap::new();
    for (i, b) in bones.iter().enumerate() {
        match b.parent {
            Some(p) if p >= count => {
                return Err(Error::ParentOutOfRange {
                    bone: i,
                    name: b.name.clone(),
                    parent: p as i64,
                    count,
                })
            }
            Some(p) => children[p].push(i),
            None => ready.push(Reverse(i)),
        }
    }
    let mut order = Vec::with_capacity(count);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        ready.extend(children[i].iter().map(|&c| Reverse(c)));
    }
    if order.len() != count {
        // Bones never reached from a root sit on a cycle.
        let mut reached = vec![false; count];
        order.iter().for_each(|&i| reached[i] = true);
        let bone = reached.iter().position(|r| !r).unwrap_or(0);
        return Err(Error::Cycle {
            bone,
            name: bones[bone].name.clone(),
        });
    }
    Ok(order)
}

/// Component-space transforms from local ones, parents first (`docs/pose-math.md`, "Skeleton
/// and hierarchy"): `CS[root] = L[root]`, `CS[i] = compose(L[i], CS[parent(i)])`. `parents`
/// holds `-1` for a root and is parents-first.
pub fn component_space(parents: &[i32], locals: &[Transform]) -> Vec<Transform> {
    let mut cs: Vec<Transform> = Vec::with_capacity(locals.len());
    for (i, local) in locals.iter().enumerate() {
        let t = match usize::try_from(parents[i]) {
            Ok(p) => Transform::compose(local, &cs[p]),
            Err(_) => *local,
        };
        cs.push(t);
    }
    cs
}
