#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a lab guest's vCPUs spend their time, without anything in the guest.

The lab's guests run under TCG, where perf cannot count and a debug
kernel's own tracers would cost more than what they measure.  QEMU's
gdbstub can stop the guest at any instruction, though: this samples it.

  guest-profile.py sample SOCK HZ VCPUS OUT
      Attach to the gdbstub on the unix socket SOCK (waiting for it to
      appear), then HZ times a second stop the guest, read each vCPU's
      RIP and, in the kernel, its frame-pointer chain (the lab's debug
      kernel keeps frame pointers), and let it run on.  One line per vCPU
      and sample is appended to OUT: the addresses, innermost first, in
      hex.  Ends when QEMU goes away.  Each sample stops the guest for a
      few socket round trips (~1-3 ms), so a profiled run is a little
      slower than an unprofiled one.

  guest-profile.py report SYSTEM_MAP [--top N] SAMPLES...
      Name the samples' addresses from the kernel's System.map: the
      functions the vCPUs were in (self) and those on the stack
      (inclusive: each sample counts once for every function in its
      chain), as percentages of all samples.  User mode is "[user]",
      module text "[module]" (modules come and go during a test; their
      addresses are not in System.map).  Samples in the idle loop are
      counted apart: the percentages are of the busy ones.
"""
import bisect
import collections
import socket
import struct
import sys
import time

KERNEL_TEXT = 0xffffffff80000000
KERNEL_HALF = 0xffff800000000000
# The frames to follow: enough to reach the syscall, interrupt or
# kthread at the bottom of most of the guest's kernel stacks.
MAX_FRAMES = 24
# A vCPU in the idle loop costs the host nothing under TCG.
IDLE = 'do_idle'


class Stub:
    """The gdb remote protocol over one socket, in acknowledged mode
    (QEMU 7.2 does not offer QStartNoAckMode)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buf = b''
        # QEMU announces a stop when a debugger attaches: drop it.
        self.sock.settimeout(0.5)
        try:
            while self.sock.recv(65536):
                pass
        except socket.timeout:
            pass
        self.sock.settimeout(None)

    def send(self, data):
        self.sock.sendall(b'$%s#%02x' % (data, sum(data) & 0xff))

    def packet(self):
        while True:
            start = self.buf.find(b'$')
            if start >= 0:
                end = self.buf.find(b'#', start)
                if end >= 0 and len(self.buf) >= end + 3:
                    data = self.buf[start + 1:end]
                    self.buf = self.buf[end + 3:]
                    self.sock.sendall(b'+')
                    return data
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk

    def command(self, data):
        self.send(data)
        return self.packet()

    def stop(self):
        self.sock.sendall(b'\x03')
        while self.packet()[:1] not in (b'T', b'S'):
            pass

    def resume(self):
        self.send(b'c')


def reg(regs, i):
    return int.from_bytes(bytes.fromhex(regs[16 * i:16 * (i + 1)].decode()),
                          'little')


def chain(stub):
    """The current vCPU's RIP and the return addresses of its frames."""
    regs = stub.command(b'g')
    rip, rbp = reg(regs, 16), reg(regs, 6)
    out = [rip]
    if rip < KERNEL_TEXT:
        return out
    for _ in range(MAX_FRAMES):
        if rbp < KERNEL_HALF:
            break
        mem = stub.command(b'm%x,10' % rbp)
        if len(mem) != 32:
            break
        prev, ret = struct.unpack('<QQ', bytes.fromhex(mem.decode()))
        if ret < KERNEL_TEXT:
            break
        out.append(ret)
        if prev <= rbp:
            break
        rbp = prev
    return out


def sample(path, hz, vcpus, out):
    deadline = time.time() + 60
    while True:
        try:
            stub = Stub(path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if time.time() > deadline:
                sys.exit('guest-profile: no gdbstub at %s' % path)
            time.sleep(0.2)
    stub.resume()
    with open(out, 'a', buffering=1) as f:
        try:
            while True:
                time.sleep(1.0 / hz)
                stub.stop()
                lines = []
                for cpu in range(1, vcpus + 1):
                    if vcpus > 1 and stub.command(b'Hg%x' % cpu) != b'OK':
                        continue
                    lines.append(' '.join('%x' % a for a in chain(stub)))
                stub.resume()
                f.write(''.join(line + '\n' for line in lines))
        except (EOFError, OSError, ValueError):
            pass


class Symbols:
    def __init__(self, system_map):
        syms = []
        with open(system_map) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in 'TtWw':
                    syms.append((int(parts[0], 16), parts[2]))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]
        # Core kernel text ends where its last symbol does (_etext).
        self.end = self.addrs[-1] if self.addrs else 0

    def name(self, addr):
        if addr < KERNEL_HALF:
            return '[user]'
        if addr > self.end:
            return '[module]'
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else '[unknown]'


def report(system_map, top, files):
    syms = Symbols(system_map)
    own = collections.Counter()
    incl = collections.Counter()
    n = idle = 0
    for path in files:
        with open(path) as f:
            for line in f:
                addrs = [int(x, 16) for x in line.split()]
                if not addrs:
                    continue
                names = [syms.name(a) for a in addrs]
                if IDLE in names:
                    idle += 1
                    continue
                n += 1
                own[names[0]] += 1
                for name in set(names):
                    incl[name] += 1
    print('%d samples from %s: %d idle (%.0f%%), %d busy; busy ones below' %
          (n + idle, ' '.join(files), idle, 100.0 * idle / max(n + idle, 1), n))
    if not n:
        return
    for title, counts in (('self', own), ('inclusive', incl)):
        print('-- %s' % title)
        for name, c in counts.most_common(top):
            print('%5.1f%% %s' % (100.0 * c / n, name))


def main(argv):
    if len(argv) == 6 and argv[1] == 'sample':
        sample(argv[2], float(argv[3]), int(argv[4]), argv[5])
    elif len(argv) >= 4 and argv[1] == 'report':
        args = argv[3:]
        top = 40
        if args[0] == '--top' and len(args) >= 3:
            top = int(args[1])
            args = args[2:]
        report(argv[2], top, args)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
