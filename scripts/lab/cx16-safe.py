#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""cx16-safe.py VMLINUX: may a guest running this kernel have CMPXCHG16B
under QEMU 7.2's TCG?  Exit 0 (and print "safe: N sites") when it may, 1
(printing the sites) when it must not, 2 when it cannot tell (no symbols,
no objdump).

QEMU 7.2 computes CMPXCHG16B's flags from the lazy-flags mode last
written back to its CPU state, not from the current one (see
scripts/lab/README.md and qemu-cx16-flags.c).  Right after an interrupt
returns, that mode is "flags in CC_SRC"; an instruction that then puts
an operand in CC_SRC (ADD, SUB, CMP, shifts, INC, ...), with no jump,
call or return in between, turns that operand into RFLAGS.  A kernel in
which every CMPXCHG16B (and every call to this_cpu_cmpxchg16b_emu, which
the kernel patches into one when the CPU has CX16) is preceded, back to
the previous control transfer, only by instructions that leave CC_SRC
alone is safe.  Debian's 6.12 is not: its SLUB fast path has `add
%rdi,%rax` three instructions before the CMPXCHG16B.
"""
import re
import subprocess
import sys

# Instructions that do not write TCG's CC_SRC: data moves, address
# arithmetic, and the logic operations (TCG keeps their result in CC_DST).
KEEP = re.compile(r"^(mov\w*|lea|push|pop|nop\w*|xchg|bswap|not|test\w?|and\w?|or\w?|"
                  r"xor\w?|prefetch\w*|cmov\w+|set\w+|endbr64|cltq|cdqe|cqto|cltd|"
                  r"cwtl|lfence|sfence|mfence|data16|cs|ds|ss|es|fs|gs|rex\.?\w*|"
                  r"xchg\w?)$")
STOP = re.compile(r"^(j\w+|call\w?|ret\w?|iret\w?|ud2|int3|hlt|sysret\w?|syscall|"
                  r"jmp\w?|loop\w*|bnd)$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)(?:\s+(.*))?$")
SITE = re.compile(r"^(cmpxchg16b|call\S*\s+\S+\s+<this_cpu_cmpxchg16b_emu>)")
SECTION = re.compile(r"^Disassembly of section (\S+):")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        syms = subprocess.run(["nm", argv[1]], capture_output=True, text=True,
                              check=True).stdout
        dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", argv[1]],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"cannot tell: {e}")
        return 2
    if " this_cpu_cmpxchg16b_emu" not in syms:
        print("cannot tell: no symbols (this_cpu_cmpxchg16b_emu not found)")
        return 2
    window = []     # instructions since the last control transfer
    sites = bad = 0
    skip = False
    for line in dis.splitlines():
        sec = SECTION.match(line)
        if sec:
            # the alternatives' replacement code sits there back to back:
            # its neighbours are other sites' code, not what runs before
            skip = sec.group(1) == ".altinstr_replacement"
        m = INSN.match(line)
        if skip or not m:
            window = []     # a new function (or section)
            continue
        addr, mnem, ops = m.group(1), m.group(2), m.group(3) or ""
        if mnem == "lock":
            mnem, _, ops = ops.partition(" ")
        if SITE.search(mnem + " " + ops):
            sites += 1
            writers = [w for w in window if not KEEP.match(w[1])]
            if writers:
                bad += 1
                print(f"unsafe: {addr}: {mnem} {ops.strip()} after " +
                      "; ".join(f"{a}: {n} {o.strip()}" for a, n, o in writers))
            window = []
            continue
        if STOP.match(mnem):
            window = []
        else:
            window.append((addr, mnem, ops))
    if not sites:
        print("cannot tell: no CMPXCHG16B site found")
        return 2
    if bad:
        print(f"unsafe: {bad} of {sites} sites")
        return 1
    print(f"safe: {sites} sites")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
