//! Fuzz target `image_to_pdf`: see ../Cargo.toml for how to run it.
#![cfg_attr(feature = "libfuzzer", no_main)]

#[cfg(feature = "libfuzzer")]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bureau_formats_fuzz::image_to_pdf(data));

#[cfg(not(feature = "libfuzzer"))]
fn main() {
    bureau_formats_fuzz::run_corpus("image_to_pdf", bureau_formats_fuzz::image_to_pdf);
}
