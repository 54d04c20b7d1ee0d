"""Summarise compare.sh's pairs: per benchmark, the median ns/attempt of
each side, the median of the adjacent pairs' ratios with their range,
and the ratio of the fastest rounds."""
import collections
import re
import statistics as st
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    side = f[0]
    name = re.sub(r"-\d+$", "", f[1].removeprefix("BenchmarkCmp13/"))
    runs[(name, side)].append(float(re.search(r"([\d.]+) ns/attempt", line).group(1)))
base = sys.argv[2] if len(sys.argv) > 2 else "base"
print(f"{'benchmark':20s} {base:>9s} {'new':>9s}  {'pairs: median ratio (range)':28s} {'fastest':>8s}")
for name in dict.fromkeys(n for n, _ in runs):
    old, new = runs[(name, "old")], runs[(name, "new")]
    ratios = sorted(b / a for a, b in zip(old, new))
    print(f"{name:20s} {st.median(old):9.1f} {st.median(new):9.1f}  "
          f"{st.median(ratios):6.3f} ({ratios[0]:.2f}..{ratios[-1]:.2f}){'':9s} {min(new) / min(old):8.3f}")
