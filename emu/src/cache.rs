//! Decode-once cache of code ranges (placeholder until M4).
