"""`DiskCache`: named sets of numpy arrays in files that are never trusted when read back.

A file is written to a temporary name in the cache directory and renamed into place, so a
reader sees a whole file or none, whichever process wrote it last. Each file holds a magic
line, a format version, a JSON header naming its key and the SHA-256 of each array, and the
arrays in ``.npz`` form (no pickles). An array is checked when first read
(:class:`StoredArrays`), so a caller needing one small array does not hash the others.
Whatever goes wrong (a missing or unwritable directory, a full disk, a truncated, corrupt or
foreign file) costs a :class:`CacheWarning` at most: the caller recomputes, and a bad array is
never used.
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
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

MAGIC = b"grammarkit-cache\n"
FORMAT_VERSION = 2
"""Bumped whenever the layout of the header or of the stored arrays changes."""

SUFFIX = ".gkcache"

MAX_DIRECTORY_BYTES = 1 << 30
"""Above this many bytes of cache files, the least recently written are removed."""

_PREFIX = struct.Struct("<II")  # format version, header length
_PAYLOAD = struct.Struct("<Q")  # payload length

Arrays = dict[str, npt.NDArray[np.generic]]


class StoredArrays:
    """The arrays of one cache file, each checked against its SHA-256 when first read.

    Raises
    ------
    KeyError
        For a name the file does not hold.
    ValueError
        If the array's bytes do not match its checksum (the file is corrupt).
    """

    def __init__(self, file: BinaryIO, archive: np.lib.npyio.NpzFile, digests: dict[str, str],
                 path: Path):
        self._file = file
        self._archive = archive
        self._digests = digests
        self.path = path
        self._checked: Arrays = {}

    def __getitem__(self, name: str) -> npt.NDArray[Any]:
        found = self._checked.get(name)
        if found is None:
            digest = self._digests.get(name)
            if digest is None:
                raise KeyError(name)
            try:
                found = self._archive[name]
            except (KeyError, OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
                raise ValueError(f"cannot read array {name}: {exc}") from exc
            if _digest(found) != digest:
                raise ValueError(f"checksum mismatch in array {name} (corrupt)")
            self._checked[name] = found
        return found

    def __contains__(self, name: str) -> bool:
        return name in self._digests

    def close(self) -> None:
        """Close the file (arrays read so far stay available)."""
        self._archive.close()
        self._file.close()

    def __del__(self) -> None:
        self.close()


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

    def load(self, key: str) -> StoredArrays | None:
        """The arrays stored under ``key``, or ``None`` (with a warning if a file was bad)."""
        path = self.path(key)
        try:
            file = path.open("rb")
        except FileNotFoundError:
            return None
        except OSError as exc:  # the directory's fault: one message per directory and error
            _warn(f"cannot read cache files in {self.directory}: {exc.strerror or exc}")
            return None
        try:
            return _decode(file, key, path)
        except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
            file.close()
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
            _warn(f"cannot write cache files in {self.directory}: {exc.strerror or exc}")
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
    digests = {name: _digest(np.asarray(array)) for name, array in arrays.items()}
    header = json.dumps({"key": key, "arrays": digests}).encode()
    return b"".join((MAGIC, _PREFIX.pack(FORMAT_VERSION, len(header)), header,
                     _PAYLOAD.pack(len(payload)), payload))


def _digest(array: npt.NDArray[np.generic]) -> str:
    """SHA-256 of an array's dtype, shape and bytes."""
    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()


def _decode(file: BinaryIO, key: str, path: Path) -> StoredArrays:
    """The arrays of the open cache ``file``, after checking its header (arrays are read and
    checked on access; only the header is read now)."""
    head = file.read(len(MAGIC) + _PREFIX.size)
    if head[: len(MAGIC)] != MAGIC:
        raise ValueError("not a grammarkit cache file")
    if len(head) < len(MAGIC) + _PREFIX.size:
        raise ValueError("truncated header")
    version, header_length = _PREFIX.unpack_from(head, len(MAGIC))
    if version != FORMAT_VERSION:
        raise ValueError(f"format version {version}, expected {FORMAT_VERSION}")
    text = file.read(header_length)
    if len(text) < header_length:
        raise ValueError("truncated header")
    header = json.loads(text)
    if not isinstance(header, dict) or header.get("key") != key:
        raise ValueError("written for another grammar or vocabulary")
    digests = header.get("arrays")
    if not isinstance(digests, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in digests.items()):
        raise ValueError("bad header")
    size = file.read(_PAYLOAD.size)
    if len(size) < _PAYLOAD.size:
        raise ValueError("truncated header")
    (length,) = _PAYLOAD.unpack(size)
    if os.fstat(file.fileno()).st_size - file.tell() != length:
        raise ValueError("truncated payload (or trailing bytes)")
    archive = np.load(file, allow_pickle=False)
    if not isinstance(archive, np.lib.npyio.NpzFile) or sorted(archive.files) != sorted(digests):
        raise ValueError("arrays differ from the header")
    return StoredArrays(file, archive, digests, path)


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)
