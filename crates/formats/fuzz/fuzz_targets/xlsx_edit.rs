//! Fuzz target `xlsx_edit`: see ../Cargo.toml for how to run it.
#![cfg_attr(feature = "libfuzzer", no_main)]

#[cfg(feature = "libfuzzer")]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bureau_formats_fuzz::xlsx_edit(data));

#[cfg(not(feature = "libfuzzer"))]
fn main() {
    bureau_formats_fuzz::run_corpus("xlsx_edit", bureau_formats_fuzz::xlsx_edit);
}
