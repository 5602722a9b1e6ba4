#!/usr/bin/env python3
"""Side-by-side container benchmarks: rocload against clang-offload-bundler and zstd on the
same large multi-target fat binary (scripts/make-big-bundle.sh builds it).

For each command: median wall time over N runs and peak RSS (from /usr/bin/time), printed
as a Markdown table for the README. Usage: scripts/bench-containers.py [--runs 5]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM = "/usr/lib/llvm-19/bin"


def measure(cmd, runs):
    walls, rss = [], []
    for _ in range(runs):
        with tempfile.NamedTemporaryFile(mode="r") as t:
            start = time.perf_counter()
            subprocess.run(["/usr/bin/time", "-o", t.name, "-f", "%M"] + cmd, check=True,
                           stdout=subprocess.DEVNULL)
            walls.append(time.perf_counter() - start)
            rss.append(int(t.read().strip().splitlines()[-1]))
    return statistics.median(walls), max(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--input", default=os.path.join(ROOT, "bench-data", "big.ccob"))
    ap.add_argument("--small", default=os.path.join(ROOT, "tests", "fixtures", "vadd-compressed.fatbin"))
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    rocload = os.path.join(ROOT, "target", "release", "rocload")
    listing = json.loads(subprocess.run([rocload, "ls", "--json", args.input], check=True,
                                        capture_output=True, text=True).stdout)
    bundle = listing["bundles"][0]
    entries = sorted((e for e in bundle["entries"] if e["size"] > 0), key=lambda e: e["offset"])
    early, last = entries[0]["id"], entries[-1]["id"]
    out = tempfile.mkdtemp()
    rows = []

    def compare(label, ours, theirs):
        (tw, tr), (ow, orss) = measure(theirs, args.runs), measure(ours, args.runs)
        rows.append((label, ow, orss, tw, tr))

    for label, target in (("extract early target " + early.split("--")[-1], early),
                          ("extract last target " + last.split("--")[-1], last)):
        compare(label,
                [rocload, "extract", args.input, "--target", target, "-o", f"{out}/ours.co"],
                [f"{LLVM}/clang-offload-bundler", "-unbundle", "-type=o", f"-input={args.input}",
                 f"-targets={target}", f"-output={out}/theirs.co"])
        subprocess.run(["cmp", f"{out}/ours.co", f"{out}/theirs.co"], check=True)
    # Full inflation: the raw zstd payload after the CCOB header, decoded by zstd itself.
    header_len = {1: 20, 2: 24, 3: 32}[bundle["ccob_version"]]
    with open(args.input, "rb") as f:
        f.seek(bundle["offset"] + header_len)
        payload = f.read(bundle["compressed_size"] - header_len)
    with open(f"{out}/payload.zst", "wb") as f:
        f.write(payload)
    compare("inflate whole bundle (no hash check)",
            [rocload, "inflate", "--no-verify", args.input, "-o", "/dev/null"],
            ["zstd", "-d", "-q", "-f", "--memory=2048MB", f"{out}/payload.zst", "-o", "/dev/null"])
    compare("inflate whole bundle (MD5 checked)",
            [rocload, "inflate", args.input, "-o", "/dev/null"],
            ["zstd", "-d", "-q", "-f", "--memory=2048MB", f"{out}/payload.zst", "-o", "/dev/null"])
    ls_big = measure([rocload, "ls", args.input], args.runs)
    ls_small = measure([rocload, "ls", args.small], args.runs) if os.path.exists(args.small) else None

    size_mb = bundle["size"] / 1e6
    comp_mb = bundle["compressed_size"] / 1e6
    print(f"Input: {args.input}: {len(entries)} targets, {size_mb:.0f} MB uncompressed, "
          f"{comp_mb:.0f} MB compressed (CCOB v{bundle['ccob_version']} {bundle['compression']}).")
    print()
    print("| operation | rocload wall | rocload peak RSS | reference wall | reference peak RSS | wall ratio | RSS ratio |")
    print("|---|---|---|---|---|---|---|")
    for label, ow, orss, tw, tr in rows:
        print(f"| {label} | {ow*1e3:.0f} ms | {orss/1024:.0f} MB | {tw*1e3:.0f} ms | {tr/1024:.0f} MB "
              f"| {ow/tw:.2f}x | {orss/tr:.2f}x |")
    print()
    print(f"`rocload ls` on it: {ls_big[0]*1e3:.1f} ms wall (whole process), peak RSS {ls_big[1]/1024:.0f} MB", end="")
    if ls_small:
        print(f"; on a {os.path.getsize(args.small)} B fixture: {ls_small[0]*1e3:.1f} ms", end="")
    print(".")
    print(f"(reference: clang-offload-bundler 19 for extraction, `zstd -d` for inflation; "
          f"median of {args.runs} runs, {os.cpu_count()} cores)")


if __name__ == "__main__":
    sys.exit(main())
