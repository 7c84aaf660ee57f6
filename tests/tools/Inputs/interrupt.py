#!/usr/bin/python3
"""Interrupts a seam-run and reports what it left behind.

  interrupt.py TMPDIR SIGNAL WHEN -- SEAM-RUN ARGS...

Runs SEAM-RUN with TMPDIR as its temp directory, waits until its temporary
compile cache (seam-run-cache-*) exists and, with WHEN = entries, until an
entry is in it (WHEN = created: only the directory: a compile under way),
sends SIGNAL (INT or TERM) and waits for the exit. Prints the exit status,
the last line of stderr and what is left in TMPDIR. Gives up (SIGKILL,
"timeout") after 120 s.
"""
import glob
import os
import signal
import subprocess
import sys
import time


def main(argv):
    tmp, sig, when = argv[1], argv[2], argv[3]
    assert argv[4] == "--"
    cmd = argv[5:]
    env = dict(os.environ, TMPDIR=tmp)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        caches = glob.glob(os.path.join(tmp, "seam-run-cache-*"))
        if caches and (when == "created" or
                       glob.glob(os.path.join(caches[0], "*.seamcache"))):
            break
        time.sleep(0.005)
    if p.poll() is not None:
        print("finished before the signal (status %d)" % p.returncode)
        return 1
    if time.time() >= deadline:
        p.kill()
        print("timeout")
        return 1
    p.send_signal(signal.SIGINT if sig == "INT" else signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        print("did not stop")
        return 1
    lines = [l for l in err.splitlines() if l.strip()]
    print("status %d" % p.returncode)
    print("last line: %s" % (lines[-1] if lines else ""))
    left = sorted(os.listdir(tmp))
    print("left in TMPDIR: %s" % (" ".join(left) if left else "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
