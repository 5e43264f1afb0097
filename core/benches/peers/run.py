#!/usr/bin/env python3
"""Resume of the same sessions by sessionkit and by a Node agent, in one run.

Generates 1, 50 and 200 MiB sessions once (through the sessionkit API, with the
transcript generator of core/benches/common), then for each size runs, in fresh
processes and alternating the order from round to round:

  raw         resume_peak raw     std::fs::read of the log (for scale)
  sessionkit  resume_peak resume  Store::read_session(id)?.active_path()?
  node        node_resume.js      readFileSync + split + JSON.parse + parentId walk

Each child times its own resume in-process (process start-up excluded) and reports
its peak RSS. Medians are printed, with the ratios. The machine this was written on
is shared and noisy (2 cores), hence fresh processes, alternation and medians.

    python3 core/benches/peers/run.py [--sizes 1,50,200] [--runs 7] [--json out.json]

With --op fork, the same for a fork at the session's head: std::fs::copy of the
log (for scale), Store::fork_session (resume_peak fork), and node_fork.js
(readFileSync + split + JSON.parse, sessionId set, JSON.stringify, writeFileSync).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
MIB = 1 << 20


def run_json(cmd):
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = (time.perf_counter() - t) * 1e3
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["wall_ms"] = wall
    return r


def target_dir():
    meta = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )
    return json.loads(meta.stdout)["target_directory"]


def measured(args, exe, cmds_for):
    """For each size: generate a session, then run the commands `cmds_for(gen,
    root)` names in fresh processes, warmed once, the order alternating from round
    to round; yields (mib, gen, runs by name). sessionkit and node must agree on
    the number of messages."""
    tmp = tempfile.mkdtemp(prefix="sessionkit-peers-")
    try:
        for mib in [int(s) for s in args.sizes.split(",")]:
            root = os.path.join(tmp, f"s{mib}")
            gen = run_json([exe, "gen", "--root", root, "--mib", str(mib)])
            cmds = cmds_for(gen, root)
            for cmd in cmds.values():  # warm the page cache and the binaries
                run_json(cmd)
            runs = {k: [] for k in cmds}
            for r in range(args.runs):
                order = list(cmds) if r % 2 == 0 else list(reversed(list(cmds)))
                for k in order:
                    runs[k].append(run_json(cmds[k]))
            sk, nd = runs["sessionkit"][0], runs["node"][0]
            if sk["messages"] != nd["messages"]:
                sys.exit(f"{mib} MiB: sessionkit has {sk['messages']} messages, node {nd['messages']}")
            yield mib, gen, runs
            if not args.keep:
                shutil.rmtree(root)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"sessions kept in {tmp}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,50,200", help="session sizes in MiB")
    ap.add_argument("--runs", type=int, default=7, help="measured rounds per size")
    ap.add_argument("--node", default="node")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the generated sessions")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--op", choices=["resume", "fork"], default="resume")
    args = ap.parse_args()

    if not args.no_build:
        subprocess.run(
            ["cargo", "build", "--release", "-p", "sessionkit", "--example", "resume_peak"],
            cwd=REPO, check=True,
        )
    exe = os.path.join(target_dir(), "release", "examples", "resume_peak")
    node_script = os.path.join(HERE, "node_resume.js")
    node_version = subprocess.run([args.node, "--version"], capture_output=True, text=True).stdout.strip()

    if args.op == "fork":
        return fork(args, exe, node_version)
    results = []

    def cmds_for(gen, root):
        return {
            "raw": [exe, "raw", "--path", gen["path"]],
            "sessionkit": [exe, "resume", "--root", root, "--id", gen["id"]],
            "node": [args.node, node_script, gen["path"]],
        }
    for mib, gen, runs in measured(args, exe, cmds_for):
        sk = runs["sessionkit"][0]

        def med(k, field):
            return statistics.median(x[field] for x in runs[k])

        row = {
            "mib": mib,
            "file_bytes": gen["bytes"],
            "messages": sk["messages"],
            "mean_line": gen["lines"]["mean"],
            "raw_ms": med("raw", "read_ms"),
            "sessionkit_ms": med("sessionkit", "resume_ms"),
            "node_ms": med("node", "resume_ms"),
            "sessionkit_wall_ms": med("sessionkit", "wall_ms"),
            "node_wall_ms": med("node", "wall_ms"),
            "sessionkit_peak": med("sessionkit", "hwm"),
            "node_peak": med("node", "hwm"),
            "runs": {k: [x.get("resume_ms", x.get("read_ms")) for x in v] for k, v in runs.items()},
        }
        results.append(row)

    print(f"\nresume, median of {args.runs} fresh processes each; {node_version}; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    hdr = (f"{'size':>6} {'messages':>8} {'raw ms':>8} {'sk ms':>8} {'node ms':>8} "
           f"{'sk/raw':>7} {'node/sk':>8} {'sk peak/file':>13} {'node peak/file':>15}")
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        f = r["file_bytes"]
        print(f"{r['mib']:>4}Mi {r['messages']:>8} {r['raw_ms']:>8.1f} {r['sessionkit_ms']:>8.1f} "
              f"{r['node_ms']:>8.1f} {r['sessionkit_ms'] / r['raw_ms']:>7.2f} "
              f"{r['node_ms'] / r['sessionkit_ms']:>8.2f} {r['sessionkit_peak'] / f:>13.2f} "
              f"{r['node_peak'] / f:>15.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"node": node_version, "runs": args.runs, "results": results}, out, indent=1)


def fork(args, exe, node_version):
    node_script = os.path.join(HERE, "node_fork.js")
    rows = []

    def cmds_for(gen, root):
        return {
            "copy": [exe, "copy", "--path", gen["path"]],
            "sessionkit": [exe, "fork", "--root", root, "--id", gen["id"]],
            "node": [args.node, node_script, gen["path"]],
        }
    for mib, gen, runs in measured(args, exe, cmds_for):
        med = {k: statistics.median(x["fork_ms"] for x in v) for k, v in runs.items()}
        rows.append({"mib": mib, "messages": runs["sessionkit"][0]["messages"],
                     **{f"{k}_ms": v for k, v in med.items()},
                     "runs": {k: [x["fork_ms"] for x in v] for k, v in runs.items()}})
    print(f"\nfork at the head, median of {args.runs} fresh processes each; {node_version}; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    hdr = (f"{'size':>6} {'messages':>8} {'copy ms':>8} {'sk ms':>8} {'node ms':>8} "
           f"{'sk/copy':>8} {'node/sk':>8}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['mib']:>4}Mi {r['messages']:>8} {r['copy_ms']:>8.1f} {r['sessionkit_ms']:>8.1f} "
              f"{r['node_ms']:>8.1f} {r['sessionkit_ms'] / r['copy_ms']:>8.2f} "
              f"{r['node_ms'] / r['sessionkit_ms']:>8.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"node": node_version, "runs": args.runs, "results": rows}, out, indent=1)


if __name__ == "__main__":
    main()
