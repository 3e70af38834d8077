//! Attacks: checks. See docs/security.md.
