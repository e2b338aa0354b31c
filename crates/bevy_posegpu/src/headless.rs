//! Headless Bevy: an app that renders into an image instead of a window (no windowing system
//! needed, so it runs on CI's software Vulkan), steps frames of a fixed 1/30 s, and writes the
//! image as a PNG. The example and the tests use it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::asset::AssetPlugin;
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::gpu_readback::{Readback, ReadbackComplete};
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::view::Tonemapping;
use bevy::time::TimeUpdateStrategy;
use bevy::window::{ExitCondition, WindowPlugin};

use crate::crowd::{Bound, CrowdInstance};

/// The image a headless app renders into.
#[derive(Resource, Clone)]
pub struct Target {
    pub image: Handle<Image>,
    pub width: u32,
    pub height: u32,
}

/// Where the shared characters and motion capture are: `POSEGPU_DATA`, else
/// `../shared/anim-data` beside the repository.
pub fn data_root() -> PathBuf {
    std::env::var_os("POSEGPU_DATA").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/anim-data"),
        PathBuf::from,
    )
}

/// An app with Bevy's default plugins and no window, assets read from [`data_root`], time
/// stepped by 1/30 s per update, and a `width` × `height` RGBA image to render into
/// ([`Target`]). `width` should be a multiple of 64 (rows are read back unpadded).
pub fn app(width: u32, height: u32) -> App {
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(AssetPlugin {
                file_path: data_root().to_string_lossy().into_owned(),
                ..default()
            })
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            }),
    );
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 30.0,
    )));
    let mut image = Image::new_target_texture(width, height, TextureFormat::Rgba8UnormSrgb, None);
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    let image = app.world_mut().resource_mut::<Assets<Image>>().add(image);
    app.insert_resource(Target {
        image,
        width,
        height,
    });
    app
}

/// A camera at `eye` looking at `at` into the app's [`Target`], a sun and some ambient light.
pub fn camera_and_light(commands: &mut Commands, target: &Target, eye: Vec3, at: Vec3) {
    commands.spawn((
        Camera3d::default(),
        RenderTarget::Image(target.image.clone().into()),
        Tonemapping::None,
        Transform::from_translation(eye).looking_at(at, Vec3::Y),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 8_000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(3.0, 8.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
}

/// Steps `app` until every crowd instance's scene has spawned and been bound (at most 600
/// updates), then `frames` more, then reads the target image back, stepping on while it is
/// still one colour (Bevy compiles its pipelines in the background and skips draws until they
/// are ready: seconds on a software GPU). `None` if no drawn frame came within 1,000 updates.
pub fn run_and_read(app: &mut App, frames: u32) -> Option<Vec<u8>> {
    app.finish();
    app.cleanup();
    for _ in 0..600 {
        app.update();
        let world = app.world_mut();
        let all = world.query::<&CrowdInstance>().iter(world).count();
        let bound = world
            .query_filtered::<(), (With<CrowdInstance>, With<Bound>)>()
            .iter(world)
            .count();
        if bound == all {
            break;
        }
    }
    for _ in 0..frames {
        app.update();
    }
    let target = app.world().resource::<Target>().clone();
    for _ in 0..100 {
        let pixels = read_back(app, &target)?;
        if pixels.chunks_exact(4).any(|p| p != &pixels[..4]) {
            return Some(pixels);
        }
        for _ in 0..10 {
            app.update();
        }
    }
    None
}

/// One read-back of the target image (a few updates).
fn read_back(app: &mut App, target: &Target) -> Option<Vec<u8>> {
    let pixels: Arc<Mutex<Option<Vec<u8>>>> = Arc::default();
    let sink = pixels.clone();
    let reader = app
        .world_mut()
        .spawn(Readback::texture(target.image.clone()))
        .observe(move |done: On<ReadbackComplete>| {
            sink.lock()
                .unwrap()
                .get_or_insert_with(|| done.data.clone());
        })
        .id();
    for _ in 0..16 {
        app.update();
        if let Some(p) = pixels.lock().unwrap().take() {
            app.world_mut().despawn(reader);
            return Some(p);
        }
    }
    None
}

/// [`run_and_read`], then the image written to `path` as a PNG.
pub fn run_and_save(app: &mut App, frames: u32, path: impl AsRef<Path>) {
    let (w, h) = {
        let t = app.world().resource::<Target>();
        (t.width, t.height)
    };
    let pixels = run_and_read(app, frames).expect("the frame was rendered and read back");
    let file = std::fs::File::create(path.as_ref()).expect("the PNG can be created");
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("PNG header");
    writer
        .write_image_data(&pixels[..(w * h * 4) as usize])
        .expect("PNG data");
}
