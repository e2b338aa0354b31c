//! A skinned crowd drawn headless straight from posegpu's skinning buffers: the integration a
//! renderer needs, in order. Evaluation and drawing go into one command encoder and one
//! submission; the vertex shader reads the evaluator's `skinning` buffer as storage, so nothing
//! is copied between them. The picture is read back only to write the PNG.
//!
//! `cargo run --release --example render_crowd -- [INSTANCES] [OUT.png]` (default 100,
//! `render_crowd.png`). `posegpu render` does the same with glTF models and frame sequences.

use posegpu::render::{
    grid_placements, placements_buffer, rest_skinning, Camera, CrowdRenderer, DrawChunk,
    RenderTarget, SkinnedMesh, BACKGROUND, COLOR_FORMAT,
};
use posegpu::{
    AnimLibrary, ClipId, ClipSample, GpuContext, GpuEvaluator, GpuOptions, PoseBatch, RootLock,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map_or(Ok(100), |a| a.parse())?;
    let out = args.next().unwrap_or_else(|| "render_crowd.png".into());

    // Once: the library, the mesh, the evaluator and the renderer on one device.
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let mesh = SkinnedMesh::humanoid(&asset.skeleton);
    let ctx = GpuContext::new()?;
    println!("adapter: {}", ctx.describe());
    let mut gpu = GpuEvaluator::new(&ctx, &lib, count, &GpuOptions::default())?;
    let mut renderer = CrowdRenderer::new(&ctx, &mesh, lib.bone_count(), COLOR_FORMAT)?;
    let spacing = 1.3;
    let placements = grid_placements(count, spacing);
    let placement_buffer = placements_buffer(&ctx, &placements)?;
    let target = RenderTarget::new(&ctx, 960, 540)?;
    let (lo, hi) = mesh.bounds(&rest_skinning(&asset.skeleton));
    let reach = spacing * ((count as f32).sqrt().ceil() - 1.0) * 0.5;
    let pad = glam::Vec3::new(reach + 0.5, 0.3, reach + 0.5);
    renderer.set_camera(&Camera::framing(lo - pad, hi + pad, 960.0 / 540.0));

    // Each frame: what every instance plays (clip, phase, in place), ...
    let mut batch = PoseBatch::with_capacity(count, 1);
    for i in 0..count {
        let clip = ClipId((i % lib.clip_count()) as u32);
        let phase = (i as f32 * 0.618_034).fract() * lib.clip_duration(clip);
        let sample =
            ClipSample::new(clip, phase + 0.4, true).with_root_lock(Some(RootLock::RefPose));
        batch.push_blend(&[sample]);
    }
    gpu.write(&batch)?;
    // ... then the compute passes and the draw, recorded in order into one encoder.
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    gpu.encode(&mut encoder);
    let chunks = DrawChunk::from_outputs(gpu.chunks(), &placement_buffer);
    renderer.draw(
        &mut encoder,
        target.color_view(),
        target.depth_view(),
        BACKGROUND,
        &chunks,
    )?;
    ctx.queue.submit([encoder.finish()]);

    let rgba = target.read_rgba(&ctx)?;
    write_png(&out, target.width(), target.height(), &rgba)?;
    println!(
        "{count} instances, {} triangles each: {out}",
        mesh.indices.len() / 3
    );
    Ok(())
}

/// An 8-bit RGBA PNG (the example's only use of the `png` crate).
fn write_png(path: &str, width: u32, height: u32, rgba: &[u8]) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(rgba)?;
    Ok(())
}
