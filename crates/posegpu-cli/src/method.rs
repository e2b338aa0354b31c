//! How clips of another character play on a model: the character retargeting (the default:
//! humanoid roles, world frames and rest poses, any tool onto any tool), or UE's per-bone
//! translation modes, which a rig that sets modes asks for (exactly as UE plays them).

use posegpu::retarget::Rig;
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{Asset, Error, IkWeights, LibraryBuilder, RestPose};

/// The offline conversion method of `posegpu retarget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Humanoid roles, world frames, rest-pose alignment (any tool onto any tool).
    Character,
    /// UE's RemapTracksToNewSkeleton, for skeletons whose bone names match.
    Ue,
}

/// What `--rig` asks for at run time.
pub enum Runtime {
    /// The character retargeting, with the rig's bone names (if any) pairing bones.
    Character(Rig),
    /// UE's translation modes, from a rig that sets them (a preset, a default or per-bone modes,
    /// or a mode name on the command line).
    Modes(Rig),
}

impl Runtime {
    /// `--rig` as given: absent (the character retargeting), a JSON file, `humanoid` or a mode
    /// name. A file that sets no translation modes only pairs names: it keeps the character
    /// retargeting rather than falling back to UE's default mode for every bone.
    /// `rest` (`--rest`), where given, overrides the rig's `rest`.
    pub fn from_arg(arg: Option<&str>, rest: RestArg) -> Result<Self, Error> {
        let Some(arg) = arg else {
            return Ok(Self::Character(rest.apply(Rig::default())));
        };
        let rig = rest.apply(Rig::from_arg(arg)?);
        Ok(if rig.sets_modes() {
            Self::Modes(rig)
        } else {
            Self::Character(rig)
        })
    }

    /// Adds `source`'s clips to `builder` as this retargeting plays them on `target`: per bone
    /// in the sampling stage, or with `bake` (the character retargeting only) retargeted once
    /// here, as clips of the target (their IK goals beside them: IK stays per instance).
    pub fn add_source(
        &self,
        builder: &mut LibraryBuilder,
        name: &str,
        source: &Asset,
        target: &Asset,
        bake: bool,
    ) -> Result<(), Error> {
        let id = match (self, bake) {
            (Self::Character(rig), bake) => {
                let plan = RetargetPlan::new(source, target, &PlanOptions::from_rig(rig))?;
                if bake {
                    builder.add_baked_clips(source, &plan, &source.clips)?;
                    return Ok(());
                }
                builder.add_character_source(name, source, &plan)?
            }
            (Self::Modes(_), true) => {
                return Err(Error::Rig {
                    origin: "--rig".to_string(),
                    message: "it sets translation modes, which UE plays at run time; --bake \
                              bakes the character retargeting (convert with `posegpu retarget \
                              --method ue` for UE's modes)"
                        .to_string(),
                })
            }
            (Self::Modes(rig), false) => builder.add_source(name, &source.skeleton, None, rig)?,
        };
        builder.add_clips_from(id, &source.clips)?;
        Ok(())
    }
}

/// `--rest`, for the commands that retarget.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct RestArg {
    /// The pose both characters are measured from: `bind` (the pose the mesh was skinned in,
    /// rebuilt from the skin's inverse bind matrices; the character retargeting's default) or
    /// `nodes` (the node transforms: UE's per-bone modes' default, and for a file whose inverse
    /// bind matrices are wrong). Overrides a rig's `rest`.
    #[arg(long, value_name = "POSE")]
    pub rest: Option<RestPose>,
}

impl RestArg {
    /// `rig` with this choice, where one was made.
    pub fn apply(self, mut rig: Rig) -> Rig {
        rig.rest = self.rest.or(rig.rest);
        rig
    }
}

/// IK after retargeting, for the commands that play or convert another character's clips.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct IkArgs {
    /// Feet IK weight, 0 to 1: each ankle goes to the height of the source's, scaled to the
    /// model (feet on the ground where the source's are, no sinking or floating; a swinging
    /// foot within 2% of hip height of it), and the torso leaning as the source's does.
    /// Character retargeting only.
    #[arg(long, default_value_t = 1.0, value_name = "W", value_parser = crate::util::unit_weight)]
    pub ik_feet: f32,
    /// Hands IK weight, 0 to 1: the left hand stays where the source's is relative to its
    /// right hand (a two-handed weapon). Character retargeting only.
    #[arg(long, default_value_t = 0.0, value_name = "W", value_parser = crate::util::unit_weight)]
    pub ik_hands: f32,
}

/// `--bake`, for the commands that play another character's clips.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct BakeArg {
    /// Retarget --animation-from's clips once, when the library is built, instead of per bone
    /// and per instance each frame: they then play at the speed of the model's own clips (the
    /// IK weights still apply per instance). Character retargeting only.
    #[arg(long, requires = "animation_from")]
    pub bake: bool,
}

impl IkArgs {
    /// The IK weights each instance plays a retargeted clip with (`None`: no clip from another
    /// file).
    pub fn live(&self, animation_from: bool) -> Option<IkWeights> {
        animation_from.then(|| self.weights())
    }
}

impl IkArgs {
    /// The weights asked for.
    pub fn weights(&self) -> IkWeights {
        IkWeights {
            feet: self.ik_feet,
            hands: self.ik_hands,
        }
    }
}
