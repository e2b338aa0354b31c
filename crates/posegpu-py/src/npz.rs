//! NumPy's `.npz` written from Rust: `.npy` arrays in an uncompressed zip with fixed
//! timestamps, so that the same arrays give the same bytes (`numpy.savez` stamps the time),
//! and worker threads write without the GIL.

use std::io::Write;
use std::path::Path;

/// Arrays to be written as one `.npz`, in the order added.
#[derive(Default)]
pub struct Npz {
    files: Vec<(String, Vec<u8>)>,
}

impl Npz {
    /// A float32 array of `shape` (row-major).
    pub fn add_f32(&mut self, name: &str, shape: &[usize], data: &[f32]) {
        let bytes = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.add(name, "<f4", shape, bytes);
    }

    /// An int32 array of `shape`.
    pub fn add_i32(&mut self, name: &str, shape: &[usize], data: &[i32]) {
        let bytes = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.add(name, "<i4", shape, bytes);
    }

    /// A 1-D array of strings (NumPy's `<U` dtype: UTF-32, padded to the longest).
    pub fn add_strings(&mut self, name: &str, strings: &[String]) {
        let width = strings
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut bytes = Vec::with_capacity(strings.len() * width * 4);
        for s in strings {
            let n = s.chars().count();
            bytes.extend(s.chars().flat_map(|c| u32::from(c).to_le_bytes()));
            bytes.extend(std::iter::repeat_n(0u8, (width - n) * 4));
        }
        self.add(name, &format!("<U{width}"), &[strings.len()], bytes);
    }

    fn add(&mut self, name: &str, descr: &str, shape: &[usize], data: Vec<u8>) {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let shape = match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        };
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        // Magic (6), version (2), length (2), then the header padded so the data starts at a
        // multiple of 64 bytes, ending in a newline (format version 1.0).
        let total = (10 + header.len() + 1).div_ceil(64) * 64;
        header.extend(std::iter::repeat_n(' ', total - 10 - header.len() - 1));
        header.push('\n');
        let mut npy = Vec::with_capacity(total + data.len());
        npy.extend_from_slice(b"\x93NUMPY\x01\x00");
        npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
        npy.extend_from_slice(header.as_bytes());
        npy.extend_from_slice(&data);
        self.files.push((format!("{name}.npy"), npy));
    }

    /// Writes the zip (stored, not deflated: float data hardly compresses).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in &self.files {
            let (crc, size) = (crc32(data), u32::try_from(data.len()).map_err(too_big)?);
            let offset = u32::try_from(out.len()).map_err(too_big)?;
            // DOS time 0, date 1980-01-01: fixed, so that the bytes repeat.
            let common = |buf: &mut Vec<u8>| {
                buf.extend_from_slice(&20u16.to_le_bytes()); // version needed
                buf.extend_from_slice(&0u16.to_le_bytes()); // flags
                buf.extend_from_slice(&0u16.to_le_bytes()); // stored
                buf.extend_from_slice(&0u16.to_le_bytes()); // time
                buf.extend_from_slice(&0x21u16.to_le_bytes()); // date
                buf.extend_from_slice(&crc.to_le_bytes());
                buf.extend_from_slice(&size.to_le_bytes());
                buf.extend_from_slice(&size.to_le_bytes());
                buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
                buf.extend_from_slice(&0u16.to_le_bytes()); // extra
            };
            out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
            common(&mut out);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(data);

            central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            central.extend_from_slice(&20u16.to_le_bytes()); // version made by
            common(&mut central);
            central.extend_from_slice(&[0u8; 6]); // comment length, disk, internal attributes
            central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
            central.extend_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let at = u32::try_from(out.len()).map_err(too_big)?;
        let count = self.files.len() as u16;
        out.extend_from_slice(&central);
        out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        out.extend_from_slice(&[0u8; 4]); // disk numbers
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // comment
        let mut file = std::fs::File::create(path)?;
        file.write_all(&out)
    }
}

fn too_big(_: std::num::TryFromIntError) -> std::io::Error {
    std::io::Error::other("an .npz over 4 GiB (zip64 is not written)")
}

/// The zip CRC-32 (IEEE, reflected).
fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}
