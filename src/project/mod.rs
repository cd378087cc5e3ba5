//! The project on disk: where the pipelines tree is, how its folders map to layers and products, and the
//! scan that reads and parses every table folder.

pub mod cache;
pub mod layout;
pub mod scan;

pub use layout::Layout;
pub use scan::{ScanError, ScanResult, SqlFile, TableFolder, scan};
