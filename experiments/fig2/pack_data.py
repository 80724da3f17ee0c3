#!/usr/bin/env python3
"""Packs, into .gpudata/ (ignored by git), the MNIST and Fashion-MNIST training images that
configs/fig2_{mnist,fmnist}_n10000.toml select, for a GPU call that may carry only 64 MiB.

`subset = "balanced"` takes the first n / 10 images of each class in file order
(ntk_data::subset::balanced_indices), so a file cut after the first M images, with M the
first point where every class has n / 10, selects the same images in the same order: the
recorded data digest (SHA-256 of the selected inputs and labels) is the same as from the
full file. The IDX headers carry the new count. Standard library only.

    python3 experiments/fig2/pack_data.py [--n 10000] [--data datasets/data] [--out .gpudata]
"""
import argparse
import gzip
import os
import struct
import sys


def read(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            with open(p, "rb") as f:
                head = f.read(2)
            opener = gzip.open if head == b"\x1f\x8b" else open
            with opener(p, "rb") as f:
                return f.read()
    sys.exit(f"pack_data: {path}[.gz] not found (bash datasets/fetch.sh)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--data", default="datasets/data")
    ap.add_argument("--out", default=".gpudata")
    args = ap.parse_args()
    per_class = args.n // 10
    for name in ("mnist", "fashion-mnist"):
        images = read(os.path.join(args.data, name, "train-images-idx3-ubyte"))
        labels = read(os.path.join(args.data, name, "train-labels-idx1-ubyte"))
        rows, cols = struct.unpack(">II", images[8:16])
        counts, cut = [0] * 10, None
        for i, label in enumerate(labels[8:]):
            counts[label] += 1
            if min(counts) >= per_class:
                cut = i + 1
                break
        if cut is None:
            sys.exit(f"pack_data: {name} has fewer than {per_class} images of some class")
        out = os.path.join(args.out, name)
        os.makedirs(out, exist_ok=True)
        with gzip.open(os.path.join(out, "train-images-idx3-ubyte.gz"), "wb", 6) as f:
            f.write(images[:4] + struct.pack(">I", cut) + images[8:16])
            f.write(images[16 : 16 + cut * rows * cols])
        with gzip.open(os.path.join(out, "train-labels-idx1-ubyte.gz"), "wb", 6) as f:
            f.write(labels[:4] + struct.pack(">I", cut) + labels[8 : 8 + cut])
        print(f"{name}: the first {cut} training images hold {per_class} of each class -> {out}")


if __name__ == "__main__":
    main()
