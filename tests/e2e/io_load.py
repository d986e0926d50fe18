#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Load for the fault suites (test_oss_io_restart.sh, test_crash_loop.sh).
#
#   io_load.py write posix|nacre DIR JOURNAL ID STOPFILE [--rewrite] [--pace S] [--small]
#       Writes files DIR/wID-N of varied sizes, each from a seeded generator
#       (content recomputable from the journal), fsyncs and closes them, and
#       only then appends "NAME SIZE SEED SHA256" to JOURNAL (fsynced).  A
#       file about to be overwritten is first journaled "NAME pending".
#       posix goes through a mount; nacre through libnacre (the Python
#       bindings; DIR is then a path inside the filesystem, and NACRE_MDS
#       and NACRE_FSNAME name it).  Errors are counted in JOURNAL.err, one
#       line each; the writer goes on until STOPFILE exists.  --rewrite
#       overwrites one of its files every third time; --pace S pauses S
#       seconds after each file; --small writes files of at most about
#       1 MiB (what a packing directory packs).
#   io_load.py read JOURNAL ROOT STOPFILE
#       Reads every journaled file under ROOT with O_DIRECT, again and again,
#       until STOPFILE exists, and checks each one's sha256; a mismatch or a
#       read error is a line in JOURNAL.readerr.  Prints the rounds done.
#   io_load.py patch REF FILE SEED STOPFILE
#       Writes seeded random bytes at random offsets of FILE (on a mount)
#       and of REF (a local copy), fsyncing FILE after each, until STOPFILE
#       exists, then five more; prints how many.
#   io_load.py verify JOURNAL ROOT
#       Checks every journaled file once (the last entry of each name);
#       prints "N files ok" or the first mismatches, exit status 1.
import hashlib
import mmap
import os
import random
import signal
import sys
import time

SIZES = [1, 4095, 1 << 20, (4 << 20) - 7, 4 << 20, (5 << 20) + 123, 9 << 20]
# --small: sizes a packing directory keeps packed, and one just past pack_max.
SMALL_SIZES = [1, 4095, 4096, 65536, 110000, 131072, (1 << 20) - 1, (1 << 20) + 1]
OP_TIMEOUT = 120


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout("operation timed out")


def content(size, seed):
    return random.Random(seed).randbytes(size)


def jappend(path, line):
    with open(path, "a") as j:
        j.write(line + "\n")
        j.flush()
        os.fsync(j.fileno())


def write_posix(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        off = 0
        while off < len(view):
            off += os.write(fd, view[off:off + (1 << 20)])
        os.fsync(fd)
    finally:
        os.close(fd)


def write_nacre(fs, path, data):
    with fs.open(path, "wb") as f:
        view = memoryview(data)
        off = 0
        while off < len(view):
            off += f.write(view[off:off + (1 << 20)])
        f.fsync()


def writer(argv):
    mode, d, journal, wid, stop = argv[:5]
    rewrite = "--rewrite" in argv
    sizes = SMALL_SIZES if "--small" in argv else SIZES
    # --pace SECONDS: a pause after each file, to bound how many there are.
    pace = float(argv[argv.index("--pace") + 1]) if "--pace" in argv else 0.0
    rnd = random.Random("%s-%d" % (wid, os.getpid()))
    signal.signal(signal.SIGALRM, on_alarm)
    fs = None
    done = []
    n = 0
    while not os.path.exists(stop):
        if rewrite and done and n % 3 == 2:
            name = rnd.choice(done)
        else:
            name = "w%s-%d" % (wid, n)
        n += 1
        size = rnd.choice(sizes)
        seed = rnd.randrange(1 << 30)
        data = content(size, seed)
        if name in done:
            jappend(journal, "%s pending" % name)
        signal.alarm(OP_TIMEOUT)
        try:
            if mode == "nacre":
                if fs is None:
                    import nacre
                    fs = nacre.connect(os.environ["NACRE_MDS"], os.environ["NACRE_FSNAME"])
                write_nacre(fs, d + "/" + name, data)
            else:
                write_posix(os.path.join(d, name), data)
        except Exception as e:  # noqa: BLE001 - every failure is recorded
            signal.alarm(0)
            jappend(journal + ".err", "%s %s: %r" % (time.strftime("%T"), name, e))
            if mode == "nacre" and fs is not None:
                try:
                    fs.close()
                except Exception:  # noqa: BLE001
                    pass
                fs = None
            if name not in done:
                done.append(name)  # may exist half written: rewrite it later
            time.sleep(0.2)
            continue
        signal.alarm(0)
        jappend(journal, "%s %d %d %s" % (name, size, seed, hashlib.sha256(data).hexdigest()))
        if name not in done:
            done.append(name)
        if pace:
            time.sleep(pace)
    if fs is not None:
        fs.close()


def entries(journal):
    last = {}
    with open(journal) as j:
        for line in j:
            f = line.split()
            if len(f) == 2 and f[1] == "pending":
                last[f[0]] = None
            elif len(f) == 4:
                last[f[0]] = (int(f[1]), f[3])
    return {k: v for k, v in last.items() if v is not None}


def sha_direct(path):
    h = hashlib.sha256()
    buf = mmap.mmap(-1, 1 << 20)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        while True:
            n = os.readv(fd, [buf])
            if n <= 0:
                break
            h.update(buf[:n])
    finally:
        os.close(fd)
    return h.hexdigest()


def reader(argv):
    journal, root, stop = argv[:3]
    signal.signal(signal.SIGALRM, on_alarm)
    rounds = 0
    while not os.path.exists(stop):
        for name, (size, sha) in sorted(entries(journal).items()):
            signal.alarm(OP_TIMEOUT)
            try:
                got = sha_direct(os.path.join(root, name))
                bad = None if got == sha else "sha256 differs"
            except Exception as e:  # noqa: BLE001
                bad = repr(e)
            signal.alarm(0)
            if bad:
                jappend(journal + ".readerr", "%s %s: %s" % (time.strftime("%T"), name, bad))
        rounds += 1
        with open(journal + ".rounds", "w") as r:
            r.write("%d\n" % rounds)
    print(rounds)


def verify(argv):
    journal, root = argv[:2]
    bad = []
    ents = entries(journal)
    for name, (size, sha) in sorted(ents.items()):
        try:
            got = sha_direct(os.path.join(root, name))
        except OSError as e:
            got = repr(e)
        if got != sha:
            bad.append("%s (%d bytes): %s" % (name, size, got))
    if bad:
        print("%d of %d files differ: %s" % (len(bad), len(ents), "; ".join(bad[:5])))
        return 1
    print("%d files ok" % len(ents))
    return 0


def patch(argv):
    ref, path, seed, stop = argv[:4]
    rnd = random.Random(int(seed))
    size = os.path.getsize(ref)
    n = 0
    fd = os.open(path, os.O_WRONLY)
    rfd = os.open(ref, os.O_WRONLY)
    try:
        after = 0
        while after < 5:
            if os.path.exists(stop):
                after += 1  # five more once asked to stop
            ln = rnd.randrange(1, 3 << 20)
            off = rnd.randrange(0, size - ln)
            data = rnd.randbytes(ln)
            os.pwrite(fd, data, off)
            os.fsync(fd)
            os.pwrite(rfd, data, off)
            n += 1
    finally:
        os.close(fd)
        os.close(rfd)
    print(n)


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "write":
        writer(argv)
        return 0
    if cmd == "read":
        reader(argv)
        return 0
    if cmd == "patch":
        patch(argv)
        return 0
    return verify(argv)


if __name__ == "__main__":
    sys.exit(main())
