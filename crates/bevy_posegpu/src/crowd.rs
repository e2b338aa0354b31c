//! The main world's side: models, crowds, instances, their playback, and binding each
//! instance to the skinned meshes Bevy spawned for it.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bevy::camera::visibility::NoFrustumCulling;
use bevy::gltf::GltfAssetLabel;
use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;
use bevy::world_serialization::{WorldAsset, WorldAssetRoot};
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{AnimLibrary, ClipId, ClipMotion, MaskBranch, MaskId};

use crate::animation::{moved, Animation};

/// A character as both sides read it: Bevy's scene (from Bevy's own glTF loader) to draw it,
/// posegpu's library (its skeleton and clips, read from the same file, and clips of other
/// characters retargeted onto it) to animate it.
#[derive(Clone)]
pub struct CrowdModel {
    pub(crate) scene: Handle<WorldAsset>,
    pub(crate) library: Arc<AnimLibrary>,
    /// Per joint of the file's first skin (Bevy's `SkinnedMesh::joints` order), its posegpu
    /// bone.
    pub(crate) joint_bones: Arc<Vec<u32>>,
    /// The skin joint that is posegpu's bone 0, the skeleton's top joint: the node above it
    /// places the skeleton in the world.
    pub(crate) top_joint: usize,
    bone_names: Arc<Vec<String>>,
    /// Where the skeleton stands in its scene: component space → the scene root (the nodes
    /// above the top joint; an armature's turn and scale).
    pub(crate) skeleton_in_scene: Mat4,
    /// Per bone, its bind matrix (the inverse of its inverse bind; the identity without one).
    binds: Arc<Vec<Mat4>>,
}

/// How a [`CrowdModel`] is read: its file, other characters' files whose clips it plays
/// (retargeted), and its bone masks.
#[derive(Clone, Debug)]
pub struct CrowdModelBuilder {
    root: PathBuf,
    path: String,
    /// Other characters' files, and the IK baked into their clips (`None`: not baked).
    sources: Vec<(String, bool)>,
    masks: Vec<(String, Vec<MaskBranch>)>,
    root_motion_bone: Option<String>,
}

impl CrowdModelBuilder {
    /// Also plays the clips of the character in `path` (glTF or BVH, relative to the same
    /// asset folder), retargeted onto this one by posegpu's character retargeting (bones paired
    /// by role, rest poses aligned, IK goals for feet and hands): any humanoid onto any
    /// humanoid, with no rig file. Its clips follow the model's own, in file order.
    pub fn clips_from(mut self, path: &str) -> Self {
        self.sources.push((path.to_string(), false));
        self
    }

    /// [`Self::clips_from`], the clips retargeted once at load (posegpu's `add_baked_clips`):
    /// they then cost what the model's own clips cost each frame, instead of the retargeting's
    /// per-bone work per instance. Their IK goals are baked beside them, so an instance's
    /// [`crate::Animation::with_ik`] weights apply to them as to run-time retargeted clips.
    pub fn clips_from_baked(mut self, path: &str) -> Self {
        self.sources.push((path.to_string(), true));
        self
    }

    /// Adds a bone mask for [`crate::Layer::Blend`] layers ([`CrowdModel::mask`] finds it).
    pub fn mask(mut self, name: &str, branches: &[MaskBranch]) -> Self {
        self.masks.push((name.to_string(), branches.to_vec()));
        self
    }

    /// Takes root motion ([`crate::Animation::with_root_motion`]) from the bone named `bone`
    /// (the hips of a motion-capture walk) instead of the skeleton's top bone, up being the
    /// scene's +Y.
    pub fn root_motion_bone(mut self, bone: &str) -> Self {
        self.root_motion_bone = Some(bone.to_string());
        self
    }

    /// Reads the files: the scene through Bevy's loader, the skeleton and every clip through
    /// posegpu's.
    pub fn load(self, assets: &AssetServer) -> posegpu::Result<CrowdModel> {
        let file = self.root.join(&self.path);
        let asset = posegpu::import::load(&file)?;
        let mut builder = AnimLibrary::builder(&asset.skeleton);
        builder.add_clips(&asset.clips)?;
        for (source, baked) in &self.sources {
            let source_file = self.root.join(source);
            let source_asset = posegpu::import::load(&source_file)?;
            let plan = RetargetPlan::new(&source_asset, &asset, &PlanOptions::default())?;
            if *baked {
                builder.add_baked_clips(&source_asset, &plan, &source_asset.clips)?;
            } else {
                let id = builder.add_character_source(source, &source_asset, &plan)?;
                builder.add_clips_from(id, &source_asset.clips)?;
            }
        }
        for (name, branches) in &self.masks {
            builder.add_mask(name, branches)?;
        }
        let skeleton_in_scene = Mat4::from_cols_array(&asset.frame.above.to_cols_array());
        if let Some(bone) = &self.root_motion_bone {
            // glTF's +Y, in component space.
            let up = skeleton_in_scene.inverse().transform_vector3(Vec3::Y);
            let up = posegpu::glam::Vec3::from_array(up.normalize_or_zero().to_array());
            builder.set_root_motion_bone(bone, up)?;
        }
        let library = builder.build();
        let joint_bones = skin_joint_bones(&file, asset.nodes.as_deref().unwrap_or_default())?;
        let top_joint = joint_bones
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| bad(&file, "the skeleton's top bone is not a joint of the skin"))?;
        let binds = asset
            .skeleton
            .inverse_bind()
            .iter()
            .map(|ib| {
                ib.map_or(Mat4::IDENTITY, |m| {
                    Mat4::from_cols_array(&m.to_cols_array()).inverse()
                })
            })
            .collect();
        Ok(CrowdModel {
            bone_names: Arc::new(asset.skeleton.names().to_vec()),
            binds: Arc::new(binds),
            skeleton_in_scene,
            scene: assets.load(GltfAssetLabel::Scene(0).from_asset(self.path.clone())),
            library: Arc::new(library),
            joint_bones: Arc::new(joint_bones),
            top_joint,
        })
    }
}

impl CrowdModel {
    /// Loads `path` (relative to the asset folder `root`, as Bevy's `AssetServer` sees it)
    /// with its own clips: [`Self::builder`] with nothing added.
    pub fn load(assets: &AssetServer, root: impl AsRef<Path>, path: &str) -> posegpu::Result<Self> {
        Self::builder(root, path).load(assets)
    }

    /// Starts reading `path` (relative to the asset folder `root`): add other characters'
    /// clips and masks, then [`CrowdModelBuilder::load`].
    pub fn builder(root: impl AsRef<Path>, path: &str) -> CrowdModelBuilder {
        CrowdModelBuilder {
            root: root.as_ref().to_path_buf(),
            path: path.to_string(),
            sources: Vec::new(),
            masks: Vec::new(),
            root_motion_bone: None,
        }
    }

    /// posegpu's library of this model (skeleton, clips).
    pub fn library(&self) -> &AnimLibrary {
        &self.library
    }

    /// The posegpu bone named `name` (for [`crate::BoneReadback`]).
    pub fn bone(&self, name: &str) -> Option<u32> {
        self.bone_names
            .iter()
            .position(|n| n == name)
            .map(|i| i as u32)
    }

    /// Bone `bone`'s bind matrix.
    pub(crate) fn bind(&self, bone: usize) -> Mat4 {
        self.binds.get(bone).copied().unwrap_or(Mat4::IDENTITY)
    }

    /// The index of the first clip named `name` (the model's own clips come first, then each
    /// `clips_from` file's).
    pub fn clip(&self, name: &str) -> Option<ClipId> {
        self.library.find_clip(name).ok()
    }

    /// The mask named `name` ([`CrowdModelBuilder::mask`]).
    pub fn mask(&self, name: &str) -> Option<MaskId> {
        self.library.mask(name)
    }
}

fn bad(file: &Path, message: &str) -> posegpu::Error {
    posegpu::Error::Gltf {
        path: file.to_path_buf(),
        message: message.to_string(),
    }
}

/// Per joint of `file`'s first skin, the posegpu bone of its node (`nodes`: each bone's node).
fn skin_joint_bones(file: &Path, nodes: &[usize]) -> posegpu::Result<Vec<u32>> {
    let gltf = gltf::Gltf::open(file).map_err(|e| bad(file, &e.to_string()))?;
    let skin = gltf
        .skins()
        .next()
        .ok_or_else(|| bad(file, "no skin: nothing for Bevy to skin"))?;
    skin.joints()
        .map(|j| {
            nodes
                .iter()
                .position(|&n| n == j.index())
                .map(|b| b as u32)
                .ok_or_else(|| bad(file, &format!("joint node {} is not a bone", j.index())))
        })
        .collect()
}

/// A crowd: the model its instances share, and where their poses are evaluated.
#[derive(Component, Clone)]
pub struct PoseGpuCrowd {
    pub model: CrowdModel,
    pub backend: Backend,
}

/// Where a crowd's poses are evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// posegpu's compute passes on Bevy's device, written into Bevy's joint buffer (the
    /// default): no CPU work per bone.
    #[default]
    Gpu,
    /// posegpu's CPU twin, written into the joint entities' `Transform`s: Bevy's own skin path
    /// from there (transform propagation, joint matrices on the CPU). The reference the GPU
    /// path is tested against, and a fallback where compute is not wanted.
    Cpu,
}

/// One character of a crowd: its crowd entity and what it plays (change it at any time). Its
/// entity carries the scene (`WorldAssetRoot`) and its `Transform`.
#[derive(Component, Clone, Debug)]
pub struct CrowdInstance {
    pub crowd: Entity,
    pub animation: Animation,
}

/// Set on an instance once its scene has spawned: its skinned meshes, the entity above the
/// skeleton's top joint (whose `GlobalTransform` places the skeleton), its joint entities.
#[derive(Component, Clone, Debug)]
pub struct Bound {
    pub(crate) meshes: Vec<Entity>,
    pub(crate) above: Entity,
    /// The joint entities, in skin order (of the first mesh).
    pub(crate) joints: Vec<Entity>,
}

impl Bound {
    /// The entity above the skeleton's top joint: its `GlobalTransform` places the skeleton.
    pub fn above(&self) -> Entity {
        self.above
    }
}

/// Spawns a crowd of `model` animated on the GPU: one instance per (placement, animation; a
/// [`crate::PlayingClip`] will do). Returns the crowd entity.
pub fn spawn_crowd<A: Into<Animation>>(
    commands: &mut Commands,
    model: CrowdModel,
    instances: impl IntoIterator<Item = (Transform, A)>,
) -> Entity {
    spawn_crowd_on(commands, model, Backend::Gpu, instances)
}

/// [`spawn_crowd`] with its poses evaluated on `backend`.
pub fn spawn_crowd_on<A: Into<Animation>>(
    commands: &mut Commands,
    model: CrowdModel,
    backend: Backend,
    instances: impl IntoIterator<Item = (Transform, A)>,
) -> Entity {
    let scene = model.scene.clone();
    let crowd = commands.spawn(PoseGpuCrowd { model, backend }).id();
    for (at, animation) in instances {
        commands.spawn((
            WorldAssetRoot(scene.clone()),
            at,
            CrowdInstance {
                crowd,
                animation: animation.into(),
            },
        ));
    }
    crowd
}

/// Moves every instance with root motion by its root's motion over the frame, then advances
/// every clip it plays by the frame time.
pub(crate) fn advance(
    time: Res<Time>,
    crowds: Query<&PoseGpuCrowd>,
    mut instances: Query<(&mut CrowdInstance, &mut Transform)>,
    mut failed: Local<Vec<Entity>>,
) {
    let dt = time.delta_secs();
    // Made on the first instance of a crowd that takes root motion.
    let mut motions: HashMap<Entity, (ClipMotion, Mat4)> = HashMap::new();
    for (mut instance, mut at) in &mut instances {
        let id = instance.crowd;
        let motion = match (instance.animation.root_motion, motions.entry(id)) {
            (None, _) => None,
            (Some(_), Entry::Occupied(e)) => Some(&*e.into_mut()),
            (Some(_), Entry::Vacant(v)) => crowds.get(id).ok().map(|c| {
                let model = &c.model;
                &*v.insert((ClipMotion::new(&model.library), model.skeleton_in_scene))
            }),
        };
        if let Some((motion, skeleton)) = motion {
            match instance.animation.root_step(motion, dt) {
                Ok(Some(step)) => *at = moved(&at, skeleton, &step),
                Ok(None) => {}
                Err(e) if !failed.contains(&id) => {
                    log::error!("bevy_posegpu: crowd {id:?}: root motion: {e}");
                    failed.push(id);
                }
                Err(_) => {}
            }
        }
        instance.animation.advance(dt);
    }
}

/// Binds each instance whose scene has spawned to its skinned meshes (those of the model's
/// skin: as many joints as it has), which then skip frustum culling (their joints do not move
/// on the CPU, so Bevy's bounds would stay at the rest pose).
pub(crate) fn bind_instances(
    mut commands: Commands,
    unbound: Query<(Entity, &CrowdInstance), Without<Bound>>,
    crowds: Query<&PoseGpuCrowd>,
    children: Query<&Children>,
    skinned: Query<&SkinnedMesh>,
    parents: Query<&ChildOf>,
) {
    for (entity, instance) in &unbound {
        let Ok(crowd) = crowds.get(instance.crowd) else {
            continue;
        };
        let joints = crowd.model.joint_bones.len();
        let meshes: Vec<(Entity, &SkinnedMesh)> = children
            .iter_descendants(entity)
            .filter_map(|e| skinned.get(e).ok().map(|s| (e, s)))
            .filter(|(_, s)| s.joints.len() == joints)
            .collect();
        let Some((above, joints)) = meshes.first().and_then(|(_, s)| {
            let top = s.joints[crowd.model.top_joint];
            let above = parents.get(top).ok().map(ChildOf::parent)?;
            Some((above, s.joints.clone()))
        }) else {
            continue;
        };
        for (mesh, _) in &meshes {
            commands.entity(*mesh).insert(NoFrustumCulling);
        }
        commands.entity(entity).insert(Bound {
            meshes: meshes.into_iter().map(|(e, _)| e).collect(),
            above,
            joints,
        });
    }
}

/// The CPU backend: each [`Backend::Cpu`] crowd's poses from posegpu's CPU twin, written into
/// its instances' joint entities.
pub(crate) fn evaluate_on_cpu(
    crowds: Query<(Entity, &PoseGpuCrowd)>,
    instances: Query<(&CrowdInstance, &Bound)>,
    mut transforms: Query<&mut Transform>,
) {
    for (id, crowd) in &crowds {
        if crowd.backend != Backend::Cpu {
            continue;
        }
        let members: Vec<(&CrowdInstance, &Bound)> =
            instances.iter().filter(|(i, _)| i.crowd == id).collect();
        let mut batch = posegpu::PoseBatch::new();
        for (i, _) in &members {
            i.animation.push(&mut batch);
        }
        let mut poses = posegpu::Poses::default();
        let evaluator = posegpu::CpuEvaluator::new(&crowd.model.library);
        if let Err(e) = evaluator.evaluate(&batch, &mut poses) {
            log::error!("bevy_posegpu: crowd {id:?}: {e}");
            continue;
        }
        for (k, (_, bound)) in members.iter().enumerate() {
            for (&joint, &bone) in bound.joints.iter().zip(crowd.model.joint_bones.iter()) {
                let local = poses.local(k, bone as usize);
                if let Ok(mut t) = transforms.get_mut(joint) {
                    *t = Transform {
                        translation: Vec3::from_array(local.translation.to_array()),
                        rotation: Quat::from_array(local.rotation.to_array()),
                        scale: Vec3::from_array(local.scale.to_array()),
                    };
                }
            }
        }
    }
}

/// Hides the meshes of crowd instances that are not skinned (swords, shields and helmets
/// hanging from joint nodes): on the GPU path the joint entities do not move, so such meshes
/// would stay where the rest pose puts them. Add it to `Update` where a model has such meshes;
/// meshes outside crowds are left alone.
pub fn hide_rigid_meshes(
    mut commands: Commands,
    instances: Query<Entity, NotHiddenYet>,
    children: Query<&Children>,
    rigid: Query<(), (With<Mesh3d>, Without<SkinnedMesh>)>,
) {
    for instance in &instances {
        for e in children.iter_descendants(instance) {
            if rigid.contains(e) {
                commands.entity(e).insert(Visibility::Hidden);
            }
        }
        commands.entity(instance).insert(RigidHidden);
    }
}

/// A bound crowd instance whose rigid meshes are not hidden yet.
type NotHiddenYet = (With<CrowdInstance>, With<Bound>, Without<RigidHidden>);

/// A crowd instance whose rigid meshes [`hide_rigid_meshes`] has hidden.
#[derive(Component)]
pub struct RigidHidden;
