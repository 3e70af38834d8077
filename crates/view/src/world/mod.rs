//! What changed in a trial's world between two snapshots, per service (filled in by the
//! world-state work of issue 17).
