//! What instances play beyond one clip, on lavapipe in CI: blends, dynamic additive and
//! masked layered-blend layers, and a CMU motion-capture walk retargeted onto the knight with
//! feet IK draw the same on the GPU path as through posegpu's CPU twin, and differ from the
//! plain walk; root motion moves an instance's `Transform` and leaves its world pose where the
//! same clip without root motion puts it.

mod common;

use bevy::prelude::*;
use bevy_posegpu::headless::{self, Target};
use bevy_posegpu::{
    AdditiveSpace, Animation, Backend, CrowdModel, IkWeights, Layer, MaskBranch, PlayingClip,
    PoseGpuPlugin, RootMotionAxes,
};
use common::*;

const CMU_WALK: &str = "bvh/cmu_walk_delfem2.bvh";

/// The knight with the CMU walk (its last clip), an upper-body mask, root motion from the hips.
fn knight_and_cmu(assets: &AssetServer) -> CrowdModel {
    CrowdModel::builder(headless::data_root(), KNIGHT)
        .clips_from(CMU_WALK)
        .mask("upper", &[MaskBranch::new("spine", 1)])
        .root_motion_bone("hips")
        .load(assets)
        .unwrap()
}

fn cmu_walk(model: &CrowdModel) -> u32 {
    model.library().clip_count() as u32 - 1
}

fn clip(model: &CrowdModel, name: &str) -> PlayingClip {
    PlayingClip::new(model.clip(name).expect(name), 0.4).with_rate(0.0)
}

/// A blend, a dynamic additive, a masked layered blend, and the retargeted walk with feet IK.
fn layered(model: &CrowdModel) -> Vec<Animation> {
    let walk = clip(model, "Walking_A");
    vec![
        Animation::blend(vec![walk.with_weight(0.4), clip(model, "Running_A")]),
        Animation::from(walk).with_layer(Layer::Dynamic {
            space: AdditiveSpace::Local,
            weight: 1.0,
            pose: clip(model, "Hit_A"),
            base: clip(model, "Idle"),
        }),
        Animation::from(walk).with_layer(Layer::Blend {
            space: AdditiveSpace::Mesh,
            weight: 1.0,
            clips: vec![clip(model, "Cheer")],
            mask: model.mask("upper"),
        }),
        Animation::from(PlayingClip::new(cmu_walk(model), 1.0).with_rate(0.0))
            .with_ik(IkWeights::FEET),
    ]
}

/// The same knights, each playing only the walk.
fn plain(model: &CrowdModel) -> Vec<Animation> {
    vec![clip(model, "Walking_A").into(); 4]
}

#[test]
fn layers_blends_and_retargeted_clips_draw_the_same_on_both_backends() {
    let gpu = silhouette(&row_frame(Backend::Gpu, knight_and_cmu, layered, 4));
    let cpu = silhouette(&row_frame(Backend::Cpu, knight_and_cmu, layered, 4));
    let walks = silhouette(&row_frame(Backend::Gpu, knight_and_cmu, plain, 4));
    let area = area(&gpu);
    assert!(area > 2_000, "the knights cover {area} pixels");
    let (d_cpu, d_walk) = (differing(&gpu, &cpu), differing(&gpu, &walks));
    eprintln!("{area} pixels of knights; {d_cpu} differ from the CPU twin's, {d_walk} from walks");
    assert!(
        d_cpu * 100 <= area,
        "GPU against CPU twin: {d_cpu} of {area} pixels differ"
    );
    // Each knight's layer changes its pose: together they move a good part of the picture.
    assert!(
        d_walk * 10 >= area,
        "the layers change nothing: {d_walk} of {area} pixels differ from plain walks"
    );
    // Each quarter of the picture (one knight each) changes.
    let quarter = (W / 4) as usize;
    for k in 0..4 {
        let changed = (0..H as usize)
            .flat_map(|y| (k * quarter..(k + 1) * quarter).map(move |x| y * W as usize + x))
            .filter(|&i| gpu[i] != walks[i])
            .count();
        assert!(changed > 50, "knight {k}: only {changed} pixels changed");
    }
}

/// Each instance's `Transform` and read-back bones, the one with root motion first.
fn snapshot(app: &mut App) -> [(Transform, Vec<Mat4>); 2] {
    let world = app.world_mut();
    let mut got: Vec<(bool, Transform, Vec<Mat4>)> = world
        .query::<(
            &Transform,
            &bevy_posegpu::CrowdInstance,
            &bevy_posegpu::BoneReadback,
        )>()
        .iter(world)
        .map(|(t, i, r)| (i.animation.root_motion.is_none(), *t, r.world.clone()))
        .collect();
    got.sort_by_key(|g| g.0);
    assert_eq!(got.len(), 2, "two instances read back bones");
    assert!(!got[0].0 && got[1].0, "one with root motion, one without");
    let pairs: Vec<(Transform, Vec<Mat4>)> = got.into_iter().map(|(_, t, b)| (t, b)).collect();
    pairs.try_into().unwrap()
}

#[test]
fn root_motion_moves_the_instance_and_keeps_the_world_pose() {
    // Two knights at one place play the CMU walk from the same time; the first takes its
    // ground-plane root motion (the hips' travel and turn) into its Transform. Its walk must
    // then be the other's moved by one fixed turn about up and shift along the ground, at every
    // frame (it walks from where it was placed instead of where the capture started), and it
    // must travel while the other's Transform stays.
    let mut app = headless::app(W, H);
    app.add_plugins(PoseGpuPlugin);
    let at = Transform::from_xyz(0.0, 0.0, -1.0).with_rotation(Quat::from_rotation_y(0.5));
    app.add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>, target: Res<Target>| {
            let model = knight_and_cmu(&assets);
            // Frozen until the app has warmed up: how many updates that takes depends on how
            // fast the machine compiles pipelines, and a loop wrap between the snapshots would
            // change the difference between the two (the one with root motion keeps the travel
            // of the lap, the other jumps back).
            let walk = PlayingClip::new(cmu_walk(&model), 0.3).with_rate(0.0);
            let bones = ["hips", "foot.l", "hand.r"]
                .map(|n| model.bone(n).expect(n))
                .to_vec();
            let with = Animation::from(walk).with_root_motion(RootMotionAxes::GROUND_PLANE);
            let crowd = bevy_posegpu::spawn_crowd(
                &mut commands,
                model,
                [(at, with), (at, Animation::from(walk))],
            );
            commands.insert_resource(Chosen(crowd, bones));
            headless::camera_and_light(&mut commands, &target, Vec3::new(0.0, 1.5, 6.0), Vec3::Y);
        },
    );
    app.add_systems(Update, ask_for_bones);
    headless::run_and_read(&mut app, 4).expect("a frame was read back");
    let world = app.world_mut();
    for mut instance in world
        .query::<&mut bevy_posegpu::CrowdInstance>()
        .iter_mut(world)
    {
        instance.animation.base[0].rate = 1.0;
    }
    for _ in 0..4 {
        app.update();
    }
    let [(moved0, with0), (_, without0)] = snapshot(&mut app);
    for _ in 0..20 {
        app.update();
    }
    let [(moved1, with1), (stayed, without1)] = snapshot(&mut app);
    assert_eq!(
        stayed, at,
        "the knight without root motion stays where it was placed"
    );
    let travel = moved1.translation - moved0.translation;
    eprintln!("travelled {travel} in 20 frames");
    assert!(
        travel.length() > 0.2,
        "root motion moved the knight by {travel}"
    );
    assert!(travel.y.abs() < 1e-4, "ground-plane motion left the ground");
    // The fixed difference, from the hips at the first snapshot: a turn about up and a shift
    // along the ground.
    assert_eq!(with0.len(), 3, "the bones came back");
    let d = with0[0] * without0[0].inverse();
    assert!(
        d.y_axis.truncate().abs_diff_eq(Vec3::Y, 1e-3) && d.w_axis.y.abs() < 1e-3,
        "not a turn about up and a ground shift: {d}"
    );
    for (with, without, when) in [(&with0, &without0, "first"), (&with1, &without1, "last")] {
        for (k, name) in ["hips", "foot.l", "hand.r"].into_iter().enumerate() {
            let (a, b) = (with[k].w_axis, d * without[k].w_axis);
            assert!(
                (a - b).length() < 2e-3,
                "{name} at the {when} snapshot: {a} != {b}"
            );
        }
    }
}

#[test]
fn baked_clips_play_as_the_run_time_retargeting_on_keys() {
    // The CMU walk twice on the knight with feet IK: retargeted per bone each frame, and baked
    // at load (its IK goals baked beside it, the IK per instance). At a key time (the capture is
    // keyed at 120 Hz) every bone must be where the other puts it.
    let mut app = headless::app(W, H);
    app.add_plugins(PoseGpuPlugin);
    app.add_systems(
        Startup,
        |mut commands: Commands, assets: Res<AssetServer>, target: Res<Target>| {
            let model = CrowdModel::builder(headless::data_root(), KNIGHT)
                .clips_from(CMU_WALK)
                .clips_from_baked(CMU_WALK)
                .load(&assets)
                .unwrap();
            let baked = model.library().clip_count() as u32 - 1;
            let bones: Vec<u32> = (0..model.library().bone_count() as u32).collect();
            let at = Transform::from_xyz(0.0, 0.0, -1.0);
            let crowd = bevy_posegpu::spawn_crowd(
                &mut commands,
                model,
                [
                    (
                        at,
                        Animation::from(PlayingClip::new(baked - 1, 1.0).with_rate(0.0))
                            .with_ik(IkWeights::FEET),
                    ),
                    (
                        at,
                        Animation::from(PlayingClip::new(baked, 1.0).with_rate(0.0))
                            .with_ik(IkWeights::FEET),
                    ),
                ],
            );
            commands.insert_resource(Chosen(crowd, bones));
            headless::camera_and_light(&mut commands, &target, Vec3::new(0.0, 1.5, 6.0), Vec3::Y);
        },
    );
    app.add_systems(Update, ask_for_bones);
    headless::run_and_read(&mut app, 4).expect("a frame was read back");
    let world = app.world_mut();
    let mut got: Vec<(posegpu::ClipId, Vec<Mat4>)> = world
        .query::<(&bevy_posegpu::CrowdInstance, &bevy_posegpu::BoneReadback)>()
        .iter(world)
        .map(|(i, r)| (i.animation.base[0].clip, r.world.clone()))
        .collect();
    got.sort_by_key(|g| g.0);
    let [(_, run), (_, baked)] = &got[..] else {
        panic!("two instances");
    };
    assert!(
        !run.is_empty() && run.len() == baked.len(),
        "the bones came back"
    );
    let height = run.iter().map(|m| m.w_axis.y).fold(0.0f32, f32::max);
    let worst = run
        .iter()
        .zip(baked)
        .map(|(a, b)| (a.w_axis - b.w_axis).length())
        .fold(0.0f32, f32::max);
    eprintln!(
        "baked against run time: {:.2e} of the height",
        worst / height
    );
    assert!(worst <= 1e-4 * height, "{worst} m apart");
}
