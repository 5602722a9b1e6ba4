#!/usr/bin/env python3
"""Print floor(2/pi * 2^1200) as 19 little-endian u64 words for emu/src/float/trig.rs.

pi comes from Machin's formula, pi = 16 atan(1/5) - 4 atan(1/239), in exact integer
arithmetic with 64 guard bits, so the table is derived, not typed.
"""
BITS = 1200
GUARD = 64
ONE = 1 << (BITS + GUARD + 8)


def atan_inv(x):
    # atan(1/x) * ONE by its Taylor series.
    total, term, n, sign = 0, ONE // x, 1, 1
    x2 = x * x
    while term:
        total += sign * (term // n)
        term //= x2
        n += 2
        sign = -sign
    return total


pi = 16 * atan_inv(5) - 4 * atan_inv(239)  # pi * ONE
value = (2 * ONE << BITS) // pi  # floor(2/pi * 2^BITS), guard bits absorb the series error
words = [(value >> (64 * i)) & (2**64 - 1) for i in range(19)]
print("pub(crate) const TWO_OVER_PI: [u64; 19] = [")
for w in words:
    print("    0x%016x," % w)
print("];")
