#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rds_msgs.py: AF_RDS messages between two lab VMs, every one verified.

  rds_msgs.py recv BIND_IP PEER_IP PORT SOCKETS COUNT SEED TIMEOUT
  rds_msgs.py send BIND_IP PEER_IP PORT SOCKETS COUNT SEED
  rds_msgs.py open BIND_IP PEER_IP PORT

"open" sends one byte to a port nobody has bound on the peer: it makes
RDS connect (the byte is dropped there).

SOCKETS sockets on each side, bound to PORT, PORT+1, ...; socket k of the
sender sends COUNT messages to port PORT+k of the receiver, the sockets
interleaved (one message of each in turn), so the RDS connection carries
several sockets' traffic at once. Message i of socket k has a size from
SIZES (1 byte to 60 KiB, cycling) and bytes drawn from a generator seeded
with SEED, k and i: the receiver recomputes them, so a lost, duplicated,
reordered (per socket), truncated or corrupted message fails. The receiver
prints one line per socket and exits 0 only when every message of every
socket arrived in order and intact within TIMEOUT seconds; it starts
before the sender and prints "ready" when its sockets are bound.
"""
import errno
import random
import select
import socket
import sys
import time

# 1 byte, sizes around RDS's 4 KiB fragments, up to 60 KiB
SIZES = (1, 2, 7, 48, 100, 1000, 4095, 4096, 4097, 8191, 8192, 12000,
         16384, 32768, 61440)


def msg(seed, k, i):
    size = SIZES[(i + 3 * k) % len(SIZES)]
    return random.Random(f"{seed}-{k}-{i}").randbytes(size)


def rds_socket(ip, port):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.bind((ip, port))
    return s


def recv(bind_ip, peer_ip, port, nsock, count, seed, timeout):
    socks = [rds_socket(bind_ip, port + k) for k in range(nsock)]
    print("ready", flush=True)
    got = [0] * nsock
    nbytes = 0
    bad = []
    deadline = time.monotonic() + timeout
    while sum(got) < nsock * count and not bad:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select(socks, [], [], left)
        for s in ready:
            k = socks.index(s)
            data, src = s.recvfrom(65536)
            want_src = (peer_ip, port + k)
            if src[:2] != want_src:
                bad.append(f"socket {k}: message from {src}, want {want_src}")
                continue
            if got[k] >= count:
                bad.append(f"socket {k}: message beyond the {count} sent")
                continue
            want = msg(seed, k, got[k])
            if data != want:
                bad.append(f"socket {k}: message {got[k]}: {len(data)} bytes, "
                           f"want {len(want)}, "
                           f"{'same' if data[:len(want)] == want[:len(data)] else 'other'} content")
                continue
            got[k] += 1
            nbytes += len(data)
    for k in range(nsock):
        print(f"socket {k} port {port + k}: {got[k]}/{count} messages in order and intact")
    for b in bad:
        print(f"bad: {b}")
    print(f"received {sum(got)} messages, {nbytes} bytes, verified")
    return 0 if sum(got) == nsock * count and not bad else 1


def send(bind_ip, peer_ip, port, nsock, count, seed):
    socks = [rds_socket(bind_ip, port + k) for k in range(nsock)]
    nbytes = 0
    for i in range(count):
        for k, s in enumerate(socks):
            data = msg(seed, k, i)
            for _ in range(3000):
                try:
                    s.sendto(data, (peer_ip, port + k))
                    break
                except OSError as e:
                    # a congested port or a full send queue: wait for room
                    if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                        raise
                    time.sleep(0.01)
            else:
                print(f"socket {k}: message {i}: no room for 30 s")
                return 1
            nbytes += len(data)
    print(f"sent {count * nsock} messages, {nbytes} bytes, "
          f"sizes {min(SIZES)}-{max(SIZES)} B, {nsock} sockets")
    return 0


def open_conn(bind_ip, peer_ip, port):
    s = rds_socket(bind_ip, port)
    s.sendto(b"x", (peer_ip, port))
    print(f"sent 1 byte from {bind_ip}:{port} to {peer_ip}:{port}")
    return 0


def main(argv):
    if len(argv) == 4 and argv[0] == "open":
        return open_conn(argv[1], argv[2], int(argv[3]))
    if len(argv) >= 7 and argv[0] in ("send", "recv"):
        bind_ip, peer_ip = argv[1], argv[2]
        port, nsock, count, seed = (int(a) for a in argv[3:7])
        if argv[0] == "send" and len(argv) == 7:
            return send(bind_ip, peer_ip, port, nsock, count, seed)
        if argv[0] == "recv" and len(argv) == 8:
            return recv(bind_ip, peer_ip, port, nsock, count, seed,
                        float(argv[7]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
