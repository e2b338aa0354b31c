//! The warp model: lanes' accesses grouped into warp instructions, and each instruction's
//! sectors, lines and compulsory sectors.

use std::collections::{HashMap, HashSet};

use super::{Access, Buffer, PassTraffic, LINE, SECTOR, WARP};

pub(super) fn read(out: &mut Vec<Access>, site: u32, buffer: Buffer, offset: u64, bytes: u64) {
    out.push(Access {
        site,
        buffer,
        offset,
        bytes,
        write: false,
        depth: None,
    });
}

/// A load on a bone's chain from its sample's frame entry to its keys, whose address comes
/// from what the loads at sites `after` returned: one deeper than the deepest of them, each
/// the last this lane made from `from` on (its bone's accesses) at that site on the chain.
/// With `after` empty, a chain's start (the sample's entry, its resolved search) at depth 0.
pub(super) fn read_after(
    out: &mut Vec<Access>,
    (from, after): (usize, &[u32]),
    site: u32,
    buffer: Buffer,
    (offset, bytes): (u64, u64),
) {
    let bone = out.get(from..).unwrap_or_default();
    let deepest = after
        .iter()
        .filter_map(|s| {
            bone.iter()
                .rev()
                .filter(|a| a.site == *s)
                .find_map(|a| a.depth)
        })
        .max();
    let depth = match (after.is_empty(), deepest) {
        (true, _) => 0,
        (false, d) => d.map_or(1, |d| d + 1),
    };
    read_depth(out, depth, site, buffer, (offset, bytes));
}

/// A load on a chain at a depth the caller counts (a binary search's halvings, each after the
/// one before).
pub(super) fn read_depth(
    out: &mut Vec<Access>,
    depth: u32,
    site: u32,
    buffer: Buffer,
    (offset, bytes): (u64, u64),
) {
    read(out, site, buffer, offset, bytes);
    if let Some(last) = out.last_mut() {
        last.depth = Some(depth);
    }
}

pub(super) fn write(out: &mut Vec<Access>, site: u32, buffer: Buffer, offset: u64, bytes: u64) {
    out.push(Access {
        site,
        buffer,
        offset,
        bytes,
        write: true,
        depth: None,
    });
}

/// A 48-byte transform at element `index`: three 16-byte loads.
pub(super) fn read_xform(out: &mut Vec<Access>, site: u32, buffer: Buffer, index: u64) {
    for k in 0..3 {
        read(out, site + k as u32, buffer, index * 48 + k * 16, 16);
    }
}

pub(super) fn write_xform(out: &mut Vec<Access>, site: u32, buffer: Buffer, index: u64) {
    for k in 0..3 {
        write(out, site + k as u32, buffer, index * 48 + k * 16, 16);
    }
}

/// Replays `warps` warps: `trace(warp, lane, out)` lists a lane's accesses. A warp's
/// instructions run in the order their sites first appear in its lanes; a sector is read from
/// DRAM unless the pass wrote it before.
pub(super) fn replay(
    pass: &'static str,
    warps: usize,
    mut trace: impl FnMut(usize, usize, &mut Vec<Access>),
) -> PassTraffic {
    let mut total = PassTraffic {
        pass,
        ..Default::default()
    };
    let (mut read_dram, mut written) = (HashSet::new(), HashSet::new());
    let mut lanes: Vec<Vec<Access>> = vec![Vec::new(); WARP];
    // Per instruction (site, occurrence): its first place in a lane's trace, its accesses.
    let mut at: HashMap<(u32, u32), usize> = HashMap::new();
    let mut instructions: Vec<(usize, Vec<Access>)> = Vec::new();
    let mut seen: Vec<(u32, u32)> = Vec::new();
    for warp in 0..warps {
        for (lane, accesses) in lanes.iter_mut().enumerate() {
            accesses.clear();
            trace(warp, lane, accesses);
        }
        at.clear();
        instructions.clear();
        for accesses in &lanes {
            seen.clear();
            for (place, a) in accesses.iter().enumerate() {
                let occurrence = match seen.iter_mut().find(|(site, _)| *site == a.site) {
                    Some((_, k)) => {
                        *k += 1;
                        *k
                    }
                    None => {
                        seen.push((a.site, 0));
                        0
                    }
                };
                let k = *at.entry((a.site, occurrence)).or_insert_with(|| {
                    instructions.push((place, Vec::new()));
                    instructions.len() - 1
                });
                instructions[k].0 = instructions[k].0.min(place);
                instructions[k].1.push(*a);
            }
        }
        instructions.sort_by_key(|(place, _)| *place);
        for (_, accesses) in &instructions {
            let (sectors, lines, compulsory) = instruction(accesses);
            total.sectors += sectors;
            total.lines += lines;
            total.compulsory_sectors += compulsory;
            total.loads += accesses.iter().filter(|a| !a.write).count() as u64;
            let keys = accesses.iter().filter(|a| a.buffer == Buffer::Values);
            for depth in keys.filter_map(|a| a.depth) {
                total.key_loads += 1;
                total.key_depth_sum += u64::from(depth);
                total.key_depth_max = total.key_depth_max.max(depth);
            }
            for a in accesses {
                total.accessed |= if a.write {
                    a.buffer.write_bit()
                } else {
                    a.buffer.read_bit()
                };
                for s in a.offset / SECTOR..=(a.offset + a.bytes - 1) / SECTOR {
                    if a.write {
                        written.insert((a.buffer, s));
                    } else if !written.contains(&(a.buffer, s)) {
                        read_dram.insert((a.buffer, s));
                    }
                }
            }
        }
    }
    total.dram_bytes = (read_dram.len() + written.len()) as u64 * SECTOR;
    total
}

/// One warp instruction: the sectors and lines its lanes touch, and its compulsory sectors.
fn instruction(accesses: &[Access]) -> (u64, u64, u64) {
    let mut sectors = HashSet::new();
    let mut lines = HashSet::new();
    let mut ranges: Vec<(Buffer, u64, u64)> = Vec::with_capacity(accesses.len());
    for a in accesses {
        let end = a.offset + a.bytes;
        for s in a.offset / SECTOR..=(end - 1) / SECTOR {
            sectors.insert((a.buffer, s));
        }
        for l in a.offset / LINE..=(end - 1) / LINE {
            lines.insert((a.buffer, l));
        }
        ranges.push((a.buffer, a.offset, end));
    }
    // Distinct bytes: the union of the lanes' ranges (lanes reading one address share it).
    ranges.sort_by_key(|&(b, start, _)| (b as u8, start));
    let mut bytes = 0;
    let mut current: Option<(Buffer, u64, u64)> = None;
    for (b, start, end) in ranges {
        match current {
            Some((cb, cs, ce)) if cb == b && start <= ce => current = Some((cb, cs, ce.max(end))),
            _ => {
                if let Some((_, cs, ce)) = current {
                    bytes += ce - cs;
                }
                current = Some((b, start, end));
            }
        }
    }
    if let Some((_, cs, ce)) = current {
        bytes += ce - cs;
    }
    (
        sectors.len() as u64,
        lines.len() as u64,
        bytes.div_ceil(SECTOR),
    )
}
