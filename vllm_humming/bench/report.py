"""Bench results: the JSON document, the derived ratios, and the printed tables.

The JSON keeps every raw number (each replay's milliseconds, each eager sample) plus the environment (device, torch,
CUDA, git commit, date, the exact command line).  Ratios are derived from the raw records:

* ``x_cublas``   = cuBLAS bf16 us / implementation us   (same shape and M; > 1 means faster than cuBLAS)
* ``x_upstream`` = upstream us / our us                  (> 1 means we are faster than upstream humming)
* geomeans are over the shapes at one M, over the shapes where both numbers exist (``n`` says how many).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import shlex
import subprocess
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .formats import FORMATS
from .harness import geomean

__all__ = ["SCHEMA", "new_results", "environment", "git_info", "source_hash", "derive", "format_report", "format_format_table",
           "format_cublas_table", "format_summary", "write_json", "cell_text", "merge_results"]

SCHEMA = "vllm-humming-bench/1"


# ------------------------------------------------------------------------------------------------ environment
def source_hash() -> str:
    """sha256 (first 16 hex digits) over the code that decides a measurement: every ``.py`` file of this package and
    every header of the CUDA include tree, by relative path and content.  Unlike the git commit it needs no git
    metadata -- a copied working tree (the device tool's) hashes the same as the checkout it came from."""
    import hashlib

    from ..jit.paths import include_dir

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for root, tag, suffix in ((pkg, "py", ".py"), (str(include_dir()), "cuh", ".cuh")):
        files = []
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if n.endswith(suffix)]
        for f in sorted(files, key=lambda f: os.path.relpath(f, root)):
            h.update(f"{tag}:{os.path.relpath(f, root)}\0".encode())
            with open(f, "rb") as fh:
                h.update(fh.read())
            h.update(b"\0")
    return h.hexdigest()[:16]


def git_info(repo_dir: Optional[str] = None) -> Dict[str, Any]:
    """Commit and dirty flag of the checkout this package runs from (None when not a git checkout), plus
    :func:`source_hash` (always set)."""
    repo_dir = repo_dir or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    info: Dict[str, Any] = {"commit": None, "dirty": None}
    try:
        info["source_sha"] = source_hash()
    except Exception:  # noqa: BLE001 - never fail a bench over its provenance line
        info["source_sha"] = None
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo_dir, capture_output=True, text=True,
                                        timeout=10).stdout.strip() or None
        if info["commit"]:
            st = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo_dir,
                                capture_output=True, text=True, timeout=10)
            info["dirty"] = bool(st.stdout.strip()) if st.returncode == 0 else None
    except Exception:
        pass
    return info


def environment() -> Dict[str, Any]:
    """Device and software versions; works without CUDA (device fields are then None)."""
    import torch

    from .. import __version__

    env: Dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
                           "vllm_humming": __version__, "host": platform.node(), "device": None}
    if torch.cuda.is_available():
        i = torch.cuda.current_device()
        p = torch.cuda.get_device_properties(i)
        env["device"] = {"name": torch.cuda.get_device_name(i), "capability": "%d.%d" % torch.cuda.get_device_capability(i),
                         "sm_count": getattr(p, "multi_processor_count", None),
                         "memory_bytes": getattr(p, "total_memory", None),
                         "l2_cache_bytes": getattr(p, "L2_cache_size", None)}
        try:
            env["driver"] = torch.cuda.driver_version() if hasattr(torch.cuda, "driver_version") else None
        except Exception:
            env["driver"] = None
    for dist in ("cuda-bindings", "nvidia-cuda-nvrtc", "humming-kernels"):
        try:
            from importlib.metadata import version

            env[dist] = version(dist)
        except Exception:
            env[dist] = None
    return env


def new_results(settings: Dict[str, Any], argv: Sequence[str], env: Optional[Dict[str, Any]] = None,
                git: Optional[Dict[str, Any]] = None, upstream: Optional[Dict[str, Any]] = None,
                now: Optional[_dt.datetime] = None) -> Dict[str, Any]:
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return {
        "schema": SCHEMA,
        "meta": {
            "date_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(shlex.quote(a) for a in argv),
            "argv": list(argv),
            "git": git if git is not None else git_info(),
            "env": env if env is not None else environment(),
            "upstream": upstream or {"available": False, "reason": "not requested"},
            "method": ("weights: one random bf16 matrix per shape, quantized per format; layer copies until their "
                       "weight bytes exceed min_bytes; x random bf16 (no zeros); every copy called once inside one "
                       "captured CUDA graph; replays timed with CUDA events; us per GEMM = median replay / copies; "
                       "TB/s = quantized weight bytes (codes+scales+zeros) / us; eager = host+device per call of one "
                       "layer, back-to-back, median"),
        },
        "settings": dict(settings),
        "records": [],
        "cases": [],
        "cold_compile": {},
    }


# ------------------------------------------------------------------------------------------------ derived numbers
def _index(records: Iterable[Dict[str, Any]]) -> Dict[Tuple[Optional[str], str, str, int], Dict[str, Any]]:
    return {(r.get("format"), r["impl"], r["shape"], int(r["m"])): r for r in records}


def _us(rec: Optional[Dict[str, Any]]) -> Optional[float]:
    if rec is None or rec.get("status") != "ok" or not rec.get("us"):
        return None
    return float(rec["us"])


def derive(results: Dict[str, Any]) -> Dict[str, Any]:
    """Per format: cells[impl][shape][m] with us/tbps/ratios, and geomeans per impl per M."""
    settings = results.get("settings", {})
    records = results.get("records", [])
    idx = _index(records)
    shapes = settings.get("shapes") or sorted({r["shape"] for r in records})
    ms = settings.get("ms") or sorted({int(r["m"]) for r in records})
    fmts = settings.get("formats") or sorted({r["format"] for r in records if r.get("format")})
    out: Dict[str, Any] = {"cublas": {}, "formats": {}}
    for shape in shapes:
        for m in ms:
            rec = idx.get((None, "cublas", shape, m))
            if rec is not None:
                out["cublas"].setdefault(shape, {})[str(m)] = {k: rec.get(k) for k in ("status", "us", "tbps",
                                                                                        "eager_us", "reason")}
    for fmt in fmts:
        f_out: Dict[str, Any] = {"cells": {}, "geomean": {}}
        for impl in ("ours", "upstream"):
            cells: Dict[str, Dict[str, Any]] = {}
            geo: Dict[str, Any] = {}
            for m in ms:
                xs_c, xs_u = [], []
                for shape in shapes:
                    rec = idx.get((fmt, impl, shape, m))
                    if rec is None:
                        continue
                    cub = _us(idx.get((None, "cublas", shape, m)))
                    mine = _us(rec)
                    cell = {"status": rec.get("status"), "reason": rec.get("reason", ""), "us": mine,
                            "tbps": rec.get("tbps"), "eager_us": rec.get("eager_us"),
                            "x_cublas": (cub / mine) if (cub and mine) else None}
                    if impl == "ours":
                        up = _us(idx.get((fmt, "upstream", shape, m)))
                        cell["x_upstream"] = (up / mine) if (up and mine) else None
                        if cell["x_upstream"] is not None:
                            xs_u.append(cell["x_upstream"])
                    if cell["x_cublas"] is not None:
                        xs_c.append(cell["x_cublas"])
                    cells.setdefault(shape, {})[str(m)] = cell
                g = {"x_cublas": geomean(xs_c), "n_cublas": len(xs_c)}
                if impl == "ours":
                    g.update(x_upstream=geomean(xs_u), n_upstream=len(xs_u))
                geo[str(m)] = g
            f_out["cells"][impl] = cells
            f_out["geomean"][impl] = geo
        out["formats"][fmt] = f_out
    out["n_shapes"] = len(shapes)
    return out


# ------------------------------------------------------------------------------------------------ text tables
_STATUS_SHORT = {"fallback": "fallback", "unsupported": "unsupported", "unavailable": "unavailable",
                 "error": "ERROR", "skipped": "skipped"}


def _x(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}x"


def cell_text(cell: Optional[Dict[str, Any]], with_upstream: bool = True) -> str:
    """``us TB/s xcuBLAS xupstream`` for a measured cell, else the status word."""
    if cell is None:
        return ""
    if cell.get("status") != "ok" or cell.get("us") is None:
        return _STATUS_SHORT.get(cell.get("status"), str(cell.get("status")))
    parts = [f"{cell['us']:.1f}", "-" if cell.get("tbps") is None else f"{cell['tbps']:.2f}", _x(cell.get("x_cublas"))]
    if with_upstream:
        parts.append(_x(cell.get("x_upstream")))
    return " ".join(parts)


def _geo_text(v: Optional[float], n: int, n_total: int) -> str:
    if v is None:
        return "-"
    return f"{v:.2f}x" + ("" if n == n_total else f"*{n}")


def _table(header: List[str], rows: List[List[str]], align_right_from: int = 0) -> str:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    def fmt_row(r):
        return " | ".join(str(c).rjust(w) if i >= align_right_from else str(c).ljust(w)
                          for i, (c, w) in enumerate(zip(r, widths)))
    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([fmt_row(header), sep] + [fmt_row(r) for r in rows])


def format_cublas_table(results: Dict[str, Any], derived: Dict[str, Any]) -> str:
    shapes, ms = results["settings"]["shapes"], results["settings"]["ms"]
    rows = []
    for m in ms:
        row = [str(m)]
        for shape in shapes:
            c = derived["cublas"].get(shape, {}).get(str(m))
            if c is None:
                row.append("")
            elif c.get("status") != "ok":
                row.append(_STATUS_SHORT.get(c["status"], c["status"]))
            else:
                row.append(f"{c['us']:.1f} us {c['tbps']:.2f} TB/s")
        rows.append(row)
    return "cuBLAS bf16 (torch.nn.functional.linear), us per GEMM and TB/s of bf16 weight bytes\n" + \
        _table(["M"] + shapes, rows, 1)


def _fmt_heading(results: Dict[str, Any], fmt: str) -> List[str]:
    f = FORMATS.get(fmt)
    lines = [f"== {fmt}" + (f" -- {f.label}   [{f.weight_desc} | {f.act_desc}]" if f else "")]
    cold = results.get("cold_compile", {}).get(fmt)
    if cold:
        parts = []
        for impl in ("ours", "upstream"):
            d = cold.get(impl)
            if not d:
                continue
            if d.get("status") == "ok":
                s = f"{impl} {d['seconds']:.2f} s"
                if d.get("kernels") is not None:
                    s += f" ({d['kernels']} kernels)"
            else:
                s = f"{impl} {d.get('status')}"
            parts.append(s)
        shape = next((d.get("shape") for d in cold.values() if d), "")
        m = next((d.get("m") for d in cold.values() if d), "")
        lines.append(f"   cold compile (empty cache, first prepare+call, {shape} M={m}): " + " | ".join(parts))
    for c in results.get("cases", []):
        if c.get("format") == fmt and c.get("impl") == "ours":
            chk = (c.get("info") or {}).get("check")
            if chk and not chk.get("ok"):
                what = chk.get("error") or f"rel err {chk.get('rel_err'):.3g} > tol {chk.get('tol')}"
                lines.append(f"   ! {c['shape']}: our output does not match the reference ({what})")
    for impl in ("ours", "upstream"):
        # one line per distinct (status, reason), naming the shapes it applies to
        groups: Dict[Tuple[str, str], List[str]] = {}
        for c in results.get("cases", []):
            if c.get("format") == fmt and c.get("impl") == impl and c.get("status") not in ("ok", None):
                groups.setdefault((c["status"], c.get("reason", "")), []).append(c["shape"])
        for (status, reason), shapes in groups.items():
            lines.append(f"   {impl} {','.join(shapes)}: {status}: {reason}")
    return lines


def format_format_table(results: Dict[str, Any], derived: Dict[str, Any], fmt: str) -> str:
    shapes, ms = results["settings"]["shapes"], results["settings"]["ms"]
    with_up = bool(results["settings"].get("upstream"))
    d = derived["formats"].get(fmt, {})
    ours = d.get("cells", {}).get("ours", {})
    geo = d.get("geomean", {}).get("ours", {})
    bad_check = {c["shape"] for c in results.get("cases", []) if c.get("format") == fmt and c.get("impl") == "ours"
                 and (c.get("info") or {}).get("check") and not c["info"]["check"].get("ok")}
    header = ["M"] + [s + (" !" if s in bad_check else "") for s in shapes] + ["geo x cuBLAS"]
    if with_up:
        header.append("geo x upstream")
    rows = []
    n_total = len(shapes)
    for m in ms:
        row = [str(m)] + [cell_text(ours.get(s, {}).get(str(m)), with_up) for s in shapes]
        g = geo.get(str(m), {})
        row.append(_geo_text(g.get("x_cublas"), g.get("n_cublas", 0), n_total))
        if with_up:
            row.append(_geo_text(g.get("x_upstream"), g.get("n_upstream", 0), n_total))
        rows.append(row)
    legend = "   cells: us/GEMM  TB/s  x cuBLAS" + ("  x upstream" if with_up else "") + \
             "   (*n: geomean over n shapes only)"
    out = _fmt_heading(results, fmt) + [legend, _table(header, rows, 1)]
    eager_rows = []
    for m in ms:
        row = [str(m)]
        any_val = False
        for s in shapes:
            vals = []
            for impl in ("ours", "upstream") if with_up else ("ours",):
                c = d.get("cells", {}).get(impl, {}).get(s, {}).get(str(m))
                v = None if c is None else c.get("eager_us")
                vals.append("-" if v is None else f"{v:.1f}")
                any_val = any_val or v is not None
            row.append(" / ".join(vals))
        if any_val:
            eager_rows.append(row)
    if eager_rows:
        out.append("   eager us per call, no graph (" + ("ours / upstream" if with_up else "ours") + ")")
        out.append(_table(["M"] + shapes, eager_rows, 1))
    return "\n".join(out)


def format_summary(results: Dict[str, Any], derived: Dict[str, Any]) -> str:
    ms = results["settings"]["ms"]
    with_up = bool(results["settings"].get("upstream"))
    n_total = len(results["settings"]["shapes"])
    rows = []
    for fmt in results["settings"]["formats"]:
        d = derived["formats"].get(fmt, {})
        row = [fmt]
        for m in ms:
            go = d.get("geomean", {}).get("ours", {}).get(str(m), {})
            t = _geo_text(go.get("x_cublas"), go.get("n_cublas", 0), n_total)
            if with_up:
                gu = d.get("geomean", {}).get("upstream", {}).get(str(m), {})
                t += " / " + _geo_text(gu.get("x_cublas"), gu.get("n_cublas", 0), n_total)
            row.append(t)
        rows.append(row)
    title = "Summary: geomean over shapes of x cuBLAS bf16 (" + ("ours / upstream humming" if with_up else "ours") + ")"
    return title + "\n" + _table(["format"] + [f"M={m}" for m in ms], rows, 1)


def format_report(results: Dict[str, Any], derived: Optional[Dict[str, Any]] = None) -> str:
    derived = derived or derive(results)
    meta = results.get("meta", {})
    env = meta.get("env", {})
    dev = env.get("device") or {}
    git = meta.get("git", {})
    up = meta.get("upstream", {})
    s = results.get("settings", {})
    head = [f"vllm-humming bench  {meta.get('date_utc', '')}",
            f"device: {dev.get('name', 'none')} (sm {dev.get('capability', '?')})  torch {env.get('torch')}  "
            f"CUDA {env.get('cuda')}  commit {str(git.get('commit'))[:12]}{'+dirty' if git.get('dirty') else ''}"
            f"  source {git.get('source_sha') or '?'}",
            "upstream humming: " + (f"{up.get('version')}" if up.get("available") else str(up.get("reason"))),
            f"method: CUDA-graph replay of {s.get('min_bytes', 0) / 2**20:.0f} MiB+ of layer copies (cold L2), "
            f"median of {s.get('replays')} replays / copies"
            + (f" after {s['warmup_ms']:g} ms of warm-up replays" if s.get("warmup_ms") else "")]
    parts = ["\n".join(head), format_cublas_table(results, derived)]
    for fmt in s.get("formats", []):
        parts.append(format_format_table(results, derived, fmt))
    parts.append(format_summary(results, derived))
    if results.get("aborted"):
        parts.append(f"ABORTED: {results['aborted']}  (tables above are partial)")
    return "\n\n".join(parts)


def _union(lists: Iterable[Iterable[Any]]) -> List[Any]:
    out: List[Any] = []
    for xs in lists:
        for x in xs or []:
            if x not in out:
                out.append(x)
    return out


def merge_results(docs: Sequence[Dict[str, Any]], sources: Sequence[str] = ()) -> Dict[str, Any]:
    """One results document from several runs (e.g. a run split by --formats to fit a time limit).

    Formats, shapes and Ms are the ordered union; for a cell measured more than once the LAST document wins (so
    list a re-run after the run it replaces).  ``meta`` is the first document's plus ``merged_from``.
    """
    if not docs:
        raise ValueError("nothing to merge")
    out: Dict[str, Any] = {"schema": SCHEMA, "meta": dict(docs[0].get("meta", {})), "settings": dict(docs[0].get("settings", {})),
                           "records": [], "cases": [], "cold_compile": {}}
    for key in ("formats", "shapes", "ms"):
        out["settings"][key] = _union(d.get("settings", {}).get(key, []) for d in docs)
    out["settings"]["upstream"] = any(d.get("settings", {}).get("upstream") for d in docs)
    recs: Dict[Tuple, Dict[str, Any]] = {}
    cases: Dict[Tuple, Dict[str, Any]] = {}
    for d in docs:
        for r in d.get("records", []):
            recs[(r.get("format"), r["impl"], r["shape"], int(r["m"]))] = r
        for c in d.get("cases", []):
            cases[(c.get("format"), c["impl"], c["shape"])] = c
        for fmt, entry in d.get("cold_compile", {}).items():
            out["cold_compile"].setdefault(fmt, {}).update(entry)
        if d.get("aborted"):
            out.setdefault("aborted_runs", []).append(d["aborted"])
    out["records"], out["cases"] = list(recs.values()), list(cases.values())
    out["meta"]["merged_from"] = [{"source": s, "date_utc": d.get("meta", {}).get("date_utc"),
                                   "command": d.get("meta", {}).get("command"),
                                   "commit": (d.get("meta", {}).get("git") or {}).get("commit")}
                                  for s, d in zip(list(sources) + [None] * len(docs), docs)]
    return out


def write_json(results: Dict[str, Any], path: str) -> None:
    """Write the results (with the derived section refreshed) atomically."""
    doc = _clean(dict(results, derived=derive(results)))
    tmp = f"{path}.tmp"
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, default=_json_default, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)


def _clean(o):
    """Non-finite floats become null so the file is strict JSON."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def _json_default(o):
    if isinstance(o, float):
        return o
    try:
        import torch

        if isinstance(o, torch.Tensor):
            return o.tolist()
        if isinstance(o, torch.dtype):
            return str(o)
    except Exception:
        pass
    return str(o)
