#!/usr/bin/env python3
"""Side-by-side container benchmarks: rocload against clang-offload-bundler and zstd on the
same large multi-target fat binary (scripts/make-big-bundle.sh builds it).

For each command: median wall and CPU time over N runs (ours and the reference alternate, so
a busy machine slows both alike) and peak RSS, from /usr/bin/time, printed as a Markdown table
for the README with the issue #11 targets. Usage:
  scripts/make-big-bundle.sh && scripts/bench-containers.py [--runs 7] [--input FILE]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM = "/usr/lib/llvm-19/bin"


def run_once(cmd):
    """Wall seconds, peak RSS (KB) and CPU seconds (user + system) of one run."""
    with tempfile.NamedTemporaryFile(mode="r") as t:
        start = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-o", t.name, "-f", "%M %U %S"] + cmd, check=True,
                       stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        rss, user, system = t.read().strip().splitlines()[-1].split()
    return wall, int(rss), float(user) + float(system)


def compare_runs(ours, theirs, runs):
    """Runs both commands alternately (so load on a shared machine hits both alike) and
    returns (ours, theirs) as (median wall, max RSS, median CPU)."""
    a, b = [], []
    for _ in range(runs):
        b.append(run_once(theirs))
        a.append(run_once(ours))
    summary = lambda xs: (statistics.median(x[0] for x in xs), max(x[1] for x in xs),
                          statistics.median(x[2] for x in xs))
    return summary(a), summary(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--input", default=os.path.join(ROOT, "bench-data", "big.ccob"))
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "rocload-cli"], cwd=ROOT, check=True)
    rocload = os.path.join(ROOT, "target", "release", "rocload")
    bundler = os.path.join(LLVM, "clang-offload-bundler")
    listing = json.loads(subprocess.run([rocload, "ls", "--json", args.input], check=True,
                                        capture_output=True, text=True).stdout)
    bundle = listing["bundles"][0]
    entries = sorted((e for e in bundle["entries"] if e["size"] > 0), key=lambda e: e["offset"])
    early, last = entries[0]["id"], entries[-1]["id"]
    out = tempfile.mkdtemp()
    rows = []

    def compare(label, ours, theirs, target=None):
        o, t = compare_runs(ours, theirs, args.runs)
        rows.append((label, o, t, target))

    def unbundle(target):
        return [bundler, "-unbundle", "-type=o", f"-input={args.input}", f"-targets={target}",
                f"-output={out}/theirs.co"]

    def extract(target, *flags):
        return [rocload, *flags, "extract", args.input, "--target", target, "-o", f"{out}/ours.co"]

    short = lambda i: i.split("--")[-1]
    compare(f"extract the early target {short(early)}", extract(early), unbundle(early),
            "wall <= 0.1x")
    subprocess.run(["cmp", f"{out}/ours.co", f"{out}/theirs.co"], check=True)
    compare(f"extract the last target {short(last)}", extract(last), unbundle(last),
            "wall <= 0.6x, RSS <= 0.35x")
    subprocess.run(["cmp", f"{out}/ours.co", f"{out}/theirs.co"], check=True)
    compare(f"extract the last target, `--verify` (MD5)", extract(last, "--verify"),
            unbundle(last))
    # Full inflation: the raw zstd payload after the CCOB header, decoded by zstd itself.
    header_len = {1: 20, 2: 24, 3: 32}[bundle["ccob_version"]]
    with open(args.input, "rb") as f:
        f.seek(bundle["offset"] + header_len)
        payload = f.read(bundle["compressed_size"] - header_len)
    with open(f"{out}/payload.zst", "wb") as f:
        f.write(payload)
    zstd = ["zstd", "-d", "-q", "-f", "--long=31", f"{out}/payload.zst", "-o", "/dev/null"]
    compare("inflate the whole bundle (vs `zstd -d --long=31`)",
            [rocload, "inflate", args.input, "-o", "/dev/null"], zstd, "wall <= 1.1x")
    compare("inflate the whole bundle, `--verify` (MD5)",
            [rocload, "--verify", "inflate", args.input, "-o", "/dev/null"], zstd)
    ls = compare_runs([rocload, "ls", args.input], ["true"], args.runs)[0]

    size_mb = bundle["size"] / 1e6
    comp_mb = bundle["compressed_size"] / 1e6
    print(f"Input: {os.path.relpath(args.input, ROOT)}: {len(entries)} targets, {size_mb:.0f} MB "
          f"inflated, {comp_mb:.0f} MB compressed (CCOB v{bundle['ccob_version']} "
          f"{bundle['compression']}); median of {args.runs} alternating runs, {os.cpu_count()} cores.")
    print()
    print("| operation | rocload wall / CPU / RSS | reference wall / CPU / RSS | wall | CPU | RSS | target |")
    print("|---|---|---|---|---|---|---|")
    for label, (ow, orss, ocpu), (tw, trss, tcpu), target in rows:
        print(f"| {label} | {ow*1e3:.0f} ms / {ocpu*1e3:.0f} ms / {orss/1024:.0f} MB "
              f"| {tw*1e3:.0f} ms / {tcpu*1e3:.0f} ms / {trss/1024:.0f} MB "
              f"| {ow/tw:.2f}x | {ocpu/max(tcpu, 1e-3):.2f}x | {orss/trss:.2f}x | {target or ''} |")
    print()
    print(f"`rocload ls`: {ls[0]*1e3:.1f} ms wall, {ls[1]/1024:.0f} MB peak RSS.")
    print("References: clang-offload-bundler 19 -unbundle for extraction, zstd -d --long=31 for "
          "inflation (writing to /dev/null, as rocload inflate -o /dev/null does).")


if __name__ == "__main__":
    sys.exit(main())
