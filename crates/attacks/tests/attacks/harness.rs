//! Attacks: harness. See docs/security.md.
