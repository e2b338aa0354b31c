//! Which results the evaluator keeps, and in which layout its skinning matrices are written.

/// The results a [`crate::GpuEvaluator`] keeps in its output buffers each frame
/// ([`crate::GpuOptions::outputs`]). Skinning matrices are always written; local and
/// component-space transforms only when asked for. A renderer that binds only the skinning
/// matrices asks for [`Outputs::SKINNING`]: the fused pass then writes nothing else, the
/// separate hierarchy pass builds the component transforms in place over the locals (two
/// buffers of 48 bytes per bone instead of three), and a read-back copies only the skinning
/// matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// Local transforms after sampling, layers and IK ([`crate::OutputChunk::locals`]).
    pub locals: bool,
    /// Component-space transforms ([`crate::OutputChunk::component`]).
    pub component: bool,
    /// The layout of the skinning matrices.
    pub skinning: SkinningLayout,
}

impl Outputs {
    /// Locals, component transforms and 3x4 skinning rows: the default.
    pub const ALL: Self = Self {
        locals: true,
        component: true,
        skinning: SkinningLayout::Rows3x4,
    };
    /// Component transforms and skinning matrices (what a renderer and gameplay code read).
    pub const COMPONENT_AND_SKINNING: Self = Self {
        locals: false,
        ..Self::ALL
    };
    /// Skinning matrices only (what a renderer binds).
    pub const SKINNING: Self = Self {
        locals: false,
        component: false,
        ..Self::ALL
    };

    /// The same outputs with skinning matrices in `layout`.
    pub const fn with_skinning(self, layout: SkinningLayout) -> Self {
        Self {
            skinning: layout,
            ..self
        }
    }
}

impl Default for Outputs {
    fn default() -> Self {
        Self::ALL
    }
}

/// How a skinning matrix is laid out in [`crate::OutputChunk::skinning`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SkinningLayout {
    /// Three rows of four floats, 48 bytes ([`crate::Mat3x4`]): the affine part only, what
    /// posegpu's own renderer binds.
    #[default]
    Rows3x4,
    /// A column-major `mat4x4<f32>`, 64 bytes, bottom row `(0, 0, 0, 1)`: for engines whose
    /// skinning shaders bind `array<mat4x4<f32>>` (Bevy's joint matrices).
    Columns4x4,
}

impl SkinningLayout {
    /// Bytes per matrix.
    pub const fn bytes(self) -> u64 {
        match self {
            Self::Rows3x4 => 48,
            Self::Columns4x4 => 64,
        }
    }

    /// `vec4<f32>` words per matrix.
    pub(crate) const fn words(self) -> u32 {
        (self.bytes() / 16) as u32
    }

    /// The rows of a matrix written in this layout (exact: a transpose, the bottom row
    /// dropped).
    pub(crate) fn rows(self, words: &[f32]) -> crate::Mat3x4 {
        match self {
            Self::Rows3x4 => std::array::from_fn(|k| words[k]),
            Self::Columns4x4 => std::array::from_fn(|k| words[(k % 4) * 4 + k / 4]),
        }
    }
}
