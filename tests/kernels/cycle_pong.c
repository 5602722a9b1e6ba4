// The other half of the import cycle (see cycle_ping.c).
__attribute__((visibility("default"))) int cycle_ping(int n);
__attribute__((noinline, visibility("default"))) int cycle_pong(int n) { return n <= 0 ? 0 : cycle_ping(n - 1) + 2; }
