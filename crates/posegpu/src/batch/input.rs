//! What an evaluator evaluates in a frame: a whole [`PoseBatch`], or instances that play one
//! clip each (packed into a batch on the way), through one `evaluate` entry per evaluator.

use std::borrow::Cow;

use super::{ClipSample, PoseBatch};

/// A frame's input to [`crate::CpuEvaluator::evaluate`], [`crate::GpuEvaluator::evaluate`] and
/// their kin: a [`PoseBatch`], or a slice, array or `Vec` of [`ClipSample`]s (an instance each).
pub trait FrameInput {
    /// The frame as a batch (borrowed where it is one).
    fn batch(&self) -> Cow<'_, PoseBatch>;
}

impl FrameInput for PoseBatch {
    fn batch(&self) -> Cow<'_, PoseBatch> {
        Cow::Borrowed(self)
    }
}

impl FrameInput for [ClipSample] {
    fn batch(&self) -> Cow<'_, PoseBatch> {
        Cow::Owned(PoseBatch::from_instances(self))
    }
}

impl FrameInput for Vec<ClipSample> {
    fn batch(&self) -> Cow<'_, PoseBatch> {
        self.as_slice().batch()
    }
}

impl<const N: usize> FrameInput for [ClipSample; N] {
    fn batch(&self) -> Cow<'_, PoseBatch> {
        self.as_slice().batch()
    }
}
