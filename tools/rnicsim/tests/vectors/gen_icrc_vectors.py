#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate RoCE known-answer frames for rnicsim's ICRC tests.

This is deliberately a second, independent implementation of the ICRC
(IB spec annex A16 for RoCE v1, A17 for RoCE v2): it builds the masked
pseudo header with its own code and takes the CRC from zlib.crc32, so it
shares nothing with pkt.c but the spec. The frames go to icrc_gen.pcap
(classic pcap, LINKTYPE_ETHERNET), which the C tests load like every
other tests/vectors/*.pcap (including frames captured from rdma_rxe).

Variant fields (TOS/traffic class, TTL/hop limit, flow label, checksums,
BTH resv8a) are filled with random non-trivial values, so a wrong mask
in either implementation shows up.

    python3 gen_icrc_vectors.py [output.pcap]
"""
import random
import struct
import sys
import zlib

rng = random.Random(4791)


def rbytes(n):
    return bytes(rng.randrange(256) for _ in range(n))


def eth(dst, src, ethertype, vlan_tci=None):
    if vlan_tci is None:
        return dst + src + struct.pack('>H', ethertype)
    return dst + src + struct.pack('>HHH', 0x8100, vlan_tci, ethertype)


def bth(opcode, pad, qpn, psn):
    # opcode, SE|M|pad|tver, P_Key, resv8a (random: it is masked), QPN,
    # A|resv7, PSN
    flags = (pad & 3) << 4
    return struct.pack('>BBHB', opcode, flags, 0xffff, rng.randrange(256)) \
        + qpn.to_bytes(3, 'big') + struct.pack('>B', 0) \
        + psn.to_bytes(3, 'big')


def masked_ipv6_like(h):
    h = bytearray(h)
    h[0] |= 0x0f          # traffic class (high nibble)
    h[1:4] = b'\xff\xff\xff'  # traffic class (low nibble), flow label
    h[7] = 0xff           # hop limit
    return bytes(h)


def masked_ipv4(h):
    h = bytearray(h)
    h[1] = 0xff           # TOS
    h[8] = 0xff           # TTL
    h[10:12] = b'\xff\xff'  # header checksum
    return bytes(h)


def masked_udp(u):
    return u[:6] + b'\xff\xff'


def masked_bth(b):
    return b[:4] + b'\xff' + b[5:]


def icrc(pseudo, rest):
    # 64 ones stand for the masked LRH; stored little-endian on the wire.
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + pseudo + rest))


def ipv4_csum(h):
    s = sum(struct.unpack('>%dH' % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def roce_v2_ipv4(payload, opcode=0x04, options=b'', vlan=None, sport=None):
    b = bth(opcode, (-len(payload)) % 4, rng.randrange(1 << 24),
            rng.randrange(1 << 24))
    payload = payload + b'\0' * ((-len(payload)) % 4)
    udp_len = 8 + len(b) + len(payload) + 4
    udp = struct.pack('>HHHH', sport or rng.randrange(49152, 65536), 4791,
                      udp_len, rng.randrange(1 << 16))
    ihl = (20 + len(options)) // 4
    tot = ihl * 4 + udp_len
    ip = struct.pack('>BBHHHBBH4s4s', 0x40 | ihl, rng.randrange(256), tot,
                     rng.randrange(1 << 16), 0x4000, rng.randrange(1, 256),
                     17, 0, rbytes(4), rbytes(4)) + options
    ip = ip[:10] + struct.pack('>H', ipv4_csum(ip)) + ip[12:]
    crc = icrc(masked_ipv4(ip) + masked_udp(udp) + masked_bth(b), payload)
    return eth(rbytes(6), rbytes(6), 0x0800, vlan) + ip + udp + b \
        + payload + crc


def roce_v2_ipv6(payload, opcode=0x04, vlan=None):
    b = bth(opcode, (-len(payload)) % 4, rng.randrange(1 << 24),
            rng.randrange(1 << 24))
    payload = payload + b'\0' * ((-len(payload)) % 4)
    udp_len = 8 + len(b) + len(payload) + 4
    udp = struct.pack('>HHHH', rng.randrange(49152, 65536), 4791, udp_len,
                      rng.randrange(1 << 16))
    vtf = (6 << 28) | (rng.randrange(256) << 20) | rng.randrange(1 << 20)
    ip = struct.pack('>IHBB16s16s', vtf, udp_len, 17, rng.randrange(1, 256),
                     rbytes(16), rbytes(16))
    crc = icrc(masked_ipv6_like(ip) + masked_udp(udp) + masked_bth(b),
               payload)
    return eth(rbytes(6), rbytes(6), 0x86dd, vlan) + ip + udp + b \
        + payload + crc


def roce_v1(payload, opcode=0x04, vlan=None):
    b = bth(opcode, (-len(payload)) % 4, rng.randrange(1 << 24),
            rng.randrange(1 << 24))
    payload = payload + b'\0' * ((-len(payload)) % 4)
    plen = len(b) + len(payload) + 4
    vtf = (6 << 28) | (rng.randrange(256) << 20) | rng.randrange(1 << 20)
    grh = struct.pack('>IHBB16s16s', vtf, plen, 0x1b, rng.randrange(1, 256),
                      rbytes(16), rbytes(16))
    crc = icrc(masked_ipv6_like(grh) + masked_bth(b), payload)
    return eth(rbytes(6), rbytes(6), 0x8915, vlan) + grh + b + payload + crc


def aeth():
    return struct.pack('>I', rng.randrange(1 << 32))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else 'icrc_gen.pcap'
    frames = [
        roce_v2_ipv4(b''),                        # SEND ONLY, empty
        roce_v2_ipv4(rbytes(16)),
        roce_v2_ipv4(rbytes(1021)),               # pad count 3
        roce_v2_ipv4(rbytes(4096), opcode=0x0a),  # RDMA WRITE ONLY (no RETH
                                                  # parsing needed for ICRC)
        roce_v2_ipv4(aeth(), opcode=0x11),        # ACKNOWLEDGE
        roce_v2_ipv4(rbytes(64), vlan=0x6005),    # PCP 3, VID 5
        # IPv4 options (4 x NOP) are covered by the ICRC like the rest of
        # the header; rxe never sends options, so this follows our
        # reading of annex A17.
        roce_v2_ipv4(rbytes(32), options=b'\x01' * 4),
        roce_v2_ipv6(b''),
        roce_v2_ipv6(rbytes(256)),
        roce_v2_ipv6(aeth(), opcode=0x11),
        roce_v2_ipv6(rbytes(1500), vlan=0xa00a),
        roce_v1(rbytes(8)),
        roce_v1(rbytes(1001)),
        roce_v1(aeth(), opcode=0x11, vlan=0x2064),
    ]
    with open(out, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)))
            f.write(fr)


if __name__ == '__main__':
    main()
