#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Iterates an ImageNet-like tree of small files in nacre and prints the rate.

    iterate_dataset.py --mds tcp://127.0.0.1:7300 --fsname nacre \\
        --root /imagenet/train --make 10000 --num-workers 4

--make N first writes N files (sizes drawn around 110 KiB, as JPEGs of
ImageNet are) into --classes class directories under --root.  Then the tree
is read once through NacreFileDataset batch by batch (one nacre_read_many()
per batch) and, when torch is installed, once more through a DataLoader with
--num-workers worker processes.  Each pass prints samples/s and MB/s.  The
bytes are not checked (the tests do that).

Needs the bindings on the path: PYTHONPATH=bindings/python, and libnacre
where NACRE_LIBRARY says or the loader finds it.
"""

import argparse
import concurrent.futures
import math
import os
import random
import sys
import time

import nacre
from nacre.dataset import NacreFileDataset, worker_init_fn


def keep_list(batch):
    """A DataLoader collate_fn that leaves the batch a list of (bytes, label)."""
    return batch


def make_tree(fs, root, n, classes, mean_kib, seed, jobs):
    """Writes n files, their sizes drawn log-normally around mean_kib KiB."""
    rng = random.Random(seed)
    pool = rng.randbytes(8 << 20)       # file contents are slices of this
    sigma = 0.5                         # log-normal, with a mean of mean_kib
    mu = math.log(mean_kib * 1024) - sigma * sigma / 2
    sizes = [min(max(int(rng.lognormvariate(mu, sigma)), 1024), 4 << 20)
             for _ in range(n)]
    width = len(str(max(classes - 1, 1)))
    for c in range(classes):
        fs.makedirs("%s/n%0*d" % (root, width, c), exist_ok=True)

    def write(i):
        path = "%s/n%0*d/img_%08d.bin" % (root, width, i % classes, i)
        off = (i * 7919) % (len(pool) - sizes[i])
        fs.write_bytes(path, memoryview(pool)[off:off + sizes[i]])
        return sizes[i]

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        total = sum(ex.map(write, range(n)))
    if nacre.has_sync():
        fs.sync()
    secs = time.monotonic() - start
    print("made %d files, %.1f MB, in %.2f s (%.0f files/s)"
          % (n, total / 1e6, secs, n / secs if secs else 0.0))


def report(what, samples, nbytes, secs):
    secs = max(secs, 1e-9)
    print("%s: %d samples, %.1f MB in %.2f s: %.0f samples/s, %.1f MB/s"
          % (what, samples, nbytes / 1e6, secs, samples / secs, nbytes / 1e6 / secs))


def iterate_plain(ds, batch_size, order):
    samples = nbytes = 0
    start = time.monotonic()
    for i in range(0, len(order), batch_size):
        for data, _ in ds.__getitems__(order[i:i + batch_size]):
            samples += 1
            nbytes += len(data)
    report("dataset, batches of %d" % batch_size, samples, nbytes,
           time.monotonic() - start)


def iterate_loader(ds, batch_size, workers, shuffle):
    import torch.utils.data

    loader = torch.utils.data.DataLoader(
        ds, batch_size=batch_size, shuffle=shuffle, num_workers=workers,
        worker_init_fn=worker_init_fn, collate_fn=keep_list,
        timeout=300 if workers else 0)
    samples = nbytes = 0
    start = time.monotonic()
    for batch in loader:
        for data, _ in batch:
            samples += 1
            nbytes += len(data)
    report("DataLoader, num_workers=%d, batches of %d" % (workers, batch_size),
           samples, nbytes, time.monotonic() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mds", default=os.environ.get("NACRE_MDS"),
                    help="MDS address (default $NACRE_MDS)")
    ap.add_argument("--fsname", default=os.environ.get("NACRE_FSNAME"),
                    help="filesystem name (default $NACRE_FSNAME)")
    ap.add_argument("--root", default="/imagenet-like/train",
                    help="the tree, a path in the filesystem")
    ap.add_argument("--make", type=int, metavar="N", default=0,
                    help="first write N files under --root")
    ap.add_argument("--classes", type=int, default=10,
                    help="class directories made by --make (default 10)")
    ap.add_argument("--mean-kib", type=float, default=110.0,
                    help="mean size of the files --make writes, KiB (default 110)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=16,
                    help="threads writing files for --make (default 16)")
    ap.add_argument("--pack", action="store_true",
                    help="--make writes packed small files (pack_all)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--depth", type=int, default=0,
                    help="files in flight per batch (0: the library's default)")
    ap.add_argument("--num-workers", type=int, default=2,
                    help="DataLoader worker processes (default 2)")
    ap.add_argument("--shuffle", action="store_true",
                    help="read in random order")
    ap.add_argument("--no-torch", action="store_true",
                    help="skip the DataLoader pass")
    args = ap.parse_args()

    if not args.mds or not args.fsname:
        ap.error("--mds and --fsname are needed (or NACRE_MDS and NACRE_FSNAME)")
    if args.make < 0 or args.classes < 1 or args.batch_size < 1 or \
            args.num_workers < 0 or args.jobs < 1 or args.mean_kib <= 0:
        ap.error("--make, --num-workers must be >= 0; --classes, --batch-size, "
                 "--jobs and --mean-kib > 0")

    if args.make:
        opts = {"pack_all": True} if args.pack else {}
        with nacre.connect(args.mds, args.fsname, **opts) as fs:
            make_tree(fs, args.root, args.make, args.classes, args.mean_kib,
                      args.seed, args.jobs)

    start = time.monotonic()
    ds = NacreFileDataset(args.root, mds=args.mds, fsname=args.fsname,
                          depth=args.depth)
    print("dataset %s: %d files in %d classes, listed in %.2f s"
          % (args.root, len(ds), len(ds.classes), time.monotonic() - start))
    if len(ds) == 0:
        print("nothing to read")
        return 0
    order = list(range(len(ds)))
    if args.shuffle:
        random.Random(args.seed).shuffle(order)
    iterate_plain(ds, args.batch_size, order)

    if args.no_torch:
        return 0
    try:
        import torch.utils.data  # noqa: F401
    except ImportError:
        print("torch is not installed: no DataLoader pass")
        return 0
    # Workers fork from here and connect by themselves.
    iterate_loader(ds, args.batch_size, args.num_workers, args.shuffle)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError) as e:
        print("iterate_dataset: %s" % e, file=sys.stderr)
        sys.exit(1)
