#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send malformed and hostile RoCE frames to an rnic on the lab bridge.

Usage: hostile_frames.py [--src-ip IP] [--qpn N --psn N] IFNAME DST_MAC DST_IP COUNT
                         [CASE...]

Every frame carries a correct ICRC (computed here, independently of the
driver and of rnicsim, with zlib's CRC-32 over the masked headers as IBA
annex A17 defines) unless the case is about a bad ICRC, so the receiver
has to judge the transport headers themselves. Runs only inside the lab's
network namespace, on its bridge. --src-ip sends from another address than
the lab's stranger 10.20.0.99 (always from the stranger's MAC, so that the
bridge never learns a VM's MAC on the wrong port); --qpn and --psn aim the
"live_qp" cases at a connected QP at its expected PSN.
"""
import socket
import struct
import sys
import zlib

SRC_MAC = bytes.fromhex("525400200099")
STRANGER_IP = "10.20.0.99"
SRC_IP = socket.inet_aton(STRANGER_IP)
GSI_QKEY = 0x80010000


def ip_csum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(dmac, dip, transport, good_icrc=True, tver=0, sip=SRC_IP):
    """Ethernet + IPv4 + UDP(4791) + @transport (BTH onward) + ICRC."""
    tlen = len(transport) + 4
    udp = struct.pack("!HHHH", 50000, 4791, 8 + tlen, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + tlen, 0, 0x4000,
                     64, 17, 0, sip, dip)
    ip = ip[:10] + struct.pack("!H", ip_csum(ip)) + ip[12:]
    bth = bytearray(transport)
    bth[1] |= tver
    m_ip = bytearray(ip)
    m_ip[1] = m_ip[8] = m_ip[10] = m_ip[11] = 0xFF
    m_udp = bytearray(udp)
    m_udp[6] = m_udp[7] = 0xFF
    m_bth = bytearray(bth)
    m_bth[4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_ip) + bytes(m_udp) + bytes(m_bth))
    if not good_icrc:
        crc ^= 1
    return (dmac + SRC_MAC + b"\x08\x00" + ip + udp + bytes(bth) +
            struct.pack("<I", crc & 0xFFFFFFFF))


def frame_v1(dmac, dip, transport, good_icrc=True):
    """Ethernet (0x8915) + GRH + @transport (BTH onward) + ICRC (RoCE v1).

    The GIDs are IPv4-mapped, as rdma_cm's RoCE v1 GIDs for an IPv4
    address are. The ICRC covers the GRH with its traffic class, flow
    label and hop limit as ones, in place of the LRH 64 bits of ones.
    """
    tlen = len(transport) + 4
    sgid = b"\0" * 10 + b"\xff\xff" + SRC_IP
    dgid = b"\0" * 10 + b"\xff\xff" + dip
    grh = struct.pack("!IHBB16s16s", 6 << 28, tlen, 0x1B, 64, sgid, dgid)
    m_grh = bytearray(grh)
    m_grh[0] |= 0x0F
    m_grh[1] = m_grh[2] = m_grh[3] = m_grh[7] = 0xFF
    m_bth = bytearray(transport)
    m_bth[4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_grh) + bytes(m_bth))
    if not good_icrc:
        crc ^= 1
    return (dmac + SRC_MAC + b"\x89\x15" + grh + bytes(transport) +
            struct.pack("<I", crc & 0xFFFFFFFF))


def bth(op, dqpn, psn, pad=0):
    return struct.pack("!BBHII", op, pad << 4, 0xFFFF, dqpn & 0xFFFFFF,
                       psn & 0xFFFFFF)


def deth(qkey, sqpn):
    return struct.pack("!II", qkey, sqpn)


def cases(dmac, dip, sip, qpn, psn):
    f = lambda t, **kw: frame(dmac, dip, t, sip=sip, **kw)  # noqa: E731
    v1 = lambda t, **kw: frame_v1(dmac, dip, t, **kw)  # noqa: E731
    return {
        # RC SEND ONLY to a QP that does not exist
        "unknown_qpn": f(bth(0x04, 0x123456, 0) + b"x" * 16),
        # UC SEND FIRST: an opcode rnic does not implement
        "bad_opcode": f(bth(0x20, 1, 0) + b"x" * 16),
        # RC SEND ONLY and RC ACK addressed to the GSI QP (a UD QP)
        "rc_to_gsi": f(bth(0x04, 1, 0) + b"x" * 16),
        "ack_to_gsi": f(bth(0x11, 1, 0) + struct.pack("!I", 0x1F000000)),
        # UD SEND ONLY to QP1 with the wrong Q_Key
        "bad_qkey": f(bth(0x64, 1, 0) + deth(0x1234, 5) + b"x" * 256),
        # BTH transport version 1
        "bad_tver": f(bth(0x04, 2, 0) + b"x" * 16, tver=1),
        # RDMA WRITE ONLY cut inside its BTH (no RETH)
        "truncated_hdr": f(bth(0x0A, 2, 0)[:8]),
        # a UD SEND larger than the port's active MTU (1024 at netdev MTU
        # 1500), yet small enough to cross the lab bridge
        "oversize_ud": f(bth(0x64, 1, 0) + deth(GSI_QKEY, 5) + b"x" * 1300),
        # a correct UD MAD frame with its ICRC wrong
        "bad_icrc": f(bth(0x64, 1, 0) + deth(GSI_QKEY, 5) + b"x" * 256,
                      good_icrc=False),
        # RoCE v1: RC SEND ONLY to a QP that does not exist (its ICRC must
        # be right for that count, not the ICRC one, to move), and a UD
        # MAD frame with its ICRC wrong
        "v1_unknown_qpn": v1(bth(0x04, 0x123456, 0) + b"x" * 16),
        "v1_bad_icrc": v1(bth(0x64, 1, 0) + deth(GSI_QKEY, 5) + b"x" * 256,
                          good_icrc=False),
        # RC SEND MIDDLE at a connected QP's expected PSN with no SEND
        # in progress: an invalid request (opcode out of sequence), which
        # its peer could never have sent
        "live_qp_send_middle": f(bth(0x01, qpn, psn) + b"x" * 16),
    }


def main():
    args = sys.argv[1:]
    opts = {"--src-ip": STRANGER_IP, "--qpn": "0", "--psn": "0"}
    while args and args[0] in opts:
        opts[args[0]] = args[1]
        args = args[2:]
    ifname, dmac, dip, count = args[:4]
    todo = cases(bytes.fromhex(dmac.replace(":", "")), socket.inet_aton(dip),
                 socket.inet_aton(opts["--src-ip"]), int(opts["--qpn"]),
                 int(opts["--psn"]))
    names = args[4:] or [n for n in todo if not n.startswith("live_qp")]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    for name in names:
        for _ in range(int(count)):
            s.send(todo[name])
        print(f"sent {name} x{count} ({len(todo[name])} bytes)")


if __name__ == "__main__":
    main()
