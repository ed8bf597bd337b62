#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send a burst of well-formed RoCE v2 frames to an rnic on the lab bridge.

Usage: roce_flood.py IFNAME DST_MAC DST_IP COUNT

Each frame is an RC SEND Only (correct ICRC, built by hostile_frames.py's
frame()) to a QP number no one uses, so the receiving NIC drops it once
its transport looks the QP up: while the NIC's receive pipeline is held
the burst fills its receive buffer without a connection. Not a test
itself; runs only inside the lab's network namespace, on its bridge.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_frames import bth, frame  # noqa: E402

OP_RC_SEND_ONLY = 0x04
UNUSED_QPN = 0xFFFF00


def main():
    ifname, dmac, dip, count = sys.argv[1:5]
    dmac = bytes.fromhex(dmac.replace(":", ""))
    dip = socket.inet_aton(dip)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    sent = 0
    for i in range(int(count)):
        f = frame(dmac, dip, bth(OP_RC_SEND_ONLY, UNUSED_QPN, i) + bytes(64))
        s.send(f)
        sent += 1
    print(f"sent {sent} frames")


if __name__ == "__main__":
    main()
