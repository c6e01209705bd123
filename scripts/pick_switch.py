"""Pick the fastest of several bench runs of the same cases (one per env setting) -- for device scripts that A/B an
experiment switch and then run the bench of record under the winner in the same call.

    python scripts/pick_switch.py MIN_GAIN NAME=FILE.json [NAME=FILE.json ...]

Compares the geomean of "ours" us over every (shape, M) case present in all files; prints the NAME of the fastest
run if it beats the FIRST (the baseline) by at least MIN_GAIN (e.g. 0.02 = 2 %), else the baseline's NAME.  A table of
each run's geomean goes to stderr."""
import json
import math
import sys


def ours(path):
    d = json.load(open(path))
    return {(r["shape"], r["m"]): r["us"] for r in d["records"]
            if r["impl"] == "ours" and r.get("status") == "ok" and r.get("us")}


def main(argv):
    gain = float(argv[0])
    runs = [(a.split("=", 1)[0], ours(a.split("=", 1)[1])) for a in argv[1:]]
    common = set.intersection(*(set(r) for _, r in runs))
    if not common:
        print(runs[0][0])
        return
    geo = {name: math.exp(sum(math.log(r[c]) for c in common) / len(common)) for name, r in runs}
    for name, _ in runs:
        print(f"{name}: geomean {geo[name]:.2f} us over {len(common)} cases", file=sys.stderr)
    base = runs[0][0]
    best = min(geo, key=geo.get)
    print(best if geo[best] <= geo[base] * (1 - gain) else base)


if __name__ == "__main__":
    main(sys.argv[1:])
