//! Blend spaces: sample points in a 1D or 2D parameter space and the weights an input gives.
