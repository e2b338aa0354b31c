//! PNG files for RGBA8 images: what benchmark plots are written as, and how tests read
//! pictures back.

use std::io::{Cursor, Error, ErrorKind, Result};

/// Encodes `rgba` (row-major, 4 bytes a pixel, no row padding) as an 8-bit RGBA PNG.
///
/// A buffer whose length does not match `width * height * 4` is an
/// [`ErrorKind::InvalidInput`] error rather than a panic, since it usually means the caller
/// mixed up dimensions.
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>> {
    let expected = (width as usize)
        .checked_mul(height as usize)
        .and_then(|n| n.checked_mul(4));
    if expected != Some(rgba.len()) {
        let expected = expected.map_or_else(|| "more than usize::MAX".into(), |n| n.to_string());
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "a {width}x{height} RGBA image needs {expected} bytes, got {}",
                rgba.len()
            ),
        ));
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgba)?;
    writer.finish()?;
    Ok(out)
}

/// A render target's colour texture as a PNG file's bytes, after all submitted work (blocking).
pub fn target_png(
    target: &posegpu::render::RenderTarget,
    ctx: &posegpu::GpuContext,
) -> posegpu::Result<Vec<u8>> {
    let rgba = target.read_rgba(ctx)?;
    let (w, h) = (target.width(), target.height());
    encode_png(w, h, &rgba).map_err(|e| posegpu::Error::Render {
        what: format!("encoding the {w}x{h} picture: {e}"),
    })
}

/// Decodes a PNG to `(width, height, rgba)` with 8 bits a channel.
///
/// Palettes, low bit depths and 16-bit channels are normalized to 8 bits and RGB gets an
/// opaque alpha; grey images are [`ErrorKind::InvalidData`], as nothing here writes them.
pub fn decode_png(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>)> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info()?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| Error::new(ErrorKind::InvalidData, "PNG too large for memory"))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf)?;
    buf.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!("expected an RGB or RGBA PNG, got {other:?}"),
            ))
        }
    };
    Ok((info.width, info.height, rgba))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let rgba: Vec<u8> = (0..3 * 2 * 4).map(|i| (i * 11) as u8).collect();
        let png = encode_png(3, 2, &rgba).unwrap();
        assert_eq!(decode_png(&png).unwrap(), (3, 2, rgba));
    }

    #[test]
    fn rgb_is_expanded() {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, 2, 1);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[1, 2, 3, 4, 5, 6]).unwrap();
        writer.finish().unwrap();
        assert_eq!(
            decode_png(&out).unwrap(),
            (2, 1, vec![1, 2, 3, 255, 4, 5, 6, 255])
        );
    }

    #[test]
    fn wrong_length_is_an_error() {
        let err = encode_png(3, 2, &[0; 23]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        let msg = err.to_string();
        assert!(msg.contains("24") && msg.contains("23"), "{msg}");
        let huge = encode_png(u32::MAX, u32::MAX, &[]).unwrap_err();
        assert_eq!(huge.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode_png(b"not a png").is_err());
    }
}
