# SPDX-License-Identifier: MIT
"""Python bindings for libnacre, the nacre client library.

A Filesystem is one connection (struct nacre_fs) to a nacre filesystem,
named by its MDS address and fsname; File is an open file on it.  Data moves
straight between Python buffers and the OSTs; every call into libnacre
releases the GIL, so threads run their requests in parallel.

    import nacre

    with nacre.connect("tcp://10.0.0.1:7300", "data") as fs:
        fs.makedirs("/train/cat", exist_ok=True)
        with fs.open("/train/cat/0001.jpg", "wb") as f:
            f.write(jpeg_bytes)
        print(fs.stat("/train/cat/0001.jpg").st_size)
        blobs = fs.read_many(["/train/cat/0001.jpg", "/missing"])
        # [b'...', NacreFileNotFoundError(2, 'No such file or directory')]

libnacre is loaded on first use from $NACRE_LIBRARY, else from what
ctypes.util.find_library("nacre") finds, else as "libnacre.so.0".

A connection never crosses fork(): a Filesystem (and its Files) may be used
only by the process that connected it; a forked child connects again (see
nacre.dataset, which does so by itself).
"""

import ctypes
import ctypes.util
import errno as _errno
import io
import mmap
import os
import platform
import stat as _stat
import threading
import weakref
from collections import namedtuple
from typing import NamedTuple, Tuple

__all__ = [
    "Filesystem", "File", "NacreError", "StatResult", "Fid", "DirEntry",
    "Layout", "connect", "strerror", "library", "has_sync",
    "NAME_MAX", "MAX_STRIPES", "LAYOUT_PACK", "LAYOUT_PACKED",
    "LAYOUT_INLINE", "INLINE_MAX", "SHARD_STALE", "OST_ANY",
]

NAME_MAX = 255
MAX_STRIPES = 64
MAX_GROUPS = 32
LAYOUT_PACK = 0x2
LAYOUT_PACKED = 0x4
LAYOUT_INLINE = 0x20
INLINE_MAX = 4096
SHARD_STALE = 0x1
OST_ANY = 0xFFFFFFFF

# Error codes of nacre's own (common/errors.h) start above the errno range.
NACRE_ERROR_BASE = 4096
_E_CHANGED = 4109               # "the file changed meanwhile"

# ------------------------------------------------------------------ C types
#
# The structures of nacre.h, field for field, with the types glibc gives
# mode_t, nlink_t, uid_t, gid_t, dev_t and struct timespec.  nlink_t is
# 64-bit on x86-64 and 32-bit in glibc's generic ABI (aarch64, riscv64);
# tests/python/test_bindings.py compares every offset and size here with
# what the C compiler says.

_mode_t = ctypes.c_uint32
_uid_t = ctypes.c_uint32
_gid_t = ctypes.c_uint32
_dev_t = ctypes.c_uint64
_nlink_t = (ctypes.c_uint64 if platform.machine() in ("x86_64", "AMD64", "amd64")
            else ctypes.c_uint32)
_off_t = ctypes.c_int64         # libnacre is built with _FILE_OFFSET_BITS=64
_ssize_t = ctypes.c_ssize_t
_size_t = ctypes.c_size_t


class _timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _nacre_fid(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_uint64), ("oid", ctypes.c_uint64)]


class _nacre_cred(ctypes.Structure):
    _fields_ = [
        ("uid", _uid_t),
        ("gid", _gid_t),
        ("ngroups", ctypes.c_uint),
        ("groups", _gid_t * MAX_GROUPS),
    ]


class _nacre_stat(ctypes.Structure):
    _fields_ = [
        ("fid", _nacre_fid),
        ("mode", _mode_t),
        ("nlink", _nlink_t),
        ("uid", _uid_t),
        ("gid", _gid_t),
        ("size", ctypes.c_uint64),
        ("blocks", ctypes.c_uint64),
        ("rdev", _dev_t),
        ("atime", _timespec),
        ("mtime", _timespec),
        ("ctime", _timespec),
    ]


class _nacre_shard(ctypes.Structure):
    _fields_ = [("ost", ctypes.c_uint32), ("flags", ctypes.c_uint32)]


class _nacre_layout(ctypes.Structure):
    _fields_ = [
        ("stripe_size", ctypes.c_uint32),
        ("stripe_count", ctypes.c_uint32),
        ("k", ctypes.c_uint32),
        ("m", ctypes.c_uint32),
        ("first_ost", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("pack_max", ctypes.c_uint32),
        ("pack_id", ctypes.c_uint64),
        ("pack_off", ctypes.c_uint64),
        ("pack_len", ctypes.c_uint64),
        ("shard_count", ctypes.c_uint32),
        ("shards", _nacre_shard * MAX_STRIPES),
        ("pool", ctypes.c_char * 16),  # NACRE_POOL_NAME_MAX + 1
        ("obj_fid", _nacre_fid),
        ("inline_max", ctypes.c_uint32),
    ]


class _nacre_pack_info(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("live", ctypes.c_uint64),
        ("files", ctypes.c_uint32),
        ("sealed", ctypes.c_bool),
    ]


class _nacre_dirent(ctypes.Structure):
    _fields_ = [
        ("fid", _nacre_fid),
        ("type", _mode_t),
        ("cookie", ctypes.c_uint64),
        ("name", ctypes.c_char * (NAME_MAX + 1)),
    ]


class _nacre_opts(ctypes.Structure):
    _fields_ = [
        ("cred", ctypes.POINTER(_nacre_cred)),
        ("timeout_ms", ctypes.c_int),
        ("retry_ms", ctypes.c_int),
        ("attr_cache_ms", ctypes.c_int),
        ("pack_all", ctypes.c_bool),
        ("pack_max", ctypes.c_uint32),
        ("pack_flush_ms", ctypes.c_int),
        ("readahead_kb", ctypes.c_int),
        ("keyfile", ctypes.c_char_p),
        ("server_peer", ctypes.c_bool),
        ("inline_max", ctypes.c_uint32),
    ]


class _nacre_read_req(ctypes.Structure):
    _fields_ = [
        ("path", ctypes.c_char_p),
        ("buf", ctypes.c_void_p),
        ("cap", _size_t),
        ("result", _ssize_t),
        ("size", ctypes.c_uint64),
    ]


# The structures above by their C names, for the layout test.
C_STRUCTS = {
    "nacre_fid": _nacre_fid,
    "nacre_cred": _nacre_cred,
    "nacre_stat": _nacre_stat,
    "nacre_layout": _nacre_layout,
    "nacre_pack_info": _nacre_pack_info,
    "nacre_dirent": _nacre_dirent,
    "nacre_opts": _nacre_opts,
    "nacre_read_req": _nacre_read_req,
}

# ------------------------------------------------------------------ loading

_P = ctypes.POINTER
_vp = ctypes.c_void_p
_cp = ctypes.c_char_p
_int = ctypes.c_int

# name: (restype, argtypes); a name missing from the library is left unbound
# when it is in _OPTIONAL.
_PROTOS = {
    "nacre_connect": (_int, [_cp, _cp, _P(_nacre_opts), _P(_vp)]),
    "nacre_disconnect": (None, [_vp]),
    "nacre_strerror": (_cp, [_int]),
    "nacre_fid_format": (None, [_P(_nacre_fid), _cp]),
    "nacre_stat": (_int, [_vp, _cp, _P(_nacre_stat)]),
    "nacre_lstat": (_int, [_vp, _cp, _P(_nacre_stat)]),
    "nacre_open": (_int, [_vp, _cp, _int, _mode_t, _P(_vp)]),
    "nacre_pread": (_ssize_t, [_vp, _vp, _size_t, _off_t]),
    "nacre_pwrite": (_ssize_t, [_vp, _vp, _size_t, _off_t]),
    "nacre_fsync": (_int, [_vp]),
    "nacre_ftruncate": (_int, [_vp, ctypes.c_uint64]),
    "nacre_fstat": (_int, [_vp, _P(_nacre_stat)]),
    "nacre_close": (_int, [_vp]),
    "nacre_mkdir": (_int, [_vp, _cp, _mode_t]),
    "nacre_rmdir": (_int, [_vp, _cp]),
    "nacre_unlink": (_int, [_vp, _cp]),
    "nacre_rename": (_int, [_vp, _cp, _cp]),
    "nacre_readdir": (_int, [_vp, _cp, ctypes.c_uint64, _P(_nacre_dirent),
                             ctypes.c_uint, _P(ctypes.c_bool)]),
    "nacre_read_many": (_int, [_vp, _P(_nacre_read_req), _size_t, ctypes.c_uint]),
    "nacre_getlayout": (_int, [_vp, _cp, _P(_nacre_layout)]),
    "nacre_sync": (_int, [_vp]),
}
_OPTIONAL = {"nacre_sync"}

_lib = None
_lib_lock = threading.Lock()


def _library_name():
    name = os.environ.get("NACRE_LIBRARY")
    if name:
        return name
    return ctypes.util.find_library("nacre") or "libnacre.so.0"


def library():
    """The loaded libnacre (a ctypes.CDLL), loading it on first use.

    Raises OSError, naming the library tried, when it cannot be loaded.
    """
    global _lib

    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        name = _library_name()
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise OSError(_errno.ENOENT,
                          "cannot load libnacre from %r (set NACRE_LIBRARY to "
                          "its path): %s" % (name, e)) from None
        for sym, (res, args) in _PROTOS.items():
            try:
                fn = getattr(lib, sym)
            except AttributeError:
                if sym in _OPTIONAL:
                    continue
                raise OSError(_errno.ENOSYS, "%s lacks %s: too old a libnacre"
                              % (name, sym)) from None
            fn.restype = res
            fn.argtypes = args
        _lib = lib
        return lib


def has_sync():
    """True when the loaded libnacre provides nacre_sync()."""
    return hasattr(library(), "nacre_sync")


# ------------------------------------------------------------------ errors

def strerror(code):
    """libnacre's description of a return code (sign ignored)."""
    code = abs(int(code))
    return library().nacre_strerror(-code).decode("utf-8", "replace")


class NacreError(OSError):
    """A failed libnacre call.

    code is the library's code, positive: an errno value (then errno is set
    to it too) or a nacre code >= 4096 (then errno is None).  strerror is
    nacre_strerror()'s text; filename and filename2 name the paths involved.
    Errors with a matching built-in subclass of OSError are raised as a
    class derived from both (NacreFileNotFoundError is a FileNotFoundError).
    """

    def __init__(self, code, filename=None, filename2=None):
        code = abs(int(code))
        eno = code if 0 < code < NACRE_ERROR_BASE else None
        args = [eno, strerror(code)]
        if filename is not None or filename2 is not None:
            args.append(filename)
        if filename2 is not None:
            args += [None, filename2]
        super().__init__(*args)
        self.code = code

    def __reduce__(self):
        return (type(self), (self.code, self.filename, self.filename2))

    def __str__(self):
        if self.errno is not None:
            return super().__str__()
        s = "[nacre %d] %s" % (self.code, self.strerror)
        if self.filename is not None:
            s += ": %r" % (self.filename,)
        if self.filename2 is not None:
            s += " -> %r" % (self.filename2,)
        return s


class NacreFileNotFoundError(NacreError, FileNotFoundError):
    pass


class NacreFileExistsError(NacreError, FileExistsError):
    pass


class NacreNotADirectoryError(NacreError, NotADirectoryError):
    pass


class NacreIsADirectoryError(NacreError, IsADirectoryError):
    pass


class NacrePermissionError(NacreError, PermissionError):
    pass


class NacreTimeoutError(NacreError, TimeoutError):
    pass


class NacreConnectionRefusedError(NacreError, ConnectionRefusedError):
    pass


_ERROR_CLASSES = {
    _errno.ENOENT: NacreFileNotFoundError,
    _errno.EEXIST: NacreFileExistsError,
    _errno.ENOTDIR: NacreNotADirectoryError,
    _errno.EISDIR: NacreIsADirectoryError,
    _errno.EACCES: NacrePermissionError,
    _errno.EPERM: NacrePermissionError,
    _errno.ETIMEDOUT: NacreTimeoutError,
    _errno.ECONNREFUSED: NacreConnectionRefusedError,
}


def _error(code, filename=None, filename2=None):
    code = abs(int(code))
    return _ERROR_CLASSES.get(code, NacreError)(code, filename, filename2)


def _check(rc, filename=None, filename2=None):
    if rc < 0:
        raise _error(rc, filename, filename2)
    return rc


# ------------------------------------------------------------------ results

class Fid(namedtuple("Fid", "seq oid")):
    """A file identifier, as nacre getstripe prints it."""
    __slots__ = ()

    def __str__(self):
        buf = ctypes.create_string_buffer(64)
        library().nacre_fid_format(ctypes.byref(_nacre_fid(self.seq, self.oid)), buf)
        return buf.value.decode()


class StatResult(NamedTuple):
    """Attributes of a file, named as in os.stat_result (times are floats;
    the _ns fields are exact).  st_ino is the FID's oid, as the mount
    reports it; st_dev is 0."""
    st_mode: int
    st_ino: int
    st_dev: int
    st_nlink: int
    st_uid: int
    st_gid: int
    st_size: int
    st_atime: float
    st_mtime: float
    st_ctime: float
    st_atime_ns: int
    st_mtime_ns: int
    st_ctime_ns: int
    st_blocks: int
    st_rdev: int
    fid: Fid


def _ns(ts):
    return ts.tv_sec * 1000000000 + ts.tv_nsec


def _stat_result(st):
    a, m, c = _ns(st.atime), _ns(st.mtime), _ns(st.ctime)
    return StatResult(st.mode, st.fid.oid, 0, st.nlink, st.uid, st.gid,
                      st.size, a / 1e9, m / 1e9, c / 1e9, a, m, c,
                      st.blocks, st.rdev, Fid(st.fid.seq, st.fid.oid))


class Layout(NamedTuple):
    """A file's layout, or a directory's default layout (nacre_getlayout())."""
    stripe_size: int
    stripe_count: int
    k: int
    m: int
    first_ost: int
    flags: int
    pack_max: int
    pack_id: int
    pack_off: int
    pack_len: int
    shards: Tuple[Tuple[int, int], ...]  # (ost, SHARD_* flags) per shard
    inline_max: int = 0     # a directory's: the largest file kept inline

    @property
    def packed(self):
        """The file's bytes are an extent of a pack."""
        return bool(self.flags & LAYOUT_PACKED)

    @property
    def inline(self):
        """The file's bytes are kept in the MDT, with no objects."""
        return bool(self.flags & LAYOUT_INLINE)


class DirEntry(NamedTuple):
    """One directory entry (Filesystem.scandir())."""
    name: str
    path: str
    type: int           # S_IFMT bits
    fid: Fid

    def is_dir(self):
        return _stat.S_ISDIR(self.type)

    def is_file(self):
        return _stat.S_ISREG(self.type)

    def is_symlink(self):
        return _stat.S_ISLNK(self.type)


# ------------------------------------------------------------------ helpers

def _path(p):
    """A path argument as the bytes libnacre takes."""
    b = os.fsencode(os.fspath(p))
    if b"\0" in b:
        raise ValueError("embedded null byte in path %r" % (p,))
    return b


def _str(p):
    return os.fsdecode(os.fspath(p))


def _join(a, b):
    return a.rstrip("/") + "/" + b if a not in ("", "/") else "/" + b


def _rbuf(b):
    """(ctypes array, length) over a writable bytes-like object."""
    mv = memoryview(b)
    if mv.readonly:
        raise TypeError("readinto() needs a writable buffer, not %s"
                        % type(b).__name__)
    mv = mv.cast("B")
    n = mv.nbytes
    return (ctypes.c_char * n).from_buffer(mv), n


def _wbuf(b):
    """(something ctypes passes as a void *, length) for a bytes-like object."""
    if isinstance(b, bytes):
        return b, len(b)
    mv = memoryview(b).cast("B")
    if mv.readonly:
        data = mv.tobytes()
        return data, len(data)
    return (ctypes.c_char * mv.nbytes).from_buffer(mv), mv.nbytes


_FLAG_MODES = {
    "r": os.O_RDONLY,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}


def _open_flags(flags):
    """open(2) flags from an int of os.O_* or a mode string ("rb", "w+b")."""
    if isinstance(flags, int):
        return flags
    if not isinstance(flags, str):
        raise TypeError("flags must be an int of os.O_* or a mode string, not %s"
                        % type(flags).__name__)
    s = flags
    base = [c for c in s if c in _FLAG_MODES]
    if len(base) != 1 or any(c not in "rwaxb+" for c in s) or \
            s.count("+") > 1 or s.count("b") > 1:
        raise ValueError("invalid mode %r (one of r, w, a, x, then optional + "
                         "and b; files are always binary)" % s)
    f = _FLAG_MODES[base[0]]
    if "+" in s:
        f = (f & ~(os.O_WRONLY | os.O_RDONLY)) | os.O_RDWR
    return f


# ------------------------------------------------------------------ Filesystem

_OPT_NAMES = ("timeout_ms", "retry_ms", "attr_cache_ms", "pack_all",
              "pack_max", "pack_flush_ms", "readahead_kb", "keyfile",
              "inline_max")
_READDIR_BATCH = 256
_READ_MANY_BUF = 1 << 30        # at most this much buffer per nacre_read_many


class Filesystem:
    """A connection to the filesystem @fsname whose MDS listens at @mds
    ("tcp://host:port" or "host:port").

    Options, as in struct nacre_opts: timeout_ms, retry_ms, attr_cache_ms
    (how long names and attributes may be reused; negative: never),
    pack_all, pack_max, pack_flush_ms, readahead_kb (sequential readahead
    per open file; negative: none), inline_max (with pack_all: files up to
    this many bytes, at most 4096, keep their bytes in the MDT).  0 or absent means the library's
    default.  keyfile: the cluster key file (default: $NACRE_KEYFILE, else
    /etc/nacre/FSNAME.key).

    A context manager: leaving the block (or close()) closes every File
    still open on it, then disconnects.  Usable from many threads, but only
    in the process that connected it.
    """

    def __init__(self, mds, fsname, **opts):
        unknown = sorted(set(opts) - set(_OPT_NAMES))
        if unknown:
            raise TypeError("unknown option(s) %s; known: %s"
                            % (", ".join(unknown), ", ".join(_OPT_NAMES)))
        lib = library()
        o = _nacre_opts()
        keyfile = None
        for k, v in opts.items():
            if k == "pack_all":
                o.pack_all = bool(v)
            elif k == "keyfile":
                if v is not None:
                    # Kept referenced until nacre_connect() returns.
                    keyfile = _path(v)
                    o.keyfile = keyfile
            elif not isinstance(v, int) or isinstance(v, bool):
                raise TypeError("option %s must be an int" % k)
            elif k in ("pack_max", "inline_max") and not 0 <= v < 1 << 32:
                raise ValueError("%s must be in 0..2**32-1" % k)
            elif k not in ("pack_max", "inline_max") and \
                    not -(1 << 31) <= v < 1 << 31:
                raise ValueError("option %s out of range" % k)
            else:
                setattr(o, k, v)
        self.mds = _str(mds)
        self.fsname = _str(fsname)
        self.options = dict(opts)
        self._pid = os.getpid()
        self._files = weakref.WeakSet()
        self._h = None
        h = _vp()
        rc = lib.nacre_connect(_path(mds), _path(fsname), ctypes.byref(o),
                               ctypes.byref(h))
        _check(rc, self.mds)
        self._h = h.value

    @classmethod
    def connect(cls, mds, fsname, **opts):
        """Same as Filesystem(mds, fsname, **opts)."""
        return cls(mds, fsname, **opts)

    def __repr__(self):
        state = "closed" if self._h is None else "pid %d" % self._pid
        return "<nacre.Filesystem %s:/%s (%s)>" % (self.mds, self.fsname, state)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return self._h is None

    def _handle(self):
        if self._h is None:
            raise ValueError("operation on a closed nacre.Filesystem")
        if self._pid != os.getpid():
            raise RuntimeError(
                "this nacre.Filesystem was connected by process %d and cannot "
                "be used in process %d: a connection does not survive fork(); "
                "connect again in this process" % (self._pid, os.getpid()))
        return self._h

    def close(self):
        """Closes every open File of this connection, then disconnects.

        In a process other than the one that connected, only forgets the
        handle: the connection belongs to the parent.
        """
        if self._h is None:
            return
        if self._pid == os.getpid():
            for f in list(self._files):
                try:
                    f.close()
                except OSError:
                    pass
            library().nacre_disconnect(self._h)
        self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ---- attributes

    def stat(self, path):
        """Attributes of @path, following symbolic links."""
        st = _nacre_stat()
        _check(library().nacre_stat(self._handle(), _path(path), ctypes.byref(st)),
               _str(path))
        return _stat_result(st)

    def lstat(self, path):
        """Attributes of @path itself when it is a symbolic link."""
        st = _nacre_stat()
        _check(library().nacre_lstat(self._handle(), _path(path), ctypes.byref(st)),
               _str(path))
        return _stat_result(st)

    def exists(self, path):
        try:
            self.stat(path)
        except FileNotFoundError:
            return False
        return True

    def isdir(self, path):
        try:
            return _stat.S_ISDIR(self.stat(path).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return False

    def isfile(self, path):
        try:
            return _stat.S_ISREG(self.stat(path).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return False

    def getlayout(self, path):
        """@path's layout (a file) or default layout (a directory)."""
        lo = _nacre_layout()
        _check(library().nacre_getlayout(self._handle(), _path(path),
                                         ctypes.byref(lo)), _str(path))
        n = min(lo.shard_count, MAX_STRIPES)
        return Layout(lo.stripe_size, lo.stripe_count, lo.k, lo.m,
                      lo.first_ost, lo.flags, lo.pack_max, lo.pack_id,
                      lo.pack_off, lo.pack_len,
                      tuple((lo.shards[i].ost, lo.shards[i].flags)
                            for i in range(n)), lo.inline_max)

    # ---- namespace

    def mkdir(self, path, mode=0o777):
        _check(library().nacre_mkdir(self._handle(), _path(path), mode),
               _str(path))

    def makedirs(self, path, mode=0o777, exist_ok=False):
        """Creates @path and every missing directory above it (os.makedirs)."""
        p = _str(path)
        parts = [c for c in p.split("/") if c]
        if not parts:
            if not exist_ok:
                raise _error(_errno.EEXIST, p)
            return
        cur = ""
        for i, c in enumerate(parts):
            cur += "/" + c
            last = i == len(parts) - 1
            try:
                self.mkdir(cur, mode)
            except FileExistsError:
                if last and not exist_ok:
                    raise
                if not self.isdir(cur):
                    raise _error(_errno.ENOTDIR if not last else _errno.EEXIST,
                                 cur) from None

    def rmdir(self, path):
        _check(library().nacre_rmdir(self._handle(), _path(path)), _str(path))

    def unlink(self, path):
        _check(library().nacre_unlink(self._handle(), _path(path)), _str(path))

    remove = unlink

    def rename(self, src, dst):
        _check(library().nacre_rename(self._handle(), _path(src), _path(dst)),
               _str(src), _str(dst))

    def scandir(self, path="/"):
        """Yields a DirEntry for each entry of directory @path ("." and ".."
        left out), reading the directory a batch at a time."""
        lib = library()
        p = _path(path)
        base = _str(path)
        ents = (_nacre_dirent * _READDIR_BATCH)()
        eof = ctypes.c_bool(False)
        cookie = 0
        while True:
            n = _check(lib.nacre_readdir(self._handle(), p, cookie, ents,
                                         _READDIR_BATCH, ctypes.byref(eof)), base)
            for i in range(n):
                e = ents[i]
                name = os.fsdecode(e.name)
                yield DirEntry(name, _join(base, name), e.type,
                               Fid(e.fid.seq, e.fid.oid))
            if eof.value:
                return
            if n == 0:
                raise _error(_errno.EIO, base)  # no progress and no end
            cookie = ents[n - 1].cookie

    def listdir(self, path="/"):
        """The names in directory @path, in the directory's order."""
        return [e.name for e in self.scandir(path)]

    def walk(self, top="/", topdown=True, onerror=None):
        """os.walk() over the filesystem: yields (dirpath, dirnames,
        filenames).  Entries are classified by their directory entry type;
        symbolic links are listed among the filenames and not followed."""
        top = _str(top)
        try:
            entries = list(self.scandir(top))
        except OSError as e:
            if onerror is not None:
                onerror(e)
            return
        dirs = [e.name for e in entries if e.is_dir()]
        files = [e.name for e in entries if not e.is_dir()]
        if topdown:
            yield top, dirs, files
        for d in dirs:
            yield from self.walk(_join(top, d), topdown, onerror)
        if not topdown:
            yield top, dirs, files

    # ---- data

    def open(self, path, flags="rb", mode=0o666):
        """Opens @path.  @flags: os.O_* bits (O_RDONLY, O_WRONLY, O_RDWR,
        O_CREAT, O_EXCL, O_TRUNC, O_APPEND) or a mode string as for open()
        ("rb", "wb", "ab", "xb", "r+b", ...); @mode: permissions of a new
        file."""
        fl = _open_flags(flags)
        h = _vp()
        _check(library().nacre_open(self._handle(), _path(path), fl, mode,
                                    ctypes.byref(h)), _str(path))
        f = File(self, h.value, _str(path), fl)
        self._files.add(f)
        return f

    def read_bytes(self, path):
        """The whole content of @path."""
        with self.open(path, os.O_RDONLY) as f:
            return f.read()

    def write_bytes(self, path, data, mode=0o666):
        """Creates or truncates @path and writes @data to it."""
        with self.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode) as f:
            f.write(data)

    def sync(self):
        """nacre_sync(): commits every packed file this connection closed
        but has not yet committed, so that other clients see them."""
        lib = library()
        if not hasattr(lib, "nacre_sync"):
            raise NotImplementedError("this libnacre has no nacre_sync()")
        _check(lib.nacre_sync(self._handle()))

    def read_many(self, paths, depth=0, max_size=1 << 30, size_hint=1 << 20):
        """Reads whole files, many at once (nacre_read_many()).

        Returns a list in the order of @paths: each entry the file's bytes,
        or the NacreError its read raised (a missing path gives a
        NacreFileNotFoundError).  Up to @depth files are in flight at once
        (0: the library's default).  A file larger than @max_size bytes
        gives NacreError(EFBIG).  Files up to @size_hint bytes are read in
        one pass; larger ones again, with room for their size.
        """
        if not isinstance(depth, int) or not 0 <= depth < 1 << 32:
            raise ValueError("depth must be an int in 0..2**32-1")
        if max_size < 0 or size_hint < 0:
            raise ValueError("max_size and size_hint must not be negative")
        names = [_str(p) for p in paths]
        bpaths = [_path(p) for p in paths]
        h = self._handle()
        out = [None] * len(names)
        hint = min(size_hint, max_size)
        todo = [(i, hint) for i in range(len(names))]
        for attempt in range(3):
            again = []
            batch, room = [], 0
            for item in todo:
                # Calls of at most _READ_MANY_BUF bytes of buffer (or one file).
                if batch and room + item[1] > _READ_MANY_BUF:
                    again += self._read_batch(h, bpaths, names, batch, depth,
                                              max_size, out, attempt == 2)
                    batch, room = [], 0
                batch.append(item)
                room += item[1]
            if batch:
                again += self._read_batch(h, bpaths, names, batch, depth,
                                          max_size, out, attempt == 2)
            if not again:
                break
            todo = again
        return out

    def _read_batch(self, h, bpaths, names, batch, depth, max_size, out, last):
        """One nacre_read_many() of @batch [(index, cap)]; fills @out and
        returns the [(index, size)] to read again with more room."""
        total = sum(cap for _, cap in batch)
        mm = mmap.mmap(-1, max(total, 1))   # zero pages: touched only if used
        again = []
        try:
            arr = (ctypes.c_char * max(total, 1)).from_buffer(mm)
            base = ctypes.addressof(arr)
            reqs = (_nacre_read_req * len(batch))()
            off = 0
            for j, (i, cap) in enumerate(batch):
                reqs[j].path = bpaths[i]
                reqs[j].buf = base + off if cap else None
                reqs[j].cap = cap
                off += cap
            _check(library().nacre_read_many(h, reqs, len(batch), depth))
            for j, (i, cap) in enumerate(batch):
                r = reqs[j]
                if r.result < 0:
                    out[i] = _error(r.result, names[i])
                elif r.size > max_size:
                    out[i] = _error(_errno.EFBIG, names[i])
                elif r.size > cap:
                    if last:
                        out[i] = _error(_E_CHANGED, names[i])
                    else:
                        again.append((i, r.size))
                else:
                    out[i] = ctypes.string_at(r.buf, r.result) if r.result else b""
            del arr
        finally:
            mm.close()
        return again


def connect(mds, fsname, **opts):
    """Connects to a nacre filesystem: Filesystem(mds, fsname, **opts)."""
    return Filesystem(mds, fsname, **opts)


# ------------------------------------------------------------------ File

class File(io.RawIOBase):
    """An open file (Filesystem.open()): a raw binary stream with a position,
    plus pread/pwrite at explicit offsets, which many threads may issue at
    once.  Wrap it in io.BufferedReader for small reads."""

    def __init__(self, fs, handle, name, flags):
        super().__init__()
        self._fs = fs
        self._h = handle
        self._pid = os.getpid()
        self.name = name
        self.flags = flags
        self._pos = 0
        acc = flags & os.O_ACCMODE
        self._readable = acc in (os.O_RDONLY, os.O_RDWR)
        self._writable = acc in (os.O_WRONLY, os.O_RDWR)
        self._append = bool(flags & os.O_APPEND)

    def __repr__(self):
        return "<nacre.File %r%s>" % (self.name, " closed" if self.closed else "")

    def _handle(self):
        if self._h is None:
            raise ValueError("I/O operation on closed nacre.File")
        if self._pid != os.getpid():
            raise RuntimeError("this nacre.File was opened by process %d; a "
                               "connection does not survive fork()" % self._pid)
        return self._h

    def readable(self):
        return self._readable

    def writable(self):
        return self._writable

    def seekable(self):
        return True

    def close(self):
        """Reports size and mtime to the MDS and frees the handle."""
        if self._h is None:
            super().close()
            return
        h, self._h = self._h, None
        rc = 0
        if self._pid == os.getpid():
            rc = library().nacre_close(h)
            self._fs._files.discard(self)
        super().close()
        _check(rc, self.name)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ---- positioned I/O

    def preadinto(self, b, offset):
        """Reads into the writable buffer @b at @offset; returns the bytes
        read (0 at the end of the file)."""
        arr, n = _rbuf(b)
        if n == 0:
            return 0
        if offset < 0:
            raise ValueError("negative offset")
        h = self._handle()
        lib = library()
        done = 0
        base = ctypes.addressof(arr)
        while done < n:
            got = lib.nacre_pread(h, base + done, n - done, offset + done)
            if got < 0:
                raise _error(got, self.name)
            if got == 0:
                break
            done += got
        return done

    def pread(self, size, offset):
        """Up to @size bytes at @offset (fewer only at the end of the file)."""
        if size < 0:
            raise ValueError("negative size")
        buf = bytearray(size)
        n = self.preadinto(buf, offset)
        del buf[n:]
        return bytes(buf)

    def pwrite(self, data, offset):
        """Writes @data at @offset (at the end with O_APPEND); returns its
        length."""
        if offset < 0:
            raise ValueError("negative offset")
        obj, n = _wbuf(data)
        if n == 0:
            return 0
        h = self._handle()
        lib = library()
        if isinstance(obj, bytes):
            base = ctypes.cast(ctypes.c_char_p(obj), _vp).value
        else:
            base = ctypes.addressof(obj)
        done = 0
        while done < n:
            got = lib.nacre_pwrite(h, base + done, n - done, offset + done)
            if got < 0:
                raise _error(got, self.name)
            if got == 0:
                raise _error(_errno.EIO, self.name)
            done += got
        return n

    # ---- stream I/O

    def readinto(self, b):
        n = self.preadinto(b, self._pos)
        self._pos += n
        return n

    def read(self, size=-1):
        if size is None or size < 0:
            return self.readall()
        data = self.pread(size, self._pos)
        self._pos += len(data)
        return data

    def readall(self):
        chunks = []
        want = max(self.fstat().st_size - self._pos, 0) + 1
        while True:
            data = self.pread(max(want, 1 << 16), self._pos)
            if not data:
                break
            self._pos += len(data)
            chunks.append(data)
            want = 1 << 20
        return b"".join(chunks)

    def write(self, b):
        n = self.pwrite(b, self._pos)
        if self._append:
            self._pos = self.fstat().st_size
        else:
            self._pos += n
        return n

    def seek(self, offset, whence=os.SEEK_SET):
        if whence == os.SEEK_SET:
            pos = offset
        elif whence == os.SEEK_CUR:
            pos = self._pos + offset
        elif whence == os.SEEK_END:
            pos = self.fstat().st_size + offset
        else:
            raise ValueError("invalid whence %r" % (whence,))
        if pos < 0:
            raise _error(_errno.EINVAL, self.name)
        self._handle()
        self._pos = pos
        return pos

    def tell(self):
        self._handle()
        return self._pos

    def truncate(self, size=None):
        if size is None:
            size = self._pos
        if size < 0:
            raise ValueError("negative size")
        _check(library().nacre_ftruncate(self._handle(), size), self.name)
        return size

    def fsync(self):
        """Makes written data durable on the OSTs and the size on the MDS."""
        _check(library().nacre_fsync(self._handle()), self.name)

    def fstat(self):
        st = _nacre_stat()
        _check(library().nacre_fstat(self._handle(), ctypes.byref(st)), self.name)
        return _stat_result(st)

    stat = fstat
