//! Product colours shared by every picture (`svg`, `html`, `dot`, `mermaid`) and listed by `json`.
//!
//! A product's colour is a function of its name alone (XXH3-64 of the name's bytes, modulo the
//! palette), never of the other products in the picture: `sales` has the same colour in the whole
//! graph, in a selection, in another project and after a product is added. Two products may share a
//! colour (the palette has ten); the legend and labels name them.

/// Fill and stroke colours of products (light fill, darker stroke), indexed by [`product_colours`].
pub const PALETTE: [(&str, &str); 10] = [
    ("#dae8fc", "#6c8ebf"),
    ("#d5e8d4", "#82b366"),
    ("#ffe6cc", "#d79b00"),
    ("#e1d5e7", "#9673a6"),
    ("#f8cecc", "#b85450"),
    ("#fff2cc", "#d6b656"),
    ("#d0f0f0", "#3f9c9c"),
    ("#f5e0f0", "#b0609a"),
    ("#e6f0c8", "#7f9a2e"),
    ("#e8e0d0", "#8c7350"),
];

/// Colours of tables without a product.
pub const NO_PRODUCT: (&str, &str) = ("#f5f5f5", "#666666");

/// The `(fill, stroke)` of a product, from its name only.
pub fn product_colours(product: &str) -> (&'static str, &'static str) {
    let h = xxhash_rust::xxh3::xxh3_64(product.as_bytes());
    PALETTE[(h % PALETTE.len() as u64) as usize]
}
