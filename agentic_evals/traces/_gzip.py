"""Gzip data decompressed a buffer at a time, with errors that give the byte offset in the file.

`gzip.GzipFile` decompresses as much as it is asked for, and its errors do not say where the
data went bad. This stream hands out at most one buffer per read (the readers above stop at
their size limits, so a small file that expands to gigabytes is refused after the limit, not
after the gigabytes), follows concatenated members as `gzip` does (appending writes one; zero
padding between them is ignored), and raises `GzipError` with the offset of the first byte zlib
could not use, or the file's size when the data ends early.
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path
from typing import IO

from ..errors import AgenticEvalsError

CHUNK = 128 * 1024
_MAGIC = b'\x1f\x8b'
_GZIP = 16 + zlib.MAX_WBITS


class GzipError(AgenticEvalsError):
    """Unusable gzip data, at `offset` bytes into the file."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class GzipStream(io.RawIOBase):
    """The decompressed bytes of a gzip file, read through `io.BufferedReader` (see `open_gzip`)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._decompressor = zlib.decompressobj(_GZIP)
        self._member_start = 0
        self._read_to = 0
        """Bytes of the file read so far."""
        self._tail = b''
        """Compressed bytes read but not yet used (they end at `_read_to`)."""

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = len(buffer)
        while True:
            if self._decompressor.eof and not self._next_member():
                return 0
            data = self._tail or self._read()
            if not data:
                raise GzipError('the gzip data ends early (truncated file?)', self._read_to)
            fed_at = self._read_to - len(data)
            try:
                out = self._decompressor.decompress(data, size)
            except zlib.error as error:
                reason = str(error).removeprefix('Error -3 while decompressing data: ')
                raise GzipError(f'corrupt gzip data ({reason})', self._error_offset(fed_at)) from None
            self._tail = self._decompressor.unconsumed_tail or self._decompressor.unused_data
            if out:
                buffer[: len(out)] = out
                return len(out)

    def _read(self) -> bytes:
        data = self._raw.read(CHUNK)
        self._read_to += len(data)
        return data

    def _next_member(self) -> bool:
        """Start the next member after the one that ended; False at the end of the file."""
        rest = self._tail
        while True:
            rest = rest.lstrip(b'\x00')
            if len(rest) >= 2:
                break
            more = self._read()
            if not more:
                if rest:
                    raise GzipError('trailing data after the gzip data', self._read_to - len(rest))
                return False
            rest += more
        self._member_start = self._read_to - len(rest)
        if not rest.startswith(_MAGIC):
            raise GzipError('trailing data after the gzip data that is not gzip', self._member_start)
        self._decompressor = zlib.decompressobj(_GZIP)
        self._tail = rest
        return True

    def _error_offset(self, fed_at: int) -> int:
        """Where zlib gave up: the member decompressed again up to the bad chunk, then byte by byte.

        Only on the error path, so a corrupt file costs one more pass over one member.
        """
        decompressor = zlib.decompressobj(_GZIP)
        self._raw.seek(self._member_start)
        position = self._member_start
        try:
            while position < fed_at:
                data = self._raw.read(min(CHUNK, fed_at - position))
                if not data:
                    return fed_at
                decompressor.decompress(data, 1)
                while decompressor.unconsumed_tail:
                    decompressor.decompress(decompressor.unconsumed_tail, CHUNK)
                position += len(data)
            while True:
                byte = self._raw.read(1)
                if not byte:
                    return position
                decompressor.decompress(byte, CHUNK)
                while decompressor.unconsumed_tail:
                    decompressor.decompress(decompressor.unconsumed_tail, CHUNK)
                position += 1
        except zlib.error:
            return position
        except OSError:
            return fed_at


def open_gzip(path: Path) -> IO[bytes]:
    """The decompressed content of the gzip file at `path`, buffered (so `readline` works)."""
    return io.BufferedReader(GzipStream(open(path, 'rb')), CHUNK)
