"""Decodes BC6H and BC7 blocks with independent decoders, for emu's bcn.rs tests.

Usage: python bcn_reference.py FORMAT < blocks > texels, where blocks are N 16-byte blocks
and FORMAT is one of
  bc6h, bc6hs       imagecodecs' BCn decoder (bcdec): 3 half floats a texel (uint16 LE)
  bc7-pillow        Pillow's BCn decoder: RGBA, 4 bytes a texel
  bc7-imagecodecs   imagecodecs' BCn decoder: RGBA, 4 bytes a texel
Texels are written block by block, each block's 16 texels row by row. Pillow's BC6H decoder
is not used: it returns 8-bit values clamped to [0, 1] and interpolates without rounding.
"""

import sys

import numpy as np


def main():
    kind = sys.argv[1]
    data = sys.stdin.buffer.read()
    if len(data) % 16:
        sys.exit(f"bcn_reference: {len(data)} bytes is not a whole number of 16-byte blocks")
    n = len(data) // 16
    if kind in ("bc6h", "bc6hs"):
        import imagecodecs

        img = imagecodecs.bcn_decode(data, 6 if kind == "bc6h" else -6, shape=(4, 4 * n, 3))
        texels = img.astype(np.float16).view(np.uint16)
    elif kind == "bc7-imagecodecs":
        import imagecodecs

        texels = imagecodecs.bcn_decode(data, 7, shape=(4, 4 * n, 4)).astype(np.uint8)
    elif kind == "bc7-pillow":
        from PIL import Image

        img = Image.frombytes("RGBA", (4 * n, 4), data, "bcn", (7, "BC7"))
        texels = np.asarray(img, dtype=np.uint8)
    else:
        sys.exit(f"bcn_reference: unknown format {kind}")
    # (y, block, x, channel) -> (block, y, x, channel)
    c = texels.shape[-1]
    out = texels.reshape(4, n, 4, c).transpose(1, 0, 2, 3)
    sys.stdout.buffer.write(np.ascontiguousarray(out).astype("<u" + str(texels.itemsize)).tobytes())


if __name__ == "__main__":
    main()
