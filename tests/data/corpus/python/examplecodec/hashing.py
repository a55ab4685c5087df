"""Pure-Python hashing helpers (test input written for perfmodel's corpus tests)."""


def fnv1a(data: bytes) -> int:
    """32-bit FNV-1a hash of *data*."""
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def crc_table(poly: int = 0xEDB88320) -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table
