# SPDX-License-Identifier: MIT
"""A map-style dataset over the files of a directory tree in nacre.

    from nacre.dataset import NacreFileDataset, worker_init_fn

    ds = NacreFileDataset("/imagenet/train", mds="tcp://10.0.0.1:7300",
                          fsname="data", transform=decode_jpeg)
    data, label = ds[0]

The layout is torchvision's ImageFolder: every first-level directory of
@root is a class, its label the index of its name in sorted order; every
regular file below it (at any depth) is a sample.  Files directly in @root
and symbolic links are left out.  Samples are ordered by class, then by
directory, then by name.

With torch importable, NacreFileDataset is a torch.utils.data.Dataset, and
DataLoader (torch 2.x) fetches each batch through __getitems__, that is with
one nacre_read_many() and every file of the batch in flight at once.
Without torch it is a plain class with the same methods.

Each process opens its own connection on first use (keyed by os.getpid()),
so DataLoader's forked workers never share the parent's; worker_init_fn
connects a worker as it starts, before its first batch.
"""

import os
import threading

import nacre

try:
    import torch.utils.data as _torch_data
    _Base = _torch_data.Dataset
except ImportError:
    _torch_data = None
    _Base = object

__all__ = ["NacreFileDataset", "worker_init_fn"]

# Guards lazy connects; replaced in a forked child, where another thread of
# the parent may have held it at the fork.
_lock = threading.Lock()


def _new_lock():
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)


class NacreFileDataset(_Base):
    """The regular files below the class directories of @root.

    ds[i] is (bytes, label), or (transform(bytes), target_transform(label))
    when those are given.  Attributes as ImageFolder's: classes,
    class_to_idx, samples [(path, label)], targets.

    The filesystem is named by @mds and @fsname (default: $NACRE_MDS and
    $NACRE_FSNAME), with @options for nacre.Filesystem, or by an existing
    @fs (used in the process that connected it; other processes connect
    again to the same filesystem with the same options).  @extensions keeps
    only names ending in one of them (case-insensitive).  @depth: files in
    flight per batch (0: the library's default); @max_size: the largest
    file read, in bytes.
    """

    def __init__(self, root, mds=None, fsname=None, transform=None,
                 target_transform=None, extensions=None, depth=0,
                 max_size=1 << 30, options=None, fs=None):
        if fs is not None:
            if mds is not None or fsname is not None or options:
                raise ValueError("give either fs or mds/fsname/options")
            mds, fsname, options = fs.mds, fs.fsname, dict(fs.options)
        else:
            mds = mds if mds is not None else os.environ.get("NACRE_MDS")
            fsname = fsname if fsname is not None else os.environ.get("NACRE_FSNAME")
            if not mds or not fsname:
                raise ValueError("no filesystem: pass mds and fsname (or fs), "
                                 "or set NACRE_MDS and NACRE_FSNAME")
        if isinstance(extensions, str):
            extensions = (extensions,)
        self.root = "/" + os.fsdecode(root).strip("/")
        self.mds = mds
        self.fsname = fsname
        self.options = dict(options or {})
        self.transform = transform
        self.target_transform = target_transform
        self.extensions = (tuple(e.lower() for e in extensions)
                           if extensions else None)
        self.depth = depth
        self.max_size = max_size
        self._fs = fs
        self._fs_pid = fs._pid if fs is not None else None
        self._scan(self.connect())

    def _scan(self, fs):
        self.classes = sorted(e.name for e in fs.scandir(self.root) if e.is_dir())
        if not self.classes:
            raise FileNotFoundError("no class directory in %s (a dataset needs "
                                    "ROOT/CLASS/.../FILE)" % self.root)
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = []
        for label, c in enumerate(self.classes):
            found = []
            self._collect(fs, nacre._join(self.root, c), found)
            found.sort()
            self.samples += [(nacre._join(d, n), label) for d, n in found]
        self.targets = [label for _, label in self.samples]

    def _collect(self, fs, top, found):
        """Appends (dirpath, name) for each wanted regular file below @top."""
        dirs = []
        for e in fs.scandir(top):
            if e.is_dir():
                dirs.append(e.path)
            elif e.is_file() and self._wanted(e.name):
                found.append((top, e.name))
        for d in dirs:
            self._collect(fs, d, found)

    def _wanted(self, name):
        return self.extensions is None or name.lower().endswith(self.extensions)

    # ---- the connection

    def connect(self):
        """This process's connection, opened on first use."""
        pid = os.getpid()
        fs = self._fs
        if fs is not None and self._fs_pid == pid and not fs.closed:
            return fs
        with _lock:
            fs = self._fs
            if fs is not None and self._fs_pid == pid and not fs.closed:
                return fs
            # A handle of another process is dropped, never disconnected:
            # the connection is the parent's (Filesystem.close knows).
            fs = nacre.Filesystem(self.mds, self.fsname, **self.options)
            self._fs, self._fs_pid = fs, pid
            return fs

    def close(self):
        """Disconnects this process's connection (the next use reconnects)."""
        fs, self._fs = self._fs, None
        if fs is not None and self._fs_pid == os.getpid():
            fs.close()

    def __getstate__(self):
        # For workers started by spawn or forkserver: they connect anew.
        state = self.__dict__.copy()
        state["_fs"] = None
        state["_fs_pid"] = None
        return state

    # ---- samples

    def __len__(self):
        return len(self.samples)

    def __repr__(self):
        return "<NacreFileDataset %s:/%s%s: %d files, %d classes>" % (
            self.mds, self.fsname, self.root, len(self.samples), len(self.classes))

    def _item(self, data, label):
        if self.transform is not None:
            data = self.transform(data)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return data, label

    def __getitem__(self, index):
        path, label = self.samples[index]
        data = self.connect().read_many([path], depth=1, max_size=self.max_size)[0]
        if isinstance(data, BaseException):
            raise data
        return self._item(data, label)

    def __getitems__(self, indices):
        """The samples at @indices, read with one nacre_read_many().  The
        first file that cannot be read raises its error."""
        picked = [self.samples[i] for i in indices]
        blobs = self.connect().read_many([p for p, _ in picked], depth=self.depth,
                                         max_size=self.max_size)
        out = []
        for (path, label), data in zip(picked, blobs):
            if isinstance(data, BaseException):
                raise data
            out.append(self._item(data, label))
        return out


def _datasets_in(ds, seen=None):
    """@ds and the datasets it wraps (Subset, ConcatDataset)."""
    seen = seen if seen is not None else set()
    if ds is None or id(ds) in seen:
        return
    seen.add(id(ds))
    yield ds
    yield from _datasets_in(getattr(ds, "dataset", None), seen)
    for d in getattr(ds, "datasets", None) or ():
        yield from _datasets_in(d, seen)


def worker_init_fn(worker_id):
    """DataLoader(worker_init_fn=...): connects each NacreFileDataset of the
    worker's dataset in the worker, before its first batch."""
    if _torch_data is None:
        return
    info = _torch_data.get_worker_info()
    if info is None:
        return
    for ds in _datasets_in(info.dataset):
        if isinstance(ds, NacreFileDataset):
            ds.connect()
