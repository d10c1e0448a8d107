"""Reads the pixels of an 8-bit RGB or RGBA PNG (as Chromium writes screenshots) with the
standard library only: the browser test counts coloured chart marks in its screenshot."""
import struct
import zlib


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(raw, width, height, bpp):
    stride = width * bpp
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, up_left = prev[i], (prev[i - bpp] if i >= bpp else 0)
            pred = (0, left, up, (left + up) // 2, _paeth(left, up, up_left))[kind]
            line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prev = line
    return rows


def read_png(path):
    """(width, height, rows, bytes per pixel) of an 8-bit RGB(A), non-interlaced PNG."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    at, idat, header = 8, b"", None
    while at < len(blob):
        length, kind = struct.unpack(">I4s", blob[at:at + 8])
        body = blob[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: only 8-bit RGB(A) non-interlaced PNG files are read")
    bpp = 3 if colour == 2 else 4
    return width, height, _unfilter(zlib.decompress(idat), width, height, bpp), bpp


def coloured_pixels(path, spread=60):
    """How many pixels have channels differing by more than `spread` (not grey: chart marks,
    not text or rules)."""
    _, _, rows, bpp = read_png(path)
    count = 0
    for row in rows:
        for i in range(0, len(row), bpp):
            r, g, b = row[i], row[i + 1], row[i + 2]
            if max(r, g, b) - min(r, g, b) > spread:
                count += 1
    return count
