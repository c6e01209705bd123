"""Summarize an `ncu --page source --csv --print-source sass` dump: total PC samples per stall reason, then the SASS
instructions with the most samples, each with its top reasons and (--context N) the N instructions before it.
usage: python3 scripts/ncu_top.py FILE.csv [TOP] [--context N]"""
import csv, sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if not a.startswith("--")]
ctx = int(sys.argv[sys.argv.index("--context") + 1]) if "--context" in sys.argv else 0
if ctx:
    args = [a for a in args if a != str(ctx)]
path = args[0]
top = int(args[1]) if len(args) > 1 else 30
with open(path, newline="", errors="replace") as f:
    lines = f.read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"Address"'))
rows = list(csv.reader(lines[start:]))
hdr, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
col = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


tot_i = col["Warp Stall Sampling (All Samples)"]
tot = sum(num(r[tot_i]) for r in body)
agg = defaultdict(float)
for r in body:
    for h in reasons:
        agg[h] += num(r[col[h]])
print(f"{path}: {len(body)} instructions, {tot:.0f} samples")
print("reasons:", ", ".join(f"{k[6:]}={100 * v / max(tot, 1):.1f}%" for k, v in sorted(agg.items(), key=lambda kv: -kv[1])
                            if v > 0.005 * tot))
order = sorted(range(len(body)), key=lambda i: -num(body[i][tot_i]))
for i in order[:top]:
    r = body[i]
    s = num(r[tot_i])
    why = sorted(((num(r[col[h]]), h[6:]) for h in reasons), reverse=True)[:3]
    why = " ".join(f"{w}={v:.0f}" for v, w in why if v > 0)
    if ctx:
        for j in range(max(0, i - ctx), i):
            print(f"{'':21}  {body[j][1].strip()[:80]}")
    print(f"{s:7.0f} {100 * s / max(tot, 1):5.1f}%  [{i:5d}] {r[1].strip()[:72]:72}  {why}")
    if ctx:
        print()
