"""Writes copies of DIR/x.npy (a float32 .npy, version 1.0) whose header
dict is rewritten, for seam-run's .npy header parsing (Npy.cpp):
spaced.npy (valid, odd whitespace and key order), fortran.npy,
nodescr.npy, noshape.npy, unclosed.npy (a shape tuple never closed)."""
import ast
import sys

d = sys.argv[1]
raw = open(f"{d}/x.npy", "rb").read()
assert raw[:6] == b"\x93NUMPY" and raw[6] == 1
n = raw[8] | (raw[9] << 8)
header = ast.literal_eval(raw[10:10 + n].decode("latin1"))
data = raw[10 + n:]
shape = "(" + "".join(f"{s}, " for s in header["shape"]) + ")"
descr = header["descr"]


def write(name, text):
    text = text + " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    out = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little")
    open(f"{d}/{name}", "wb").write(out + text.encode("latin1") + data)


write("spaced.npy", f"{{'shape':\t {shape}, 'fortran_order':  False, "
      f"'descr':\n'{descr}', }}")
write("fortran.npy", f"{{'descr': '{descr}', 'fortran_order': True, "
      f"'shape': {shape}, }}")
write("nodescr.npy", f"{{'fortran_order': False, 'shape': {shape}, }}")
write("noshape.npy", f"{{'descr': '{descr}', 'fortran_order': False, }}")
write("unclosed.npy", f"{{'descr': '{descr}', 'fortran_order': False, "
      f"'shape': (4, ")
