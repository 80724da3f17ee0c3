"""Copies the shared libraries (`*/lib/*.so*`) out of the wheels in a folder into another
folder: the set-up scripts' way to take NVIDIA's and OpenBLAS's libraries from PyPI's
wheels without installing them (scripts/setup-nvrtc.sh, scripts/setup-openblas.sh).

    python3 scripts/wheel-libs.py WHEEL_DIR DEST_DIR
"""
import glob
import os
import sys
import zipfile

src, dst = sys.argv[1], sys.argv[2]

for wheel in glob.glob(os.path.join(src, "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if "/lib/" in name and ".so" in name:
                with z.open(name) as f, open(os.path.join(dst, os.path.basename(name)), "wb") as out:
                    out.write(f.read())
