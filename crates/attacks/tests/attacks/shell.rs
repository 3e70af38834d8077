//! Attacks: shell. See docs/security.md.
