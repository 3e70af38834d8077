//! Attacks: services. See docs/security.md.
