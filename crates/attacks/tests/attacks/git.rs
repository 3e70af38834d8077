//! Attacks: git. See docs/security.md.
