#!/usr/bin/env python3
"""`cargo test --workspace --release --no-fail-fast`, with the test binaries
run side by side instead of one after the other.

cargo runs one test binary at a time, and a binary whose time goes into one
long test (a QEMU guest booting, the 1,024-QP torture, a cargo build of the
hardware-only rnic) leaves the other core idle: in a CI run of 2026-12-02 a
core was idle for a fifth of the test step. Here cargo builds every test
binary (`--no-run`), then RNIC_TEST_JOBS of them (default: the number of
CPUs) run at once, the longest first, each in its package's directory as
cargo runs it; each binary's output is printed whole when it ends, and the
doc tests run last, through cargo. Every binary runs even after a failure;
the summary names the failed ones with the command that reruns each alone.

Usage: .ci/test_binaries.py [test-name filter passed to every binary]
Env:   RNIC_TEST_JOBS  binaries at once (1 = cargo's order, one at a time)
Writes target/ci/test-times.json: each binary's wall time, read back by the
next run to start the longest first.
"""

import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMES = ROOT / "target" / "ci" / "test-times.json"
# Wall seconds of the long binaries in the CI run of 2026-12-02 (a slow
# machine), for a run without target/ci/test-times.json (a fresh clone).
# Only the order depends on them.
HINTS = {
    "rnic_vm": 293,
    "interop_rxe": 103,
    "sim_models": 96,
    "roce_rc": 53,
    "reliability": 23,
}


def package_name(package_id: str) -> str:
    # "path+file:///x/rnic-cli#0.1.0", "path+file:///x/dir#rnic-cli@0.1.0"
    # or, before cargo 1.77, "rnic-cli 0.1.0 (path+file:///x/rnic-cli)"
    if "#" not in package_id:
        return package_id.split(" ")[0]
    url, frag = package_id.split("#", 1)
    if "@" in frag:
        return frag.split("@")[0]
    return url.rstrip("/").rsplit("/", 1)[-1]


def rerun_command(b: dict) -> str:
    sel = {"lib": "--lib", "bin": f"--bin {b['name']}", "test": f"--test {b['name']}"}
    what = sel.get(b["kind"], f"--{b['kind']} {b['name']}")
    return f"cargo test --release -p {b['pkg']} {what}"


def build() -> list:
    cmd = ["cargo", "test", "--workspace", "--release", "--no-run",
           "--message-format=json-render-diagnostics"]
    print("test_binaries:", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    bins = []
    for line in p.stdout:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if (m.get("reason") == "compiler-artifact" and m.get("executable")
                and m.get("profile", {}).get("test")):
            t = m["target"]
            bins.append({
                "pkg": package_name(m["package_id"]),
                "name": t["name"],
                "kind": t["kind"][0],
                "src": t["src_path"],
                "exe": m["executable"],
                "dir": str(pathlib.Path(m["manifest_path"]).parent),
            })
    if p.wait() != 0:
        return None
    return bins


def main() -> int:
    jobs = max(1, int(os.environ.get("RNIC_TEST_JOBS", os.cpu_count() or 2)))
    extra = sys.argv[1:]
    t_build = time.monotonic()
    bins = build()
    if bins is None:
        print("test_binaries: the test build failed", file=sys.stderr)
        return 1
    print(f"test_binaries: {len(bins)} test binaries built in "
          f"{time.monotonic() - t_build:.0f} s; running {jobs} at once", flush=True)

    try:
        past = json.loads(TIMES.read_text())
    except (OSError, ValueError):
        past = {}
    key = lambda b: f"{b['pkg']}/{b['kind']}/{b['name']}"
    if jobs > 1:
        bins.sort(key=lambda b: -past.get(key(b), HINTS.get(b["name"], 0)))

    cargo = shutil.which("cargo") or "cargo"
    lock = threading.Lock()
    running = {}
    results = {}

    def run(b):
        env = dict(os.environ, CARGO=cargo, CARGO_MANIFEST_DIR=b["dir"],
                   CARGO_PKG_NAME=b["pkg"])
        t0 = time.monotonic()
        with lock:
            running[key(b)] = t0
        p = subprocess.run([b["exe"], *extra], cwd=b["dir"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        secs = time.monotonic() - t0
        with lock:
            del running[key(b)]
            results[key(b)] = (p.returncode, secs)
            rel = os.path.relpath(b["src"], b["dir"])
            print(f"     Running {rel} ({os.path.relpath(b['exe'], ROOT)}) "
                  f"[{b['pkg']}, {secs:.1f} s, exit {p.returncode}]")
            print(p.stdout, end="" if p.stdout.endswith("\n") else "\n", flush=True)

    done = threading.Event()

    def heartbeat():
        while not done.wait(60):
            with lock:
                now = time.monotonic()
                still = ", ".join(f"{k.rsplit('/', 1)[-1]} ({now - t:.0f} s)"
                                  for k, t in running.items())
            if still:
                print(f"test_binaries: still running: {still}", flush=True)

    threading.Thread(target=heartbeat, daemon=True).start()
    t_run = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(run, bins))
    done.set()
    print(f"test_binaries: {len(bins)} binaries ran in {time.monotonic() - t_run:.0f} s",
          flush=True)

    if not extra:  # a filtered run's times say nothing of the next full one
        TIMES.parent.mkdir(parents=True, exist_ok=True)
        past.update({k: round(s, 1) for k, (_, s) in results.items()})
        TIMES.write_text(json.dumps(past, indent=1, sort_keys=True) + "\n")

    doc_rc = 0
    if not extra:
        doc = ["cargo", "test", "--workspace", "--release", "--doc", "--no-fail-fast"]
        print("test_binaries:", " ".join(doc), flush=True)
        doc_rc = subprocess.run(doc, cwd=ROOT).returncode

    failed = [b for b in bins if results[key(b)][0] != 0]
    for b in failed:
        print(f"test_binaries: FAILED {os.path.relpath(b['src'], ROOT)} "
              f"(exit {results[key(b)][0]}); rerun: {rerun_command(b)}", file=sys.stderr)
    if doc_rc:
        print("test_binaries: FAILED doc tests; rerun: cargo test --workspace --release --doc",
              file=sys.stderr)
    return 1 if failed or doc_rc else 0


if __name__ == "__main__":
    sys.exit(main())
