//! Bureau's attack suite lives in `tests/attacks/` (one test binary, one module per attack
//! family). Each test plays an agent, a harness, a task author or a file trying to escape or
//! break Bureau, and asserts the refusal Bureau gives and that the rest of the run is intact.
//! The threat model and what enforces what: `docs/security.md`.
