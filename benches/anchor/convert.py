"""Writes one stage of an advisor2048 weight file (.a2n, f16) as a raw little-endian f32 array: the weights file of
ziap/2048-tdl's 4x6 network (its `nw4x6/weights.bin`), for the anchor comparison in benches/anchor/run.sh.

    python3 benches/anchor/convert.py nets/4x6-9610fc26ea7e3d8b.a2n /path/to/2048-tdl/nw4x6/weights.bin

Both programs order a tuple's index the same way (the tuple's first cell is the most significant digit, cell 0 the
top-left) and use the same four 6-cell tuples, so the weights go over as they are, times the file's scale. Checks the
magic, the checksum, the tuples and the value type, and refuses anything else. Standard library only.
"""
import hashlib
import json
import struct
import sys
import zlib

TUPLES_4X6 = [[0, 1, 2, 3, 4, 5], [4, 5, 6, 7, 8, 9], [0, 1, 2, 4, 5, 6], [4, 5, 6, 8, 9, 10]]


def main(src: str, dst: str) -> None:
    data = open(src, "rb").read()
    if data[:8] != b"A2048NET":
        sys.exit(f"{src}: not an advisor2048 weight file (no A2048NET magic)")
    if hashlib.sha256(data[:-32]).digest() != data[-32:]:
        sys.exit(f"{src}: checksum mismatch (damaged file)")
    header_len = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[16 : 16 + header_len])
    if header["tuples"] != TUPLES_4X6:
        sys.exit(f"{src}: tuples {header['tuples']} are not the 4x6 set the anchor's nw4x6 reads")
    if header["value_type"] != "f16" or header["compression"] != "deflate":
        sys.exit(f"{src}: expected f16 weights, deflate-compressed (a shipped file, not a checkpoint)")
    if len(header["stages"]) != 1:
        sys.exit(f"{src}: {len(header['stages'])} stages; the anchor has one (convert one stage's file)")
    count = sum(16 ** len(t) for t in TUPLES_4X6)
    payload = zlib.decompressobj(-15).decompress(data[16 + header_len : -32])
    if len(payload) < 2 * count:
        sys.exit(f"{src}: payload holds {len(payload) // 2} weights, the 4x6 set needs {count}")
    scale = float(header.get("scale", 1.0))
    out = open(dst, "wb")
    step = 1 << 20
    for start in range(0, count, step):
        n = min(step, count - start)
        halves = struct.unpack_from(f"<{n}e", payload, 2 * start)
        out.write(struct.pack(f"<{n}f", *(h * scale for h in halves)))
    out.close()
    print(f"{dst}: {count} f32 weights (scale {scale}) from {src}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
