//! Floating point as the hardware does it: placeholder.
