//! An offscreen colour and depth target, read back as RGBA8 (headless rendering, tests).

use crate::error::{Error, Result};
use crate::gpu::GpuContext;
use crate::gpu::{read_mapped, ErrorScope};

use super::renderer::{COLOR_FORMAT, DEPTH_FORMAT};

/// A `width` x `height` [`COLOR_FORMAT`] texture with its depth buffer.
pub struct RenderTarget {
    width: u32,
    height: u32,
    color: wgpu::Texture,
    color_view: wgpu::TextureView,
    depth_view: wgpu::TextureView,
    /// Where `read_rgba` copies the picture, rows at 256-byte strides; made once.
    readback: wgpu::Buffer,
}

impl RenderTarget {
    /// A target of `width` x `height` pixels on the context's device. `Error::Render` for an
    /// empty size, `Error::TooLarge` past the device's texture limit.
    pub fn new(ctx: &GpuContext, width: u32, height: u32) -> Result<Self> {
        if width == 0 || height == 0 {
            return Err(Error::Render {
                what: format!("a {width}x{height} target has no pixels"),
            });
        }
        let limit = ctx.device.limits().max_texture_dimension_2d;
        if width.max(height) > limit {
            return Err(Error::TooLarge {
                what: format!("a {width}x{height} render target"),
                size: u64::from(width.max(height)),
                limit: u64::from(limit),
                unit: "pixels",
                limit_name: "max_texture_dimension_2d",
            });
        }
        let scope = ErrorScope::push(&ctx.device);
        let texture = |label, format, usage| {
            ctx.device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let color = texture(
            "color",
            COLOR_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        );
        let depth = texture(
            "depth",
            DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let readback = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("target readback"),
            size: u64::from(row_stride(width)) * u64::from(height),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let target = Self {
            width,
            height,
            color_view: color.create_view(&Default::default()),
            depth_view: depth.create_view(&Default::default()),
            color,
            readback,
        };
        scope.pop()?;
        Ok(target)
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The colour attachment to render into.
    pub fn color_view(&self) -> &wgpu::TextureView {
        &self.color_view
    }

    /// The depth attachment ([`DEPTH_FORMAT`]).
    pub fn depth_view(&self) -> &wgpu::TextureView {
        &self.depth_view
    }

    /// The colour texture's pixels, row by row from the top, 4 bytes each (sRGB-encoded RGBA),
    /// after all submitted work (blocking).
    pub fn read_rgba(&self, ctx: &GpuContext) -> Result<Vec<u8>> {
        let row = self.width as usize * 4;
        let stride = row_stride(self.width);
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            self.color.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(stride),
                    rows_per_image: None,
                },
            },
            self.color.size(),
        );
        ctx.queue.submit([encoder.finish()]);
        let padded = read_mapped(&ctx.device, &self.readback)?;
        Ok(padded
            .chunks_exact(stride as usize)
            .flat_map(|r| &r[..row])
            .copied()
            .collect())
    }
}

/// Bytes per row of a picture `width` wide in a texture-to-buffer copy (rows start at
/// 256-byte boundaries).
fn row_stride(width: u32) -> u32 {
    (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
}
