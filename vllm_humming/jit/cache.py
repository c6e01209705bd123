"""Cache keys and the on-disk kernel cache.

Key = sha256 over: a format tag, the kernel name, output kind, arch, the compile options (minus machine-specific
include paths), the toolchain fingerprint (NVRTC version + header/NVRTC wheel versions), the generated source and
the CONTENTS of every header it transitively includes from our include tree(s).  Includes are found by scanning
``#include "..."`` / ``#include <...>`` lines recursively (conditional includes are scanned too, which can only add
headers to the key, never miss one); names that do not resolve inside our trees are system/CUDA headers, covered by
the toolchain fingerprint.

Disk layout (root = :func:`vllm_humming.jit.paths.cache_dir`)::

    <root>/<key[:2]>/<key>.cubin   the binary (PTX text for output="ptx")
    <root>/<key[:2]>/<key>.json    metadata: name, arch, options, sha256 + size of the binary, NVRTC time, log
    <root>/<key[:2]>/<key>.cu      the generated source (for debugging)
    <root>/<key[:2]>/<key>.lock    per-key file lock held while compiling / writing

Every file is written to a temp file in the same directory and moved into place with ``os.replace``; the binary is
written before its metadata, and a reader accepts an entry only when the metadata parses, names this key and the
binary's size and sha256 match.  Anything else (truncated, corrupt, half-written) counts as a miss and is rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

__all__ = ["scan_headers", "compute_key", "DiskCache", "CACHE_FORMAT"]

CACHE_FORMAT = "humming-jit-v1"

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.MULTILINE)

# (path, inode, mtime_ns, size) -> (sha256 hex, [(delim, name), ...]); headers rarely change within a process.
_header_memo: Dict[Tuple[str, int, int, int], Tuple[str, List[Tuple[str, str]]]] = {}
_memo_lock = threading.Lock()


def _includes_of(text: str) -> List[Tuple[str, str]]:
    return [(m.group(1), m.group(2).strip()) for m in _INCLUDE_RE.finditer(text)]


def _read_header(path: str) -> Tuple[str, List[Tuple[str, str]]]:
    st = os.stat(path)
    mkey = (path, st.st_ino, st.st_mtime_ns, st.st_size)
    with _memo_lock:
        hit = _header_memo.get(mkey)
    if hit is not None:
        return hit
    with open(path, "rb") as f:
        data = f.read()
    res = (hashlib.sha256(data).hexdigest(), _includes_of(data.decode("utf-8", errors="replace")))
    # File timestamps are coarse (a few ms): a header rewritten twice within one tick keeps its mtime.  Like git's
    # "racily clean" rule, only memoize files whose mtime is safely in the past.
    if time.time_ns() - st.st_mtime_ns > 2_000_000_000:
        with _memo_lock:
            _header_memo[mkey] = res
    return res


@functools.lru_cache(maxsize=64)
def _norm_root(root: str) -> str:
    return os.path.realpath(root)


def _resolve(delim: str, name: str, from_dir: Optional[str], roots: Sequence[str]) -> Optional[Tuple[str, str]]:
    """Find ``name`` the way NVRTC would among OUR trees: quotes search the including file's folder first, then the
    include roots.  Returns (absolute path, root it lies under) or None (a system / CUDA header)."""
    cands = [from_dir] if delim == '"' and from_dir is not None else []
    cands.extend(roots)
    for base in cands:
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            for r in roots:
                if p.startswith(r + os.sep):
                    return p, r
            return None  # found outside our trees (e.g. a relative path escaping them): not ours
    return None


def scan_headers(source: str, roots: Sequence) -> List[Tuple[str, str]]:
    """Every header of our trees that ``source`` includes, transitively: sorted ``[(name relative to its root,
    sha256 of its contents)]``."""
    roots = [_norm_root(str(r)) for r in roots]
    found: Dict[str, Tuple[str, str]] = {}
    stack: List[Tuple[str, str, Optional[str]]] = [(d, n, None) for d, n in _includes_of(source)]
    while stack:
        delim, name, from_dir = stack.pop()
        r = _resolve(delim, name, from_dir, roots)
        if r is None:
            continue
        path, root = r
        if path in found:
            continue
        digest, incs = _read_header(path)
        found[path] = (path[len(root) + 1:].replace(os.sep, "/"), digest)
        parent = os.path.dirname(path)
        stack.extend((d, n, parent) for d, n in incs)
    return sorted(found.values())


def compute_key(*, name: str, output: str, arch: str, options: Iterable[str], toolchain: str, source: str,
                headers: Sequence[Tuple[str, str]]) -> str:
    h = hashlib.sha256()

    def put(tag: str, data) -> None:
        b = data if isinstance(data, bytes) else str(data).encode()
        h.update(tag.encode() + b"\0" + str(len(b)).encode() + b"\0" + b)

    put("format", CACHE_FORMAT)
    put("name", name)
    put("output", output)
    put("arch", arch)
    for o in options:
        put("option", o)
    put("toolchain", toolchain)
    put("source", source.encode())
    for rel, digest in headers:
        put("header", f"{rel}={digest}")
    return h.hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class DiskCache:
    """One cache root.  ``get`` validates the entry; ``put`` writes it atomically; ``lock`` is the per-key lock."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _dir(self, key: str) -> Path:
        return self.root / key[:2]

    def paths(self, key: str) -> Dict[str, Path]:
        d = self._dir(key)
        return {"bin": d / f"{key}.cubin", "meta": d / f"{key}.json", "src": d / f"{key}.cu",
                "lock": d / f"{key}.lock"}

    def lock(self, key: str, timeout: float = 900.0):
        from filelock import FileLock

        p = self.paths(key)["lock"]
        p.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(p), timeout=timeout)

    def get(self, key: str) -> Tuple[Optional[bytes], Optional[dict], str]:
        """-> (binary, metadata, status) with status "hit", "missing" or "corrupt: <why>"."""
        p = self.paths(key)
        try:
            meta_raw = p["meta"].read_bytes()
        except FileNotFoundError:
            return None, None, "missing" if not p["bin"].exists() else "corrupt: binary without metadata"
        except OSError as e:
            return None, None, f"corrupt: cannot read metadata ({e})"
        try:
            meta = json.loads(meta_raw)
        except ValueError:
            return None, None, "corrupt: metadata is not valid JSON"
        if not isinstance(meta, dict) or meta.get("key") != key or meta.get("format") != CACHE_FORMAT:
            return None, None, "corrupt: metadata names another key or format"
        try:
            data = p["bin"].read_bytes()
        except FileNotFoundError:
            return None, None, "corrupt: binary missing"
        except OSError as e:
            return None, None, f"corrupt: cannot read binary ({e})"
        if len(data) != meta.get("size"):
            return None, None, f"corrupt: binary has {len(data)} bytes, metadata says {meta.get('size')}"
        if hashlib.sha256(data).hexdigest() != meta.get("sha256"):
            return None, None, "corrupt: binary checksum mismatch"
        return data, meta, "hit"

    def put(self, key: str, data: bytes, meta: dict, source: Optional[str] = None) -> None:
        p = self.paths(key)
        p["bin"].parent.mkdir(parents=True, exist_ok=True)
        if source is not None:
            _atomic_write(p["src"], source.encode())
        _atomic_write(p["bin"], data)
        meta = dict(meta, format=CACHE_FORMAT, key=key, size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                    created=time.time())
        _atomic_write(p["meta"], json.dumps(meta, indent=1, sort_keys=True, default=str).encode())

    def entries(self) -> List[Path]:
        if not self.root.is_dir():
            return []
        return sorted(self.root.glob("??/*.json"))

    def size_bytes(self) -> int:
        if not self.root.is_dir():
            return 0
        total = 0
        for p in self.root.glob("??/*"):
            try:
                total += p.stat().st_size
            except OSError:
                pass
        return total

    def clear(self) -> int:
        """Delete every entry (not the root).  Returns the number of files removed."""
        n = 0
        if not self.root.is_dir():
            return 0
        for p in self.root.glob("??/*"):
            if p.suffix in (".cubin", ".json", ".cu", ".lock", ".tmp"):
                try:
                    p.unlink()
                    n += 1
                except OSError:
                    pass
        return n
