"""`DiskCache`: named sets of numpy arrays in files that are never trusted when read back.

A file is written to a temporary name in the cache directory and renamed into place, so a
reader sees a whole file or none, whichever process wrote it last. Each file holds a magic
line, a format version, a JSON header naming its key, and the SHA-256 of its payload (the
arrays in ``.npz`` form, no pickles). Whatever goes wrong (a missing or unwritable directory, a
full disk, a truncated, corrupt or foreign file) costs a :class:`CacheWarning` at most: the
caller recomputes, and a bad file is never used.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"grammarkit-cache\n"
FORMAT_VERSION = 1
"""Bumped whenever the layout of the header or of the stored arrays changes."""

SUFFIX = ".gkcache"

MAX_DIRECTORY_BYTES = 1 << 30
"""Above this many bytes of cache files, the least recently written are removed."""

_PREFIX = struct.Struct("<II")  # format version, header length
_PAYLOAD = struct.Struct("<Q")  # payload length

Arrays = dict[str, npt.NDArray[np.generic]]


class CacheWarning(UserWarning):
    """A cache file could not be read or written; the result is computed instead."""


class DiskCache:
    """Array sets stored under ``directory``, one file per key.

    Parameters
    ----------
    directory
        Where the files live (created on the first write).
    max_bytes
        Total size of cache files kept; older files are removed beyond it.
    """

    def __init__(self, directory: str | os.PathLike[str], max_bytes: int = MAX_DIRECTORY_BYTES):
        self.directory = Path(directory)
        self.max_bytes = max_bytes

    def path(self, key: str) -> Path:
        """The file of ``key``."""
        name = hashlib.sha256(key.encode()).hexdigest()[:40]
        return self.directory / f"{name}{SUFFIX}"

    def load(self, key: str) -> Arrays | None:
        """The arrays stored under ``key``, or ``None`` (with a warning if a file was bad)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            _warn(f"cannot read cache file {path}: {exc}")
            return None
        try:
            return _decode(data, key)
        except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
            _warn(f"ignoring cache file {path}: {exc}")
            return None

    def store(self, key: str, arrays: Arrays) -> bool:
        """Write ``arrays`` under ``key`` atomically; ``False`` (with a warning) if impossible."""
        data = _encode(key, arrays)
        temporary: str | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-",
                                                 suffix=SUFFIX)
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path(key))
            temporary = None
        except OSError as exc:
            _warn(f"cannot write cache file in {self.directory}: {exc}")
            return False
        finally:
            if temporary is not None:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
        self._trim()
        return True

    def _trim(self) -> None:
        """Remove the oldest cache files while they exceed :attr:`max_bytes`."""
        files: list[tuple[float, int, Path]] = []
        for path in self.directory.glob(f"*{SUFFIX}"):
            try:
                stat = path.stat()
            except OSError:
                continue
            files.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= self.max_bytes:
                break
            try:
                path.unlink()
            except OSError:
                continue
            total -= size


def _encode(key: str, arrays: Arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    payload = buffer.getvalue()
    header = json.dumps({"key": key}).encode()
    return b"".join((MAGIC, _PREFIX.pack(FORMAT_VERSION, len(header)), header,
                     _PAYLOAD.pack(len(payload)), hashlib.sha256(payload).digest(), payload))


def _decode(data: bytes, key: str) -> Arrays:
    if not data.startswith(MAGIC):
        raise ValueError("not a grammarkit cache file")
    at = len(MAGIC)
    if len(data) < at + _PREFIX.size:
        raise ValueError("truncated header")
    version, header_length = _PREFIX.unpack_from(data, at)
    if version != FORMAT_VERSION:
        raise ValueError(f"format version {version}, expected {FORMAT_VERSION}")
    at += _PREFIX.size
    header = json.loads(data[at: at + header_length])
    if not isinstance(header, dict) or header.get("key") != key:
        raise ValueError("written for another grammar or vocabulary")
    at += header_length
    if len(data) < at + _PAYLOAD.size + 32:
        raise ValueError("truncated header")
    (length,) = _PAYLOAD.unpack_from(data, at)
    at += _PAYLOAD.size
    checksum, payload = data[at: at + 32], data[at + 32:]
    if len(payload) != length or hashlib.sha256(payload).digest() != checksum:
        raise ValueError("checksum mismatch (truncated or corrupt)")
    with np.load(io.BytesIO(payload), allow_pickle=False) as stored:
        return {name: stored[name] for name in stored.files}


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)
