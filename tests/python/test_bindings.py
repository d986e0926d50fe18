# SPDX-License-Identifier: MIT
"""Tests of the Python bindings (bindings/python) against a running nacre.

    NACRE_MDS=tcp://127.0.0.1:7300 NACRE_FSNAME=nacre NACRE_MOUNT=/mnt/nacre \\
    PYTHONPATH=bindings/python NACRE_LIBRARY=build/.libs/libnacre.so.0 \\
        python3 tests/python/test_bindings.py -v

NACRE_MOUNT is the FUSE mount of the same filesystem, for round trips
between libnacre and the kernel's view.  Without NACRE_MDS and NACRE_FSNAME
only the structure layout tests run.  NACRE_INCLUDE names the folder of
nacre.h (default: libclient/ of this source tree).
"""

import errno
import os
import pickle
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

import nacre
import nacre.dataset
from nacre.dataset import NacreFileDataset, worker_init_fn

try:
    import torch
    import torch.utils.data
except ImportError:
    torch = None

MDS = os.environ.get("NACRE_MDS")
FSNAME = os.environ.get("NACRE_FSNAME")
MOUNT = os.environ.get("NACRE_MOUNT")
HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.environ.get("NACRE_INCLUDE") or os.path.join(HERE, "..", "..", "libclient")

needs_fs = unittest.skipUnless(MDS and FSNAME, "NACRE_MDS and NACRE_FSNAME not set")
needs_mount = unittest.skipUnless(MDS and FSNAME and MOUNT, "NACRE_MOUNT not set")


def data_of(size, seed):
    return random.Random(seed).randbytes(size)


def keep_list(batch):
    return batch


# ------------------------------------------------------------------ layouts

class LayoutTest(unittest.TestCase):
    """The ctypes structures mirror nacre.h byte for byte."""

    @unittest.skipUnless(sys.platform.startswith("linux") and
                         os.uname().machine == "x86_64", "sizes are of x86-64 Linux")
    def test_documented_sizes(self):
        import ctypes
        S = nacre.C_STRUCTS
        want = {"nacre_fid": 16, "nacre_cred": 140, "nacre_stat": 112,
                "nacre_layout": 616, "nacre_pack_info": 32, "nacre_dirent": 288,
                "nacre_opts": 56, "nacre_read_req": 40}
        for name, size in want.items():
            self.assertEqual(ctypes.sizeof(S[name]), size, name)
        st = S["nacre_stat"]
        self.assertEqual((st.mode.offset, st.nlink.offset, st.uid.offset,
                          st.size.offset, st.rdev.offset, st.atime.offset,
                          st.ctime.offset), (16, 24, 32, 40, 56, 64, 96))
        self.assertEqual(S["nacre_dirent"].cookie.offset, 24)
        self.assertEqual(S["nacre_dirent"].name.offset, 32)
        self.assertEqual(S["nacre_layout"].shards.offset, 60)
        self.assertEqual(S["nacre_layout"].pool.offset, 572)
        self.assertEqual(S["nacre_layout"].obj_fid.offset, 592)
        self.assertEqual(S["nacre_layout"].inline_max.offset, 608)
        self.assertEqual(S["nacre_opts"].pack_all.offset, 20)
        self.assertEqual(S["nacre_opts"].keyfile.offset, 40)
        self.assertEqual(S["nacre_opts"].inline_max.offset, 52)
        self.assertEqual(S["nacre_read_req"].result.offset, 24)

    def test_matches_compiler(self):
        """Every offset and size against a C program built from nacre.h."""
        header = os.path.join(INCLUDE, "nacre.h")
        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        if not cc or not os.path.exists(header):
            self.skipTest("no C compiler or no nacre.h at %s" % header)
        lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "nacre.h"',
                 "int main(void)", "{"]
        want = {}
        for name, cls in sorted(nacre.C_STRUCTS.items()):
            lines.append('\tprintf("%s size %%zu\\n", sizeof(struct %s));' % (name, name))
            want["%s size" % name] = ctypes_sizeof(cls)
            for field, *_ in cls._fields_:
                d = getattr(cls, field)
                lines.append('\tprintf("%s.%s %%zu %%zu\\n", offsetof(struct %s, %s), '
                             'sizeof(((struct %s *)0)->%s));'
                             % (name, field, name, field, name, field))
                want["%s.%s" % (name, field)] = "%d %d" % (d.offset, d.size)
        lines += ["\treturn 0;", "}"]
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "layout.c")
            exe = os.path.join(tmp, "layout")
            with open(src, "w") as f:
                f.write("\n".join(lines) + "\n")
            subprocess.run([cc, "-std=gnu11", "-D_FILE_OFFSET_BITS=64", "-I", INCLUDE,
                            src, "-o", exe], check=True)
            out = subprocess.run([exe], check=True, capture_output=True,
                                 text=True).stdout
        got = {}
        for line in out.splitlines():
            key, rest = line.split(" ", 1)
            if rest.startswith("size "):
                got[key + " size"] = int(rest.split()[1])
            else:
                got[key] = rest
        self.assertEqual(len(got), len(want))
        for key, value in want.items():
            self.assertEqual(got[key], value, key)


def ctypes_sizeof(cls):
    import ctypes
    return ctypes.sizeof(cls)


class OfflineTest(unittest.TestCase):
    """What needs no server."""

    def test_error_classes(self):
        e = nacre._error(-errno.ENOENT, "/a")
        self.assertIsInstance(e, nacre.NacreError)
        self.assertIsInstance(e, FileNotFoundError)
        self.assertEqual((e.errno, e.code, e.filename), (errno.ENOENT, errno.ENOENT, "/a"))
        self.assertEqual(e.strerror, os.strerror(errno.ENOENT))
        e = nacre._error(-4098)
        self.assertIsNone(e.errno)
        self.assertEqual(e.code, 4098)
        self.assertIn("filesystem name", str(e))
        e2 = pickle.loads(pickle.dumps(nacre._error(errno.EEXIST, "/x", "/y")))
        self.assertIsInstance(e2, FileExistsError)
        self.assertEqual((e2.errno, e2.filename, e2.filename2), (errno.EEXIST, "/x", "/y"))

    def test_open_flags(self):
        f = nacre._open_flags
        self.assertEqual(f("rb"), os.O_RDONLY)
        self.assertEqual(f("wb"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        self.assertEqual(f("r+b"), os.O_RDWR)
        self.assertEqual(f("ab"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        self.assertEqual(f("x"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        self.assertEqual(f(os.O_RDWR | os.O_CREAT), os.O_RDWR | os.O_CREAT)
        for bad in ("", "rw", "rt", "q", "r++"):
            with self.assertRaises(ValueError):
                f(bad)
        with self.assertRaises(TypeError):
            f(1.5)

    def test_connect_refused(self):
        # Port 1 on loopback: nothing listens there.
        with self.assertRaises(nacre.NacreError) as cm:
            nacre.connect("tcp://127.0.0.1:1", "nacre", timeout_ms=2000, retry_ms=1)
        self.assertIsNotNone(cm.exception.strerror)

    def test_bad_options(self):
        with self.assertRaises(TypeError):
            nacre.connect("tcp://127.0.0.1:1", "nacre", no_such_option=1)
        with self.assertRaises(TypeError):
            nacre.connect("tcp://127.0.0.1:1", "nacre", timeout_ms="10")

    def test_library_not_found(self):
        env = dict(os.environ, NACRE_LIBRARY="/nonexistent/libnacre.so.0")
        r = subprocess.run([sys.executable, "-c",
                            "import nacre\ntry:\n    nacre.connect('tcp://127.0.0.1:1', 'x')\n"
                            "except OSError as e:\n    print('OSE', e)"],
                           env=env, capture_output=True, text=True)
        self.assertIn("OSE", r.stdout, r.stderr)
        self.assertIn("/nonexistent/libnacre.so.0", r.stdout)
        self.assertIn("NACRE_LIBRARY", r.stdout)

    def test_dataset_needs_a_filesystem(self):
        env = dict(os.environ)
        env.pop("NACRE_MDS", None)
        env.pop("NACRE_FSNAME", None)
        r = subprocess.run([sys.executable, "-c",
                            "from nacre.dataset import NacreFileDataset as D\n"
                            "try:\n    D('/x')\nexcept ValueError as e:\n    print('VE', e)"],
                           env=env, capture_output=True, text=True)
        self.assertIn("VE", r.stdout, r.stderr)


# ------------------------------------------------------------------ bindings

class FsTestCase(unittest.TestCase):
    """A connection and a fresh directory per class."""

    @classmethod
    def setUpClass(cls):
        cls.fs = nacre.connect(MDS, FSNAME)
        cls.base = "/py.%s.%d" % (cls.__name__, os.getpid())
        cls.fs.makedirs(cls.base)

    @classmethod
    def tearDownClass(cls):
        cls.fs.close()
        if MOUNT:
            shutil.rmtree(MOUNT + cls.base, ignore_errors=True)

    def p(self, *names):
        return "/".join((self.base,) + names)


@needs_fs
class BindingsTest(FsTestCase):

    def test_cluster_key(self):
        """keyfile= names the cluster key; a wrong or missing one fails."""
        with tempfile.TemporaryDirectory() as d:
            wrong = os.path.join(d, "wrong.key")
            fd = os.open(wrong, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, b"ab" * 32 + b"\n")
            os.close(fd)
            with self.assertRaises(nacre.NacreError) as cm:
                nacre.connect(MDS, FSNAME, keyfile=wrong)
            self.assertEqual(cm.exception.code, 4110)
            self.assertIn("wrong or missing cluster key", cm.exception.strerror)
            with self.assertRaises(nacre.NacreError) as cm:
                nacre.connect(MDS, FSNAME, keyfile=os.path.join(d, "none.key"))
            self.assertEqual(cm.exception.code, 4111)
        key = os.environ.get("NACRE_KEYFILE")
        if key:
            with nacre.connect(MDS, FSNAME, keyfile=key) as fs:
                self.assertTrue(fs.exists("/"))

    def test_roundtrip(self):
        for i, size in enumerate([0, 1, 4095, 4096, 65537, (1 << 20) + 7,
                                  (3 << 20) + 123]):
            data = data_of(size, i)
            path = self.p("rt%d" % i)
            with self.fs.open(path, "wb") as f:
                self.assertEqual(f.write(data), size)
                self.assertEqual(f.tell(), size)
            self.assertEqual(self.fs.stat(path).st_size, size)
            self.assertTrue(stat.S_ISREG(self.fs.stat(path).st_mode))
            self.assertEqual(self.fs.read_bytes(path), data)
            with self.fs.open(path) as f:
                self.assertEqual(f.read(), data)
                self.assertEqual(f.read(), b"")
                if size > 10:
                    self.assertEqual(f.pread(10, size - 10), data[-10:])
                    self.assertEqual(f.pread(100, size - 3), data[-3:])
                    self.assertEqual(f.seek(5), 5)
                    self.assertEqual(f.read(3), data[5:8])
                    self.assertEqual(f.tell(), 8)
                    buf = bytearray(7)
                    self.assertEqual(f.readinto(buf), 7)
                    self.assertEqual(bytes(buf), data[8:15])
                    self.assertEqual(f.seek(-4, os.SEEK_END), size - 4)
                    self.assertEqual(f.read(), data[-4:])
                self.assertEqual(f.fstat().st_size, size)

    def test_pwrite_append_truncate(self):
        path = self.p("pw")
        with self.fs.open(path, os.O_RDWR | os.O_CREAT, 0o640) as f:
            self.assertEqual(f.pwrite(b"world", 6), 5)
            self.assertEqual(f.pwrite(bytearray(b"hello "), 0), 6)
            f.fsync()
            self.assertEqual(f.fstat().st_size, 11)
            self.assertEqual(f.pread(64, 0), b"hello world")
            f.truncate(5)
            self.assertEqual(f.fstat().st_size, 5)
        self.assertEqual(stat.S_IMODE(self.fs.stat(path).st_mode), 0o640)
        with self.fs.open(path, "ab") as f:
            f.write(memoryview(b"!!"))
            self.assertEqual(f.tell(), 7)
        self.assertEqual(self.fs.read_bytes(path), b"hello!!")
        with self.fs.open(path, "wb") as f:     # O_TRUNC
            f.write(b"x")
        self.assertEqual(self.fs.read_bytes(path), b"x")
        with self.fs.open(path, "rb") as f:
            with self.assertRaises(TypeError):
                f.readinto(b"immutable")

    @needs_mount
    def test_mount_roundtrip(self):
        data = data_of((2 << 20) + 333, 10)
        path = self.p("to_mount")
        self.fs.write_bytes(path, data)
        with open(MOUNT + path, "rb") as f:
            self.assertEqual(f.read(), data)
        st_k, st_n = os.stat(MOUNT + path), self.fs.stat(path)
        self.assertEqual(st_k.st_ino, st_n.st_ino)
        self.assertEqual(st_k.st_size, st_n.st_size)
        self.assertEqual(stat.S_IFMT(st_k.st_mode), stat.S_IFMT(st_n.st_mode))

        data = data_of(300001, 11)
        path = self.p("from_mount")
        with open(MOUNT + path, "wb") as f:
            f.write(data)
        self.assertEqual(self.fs.read_bytes(path), data)
        self.assertEqual(self.fs.read_many([path]), [data])
        self.assertEqual(self.fs.stat(path).st_size, len(data))
        os.mkdir(MOUNT + self.p("mdir"))
        self.assertTrue(self.fs.isdir(self.p("mdir")))
        os.symlink("from_mount", MOUNT + self.p("link"))
        self.assertTrue(stat.S_ISLNK(self.fs.lstat(self.p("link")).st_mode))
        self.assertEqual(self.fs.stat(self.p("link")).fid, self.fs.stat(path).fid)
        self.assertEqual(self.fs.read_bytes(self.p("link")), data)
        ents = {e.name: e for e in self.fs.scandir(self.base)}
        self.assertTrue(ents["link"].is_symlink())

    def test_errors(self):
        fs = self.fs
        with self.assertRaises(nacre.NacreError) as cm:
            fs.stat(self.p("missing"))
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertIsInstance(cm.exception, FileNotFoundError)
        self.assertEqual(cm.exception.filename, self.p("missing"))
        self.assertEqual(cm.exception.strerror, os.strerror(errno.ENOENT))
        with self.assertRaises(nacre.NacreError) as cm:
            fs.open(self.p("missing"))
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        fs.mkdir(self.p("d"))
        with self.assertRaises(nacre.NacreError) as cm:
            fs.mkdir(self.p("d"))
        self.assertEqual(cm.exception.errno, errno.EEXIST)
        self.assertIsInstance(cm.exception, FileExistsError)
        fs.write_bytes(self.p("f"), b"file")
        with self.assertRaises(nacre.NacreError) as cm:
            fs.open(self.p("f"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        self.assertEqual(cm.exception.errno, errno.EEXIST)
        for call in (lambda: fs.stat(self.p("f", "x")),
                     lambda: fs.mkdir(self.p("f", "x")),
                     lambda: fs.listdir(self.p("f"))):
            with self.assertRaises(nacre.NacreError) as cm:
                call()
            self.assertEqual(cm.exception.errno, errno.ENOTDIR)
            self.assertIsInstance(cm.exception, NotADirectoryError)
        fs.write_bytes(self.p("d", "inside"), b"")
        with self.assertRaises(nacre.NacreError) as cm:
            fs.rmdir(self.p("d"))
        self.assertEqual(cm.exception.errno, errno.ENOTEMPTY)
        with self.assertRaises(nacre.NacreError) as cm:
            fs.unlink(self.p("missing"))
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        with self.assertRaises(nacre.NacreError) as cm:
            fs.rename(self.p("missing"), self.p("other"))
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertEqual(cm.exception.filename2, self.p("other"))
        with self.assertRaises(ValueError):
            fs.stat(self.p("nul\0byte"))
        with self.assertRaises(nacre.NacreError) as cm:
            fs.getlayout(self.p("missing"))
        self.assertEqual(cm.exception.errno, errno.ENOENT)

    def test_wrong_fsname(self):
        with self.assertRaises(nacre.NacreError) as cm:
            nacre.connect(MDS, FSNAME + "-not")
        self.assertEqual(cm.exception.code, 4098)
        self.assertIsNone(cm.exception.errno)

    def test_namespace(self):
        fs = self.fs
        fs.mkdir(self.p("ns"))
        fs.write_bytes(self.p("ns", "a"), b"A")
        fs.rename(self.p("ns", "a"), self.p("ns", "b"))
        self.assertFalse(fs.exists(self.p("ns", "a")))
        self.assertEqual(fs.read_bytes(self.p("ns", "b")), b"A")
        fs.unlink(self.p("ns", "b"))
        self.assertEqual(fs.listdir(self.p("ns")), [])
        fs.rmdir(self.p("ns"))
        self.assertFalse(fs.exists(self.p("ns")))

    def test_makedirs(self):
        fs = self.fs
        fs.makedirs(self.p("m1", "m2", "m3"))
        self.assertTrue(fs.isdir(self.p("m1", "m2", "m3")))
        fs.makedirs(self.p("m1", "m2", "m3"), exist_ok=True)
        with self.assertRaises(FileExistsError):
            fs.makedirs(self.p("m1", "m2"))
        fs.write_bytes(self.p("m1", "file"), b"")
        with self.assertRaises(nacre.NacreError) as cm:
            fs.makedirs(self.p("m1", "file", "below"), exist_ok=True)
        self.assertEqual(cm.exception.errno, errno.ENOTDIR)
        with self.assertRaises(FileExistsError):
            fs.makedirs(self.p("m1", "file"), exist_ok=True)

    def test_listdir_walk(self):
        fs = self.fs
        top = self.p("ls")
        fs.mkdir(top)
        want_files = {"f%03d" % i for i in range(290)}     # more than one batch
        want_dirs = {"d%d" % i for i in range(12)}
        for n in want_files:
            fs.write_bytes(top + "/" + n, n.encode())
        for n in want_dirs:
            fs.mkdir(top + "/" + n)
        fs.write_bytes(top + "/d3/deep", b"x")
        names = fs.listdir(top)
        self.assertEqual(len(names), len(want_files) + len(want_dirs))
        self.assertEqual(set(names), want_files | want_dirs)
        ents = {e.name: e for e in fs.scandir(top)}
        self.assertTrue(ents["d0"].is_dir() and not ents["d0"].is_file())
        self.assertTrue(ents["f000"].is_file())
        self.assertEqual(ents["f007"].path, top + "/f007")
        self.assertEqual(ents["f007"].fid, fs.stat(top + "/f007").fid)
        self.assertEqual(fs.listdir(top + "/d0"), [])
        walked = {d: (sorted(ds), sorted(fs_)) for d, ds, fs_ in fs.walk(top)}
        self.assertEqual(walked[top], (sorted(want_dirs), sorted(want_files)))
        self.assertEqual(walked[top + "/d3"], ([], ["deep"]))
        self.assertEqual(len(walked), 1 + len(want_dirs))
        if MOUNT:
            self.assertEqual(sorted(os.listdir(MOUNT + top)), sorted(names))

    def test_read_many(self):
        fs = self.fs
        top = self.p("rm")
        fs.mkdir(top)
        rng = random.Random(5)
        sizes = [0, 0, 1, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20]
        sizes += [rng.randint(0, 300 << 10) for _ in range(200 - len(sizes))]
        paths, want = [], []
        for i, size in enumerate(sizes):
            paths.append("%s/%03d" % (top, i))
            want.append(data_of(size, 100 + i))
            fs.write_bytes(paths[-1], want[-1])
        missing = top + "/missing"
        paths.insert(57, missing)
        want.insert(57, None)
        for kw in ({}, {"depth": 1}, {"depth": 16, "size_hint": 1000}):
            got = fs.read_many(paths, **kw)
            self.assertEqual(len(got), len(paths))
            for p, g, w in zip(paths, got, want):
                if w is None:
                    self.assertIsInstance(g, nacre.NacreError, kw)
                    self.assertEqual(g.errno, errno.ENOENT)
                    self.assertEqual(g.filename, missing)
                else:
                    self.assertIsInstance(g, bytes, (p, kw))
                    self.assertEqual(len(g), len(w), (p, kw))
                    self.assertTrue(g == w, (p, kw))
        got = fs.read_many(paths, max_size=1 << 20)
        for g, w in zip(got, want):
            if w is not None and len(w) > 1 << 20:
                self.assertIsInstance(g, nacre.NacreError)
                self.assertEqual(g.errno, errno.EFBIG)
            elif w is not None:
                self.assertEqual(g, w)
        self.assertEqual(fs.read_many([]), [])
        with self.assertRaises(ValueError):
            fs.read_many(paths, depth=-1)
        # A directory is not a file to read.
        self.assertEqual(fs.read_many([top])[0].errno, errno.EISDIR)

    def test_getlayout(self):
        path = self.p("lay")
        self.fs.write_bytes(path, data_of(5 << 20, 3))
        lo = self.fs.getlayout(path)
        self.assertGreater(lo.stripe_size, 0)
        self.assertGreaterEqual(lo.stripe_count, 1)
        self.assertEqual(len(lo.shards), lo.stripe_count)
        self.assertEqual(len({ost for ost, _ in lo.shards}), len(lo.shards))
        self.assertFalse(lo.packed)
        d = self.fs.getlayout(self.base)       # a directory: its template
        self.assertIsInstance(d, nacre.Layout)

    def test_sync_packed(self):
        top = self.p("packed")
        self.fs.mkdir(top)
        files = {"%s/s%d" % (top, i): data_of(100 + 997 * i, 40 + i) for i in range(20)}
        with nacre.connect(MDS, FSNAME, pack_all=True, pack_flush_ms=600000) as fs2:
            for path, data in files.items():
                fs2.write_bytes(path, data)
            if nacre.has_sync():
                fs2.sync()
                # Committed: another client (this one) sees them now.
                self.assertEqual(self.fs.read_many(list(files)), list(files.values()))
                for path in files:
                    self.assertTrue(self.fs.getlayout(path).packed, path)
                # The pending flush time was long: only sync() committed them.
                fs2.write_bytes(top + "/late", b"late")
            # Disconnecting commits what is left.
        self.assertEqual(self.fs.read_many(list(files)), list(files.values()))
        if nacre.has_sync():
            self.assertEqual(self.fs.read_bytes(top + "/late"), b"late")
            self.fs.sync()      # nothing pending: a no-op that succeeds

    def test_read_many_inline(self):
        """Inline files' bytes come with the lookup; past the reply's 128 KiB
        for them (more than 32 files of 4096 bytes), they are asked for
        again."""
        top = self.p("inline")
        self.fs.mkdir(top)
        sizes = [0, 1, 100, 4095] + [4096] * 48 + [4097, (1 << 20) + 5]
        random.Random(7).shuffle(sizes)
        files = {"%s/i%02d" % (top, i): data_of(size, 200 + i)
                 for i, size in enumerate(sizes)}
        # Another connection writes: its disconnect commits them.
        with nacre.connect(MDS, FSNAME, pack_all=True, inline_max=4096) as fs2:
            for path, data in files.items():
                fs2.write_bytes(path, data)
        for path, data in files.items():
            self.assertEqual(self.fs.getlayout(path).inline, len(data) <= 4096, path)
        for kw in ({}, {"depth": 1}):
            got = self.fs.read_many(list(files), **kw)
            self.assertEqual(len(got), len(files))
            for (path, want), g in zip(files.items(), got):
                self.assertIsInstance(g, bytes, (path, kw))
                self.assertTrue(g == want, (path, len(g), len(want), kw))

    def test_closed_and_fork(self):
        fs = nacre.connect(MDS, FSNAME)
        f = fs.open(self.p("fk"), "wb")
        f.write(b"fork")
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                fs.stat("/")
                code = 1
            except RuntimeError:
                pass
            try:
                f.write(b"x")
                code = 2
            except RuntimeError:
                pass
            # Exiting drops the parent's handles without touching them.
            del f
            fs.close()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertEqual(fs.stat("/").st_ino, self.fs.stat("/").st_ino)
        f.write(b"!")
        fs.close()              # closes f too
        self.assertTrue(f.closed)
        self.assertTrue(fs.closed)
        with self.assertRaises(ValueError):
            f.write(b"late")
        with self.assertRaises(ValueError):
            fs.stat("/")
        self.assertEqual(self.fs.read_bytes(self.p("fk")), b"fork!")


# ------------------------------------------------------------------ dataset

@needs_fs
class DatasetTest(FsTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        fs = cls.fs
        cls.root = cls.base + "/train"
        layout = {"cat": ["b.jpg", "a.jpg", "sub/c.jpg", "sub/deeper/d.png"],
                  "dog": ["z.jpg", "y.JPG"],
                  "ant": ["only.jpg"],
                  "empty": []}
        cls.want = []
        for label, c in enumerate(sorted(layout)):
            fs.makedirs("%s/%s" % (cls.root, c), exist_ok=True)
            names = []
            for rel in layout[c]:
                d, _, n = ("/" + rel).rpartition("/")
                names.append((d, n))
            for d, n in sorted(names):
                fs.makedirs("%s/%s%s" % (cls.root, c, d), exist_ok=True)
                path = "%s/%s%s/%s" % (cls.root, c, d, n)
                data = data_of(random.Random(path).randint(0, 200000), path)
                fs.write_bytes(path, data)
                cls.want.append((path, label, data))
        fs.write_bytes(cls.root + "/stray-file", b"not in a class")
        cls.classes = sorted(layout)

    def check_items(self, items, indices):
        self.assertEqual(len(items), len(indices))
        for (data, label), i in zip(items, indices):
            self.assertEqual(label, self.want[i][1])
            self.assertTrue(data == self.want[i][2], self.want[i][0])

    def test_samples(self):
        ds = NacreFileDataset(self.root, fs=self.fs)
        self.assertEqual(ds.classes, self.classes)
        self.assertEqual(ds.class_to_idx, {c: i for i, c in enumerate(self.classes)})
        self.assertEqual(len(ds), len(self.want))
        self.assertEqual(ds.samples, [(p, label) for p, label, _ in self.want])
        self.assertEqual(ds.targets, [label for _, label, _ in self.want])
        self.check_items([ds[i] for i in range(len(ds))], range(len(ds)))
        self.check_items([ds[-1]], [len(ds) - 1])
        with self.assertRaises(IndexError):
            ds[len(ds)]
        idx = [5, 0, 3, 3, 6]
        self.check_items(ds.__getitems__(idx), idx)
        self.assertEqual(ds.__getitems__([]), [])

    def test_transform_extensions(self):
        ds = NacreFileDataset(self.root, MDS, FSNAME, transform=len,
                              target_transform=lambda y: -y, extensions=".jpg")
        want = [(p, lb, d) for p, lb, d in self.want if p.lower().endswith(".jpg")]
        self.assertEqual(len(ds), len(want))
        self.assertEqual([ds[i] for i in range(len(ds))],
                         [(len(d), -lb) for _, lb, d in want])
        self.assertEqual(ds.__getitems__([0, 1]), [ds[0], ds[1]])
        ds.close()

    def test_missing_file_raises(self):
        ds = NacreFileDataset(self.root, MDS, FSNAME)
        ds.samples = ds.samples + [(self.root + "/cat/gone.jpg", 0)]
        with self.assertRaises(FileNotFoundError):
            ds[len(ds) - 1]
        with self.assertRaises(FileNotFoundError):
            ds.__getitems__([0, len(ds) - 1])
        with self.assertRaises(FileNotFoundError):
            NacreFileDataset(self.base + "/no-such-root", MDS, FSNAME)
        with self.assertRaises(FileNotFoundError):
            NacreFileDataset(self.root + "/empty", MDS, FSNAME)  # no class dirs

    def test_fork_and_pickle(self):
        ds = NacreFileDataset(self.root, MDS, FSNAME)
        self.check_items([ds[0]], [0])
        parent_fs = ds.connect()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            ok = b"0"
            try:
                items = ds.__getitems__(range(len(ds)))
                good = all(d == self.want[i][2] and lb == self.want[i][1]
                           for i, (d, lb) in enumerate(items))
                if good and ds.connect() is not parent_fs:
                    ok = b"1"
            finally:
                os.write(w, ok)
                os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
        self.assertEqual(got, b"1")
        # The child's exit left the parent's connection working.
        self.assertIs(ds.connect(), parent_fs)
        self.check_items(ds.__getitems__([1, 2]), [1, 2])
        ds2 = pickle.loads(pickle.dumps(ds))
        self.assertIsNot(ds2.connect(), parent_fs)
        self.check_items([ds2[3]], [3])
        ds2.close()
        ds.close()

    def test_without_torch(self):
        code = ("import sys; sys.modules['torch'] = None\n"
                "from nacre.dataset import NacreFileDataset as D\n"
                "ds = D(%r, %r, %r)\n"
                "assert D.__bases__ == (object,), D.__bases__\n"
                "print(len(ds), len(ds[0][0]), ds[0][1])\n" % (self.root, MDS, FSNAME))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), [str(len(self.want)),
                                            str(len(self.want[0][2])),
                                            str(self.want[0][1])])

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_dataloader(self):
        ds = NacreFileDataset(self.root, MDS, FSNAME)
        self.assertIsInstance(ds, torch.utils.data.Dataset)
        loader = torch.utils.data.DataLoader(ds, batch_size=3, num_workers=2,
                                             worker_init_fn=worker_init_fn,
                                             collate_fn=keep_list, timeout=120)
        for _ in range(2):          # twice: new workers each epoch
            items = [it for batch in loader for it in batch]
            self.check_items(items, range(len(ds)))
        # The default collate: the bytes as a list, the labels as a tensor.
        loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2,
                                             shuffle=True, timeout=120)
        seen = []
        for data, labels in loader:
            self.assertIsInstance(labels, torch.Tensor)
            for d, lb in zip(data, labels.tolist()):
                i = [w[2] for w in self.want].index(d)
                self.assertEqual(lb, self.want[i][1])
                seen.append(i)
        self.assertEqual(sorted(seen), list(range(len(ds))))
        # Batches go through __getitems__.
        calls = []

        class Counting(NacreFileDataset):
            def __getitems__(self, indices):
                calls.append(list(indices))
                return super().__getitems__(indices)

        cds = Counting(self.root, MDS, FSNAME)
        items = [it for b in torch.utils.data.DataLoader(cds, batch_size=4,
                                                         collate_fn=keep_list)
                 for it in b]
        self.check_items(items, range(len(ds)))
        self.assertEqual(calls[0], [0, 1, 2, 3])


if __name__ == "__main__":
    unittest.main()
