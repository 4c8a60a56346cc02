#!/usr/bin/env python3
"""summarize.py — one row per result file in results/ (rounds -rN), and the medians."""
import glob, re, statistics, os

def num(pat, s, default=None):
    m = re.search(pat, s)
    return float(m.group(1)) if m else default

rows = []
for f in sorted(glob.glob(os.path.join(os.path.dirname(__file__) or ".", "results", "*-r[0-9]*.txt"))):
    name = os.path.basename(f)[:-4]
    who, mode, rnd = name.split("-")
    s = open(f).read()
    load = num(r"load(?: average)? before: ([\d.]+)", s)
    if who == "river":
        r = dict(re.findall(r"(\w+)=([\w.]+)", s[s.find("RESULT"):].splitlines()[0])) if "RESULT" in s else None
        if not r:
            continue
        n = float(r["deliveries"])
        rows.append((mode, rnd, who, float(r["per_sec"]), (float(r["peer_cpu_s"]) + float(r["emu_cpu_s"])) * 1e6 / n,
                     float(r["pg_us"]), float(r["pg_own_cpu_s"]) * 1e6 / n, float(r["machine_us"]), load))
    else:
        rate = num(r"deliveries sent\s+\d+ in [\d.]+ s = (\d+)/s", s)
        if rate is None:
            continue
        cpu = re.findall(r"^server\s+CPU ([\d.]+) s", s, re.M)[-1]
        rows.append((mode, rnd, who, rate, float(cpu) * 1e6 / 100000,
                     num(r"PostgreSQL's processes (\d+)", s, float("nan")), float("nan"),
                     num(r"= (\d+) µs per delivery", s), load))

print(f"{'mode':11} {'round':5} {'who':6} {'deliv/s':>8} {'proc µs':>8} {'pg µs':>6} {'pg own':>6} {'machine':>8} {'load':>5}")
for r in sorted(rows):
    print(f"{r[0]:11} {r[1]:5} {r[2]:6} {r[3]:8.0f} {r[4]:8.0f} {r[5]:6.0f} {r[6]:6.0f} {r[7]:8.0f} {r[8]:5.1f}")
print("\nproc µs: River = peer process + emulator; Herald = bench process (server + emulator + load generator)")
for mode in ("continuous", "backlog"):
    ratios = []
    for rnd in sorted({r[1] for r in rows if r[0] == mode}):
        h = [r for r in rows if r[0] == mode and r[1] == rnd and r[2] == "herald"]
        v = [r for r in rows if r[0] == mode and r[1] == rnd and r[2] == "river"]
        if h and v:
            ratios.append(h[0][3] / v[0][3])
            print(f"{mode} {rnd}: Herald ÷ River deliveries/s = {ratios[-1]:.2f}")
    if ratios:
        print(f"{mode}: median ratio {statistics.median(ratios):.2f} over {len(ratios)} rounds; "
              f"median deliveries/s Herald {statistics.median(r[3] for r in rows if r[0]==mode and r[2]=='herald'):.0f}, "
              f"River {statistics.median(r[3] for r in rows if r[0]==mode and r[2]=='river'):.0f}")
