//! Attacks: documents. See docs/security.md.
