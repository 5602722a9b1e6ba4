// One half of an import cycle: ping calls pong (in cycle_pong.co) and pong calls ping.
// Loaders that must define imports before loading (ROCr) cannot link this pair; the
// software agent reserves memory first and can.
__attribute__((visibility("default"))) int cycle_pong(int n);
__attribute__((noinline, visibility("default"))) int cycle_ping(int n) { return n <= 0 ? 0 : cycle_pong(n - 1) + 1; }
