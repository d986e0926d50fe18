# SPDX-License-Identifier: MIT
"""Sends malformed nacre messages to one daemon (tests/e2e/test_garbage.sh).

usage: fuzz.py cases|burst HOST PORT
       fuzz.py auth HOST PORT KEYFILE FSNAME WIRE_H [SEED]
       fuzz.py flood HOST PORT KEYFILE FSNAME [hog]

cases and burst attack before authentication: everything there must be
refused at once.  auth and flood first complete the real handshake with
the cluster key (common/auth.h), then send every opcode of WIRE_H's
NC_OPCODES with random, truncated and mis-sized bodies, oversized lengths,
unknown opcodes, bulk data where none is taken, well-formed requests with
absurd values, floods of small valid requests, and (flood) peers that
reset their connections with requests in flight.  Each must be answered
with an error status (a well-formed reply to our request id) or end the
connection; none may hang.  Exit status 1 lists what went wrong.

The header (little-endian, 32 bytes): u32 magic, u16 version, u16 opcode,
u32 flags, i32 status, u64 reqid, u32 body_len, u32 bulk_len.
"""
import hashlib
import hmac
import os
import random
import re
import socket
import struct
import sys
import threading
import time

MAGIC = 0x4E43524D
VERSION = (1 << 8) | 4
OP_CONNECT = 1
OP_PING = 2
OP_AUTH = 3
OP_GETATTR = 21
OP_OBJ_READ = 50
MF_REPLY = 0x1
HDR = struct.Struct("<IHHIiQII")
assert HDR.size == 32
MAX_BODY = 256 * 1024
MAX_BULK = 16 * 1024 * 1024
FEAT_BULK_SPLIT, FEAT_AUTH = 0x1, 0x2
ROLE_CLIENT, ROLE_OSS, ROLE_MDS, ROLE_TOOL = 1, 2, 3, 4
ROLES = {"CLIENT": ROLE_CLIENT, "OSS": ROLE_OSS, "MDS": ROLE_MDS,
         "TOOL": ROLE_TOOL}
# Wire statuses (common/wire.h NC_WIRE_STATUS).
WS_OK, WS_NOSYS, WS_PROTO, WS_AUTH = 0, 38, 1000, 1010
# How long a daemon may take to answer one request on a loaded machine.
REPLY_TIMEOUT = 60.0

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
rnd = random.Random(port)
failures = []


def hdr(magic=MAGIC, version=VERSION, opcode=OP_CONNECT, flags=0, status=0,
        reqid=1, body_len=0, bulk_len=0):
    return HDR.pack(magic, version, opcode, flags, status, reqid, body_len,
                    bulk_len)


def connect(rcvbuf=0):
    """A connection to the daemon; @rcvbuf sets the receive buffer before
    connecting, so that the window offered stays that small."""
    if not rcvbuf:
        return socket.create_connection((host, port), timeout=10)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect((host, port))
    return s


def send(s, data):
    """Sends what the peer takes; a peer that hangs up early is fine."""
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def drain(s, limit):
    """Reads until EOF: the bytes read, or None if the peer kept the
    connection open for @limit seconds."""
    got = b""
    deadline = time.monotonic() + limit
    s.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return got
        if not chunk:
            return got
        got += chunk
        if len(got) > (1 << 20):
            break
    return None


def expect_close(name, data, limit=10.0):
    """The daemon must drop the connection (an error reply first is fine)."""
    s = connect()
    send(s, data)
    got = drain(s, limit)
    s.close()
    if got is None:
        failures.append("%s: connection still open after %.0f s" % (name, limit))
    else:
        print("%s: closed by the daemon (%d reply bytes)" % (name, len(got)))


def expect_error_or_close(name, data, reqid, limit=10.0):
    """The daemon must answer with an error or drop the connection."""
    s = connect()
    send(s, data)
    s.settimeout(limit)
    got = b""
    try:
        while len(got) < HDR.size:
            chunk = s.recv(HDR.size - len(got))
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        failures.append("%s: neither a reply nor a close in %.0f s" % (name, limit))
        s.close()
        return
    except (ConnectionResetError, BrokenPipeError):
        got = b""
    s.close()
    if len(got) < HDR.size:
        print("%s: closed by the daemon" % name)
        return
    magic, _, _, flags, status, rid, _, _ = HDR.unpack(got)
    if magic != MAGIC or not flags & MF_REPLY or rid != reqid or status == 0:
        failures.append("%s: bad reply magic=%#x flags=%#x reqid=%d status=%d"
                        % (name, magic, flags, rid, status))
    else:
        print("%s: error reply, status %d" % (name, status))


def alive():
    s = connect()
    s.close()


def cases():
    junk = rnd.randbytes(4096)
    if junk[:4] == struct.pack("<I", MAGIC):
        junk = b"\0" + junk[1:]
    expect_close("random bytes", junk)
    alive()
    expect_close("wrong magic", hdr(magic=0xDEADBEEF, body_len=16) + bytes(16))
    expect_close("byte-swapped magic", struct.pack(">I", MAGIC) + hdr()[4:])
    expect_close("4 GiB body", hdr(body_len=0xFFFFFFFF) + bytes(65536))
    expect_close("4 GiB bulk", hdr(opcode=OP_OBJ_READ, bulk_len=0xFFFFFFFF) +
                 bytes(65536))
    expect_close("body over the limit", hdr(body_len=64 << 20) + bytes(65536))
    # A truncated header, then we hang up.
    s = connect()
    send(s, hdr()[:13])
    s.close()
    alive()
    # A truncated body, then we hang up.
    s = connect()
    send(s, hdr(body_len=100) + bytes(50))
    s.close()
    alive()
    expect_error_or_close("unknown opcode before CONNECT",
                          hdr(opcode=0x7ABC, reqid=77), 77)
    expect_error_or_close("request before CONNECT",
                          hdr(opcode=OP_GETATTR, reqid=78, body_len=16) +
                          bytes(16), 78)
    expect_error_or_close("CONNECT of another major version",
                          hdr(version=(9 << 8), reqid=79, body_len=8) +
                          bytes(8), 79)
    expect_error_or_close("CONNECT with a garbage body",
                          hdr(reqid=80, body_len=64) + rnd.randbytes(64), 80)
    # A stray reply: the daemon may drop it or the connection, but lives on.
    s = connect()
    send(s, hdr(flags=MF_REPLY, status=-5, reqid=12345))
    s.close()
    alive()
    # Headers dribbled a byte at a time, then garbage.
    s = connect()
    for b in hdr(magic=0x01020304):
        if not send(s, bytes([b])):
            break
        time.sleep(0.001)
    if drain(s, 5.0) is None:
        failures.append("dribbled bad magic: connection still open after 5 s")
    s.close()
    alive()


def burst():
    opened, refused = 0, 0
    socks = []
    for i in range(200):
        try:
            s = connect()
        except OSError:
            refused += 1
            continue
        opened += 1
        if i % 2:
            # Half of them end with a reset instead of a FIN.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
        socks.append(s)
    for s in socks:
        s.close()
    print("burst: %d connections opened together, %d failed" % (opened, refused))
    if opened == 0:
        failures.append("burst: no connection could be opened")
    quick = 0
    for i in range(200):
        try:
            s = connect()
        except OSError:
            continue
        if i % 3 == 0:
            send(s, rnd.randbytes(rnd.randrange(1, 64)))
        s.close()
        quick += 1
    print("burst: %d connections opened and dropped one by one" % quick)
    if quick == 0:
        failures.append("burst: no quick connection could be opened")
    time.sleep(1)
    alive()


# ---------------------------------------------------------------- after AUTH

def load_key(path):
    """The cluster key: the one line of 64 hex digits of the key file."""
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                return bytes.fromhex(line)
    raise ValueError("no key in " + path)


def proof(key, server, nc, ns, fsname, role):
    """HMAC-SHA256 of the handshake (common/auth.c nc_auth_proof)."""
    if server:
        msg = b"nacre-auth-server" + nc + ns
    else:
        msg = b"nacre-auth-client" + ns + nc
    msg += fsname.encode() + struct.pack("<I", role)
    return hmac.new(key, msg, hashlib.sha256).digest()


def opcodes(wire_h):
    """{NAME: value} of NC_OPCODES in common/wire.h."""
    with open(wire_h) as f:
        text = f.read()
    block = text[text.index("#define NC_OPCODES(X)"):]
    block = block[:block.index("\n\n")]
    ops = {m.group(1): int(m.group(2))
           for m in re.finditer(r"X\((\w+),\s*(\d+),\s*\d\)", block)}
    if len(ops) < 40:
        raise ValueError("only %d opcodes found in %s" % (len(ops), wire_h))
    return ops


class Closed(Exception):
    """The daemon ended the connection."""


class Session:
    """One connection, authenticated with the cluster key as @role."""

    def __init__(self, key, fsname, role=ROLE_CLIENT, rcvbuf=0):
        self.reqid = 100
        self.s = connect(rcvbuf)
        self.s.settimeout(REPLY_TIMEOUT)
        nc = os.urandom(32)
        fs = fsname.encode()
        body = struct.pack("<HHIQ", 1, 4, role, FEAT_BULK_SPLIT | FEAT_AUTH)
        body += struct.pack("<H", len(fs)) + fs + nc
        status, rep, _ = self.call(OP_CONNECT, body)
        if status != WS_OK or len(rep) != 16 + 16 + 32:
            raise RuntimeError("CONNECT as role %d: status %d, %d bytes"
                               % (role, status, len(rep)))
        ns = rep[-32:]
        status, rep, _ = self.call(OP_AUTH, proof(key, False, nc, ns, fsname, role))
        if status != WS_OK or rep != proof(key, True, nc, ns, fsname, role):
            raise RuntimeError("AUTH as role %d: status %d, server proof %s"
                               % (role, status, "wrong" if rep else "missing"))

    def close(self):
        self.s.close()

    def next_id(self):
        self.reqid += 1
        return self.reqid

    def send(self, data):
        try:
            self.s.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise Closed() from e

    def recv_exact(self, n):
        got = bytearray()
        while len(got) < n:
            try:
                chunk = self.s.recv(min(n - len(got), 1 << 20))
            except (ConnectionResetError, BrokenPipeError) as e:
                raise Closed() from e
            if not chunk:
                raise Closed()
            got += chunk
        return bytes(got)

    def reply(self, reqid, opcode):
        """(status, body, bulk) of the reply to @reqid; checks its header."""
        h = self.recv_exact(HDR.size)
        magic, _, op, flags, status, rid, blen, bulklen = HDR.unpack(h)
        if magic != MAGIC or not flags & MF_REPLY or rid != reqid or op != opcode:
            raise AssertionError("bad reply: magic %#x flags %#x reqid %d/%d op %d/%d"
                                 % (magic, flags, rid, reqid, op, opcode))
        if blen > MAX_BODY or bulklen > MAX_BULK:
            raise AssertionError("reply of %d + %d bytes" % (blen, bulklen))
        return status, self.recv_exact(blen), self.recv_exact(bulklen)

    def call(self, opcode, body=b"", bulk=b"", body_len=None, bulk_len=None):
        reqid = self.next_id()
        self.send(hdr(opcode=opcode, reqid=reqid,
                      body_len=len(body) if body_len is None else body_len,
                      bulk_len=len(bulk) if bulk_len is None else bulk_len)
                  + body + bulk)
        return self.reply(reqid, opcode)


class Attack:
    """Authenticated garbage against one daemon; a new session whenever the
    daemon closes one (which is a fine answer to garbage)."""

    def __init__(self, key, fsname):
        self.key, self.fsname = key, fsname
        self.sess = None
        self.counts = {"error": 0, "ok": 0, "closed": 0}

    def session(self, role=ROLE_CLIENT):
        if self.sess is None or self.sess_role != role:
            if self.sess:
                self.sess.close()
            self.sess = Session(self.key, self.fsname, role)
            self.sess_role = role
        return self.sess

    def drop(self):
        if self.sess:
            self.sess.close()
        self.sess = None

    def one(self, name, opcode, body=b"", bulk=b"", body_len=None,
            bulk_len=None, role=ROLE_CLIENT, need_error=True, hangup=False):
        """Sends one request; an error reply or a close is the expected
        answer (@need_error False: a success is fine too)."""
        s = self.session(role)
        try:
            if hangup:
                # The header promises more than comes: we hang up.
                s.send(hdr(opcode=opcode, reqid=s.next_id(),
                           body_len=body_len, bulk_len=bulk_len or 0) + body)
                self.drop()
                self.counts["closed"] += 1
                return
            status, _, _ = s.call(opcode, body, bulk, body_len, bulk_len)
        except Closed:
            self.drop()
            self.counts["closed"] += 1
            return
        except socket.timeout:
            failures.append("%s: no reply in %.0f s" % (name, REPLY_TIMEOUT))
            self.drop()
            return
        except AssertionError as e:
            failures.append("%s: %s" % (name, e))
            self.drop()
            return
        if status == WS_OK:
            self.counts["ok"] += 1
            if need_error:
                failures.append("%s: answered with success" % name)
        else:
            self.counts["error"] += 1


# Body pieces, little-endian as common/wire.c encodes them.
def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def cred(uid=0, gid=0, groups=()):
    return u32(uid) + u32(gid) + u32(len(groups)) + b"".join(u32(g) for g in groups)


def fid(seq, oid):
    return u64(seq) + u64(oid)


def name(n):
    return u16(len(n)) + n


ROOT = fid(1, 1)
# FIDs no object has: zero, all ones, a sequence nothing uses.
BAD_FIDS = [fid(0, 0), fid(2**64 - 1, 2**64 - 1), fid(0x7777, 1), fid(1, 2**64 - 1)]
HUGE = [2**64 - 1, 2**64 - 4096, 2**63, 2**63 - 1]


def layout(count=4, flags=0, stripe=1 << 20, k=4, m=2, shards=None):
    b = u32(stripe) + u16(count) + bytes([k, m]) + u32(flags) + u32(0) + u32(1)
    for i in range(count if shards is None else shards):
        b += u32(i) + u32(0)
    return b


def templates(ops):
    """Well-formed request bodies, to truncate and to fill with absurd
    values: (name, opcode, body).  None of them names a real file as
    something it may change."""
    t = []
    o = ops
    t.append(("GETATTR root", o["GETATTR"], cred() + ROOT + u32(0)))
    t.append(("LOOKUP root/x", o["LOOKUP"], cred() + ROOT + name(b"x") + u32(0)))
    t.append(("READDIR root", o["READDIR"], cred() + ROOT + u64(0) + u32(16)))
    t.append(("OBJ_STAT", o["OBJ_STAT"], u32(0) + u32(0) + fid(0x7777, 5) + u64(0) + u64(0)))
    t.append(("CREATE bad parent", o["CREATE"],
              cred() + fid(0x7777, 9) + name(b"f") + u32(0o100644) + u32(0) + u32(0) + name(b"")))
    t.append(("XATTR_GET root", o["XATTR_GET"],
              cred() + ROOT + name(b"user.x") + u32(0) + u32(0)))
    t.append(("SETLAYOUT bad fid", o["SETLAYOUT"], cred() + fid(0x7777, 3) + layout()))
    return t


def absurd(ops):
    """Well-formed requests with absurd field values: (name, opcode, body
    [, role [, may succeed]]).  Each must fail, but for those whose absurd
    value has a defined harmless meaning: a READDIR cookie past the end
    (an empty last page; rd_max is clamped), a PUNCH or VERIFY where no
    byte can live (nothing to do), sealing a pack that does not exist (a
    resent seal), a pack that avoids OSTs no one has (a new pack)."""
    o = ops
    a = []
    for f in BAD_FIDS:
        for op in ("GETATTR", "READLINK", "OPEN", "GETLAYOUT", "XATTR_LIST"):
            a.append(("%s of a bad FID" % op, o[op], cred() + f + u32(0xFFFFFFFF)))
        a.append(("READDIR of a bad FID", o["READDIR"], cred() + f + u64(0) + u32(512)))
        a.append(("SETATTR of a bad FID", o["SETATTR"],
                  cred() + f + u32(0xFFFFFFFF) + u32(0xFFFFFFFF) * 3 + u64(2**64 - 1)
                  + (u64(2**63 - 1) + u32(999999999)) * 2))
        a.append(("SIZE_UPDATE of a bad FID", o["SIZE_UPDATE"],
                  cred() + f + u64(2**64 - 1) + u32(0xFFFFFFFF)))
        a.append(("SHARD_STATE of a bad FID", o["SHARD_STATE"],
                  cred() + f + u32(0xFFFFFFFF) + u32(0xFFFFFFFF) + u32(0)))
        a.append(("LOOKUP under a bad FID", o["LOOKUP"], cred() + f + name(b"x") + u32(0)))
        a.append(("UNLINK under a bad FID", o["UNLINK"], cred() + f + name(b"x") + u32(1)))
        a.append(("CREATE under a bad FID", o["CREATE"],
                  cred() + f + name(b"x") + u32(0o40755) + u32(0) + u32(0) + name(b"")))
        a.append(("XATTR_SET on a bad FID", o["XATTR_SET"],
                  cred() + f + name(b"user.x") + u32(0) + u32(3) + b"abc"))
        a.append(("MIGRATE of a bad FID", o["MIGRATE"],
                  cred() + f + u32(1) + u32(0) + u64(0) + (u64(0) + u32(0)) * 2
                  + layout(0, 1, 0, 0, 0, 0) + u32(0) + layout(0, 0, 0, 0, 0, 0) + u32(0)))
    # Reads of the root with absurd counts and cookies.
    for c in HUGE + [0]:
        a.append(("READDIR cookie %#x" % c, o["READDIR"], cred() + ROOT + u64(c) + u32(0xFFFFFFFF),
                  ROLE_CLIENT, True))
    # Names the namespace must refuse: '/', '.', '..', empty, 300 bytes.
    for n in (b"a/b", b"/", b".", b"..", b"", b"x" * 256, b"y" * 300, b"a\0b"):
        a.append(("LOOKUP of %r" % n[:12], o["LOOKUP"], cred() + ROOT + name(n) + u32(0)))
        a.append(("CREATE of %r" % n[:12], o["CREATE"],
                  cred() + ROOT + name(n) + u32(0o100644) + u32(0) + u32(0) + name(b"")))
        a.append(("UNLINK of %r" % n[:12], o["UNLINK"], cred() + ROOT + name(n) + u32(0)))
        a.append(("RENAME to %r" % n[:12], o["RENAME"],
                  cred() + fid(0, 0) + ROOT + name(b"no-such-entry") + ROOT + name(n) + u32(0)))
    # Unknown mode bits, a symlink of 5000 bytes, a FID from nowhere.
    a.append(("CREATE of type 0170000", o["CREATE"],
              cred() + ROOT + name(b"fz-type") + u32(0o170644) + u32(0) + u32(0) + name(b"")))
    a.append(("CREATE symlink of 5000 bytes", o["CREATE"],
              cred() + ROOT + name(b"fz-long") + u32(0o120777) + u32(0) + u32(0)
              + name(b"t" * 5000)))
    a.append(("CREATE with unknown flags", o["CREATE"],
              cred() + ROOT + name(b"fz-flags") + u32(0o100644) + u32(0) + u32(0xFFFFFFF8)
              + name(b"")))
    a.append(("RENAME with unknown flags", o["RENAME"],
              cred() + fid(0, 0) + ROOT + name(b"fz-none") + ROOT + name(b"fz-none2")
              + u32(0xFFFFFFFF)))
    # Credentials: 33 groups (over NC_MAX_GROUPS), 2^32 - 1 groups.
    a.append(("33 groups", o["GETATTR"], cred(groups=range(33)) + ROOT + u32(0)))
    a.append(("2^32-1 groups", o["GETATTR"], u32(0) + u32(0) + u32(0xFFFFFFFF) + ROOT + u32(0)))
    # Counts past every limit.
    a.append(("FID_GRANT of 2^32-1", o["FID_GRANT"], cred(1000, 1000) + u64(0) + u64(0) + u32(0xFFFFFFFF)))
    a.append(("CHANGELOG_READ max 2^32-1 as a user", o["CHANGELOG_READ"],
              cred(1000, 1000) + u64(2**64 - 1) + u32(0xFFFFFFFF)))
    a.append(("CHANGELOG_CLEAR as a user", o["CHANGELOG_CLEAR"],
              cred(1000, 1000) + u64(2**64 - 1) + u32(0)))
    a.append(("PACK_FILES count 2^32-1", o["PACK_FILES"],
              u64(2**64 - 1) + fid(0, 0) + u32(0xFFFFFFFF)))
    a.append(("PACK_LIST count 2^32-1", o["PACK_LIST"], u64(2**64 - 1) + u32(0xFFFFFFFF)))
    a.append(("PACK_COMMIT of 2^32-1 creates", o["PACK_COMMIT"],
              u64(2**64 - 1) + u32(0) + u32(0xFFFFFFFF)))
    a.append(("PACK_COMMIT sealing no pack", o["PACK_COMMIT"], u64(2**64 - 1) + u32(1) + u32(0),
              ROLE_CLIENT, True))
    a.append(("LOOKUP_MANY of 2^32-1", o["LOOKUP_MANY"], cred() + u32(0xFFFFFFFF)))
    a.append(("LOOKUP_MANY of 129", o["LOOKUP_MANY"],
              cred() + u32(129) + (ROOT + name(b"x")) * 129))
    a.append(("PACK_ALLOC under a bad FID", o["PACK_ALLOC"],
              cred() + fid(0x7777, 1) + layout(0, 1, 0, 0, 0, 0) + u32(0)))
    a.append(("PACK_ALLOC avoiding 2^32-1 OSTs", o["PACK_ALLOC"],
              cred() + ROOT + layout(0, 1, 0, 0, 0, 0) + u32(0xFFFFFFFF)))
    a.append(("PACK_ALLOC avoiding absurd OSTs", o["PACK_ALLOC"],
              cred() + ROOT + layout(0, 1, 0, 0, 0, 0) + u32(3)
              + u32(0xFFFFFFFF) + u32(7) + u32(2**31), ROLE_CLIENT, True))
    # A pack laid out like the files it takes: codings no file has.
    a.append(("PACK_ALLOC like k=255 m=255 over 65535", o["PACK_ALLOC"],
              cred() + fid(0, 0) + layout(65535, 1, 1 << 20, 255, 255, shards=0) + u32(0)))
    a.append(("PACK_ALLOC like a 3-byte stripe", o["PACK_ALLOC"],
              cred() + fid(0, 0) + layout(3, 1, 3, 2, 1, shards=0) + u32(0)))
    a.append(("PACK_SWITCH of a bad FID", o["PACK_SWITCH"],
              cred() + fid(0x7777, 1) + u32(0xFFFFFFFF) + u64(2**64 - 1) + u64(0) + u32(0)
              + layout() + layout()))
    # Layouts with absurd geometry on a file that does not exist, and a
    # stripe count past NC_MAX_STRIPES.
    a.append(("SETLAYOUT of 65535 stripes", o["SETLAYOUT"],
              cred() + ROOT + layout(65535, 0, shards=0)))
    a.append(("SETLAYOUT k=255 m=255", o["SETLAYOUT"],
              cred() + fid(0x7777, 1) + layout(4, 0, 1, 255, 255)))
    a.append(("SETLAYOUT of unknown flags", o["SETLAYOUT"],
              cred() + fid(0x7777, 1) + layout(4, 0xFFFFFF00)))
    # OSTs and pools: indexes beyond the limit, as root and as a user.
    for idx in (256, 4096, 0xFFFFFFFF):
        a.append(("OST_ADMIN of OST %d" % idx, o["OST_ADMIN"], cred() + u32(idx) + u32(2)))
        a.append(("OST_ADMIN op 99 as a user", o["OST_ADMIN"], cred(1000, 1000) + u32(idx) + u32(99)))
        a.append(("POOL ADD OST %d to no pool" % idx, o["POOL"],
                  cred() + u32(3) + name(b"nopool") + u32(1) + u32(idx)))
        a.append(("OST_REGISTER of OST %#x" % idx, o["OST_REGISTER"],
                  u32(idx) + u32(0x100) + bytes(16) + name(b"tcp://127.0.0.1:1"), ROLE_OSS))
    a.append(("POOL with a bad name", o["POOL"], cred() + u32(1) + name(b"bad/name!") + u32(0)))
    a.append(("POOL op 0xffffffff", o["POOL"], cred() + u32(0xFFFFFFFF) + name(b"p") + u32(0)))
    a.append(("POOL of 257 OSTs", o["POOL"],
              cred() + u32(3) + name(b"p") + u32(257) + u32(0) * 257))
    a.append(("POOL_LIST of no pool", o["POOL_LIST"], cred() + u32(0) + name(b"nopool") + u32(0)))
    # Objects: OST indexes beyond the limit, offsets and lengths near 2^64.
    for ost in (4, 255, 256, 0xFFFFFFFF):
        for op in ("OBJ_READ", "OBJ_STAT", "OBJ_TRUNC", "OBJ_DESTROY", "OBJ_SYNC",
                   "OST_STATFS", "OBJ_VERIFY", "OBJ_LOCK"):
            a.append(("%s on OST %#x" % (op, ost), o[op],
                      u32(ost) + u32(0) + fid(0x7777, 1) + u64(0) + u64(4096)))
    for ost in (0, 1, 2, 3):
        for off in HUGE:
            for op in ("OBJ_READ", "OBJ_PUNCH", "OBJ_TRUNC", "OBJ_VERIFY"):
                a.append(("%s at %#x on OST %d" % (op, off, ost), o[op],
                          u32(ost) + u32(0) + fid(0x7777, 2) + u64(off) + u64(2**64 - 1),
                          ROLE_CLIENT, op in ("OBJ_PUNCH", "OBJ_VERIFY")))
        a.append(("OBJ_READ of 2^32 bytes on OST %d" % ost, o["OBJ_READ"],
                  u32(ost) + u32(0) + fid(0x7777, 2) + u64(0) + u64(2**32)))
        a.append(("OBJ_UNLOCK of nothing held", o["OBJ_UNLOCK"],
                  u32(ost) + u32(0) + fid(0x7777, 2) + u64(2**64 - 1) + u64(2**64 - 1)))
        a.append(("OBJ_LOCK wrapping 2^64", o["OBJ_LOCK"],
                  u32(ost) + u32(0xFFFFFFFF) + fid(0x7777, 2) + u64(2**64 - 1) + u64(2)))
    return a


def mutate(r, body):
    """@body with one to four random changes."""
    b = bytearray(body)
    for _ in range(r.randrange(1, 5)):
        kind = r.randrange(5)
        if not b or kind == 0:
            b += r.randbytes(r.randrange(1, 64))
        elif kind == 1:
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
        elif kind == 2 and len(b) >= 4:
            i = r.randrange(len(b) - 3)
            b[i:i + 4] = r.choice([b"\xff\xff\xff\xff", b"\0\0\0\0", b"\0\0\0\x80",
                                   b"\xff\xff\xff\x7f"])
        elif kind == 3:
            del b[r.randrange(len(b)):]
        else:
            i = r.randrange(len(b))
            b[i:i] = b[i:i + r.randrange(1, 64)]
    return bytes(b)


def random_body(r):
    n = r.choice([0, 1, 3, 8, 17, 40, 64, 100, 300, 1000, 4096, r.randrange(0, 70000)])
    return r.randbytes(n)


def auth_attack(key, fsname, wire_h, seed):
    r = random.Random(seed)
    # The same seed (the port, unless given) replays the same requests.
    print("auth attack, seed %d" % seed)
    ops = opcodes(wire_h)
    at = Attack(key, fsname)
    t0 = time.monotonic()
    # Every role a CONNECT may claim, and one no role has.
    for rname, role in sorted(ROLES.items()):
        at.one("PING as %s" % rname, OP_PING, role=role, need_error=False)
        at.one("GETATTR as %s" % rname, ops["GETATTR"], cred() + ROOT + u32(0),
               role=role, need_error=False)
    at.one("PING as role 0xffffffff", OP_PING, role=0xFFFFFFFF, need_error=False)
    at.drop()
    print("roles: %s" % at.counts)
    # Every opcode with random bodies (which may be empty), as a client
    # and as a server; then with trailing bytes after a good body.
    # Success is fine for a body that happens to decode (PING takes any).
    for opname, op in sorted(ops.items(), key=lambda kv: kv[1]):
        for role in (ROLE_CLIENT, ROLE_OSS, ROLE_MDS, ROLE_TOOL):
            for _ in range(2):
                at.one("%s with a random body" % opname, op, random_body(r), role=role,
                       need_error=False)
    print("random bodies: %s" % at.counts)
    # CONNECT and AUTH again on an authenticated connection: refused.
    for opname in ("CONNECT", "AUTH"):
        at.one("a second %s" % opname, ops[opname], r.randbytes(32 + 48))
    # Unknown opcodes: ENOSYS, the connection goes on.
    for op in (0, 4, 9, 99, 150, 0x7FFF, 0xFFFF):
        at.one("unknown opcode %d" % op, op, r.randbytes(r.randrange(0, 200)))
    # Truncated bodies: every shorter length of well-formed ones; trailing
    # bytes after them; bodies declaring a string longer than they hold.
    for tname, op, body in templates(ops):
        for n in range(len(body)):
            at.one("%s cut to %d bytes" % (tname, n), op, body[:n])
        at.one("%s with a trailing byte" % tname, op, body + b"\0")
        at.one("%s with 1000 trailing bytes" % tname, op, body + r.randbytes(1000))
    at.one("LOOKUP whose name claims 255 bytes, has 3", ops["LOOKUP"],
           cred() + ROOT + u16(255) + b"abc")
    at.one("XATTR_SET whose value claims 4 GiB", ops["XATTR_SET"],
           cred() + ROOT + name(b"user.x") + u32(0) + u32(0xFFFFFFFF) + b"abc")
    at.one("XATTR_SET whose value is over the limit", ops["XATTR_SET"],
           cred() + fid(0x7777, 1) + name(b"user.x") + u32(0) + u32(65537) + bytes(65537))
    print("truncated and mis-sized bodies: %s" % at.counts)
    # A header promising more than comes, then we hang up.
    at.one("GETATTR promising 5000 bytes, sending 10", ops["GETATTR"], bytes(10),
           body_len=5000, hangup=True)
    at.one("OBJ_WRITE promising 1 MiB of bulk, sending none", ops["OBJ_WRITE"],
           u32(0) + u32(0) + fid(0x7777, 1) + u64(0) + u64(1 << 20),
           body_len=40, bulk_len=1 << 20, hangup=True)
    # A header promising less than comes: the rest reads as a bad header.
    s = at.session()
    s.send(hdr(opcode=OP_PING, reqid=s.next_id(), body_len=4) + bytes(64))
    try:
        while True:
            s.recv_exact(HDR.size)
    except Closed:
        print("short body_len: closed by the daemon")
    except socket.timeout:
        failures.append("short body_len: connection still open")
    at.drop()
    # Oversized declared lengths: the connection closes at the header.
    for bl, kl in ((MAX_BODY + 1, 0), (0xFFFFFFFF, 0), (0, MAX_BULK + 1), (0, 0xFFFFFFFF),
                   (MAX_BODY, MAX_BULK + 4096)):
        s = at.session()
        s.send(hdr(opcode=ops["GETATTR"], reqid=s.next_id(), body_len=bl, bulk_len=kl)
               + bytes(4096))
        try:
            s.recv_exact(HDR.size)
            failures.append("declared %d + %d bytes: answered, not closed" % (bl, kl))
        except Closed:
            pass
        except socket.timeout:
            failures.append("declared %d + %d bytes: connection still open" % (bl, kl))
        at.drop()
    # The largest body allowed, of garbage, to every daemon.
    at.one("GETATTR of a 256 KiB body", ops["GETATTR"], r.randbytes(MAX_BODY))
    # Bulk data on requests that take none (the largest bulk allowed too).
    for opname in ("GETATTR", "LOOKUP", "READDIR", "OBJ_READ", "OBJ_STAT", "OST_STATFS",
                   "MDS_STATFS"):
        at.one("%s with 64 KiB of bulk" % opname, ops[opname], cred() + ROOT + u32(0),
               bulk=r.randbytes(65536))
    at.one("GETATTR with 16 MiB of bulk", ops["GETATTR"], cred() + ROOT + u32(0),
           bulk=bytes(MAX_BULK))
    at.one("OBJ_WRITE whose length is not its bulk's", ops["OBJ_WRITE"],
           u32(0) + u32(0) + fid(0x7777, 1) + u64(0) + u64(1 << 30), bulk=bytes(4096))
    at.one("OBJ_WRITE near 2^64", ops["OBJ_WRITE"],
           u32(0) + u32(0) + fid(0x7777, 1) + u64(2**64 - 100) + u64(4096), bulk=bytes(4096))
    print("lengths and bulk: %s" % at.counts)
    # Well-formed requests with absurd values.
    for item in absurd(ops):
        tname, op, body = item[:3]
        role = item[3] if len(item) > 3 else ROLE_CLIENT
        at.one(tname, op, body, role=role, need_error=not (len(item) > 4 and item[4]))
    at.drop()
    print("absurd values: %s" % at.counts)
    # Mutations of those well-formed bodies: bytes flipped, words set to
    # extremes, pieces cut or repeated.  Any answer but a hang or a bad
    # reply is fine.  Only requests that read are mutated: a few flipped
    # bits could turn a bad FID into a real one, and a change made there
    # would be a legitimate request of a key holder, not a bug.
    readers = {ops[n] for n in ("GETATTR", "LOOKUP", "READDIR", "READLINK",
                                "GETLAYOUT", "XATTR_GET", "XATTR_LIST", "LOOKUP_MANY",
                                "PACK_LIST", "PACK_FILES", "POOL_LIST", "OBJ_READ",
                                "OBJ_STAT", "OBJ_VERIFY", "OST_STATFS")}
    seeds = [(n, op, b) for n, op, b in templates(ops) if op in readers]
    seeds += [(it[0], it[1], it[2]) for it in absurd(ops) if it[1] in readers]
    for i in range(400):
        tname, op, body = r.choice(seeds)
        at.one("mutated %s" % tname, op, mutate(r, body), need_error=False)
    at.drop()
    print("mutations: %s" % at.counts)
    print("auth: %d requests in %.1f s: %s" % (sum(at.counts.values()),
                                               time.monotonic() - t0, at.counts))
    if at.counts["error"] == 0:
        failures.append("not one error reply: the garbage never reached a handler")


def flood(key, fsname, hog_too):
    """Many small valid requests on one connection: all answered, in
    bounded memory; then (@hog_too) the same without reading the replies,
    while another connection must still be served."""
    t0 = time.monotonic()
    n = 20000
    get_root = cred() + ROOT + u32(0)
    for opname, op, body in (("PING", OP_PING, b""), ("GETATTR root", OP_GETATTR, get_root)):
        s = Session(key, fsname)
        got = {"ok": 0, "err": 0}
        first = s.reqid + 1

        def reader():
            try:
                for _ in range(n):
                    h = s.recv_exact(HDR.size)
                    magic, _, _, flags, status, rid, blen, bulklen = HDR.unpack(h)
                    s.recv_exact(blen + bulklen)
                    if magic != MAGIC or not flags & MF_REPLY or not first <= rid < first + n:
                        got["bad"] = rid
                        return
                    got["ok" if status == 0 else "err"] += 1
            except (Closed, socket.timeout) as e:
                got["stop"] = repr(e)

        th = threading.Thread(target=reader)
        th.start()
        msgs = b"".join(hdr(opcode=op, reqid=s.next_id(), body_len=len(body)) + body
                        for _ in range(n))
        s.send(msgs)
        th.join(REPLY_TIMEOUT * 2)
        s.close()
        print("flood of %d %s: %s in %.1f s" % (n, opname, got, time.monotonic() - t0))
        # PING is served by every daemon; GETATTR by the MDS only.
        if got["ok"] + got["err"] != n or "bad" in got:
            failures.append("flood of %s: %s" % (opname, got))
    # A peer that sends and never reads: its replies fill the socket.  The
    # daemon must stop reading it and go on serving everyone else: a
    # reply that cannot leave holds no other connection (the I/O thread
    # sends nothing after AUTH; threads waiting on that peer give up after
    # 10 s without a reply leaving and shut it down).
    if not hog_too:
        return
    hog = Session(key, fsname, rcvbuf=4096)
    batch = b"".join(hdr(opcode=OP_PING, reqid=i) for i in range(1, 20001))
    hog.s.settimeout(2)
    sent, stalls = 0, 0
    # Up to 2^20 PINGs: 32 MiB of replies, more than socket buffers hold.
    while sent < 52 and not stalls:
        try:
            hog.s.sendall(batch)
            sent += 1
        except socket.timeout:
            stalls += 1
        except (BrokenPipeError, ConnectionResetError):
            break
    print("non-reading peer: %d batches of 20000 PINGs sent, %d stalls" % (sent, stalls))
    t1 = time.monotonic()
    try:
        other = Session(key, fsname)
        other.s.settimeout(30)
        status, _, _ = other.call(OP_PING)
        other.close()
        print("meanwhile another connection was served in %.2f s"
              % (time.monotonic() - t1))
        if status != WS_OK:
            failures.append("PING beside a non-reading peer: status %d" % status)
    except (Closed, socket.timeout, RuntimeError) as e:
        failures.append("PING beside a non-reading peer: %r after %.0f s"
                        % (e, time.monotonic() - t1))
    hog.close()


def vanish(key, fsname):
    """Peers that go away with requests in flight: each sends a burst of
    GETATTRs (answered by the service threads at once, not held for a
    commit), more than a connection may have in flight, and resets its
    connection without reading a reply, at once or a moment later; four
    at a time, so that the daemon's I/O thread finds several events
    waiting at once (a connection resumed and reset in one batch).  A reply
    that can no longer be sent ends its request: answering it a second
    time would free it twice, and a connection closed by an earlier event
    of a batch must not be touched by a later one (the daemon's liveness is
    checked by the caller; a sanitizer build also checks its memory)."""
    t0 = time.monotonic()
    get_root = cred() + ROOT + u32(0)
    rounds, n, peers = 100, 100, 4
    errors = []

    def peer(seed):
        r = random.Random(seed)
        for i in range(rounds):
            s = Session(key, fsname)
            s.send(b"".join(hdr(opcode=OP_GETATTR, reqid=s.next_id(),
                                body_len=len(get_root)) + get_root for _ in range(n)))
            if i % 2:
                time.sleep(r.random() * 0.003)
            # An RST, not a FIN: the daemon's next send to it fails.
            s.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()

    def run(seed):
        try:
            peer(seed)
        except (OSError, RuntimeError, Closed) as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(port * 10 + k,)) for k in range(peers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        failures.append("vanishing peers: a new session failed: %s (daemon gone?)" % errors[0])
        return
    try:
        other = Session(key, fsname)
        status, _, _ = other.call(OP_PING)
        other.close()
    except (OSError, RuntimeError, Closed) as e:
        failures.append("PING after vanished peers: %r" % e)
        return
    print("%d peers vanished with %d requests each in flight, %d at a time, in %.1f s; "
          "PING after: %d" % (rounds * peers, n, peers, time.monotonic() - t0, status))
    if status != WS_OK:
        failures.append("PING after vanished peers: status %d" % status)

try:
    if mode in ("cases", "burst"):
        {"cases": cases, "burst": burst}[mode]()
    elif mode == "auth":
        auth_attack(load_key(sys.argv[4]), sys.argv[5], sys.argv[6],
                    int(sys.argv[7]) if len(sys.argv) > 7 else port)
    elif mode == "flood":
        flood(load_key(sys.argv[4]), sys.argv[5], sys.argv[6:7] == ["hog"])
        vanish(load_key(sys.argv[4]), sys.argv[5])
    else:
        failures.append("unknown mode " + mode)
except (OSError, RuntimeError, Closed) as e:
    failures.append("%s: %r" % (mode, e))
for f in failures:
    print("FAILED: " + f)
sys.exit(1 if failures else 0)
