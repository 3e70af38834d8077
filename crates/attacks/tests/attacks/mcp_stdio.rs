//! Attacks: mcp_stdio. See docs/security.md.
