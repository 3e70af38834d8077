//! Attacks: run. See docs/security.md.
