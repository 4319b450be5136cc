#!/usr/bin/env python3
"""Runs a command and measures the CPU of its whole process tree.

    python3 scripts/lib-cputree.py OUT.json -- COMMAND [ARGS...]

Writes to OUT.json:
  wall         seconds, start to the command's exit
  cpu          user+sys seconds of every task of the tree: `perf stat -e
               task-clock` (inherited counters, summed as each task exits,
               whoever reaps it); without a working perf (or with
               CPUTREE_NO_PERF set), `cpu_sampled`
  method       "perf task-clock" or "sampled /proc"
  cpu_sampled  the sum over the tree's processes of their last /proc/PID/stat
               CPU, sampled every 50 ms (a process's last 50 ms may be missed)
  cpu_rusage   getrusage of this process's children: the command plus the
               descendants waited for by their parents, up to the command or
               (orphans) this script, and perf; /usr/bin/time prints no more
  by_kind      cpu_sampled per kind of process (skitter, node, chromium
               browser, chromium renderer, ...)
The command's stdout and stderr pass through; its exit status is this script's.

Why not /usr/bin/time: a parent's "children" CPU counts only the descendants
that were waited for, each by its own parent, up to the command. When skitter
ends its browser (it kills the browser's process group) the renderers' CPU
never reaches the crawl's rusage: on 300 pages rendered, rusage said 14.8 s
where perf task-clock said 48.8 s (the /proc samples: 33.9 s in renderers).
Puppeteer closes its browser gracefully, and there rusage and perf agree.
This process is also a child subreaper (PR_SET_CHILD_SUBREAPER): whatever of the
tree outlives its parent comes back here, so the run ends only when the whole
tree has (what is left 10 s after the command exits is killed).
"""
import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")
# After the command exits, how long the rest of its tree may take to end.
LINGER = 10.0


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def kind(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    name = os.path.basename(argv[0].decode(errors="replace")) if argv else "?"
    if "chrom" in name:
        # A process the zygote forked has its type in a title rewritten over
        # its argv, so look in the whole command line.
        at = b"\0".join(argv).replace(b"\0", b" ").find(b"--type=")
        if at >= 0:
            kind = b" ".join(argv).split(b" ")
            for a in kind:
                if a.startswith(b"--type="):
                    return "chromium " + a[7:].decode(errors="replace")
        return "chromium browser"
    return name


def cpu_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def sample(seen, stop):
    """Keeps, for each process of the tree, its kind and its latest CPU."""
    while not stop.is_set():
        todo = children(os.getpid())
        while todo:
            pid = todo.pop()
            cpu = cpu_of(pid)
            if cpu is not None:
                # Read each time: a forked process execs, or renames itself.
                seen[pid] = (kind(pid) or seen.get(pid, ("?", 0))[0], cpu)
            todo += children(pid)
        stop.wait(0.05)


def perf_works():
    if os.environ.get("CPUTREE_NO_PERF"):
        return False
    try:
        return subprocess.run(["perf", "stat", "-e", "task-clock", "true"],
                              capture_output=True).returncode == 0
    except OSError:
        return False


def perf_cpu(path):
    """task-clock in seconds, from `perf stat -x,` output (msec first)."""
    with open(path) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) > 2 and parts[2].startswith("task-clock"):
                return round(float(parts[0]) / 1000, 3)
    sys.exit(f"no task-clock in {path}")


def main():
    out, sep, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    if sep != "--" or not cmd:
        sys.exit(__doc__)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    seen, stop = {}, threading.Event()
    start = time.monotonic()
    perf = perf_works()
    if perf:
        cmd = ["perf", "stat", "-x,", "-e", "task-clock", "-o", out + ".perf", "--"] + cmd
    child = subprocess.Popen(cmd)
    sampler = threading.Thread(target=sample, args=(seen, stop), daemon=True)
    sampler.start()
    _, status, _ = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    orphans, lingered = 0, 0
    deadline = time.monotonic() + LINGER
    while True:
        try:
            pid, _, _ = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            orphans += 1
            continue
        if time.monotonic() > deadline:
            for pid in children(os.getpid()):
                lingered += 1
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = float("inf")
        time.sleep(0.02)
    stop.set()
    sampler.join()
    total = resource.getrusage(resource.RUSAGE_CHILDREN)
    by_kind = {}
    for k, cpu in seen.values():
        by_kind[k] = round(by_kind.get(k, 0) + cpu, 3)
    by_kind.pop("perf", None)
    sampled = round(sum(by_kind.values()), 3)
    cpu, method = sampled, "sampled /proc"
    if perf:
        cpu, method = perf_cpu(out + ".perf"), "perf task-clock"
    figures = {
        "wall": round(wall, 3),
        "cpu": cpu,
        "method": method,
        "cpu_sampled": sampled,
        "cpu_rusage": round(total.ru_utime + total.ru_stime, 3),
        "orphans": orphans,
        "lingered": lingered,
        "by_kind": by_kind,
    }
    if os.environ.get("CPUTREE_DEBUG"):
        print(seen, file=sys.stderr)
    with open(out, "w") as f:
        json.dump(figures, f)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
