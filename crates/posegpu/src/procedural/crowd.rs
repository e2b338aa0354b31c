//! A crowd that plays every kind of sequence player.

use crate::batch::RootLock;
use crate::error::Result;
use crate::library::AnimLibrary;
use crate::playback::{Agent, Crowd, Montage, PlayRate, Player, Segment, TrackId};

/// A crowd of `n` agents on a library with the humanoid's clips (`idle`, `walk`, `run`,
/// `wave`; [`super::humanoid_clips`]) that uses every playback feature, for tests and
/// `posegpu check`: looping and not, negative, zero and shaped rates (a rate basis, scale,
/// bias, clamp), synced and free blends, a montage, root motion with each root lock.
/// Deterministic.
pub fn humanoid_crowd(lib: &AnimLibrary, n: usize) -> Result<Crowd> {
    let clip = |name: &str| lib.find_clip(name);
    let (idle, walk, run, wave) = (clip("idle")?, clip("walk")?, clip("run")?, clip("wave")?);
    let mut crowd = Crowd::new(lib);
    let segments = [
        Segment::new(walk, 0.1, 0.9),
        Segment::new(run, 0.0, 0.7),
        Segment::new(wave, 0.5, 1.2),
    ];
    let montage = crowd.add_montage(lib, &Montage::new("m", &segments))?;
    let locks = [
        None,
        Some(RootLock::RefPose),
        Some(RootLock::FirstFrame),
        Some(RootLock::Zero),
    ];
    for i in 0..n {
        let f = i as f32;
        let rate = match i % 6 {
            0 => PlayRate::new(1.0),
            1 => PlayRate::new(-1.3),
            2 => PlayRate::new(0.0),
            3 => PlayRate::new(150.0).with_basis(100.0),
            4 => PlayRate::new(2.0)
                .with_scale_bias(0.5, 0.25)
                .with_clamp(-0.5, 1.1),
            _ => PlayRate::new(-4.0).with_basis(2.0).with_clamp(-1.5, 1.5),
        };
        let track: TrackId = [walk.into(), run.into(), wave.into(), idle.into(), montage][i % 5];
        let length = crowd.track_length(track).unwrap_or(1.0);
        let player = Player::new(track)
            .starting_at((f * 0.137) % 1.0 * length)
            .with_rate(rate)
            .looping(i % 5 != 0);
        let mut agent = match i % 4 {
            0 | 1 => Agent::new(player),
            2 => {
                let other = Player::new(run)
                    .starting_at(0.2)
                    .with_weight(0.3 + 0.1 * (f % 7.0));
                Agent::blend(&[player.with_weight(0.6), other]).synced()
            }
            _ => {
                let other = Player::new(walk).with_weight(0.0);
                let third = Player::new(run)
                    .with_rate(PlayRate::new(0.7))
                    .with_weight(0.5);
                Agent::blend(&[player.with_weight(0.5), other, third])
            }
        };
        if i % 3 != 0 {
            agent = agent.with_root_motion(locks[i % 4]);
        }
        crowd.add(&agent)?;
    }
    Ok(crowd)
}
