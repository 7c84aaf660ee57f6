#!/usr/bin/python3
"""Bit-identical check of the emitted programs and the simulated times.

Compiles small configurations of the bundled models with seam-run (each in a
fresh compile cache), then records

  * the SHA-256 of every emitted program's payload (each cache entry holds
    the bytes rt::writeProgram produced; the digest covers them after the
    program file's header, so that a new header format or content hash
    leaves the digests of unchanged programs alone),
  * the simulated device time of the step and of every launched unit, the
    engines' busy times and the DMA bytes (timing-only: these come from the
    emulator's timing model of the emitted instructions, never from the
    clock of this machine),
  * for one functional run, the SHA-256 of every output tensor,

and compares them with `programs.json` beside this script. A refactoring that
is meant to change nothing must leave every figure identical (floats are
compared exactly: they are written with 17 significant digits).

  check_programs.py BIN_DIR [--update] [--only NAME]

--update rewrites programs.json from this build (do it on purpose, when a
change is meant to change programs or timings, and say so in the commit).
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "programs.json")
SMALL = os.path.join(HERE, "..", "tools", "Inputs", "small.mlir")

# name -> seam-run arguments (timing-only unless they say --functional).
CONFIGS = {
    "fnet-base-compile-trn1": ["--model", "fnet-base", "--layers", "1", "--seq", "128",
                               "--mode", "compile", "--target", "trn1"],
    "fnet-base-eager-fourier-mix-trn2": ["--model", "fnet-base", "--layers", "1", "--seq", "128",
                                         "--mode", "eager", "--kernels", "fourier-mix",
                                         "--target", "trn2"],
    "fnet-base-compile-fft-trn1": ["--model", "fnet-base", "--layers", "1", "--seq", "128",
                                   "--mode", "compile", "--kernels", "fft", "--target", "trn1"],
    "fnet-large-compile-trn2": ["--model", "fnet-large", "--layers", "1", "--seq", "128",
                                "--mode", "compile", "--target", "trn2"],
    "flux2-klein-compile-trn1": ["--model", "flux2-klein", "--layers", "1", "--seq", "128",
                                 "--txt-seq", "64", "--tp", "4", "--mode", "compile",
                                 "--target", "trn1"],
    # 384 tokens: the compiler's attention pipelined over three slots
    # across heads, the norms over three working sets.
    "flux2-klein-compile-trn2": ["--model", "flux2-klein", "--layers", "6", "--seq", "256",
                                 "--txt-seq", "128", "--tp", "4", "--mode", "compile",
                                 "--target", "trn2"],
    "flux2-klein-eager-kernels-trn2": ["--model", "flux2-klein", "--layers", "1", "--seq", "128",
                                       "--txt-seq", "64", "--tp", "4", "--mode", "eager",
                                       "--kernels", "qkv,rope,flash-attn", "--target", "trn2"],
    "flux2-klein-compile-stable-trn2": ["--model", "flux2-klein", "--layers", "6", "--seq", "128",
                                        "--txt-seq", "128", "--tp", "4", "--mode", "compile",
                                        "--kernels", "flash-attn-stable", "--target", "trn2"],
    # The seed flash-attn and qkv kernels inside the step program, with the
    # dependency boundary (ncore.entry_waits, ncore.kernel_wait).
    "flux2-klein-compile-kernels-dependency-trn2": [
        "--model", "flux2-klein", "--layers", "2", "--seq", "256", "--txt-seq", "128",
        "--tp", "4", "--mode", "compile", "--kernels", "qkv,flash-attn",
        "--kernel-boundary", "dependency", "--target", "trn2"],
    "hyena-compile-trn1": ["--model", "hyena", "--layers", "1", "--seq", "256",
                           "--mode", "compile", "--target", "trn1"],
    "hyena-eager-fftconv-trn2": ["--model", "hyena", "--layers", "1", "--seq", "256",
                                 "--mode", "eager", "--kernels", "fftconv", "--target", "trn2"],
    "small-functional-fourier-mix": [SMALL, "--functional", "--kernels", "fourier-mix"],
}

CACHE_HEADER = 40  # magic 8, version 4, kind 4, key length 8, payload length 8, checksum 8
PROGRAM_HEADER = 48  # runtime/ProgramFile.h kProgramHeaderSize


def programs_in(cache_dir):
    digests = []
    for name in sorted(os.listdir(cache_dir)):
        path = os.path.join(cache_dir, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < CACHE_HEADER or data[:8] != b"SEAMCACH":
            continue  # not a cache entry (a writer's temporary)
        kind, key_len, payload_len = struct.unpack_from("<IQQ", data, 12)
        if kind != 0:
            raise SystemExit("%s: a cached compile failure" % path)
        payload = data[CACHE_HEADER + key_len:]
        assert len(payload) == payload_len, path
        assert payload[:7] == b"SEAMPRG", path
        digests.append(hashlib.sha256(payload[PROGRAM_HEADER:]).hexdigest())
    return sorted(digests)


def write_inputs(tmp):
    import numpy as np  # Debian's python3-numpy, as tests/tools uses
    rng = np.random.default_rng(3)
    np.save(os.path.join(tmp, "x.npy"), rng.standard_normal((1, 256, 256)).astype(np.float32))
    np.save(os.path.join(tmp, "v.npy"), rng.uniform(-1, 1, (1, 256)).astype(np.float32))


def measure(bin_dir, name, args, tmp):
    work = os.path.join(tmp, name)
    os.makedirs(os.path.join(work, "cache"))
    cmd = [os.path.join(bin_dir, "seam-run")] + args + [
        "--steps", "1", "--runs", "1", "--cache-dir", os.path.join(work, "cache"),
        "--json", os.path.join(work, "r.json")]
    if "--functional" in args:
        write_inputs(work)
        cmd += ["--input", "x=" + os.path.join(work, "x.npy"),
                "--input", "v=" + os.path.join(work, "v.npy"),
                "--output-dir", os.path.join(work, "out")]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise SystemExit("%s: seam-run failed (%d):\n%s%s" %
                         (name, run.returncode, run.stdout, run.stderr))
    with open(os.path.join(work, "r.json")) as f:
        r = json.load(f)
    step = r["runs"][0]["steps"][0]
    result = {
        "programs": programs_in(os.path.join(work, "cache")),
        "instructions": r["compile"]["instructions"],
        "step_device_s": step["device_s"],
        "launches": step["launches"],
        "engine_busy_s": r["engine_busy_s"],
        "dma_bytes": r["dma_bytes"],
        "units_device_s": {u["name"]: u["device_s"] for u in r["roofline"]["programs"]},
    }
    out = os.path.join(work, "out")
    if os.path.isdir(out):
        result["outputs"] = {}
        for f in sorted(os.listdir(out)):
            with open(os.path.join(out, f), "rb") as fh:
                result["outputs"][f] = hashlib.sha256(fh.read()).hexdigest()
    return result


def diff(want, got, path=""):
    if isinstance(want, dict) and isinstance(got, dict):
        lines = []
        for k in sorted(set(want) | set(got)):
            if k not in got:
                lines.append("%s.%s: missing (was %r)" % (path, k, want[k]))
            elif k not in want:
                lines.append("%s.%s: new (%r)" % (path, k, got[k]))
            else:
                lines += diff(want[k], got[k], path + "." + k)
        return lines
    if want != got:
        return ["%s: %r, was %r" % (path, got, want)]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bin_dir")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--only")
    a = ap.parse_args()
    names = [a.only] if a.only else list(CONFIGS)
    with tempfile.TemporaryDirectory(prefix="seam-golden-") as tmp:
        got = {n: measure(a.bin_dir, n, CONFIGS[n], tmp) for n in names}
    if a.update:
        old = {}
        if a.only and os.path.exists(GOLDEN):
            with open(GOLDEN) as f:
                old = json.load(f)
        old.update(got)
        with open(GOLDEN, "w") as f:
            json.dump(old, f, indent=1, sort_keys=True)
            f.write("\n")
        print("wrote %s (%d configurations)" % (GOLDEN, len(old)))
        return 0
    with open(GOLDEN) as f:
        want = json.load(f)
    bad = 0
    for n in names:
        lines = diff(want.get(n, {}), got[n], n)
        status = "identical" if not lines else "DIFFERS"
        print("%-36s %s (%d programs)" % (n, status, len(got[n]["programs"])))
        for line in lines:
            print("  " + line)
        bad += bool(lines)
    if bad:
        print("%d of %d configurations differ from %s" % (bad, len(names), GOLDEN))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
