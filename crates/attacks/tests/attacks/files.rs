//! Attacks: files. See docs/security.md.
