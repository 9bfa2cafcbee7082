"""Java's modified UTF-8 (`DataOutput.writeUTF` / `readUTF`), decoded with the `mutf8` package.

`mutf8` is more lenient than Java (it accepts 4-byte sequences and stray bytes such as 0xFF),
so the byte shapes `readUTF` accepts are checked first.
"""

from __future__ import annotations

import re

import mutf8

# What DataInput.readUTF accepts: 1-byte ASCII, 2-byte and 3-byte sequences; nothing longer.
_JAVA_UTF = re.compile(rb"(?:[\x00-\x7f]|[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2})*")

MAX_ENCODED = 0xFFFF


def decode(data: bytes) -> str:
    """Decode like `readUTF`; ValueError on input Java would reject."""
    if _JAVA_UTF.fullmatch(data) is None:
        raise ValueError("malformed modified UTF-8 (Java's readUTF rejects it)")
    try:
        return mutf8.decode_modified_utf8(data)
    except UnicodeDecodeError as exc:
        raise ValueError(f"malformed modified UTF-8: {exc.reason}") from exc


def encode(text: str) -> bytes:
    """Encode like `writeUTF`, without the length prefix; ValueError past 65535 bytes."""
    data = mutf8.encode_modified_utf8(text)
    if len(data) > MAX_ENCODED:
        raise ValueError(f"{len(data)} bytes of modified UTF-8; Java's writeUTF allows 65535")
    return data
