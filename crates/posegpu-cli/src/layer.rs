//! `--layer` and `--mask`, shared by `eval` and `render`: a layered blend per bone over what the
//! instances play, and the bone mask it (and `eval`'s additive or aim offset) is weighted by.

use posegpu::InstanceLayers;
use posegpu::{AdditiveSpace, Clip, ClipSample, Error, LibraryBuilder, MaskBranch, MaskId};

/// A layered blend per bone (UE's node) over the base, and its bone mask.
#[derive(Clone, Debug, clap::Args)]
pub struct LayerArgs {
    /// Blend this clip of the model over the base, per bone (UE's Layered blend per bone): an
    /// upper-body wave over a walk, with --mask.
    #[arg(long, value_name = "NAME")]
    pub layer: Option<String>,
    /// The blend layer's rotations: blended in `local` space, or in `mesh` space (UE's
    /// bMeshSpaceRotationBlend: the branch keeps its orientation in the character's space).
    #[arg(long, value_name = "SPACE", default_value = "local")]
    pub layer_space: AdditiveSpace,
    /// The blend layer's weight, 0 to 1.
    #[arg(long, value_name = "W", default_value_t = 1.0, value_parser = crate::util::unit_weight)]
    pub layer_weight: f32,
    /// A bone mask for the layers over the base: branches `BONE` or `BONE:DEPTH`, comma-separated
    /// (UE's branch filters: the weight ramps up over DEPTH bones down the branch; a negative
    /// depth leaves a sub-branch out, `--mask spine_01,neck_01:-1`).
    #[arg(
        long,
        value_name = "BRANCHES",
        value_delimiter = ',',
        value_parser = MaskBranch::parse,
        allow_hyphen_values = true
    )]
    pub mask: Vec<MaskBranch>,
}

/// What [`LayerArgs::add`] resolved: the blend layer's clip and the mask.
#[derive(Clone, Copy, Debug, Default)]
pub struct Layered {
    pub clip: Option<u32>,
    pub mask: Option<MaskId>,
}

impl LayerArgs {
    /// Finds the layer's clip among the model's own `clips` (the library's first) and adds the
    /// mask to `builder`. `masked` says whether some other layer takes the mask, for the error
    /// a mask with nothing to weight gets.
    pub fn add(
        &self,
        builder: &mut LibraryBuilder,
        clips: &[Clip],
        masked: bool,
    ) -> Result<Layered, Error> {
        let clip = match &self.layer {
            Some(name) => Some(Clip::find(clips, name)? as u32),
            None => None,
        };
        if self.mask.is_empty() {
            return Ok(Layered { clip, mask: None });
        }
        if clip.is_none() && !masked {
            return Err(Error::Mask {
                mask: "--mask".into(),
                what: "there is no layer to weight: give --layer (or eval's --additive or --aim)"
                    .into(),
            });
        }
        let mask = builder.add_mask("--mask", &self.mask)?;
        Ok(Layered {
            clip,
            mask: Some(mask),
        })
    }
}

impl Layered {
    /// The blend layer at time `t`, when there is one.
    pub fn push<'a>(
        &self,
        args: &LayerArgs,
        instance: InstanceLayers<'a>,
        t: f32,
        looping: bool,
    ) -> InstanceLayers<'a> {
        let Some(clip) = self.clip else {
            return instance;
        };
        let sample = [ClipSample::new(clip, t, looping)];
        self.masked(instance.blend(args.layer_space, args.layer_weight, &sample))
    }

    /// The layer added last, masked when there is a mask.
    pub fn masked<'a>(&self, instance: InstanceLayers<'a>) -> InstanceLayers<'a> {
        match self.mask {
            Some(mask) => instance.with_mask(mask),
            None => instance,
        }
    }
}
