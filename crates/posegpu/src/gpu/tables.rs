//! Emptied: the library holds its tables as the shaders bind them (`src/library/tables.rs`).
