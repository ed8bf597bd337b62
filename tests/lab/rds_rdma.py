#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rds_rdma.py: RDS's RDMA operations between two lab VMs, every byte verified.

  rds_rdma.py init   BIND_IP PEER_IP PORT ROUNDS SEED TIMEOUT
  rds_rdma.py target BIND_IP PEER_IP PORT ROUNDS SEED TIMEOUT

The target maps a buffer of its own for each round with RDS_CMSG_RDMA_MAP
(RDS registers it through a fast-registration WR on its connection's QP
and sends the <R_Key, offset> cookie along with the message; with
RDS_RDMA_INVALIDATE, so that closing the socket invalidates each MR with
a LOCAL_INV before it returns); the
initiator gets the cookie as RDS_CMSG_RDMA_DEST and runs the round's
operation with RDS_CMSG_RDMA_ARGS, from or into two local buffers (two
SGEs), with RDS_RDMA_NOTIFY_ME: an RDMA WRITE on even rounds, an RDMA
READ on odd ones, the message that carries it ("done R") sent after the
operation on the same connection (after a READ with RDS_RDMA_FENCE: RDS
posts that SEND with IB_SEND_FENCE). The initiator waits for the operation's
RDS_CMSG_RDMA_STATUS and, after a READ, checks what it read; the target,
on "done R" of a WRITE, checks its buffer. Sizes go from 1 byte to 256
KiB and buffers start at odd offsets in their pages (the cookie's
offset). Bytes come from a generator seeded with SEED, the round and the
direction, so neither side needs the other's copy.

The initiator starts first and prints "ready" once bound; each side exits
0 only when every round verified within TIMEOUT seconds, and prints one
line per round and a summary.
"""
import ctypes
import errno
import mmap
import random
import socket
import struct
import sys
import time

SOL_RDS = 276
RDS_CMSG_RDMA_ARGS = 1
RDS_CMSG_RDMA_DEST = 2
RDS_CMSG_RDMA_MAP = 3
RDS_CMSG_RDMA_STATUS = 4
RDS_RDMA_READWRITE = 0x1
RDS_RDMA_FENCE = 0x2
RDS_RDMA_INVALIDATE = 0x4
RDS_RDMA_NOTIFY_ME = 0x20

# (size, offset of the buffer in its first page)
ROUNDS = ((1, 0), (4096, 0), (5000, 100), (65536, 0), (61440, 2049),
          (262144, 0), (8, 4088), (131072, 777))


def pattern(seed, r, what):
    return random.Random(f"{seed}-{r}-{what}").randbytes(ROUNDS[r % len(ROUNDS)][0])


class Buf:
    """Anonymous memory (page aligned) with its address, for the kernel."""

    def __init__(self, size, offset=0):
        self.m = mmap.mmap(-1, max(offset + size, 1) + mmap.PAGESIZE)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.m))
        self.off, self.size = offset, size
        self.addr = self.base + offset

    def write(self, data):
        self.m[self.off:self.off + len(data)] = data

    def read(self):
        return bytes(self.m[self.off:self.off + self.size])


def rds_socket(ip, port):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.bind((ip, port))
    s.setblocking(False)
    return s


def send_retry(s, data, anc, dest, deadline, what):
    """sendmsg, waiting out a congested port, a full queue or a
    connection that is not up yet (a map needs its QP: ENODEV)."""
    while True:
        try:
            return s.sendmsg([data], anc, 0, dest)
        except OSError as e:
            if e.errno not in (errno.ENOBUFS, errno.EAGAIN, errno.ENODEV,
                               errno.ENOTCONN) or time.monotonic() > deadline:
                raise OSError(e.errno, f"{what}: {e.strerror}") from None
            time.sleep(0.02)


def recv_one(s, deadline, stash=None, status=False):
    """(data, {cmsg type: [payloads]}, source), or None at the deadline.
    With a stash list: status=True returns the next RDMA status, keeping
    messages that come first in the stash; status=False takes a stashed
    message first."""
    if stash and not status:
        return stash.pop(0)
    while time.monotonic() < deadline:
        try:
            data, anc, _, src = s.recvmsg(1024, socket.CMSG_SPACE(64) * 4)
        except BlockingIOError:
            time.sleep(0.005)
            continue
        cm = {}
        for level, typ, payload in anc:
            if level == SOL_RDS:
                cm.setdefault(typ, []).append(payload)
        if stash is not None and status and RDS_CMSG_RDMA_STATUS not in cm:
            stash.append((data, cm, src))
            continue
        return data, cm, src
    return None


def report(who, ok, nrounds, bad):
    """The run's last lines; its exit status."""
    for m in bad:
        print(f"bad: {m}")
    print(f"{who}: {ok}/{nrounds} rounds verified")
    return 0 if ok == nrounds and not bad else 1


def target(bind_ip, peer_ip, port, nrounds, seed, timeout):
    s = rds_socket(bind_ip, port)
    deadline = time.monotonic() + timeout
    dest = (peer_ip, port)
    bufs, bad, ok = [], [], 0
    try:
        # a plain message brings the connection up: a map needs its QP
        send_retry(s, b"hello", [], dest, deadline, "hello")
        for r in range(nrounds):
            size, off = ROUNDS[r % len(ROUNDS)]
            b = Buf(size, off)
            b.write(pattern(seed, r, "read") if r % 2 else bytes(size))
            bufs.append(b)  # mapped as long as RDS's MR on it lives
            # invalidated when freed (the socket's close): LOCAL_INV now
            args = struct.pack("=QQQQ", b.addr, size, 0, RDS_RDMA_INVALIDATE)
            send_retry(s, f"map {r}".encode(), [(SOL_RDS, RDS_CMSG_RDMA_MAP, args)],
                       dest, deadline, f"round {r}: RDS_CMSG_RDMA_MAP of {size} B")
            got = recv_one(s, deadline)
            if got is None:
                bad.append(f"round {r}: no 'done {r}' within {timeout} s")
                break
            data, _, src = got
            if data != f"done {r}".encode() or src[:2] != dest:
                bad.append(f"round {r}: got {data[:40]!r} from {src}, want 'done {r}'")
                break
            if r % 2 == 0:
                want = pattern(seed, r, "write")
                have = b.read()
                if have != want:
                    n = next(i for i in range(size) if have[i] != want[i])
                    bad.append(f"round {r}: RDMA WRITE of {size} B at page offset "
                               f"{off}: byte {n} differs")
                    continue
            print(f"round {r}: {'RDMA READ from' if r % 2 else 'RDMA WRITE into'} "
                  f"{size} B at page offset {off} of the target: ok")
            ok += 1
    except OSError as e:
        bad.append(str(e))
    return report("target", ok, nrounds, bad)


def initiator(bind_ip, peer_ip, port, nrounds, seed, timeout):
    s = rds_socket(bind_ip, port)
    print("ready", flush=True)
    deadline = time.monotonic() + timeout
    dest = (peer_ip, port)
    bad, ok, stash = [], 0, []
    try:
        got = recv_one(s, deadline, stash)
        if got is None or got[0] != b"hello":
            raise OSError(errno.EPROTO, f"no 'hello' from the target within {timeout} s")
        for r in range(nrounds):
            size, off = ROUNDS[r % len(ROUNDS)]
            got = recv_one(s, deadline, stash)
            if got is None:
                bad.append(f"round {r}: no 'map {r}' within {timeout} s")
                break
            data, cm, src = got
            cookies = cm.get(RDS_CMSG_RDMA_DEST, [])
            if data != f"map {r}".encode() or len(cookies) != 1:
                bad.append(f"round {r}: got {data[:40]!r} with {len(cookies)} "
                           f"RDS_CMSG_RDMA_DEST, want 'map {r}' and one cookie")
                break
            (cookie,) = struct.unpack("=Q", cookies[0][:8])
            write = r % 2 == 0
            # two local SGEs: the first part, the rest (one if 1 byte)
            half = size // 2
            parts = [Buf(n, 3 * i) for i, n in enumerate((half, size - half)) if n]
            if write:
                want, pos = pattern(seed, r, "write"), 0
                for p in parts:
                    p.write(want[pos:pos + p.size])
                    pos += p.size
            vec = (ctypes.c_uint64 * (2 * len(parts)))()
            for i, p in enumerate(parts):
                vec[2 * i], vec[2 * i + 1] = p.addr, p.size
            # a READ's message fenced (IB_SEND_FENCE): sent after its data
            flags = RDS_RDMA_NOTIFY_ME | (RDS_RDMA_READWRITE if write else RDS_RDMA_FENCE)
            args = struct.pack("=QQQQQQQ", cookie, 0, size, ctypes.addressof(vec),
                               len(parts), flags, 1000 + r)
            send_retry(s, f"done {r}".encode(), [(SOL_RDS, RDS_CMSG_RDMA_ARGS, args)],
                       dest, deadline,
                       f"round {r}: RDS_CMSG_RDMA_ARGS {'WRITE' if write else 'READ'} {size} B")
            got = recv_one(s, deadline, stash, status=True)
            if got is None:
                bad.append(f"round {r}: no RDS_CMSG_RDMA_STATUS within {timeout} s")
                break
            _, cm, _ = got
            st = cm.get(RDS_CMSG_RDMA_STATUS, [])
            if len(st) != 1:
                bad.append(f"round {r}: {len(st)} RDS_CMSG_RDMA_STATUS in one recvmsg")
                break
            token, status = struct.unpack("=Qi", st[0][:12])
            if token != 1000 + r or status != 0:
                bad.append(f"round {r}: RDMA {'WRITE' if write else 'READ'} status "
                           f"{status} for token {token}, want 0 for {1000 + r}")
                continue
            if not write:
                have = b"".join(p.read() for p in parts)
                if have != pattern(seed, r, "read"):
                    bad.append(f"round {r}: RDMA READ of {size} B: the bytes differ")
                    continue
            print(f"round {r}: {'RDMA WRITE' if write else 'RDMA READ'} of {size} B "
                  f"through {len(parts)} local SGE(s): status 0, verified")
            ok += 1
    except OSError as e:
        bad.append(str(e))
    return report("initiator", ok, nrounds, bad)


def main(argv):
    if len(argv) == 7 and argv[0] in ("init", "target"):
        port, nrounds, seed = (int(a) for a in argv[3:6])
        fn = initiator if argv[0] == "init" else target
        return fn(argv[1], argv[2], port, nrounds, seed, float(argv[6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
