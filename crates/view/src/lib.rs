//! Bureau in the browser: `bureau view <run-dir>…` (a local web app on 127.0.0.1) and
//! `bureau report --html` (the same pages as one self-contained file).

pub mod world;
