"""Ask OpenSM's subnet administrator for the SL of many paths (run by bench/opensm_peer.py).

Run under ibsim: LD_PRELOAD=libumad2sim.so IBSIM_SOCKNAME=... python bench/opensm_sa.py SM_LID
with "slid dlid" lines on stdin; prints "slid dlid sl" lines. One PathRecord Get per pair
(SLID and DLID in the component mask), as a host does before it connects: the routing
engines that use lanes (lash, dfsssp, nue, torus-2QoS) give each path its SL through the
SA (doc/current-routing.txt: "applications must perform a path record query to get path
SL"). ibsim has no RMPP (its TODO), so a GetTable of all paths comes back truncated to one
MAD; single Gets fit one MAD each. The MADs go through libibumad (ctypes), which
libumad2sim.so redirects to ibsim. Layouts: the common MAD header and the SA header
(IBA 13.4.2, 15.2.1.1), the PathRecord (IBA 15.2.5.16; OpenSM's ib_path_rec_t): DLID at
byte 40, SLID at 42, QoS class and SL at 52 (SL the low 4 bits).
"""

from __future__ import annotations

import ctypes
import struct
import sys

SA_CLASS, SA_VERSION, METHOD_GET, PATH_RECORD = 0x03, 2, 0x01, 0x0035
QP1_QKEY = 0x80010000
COMPMASK_DLID, COMPMASK_SLID = 1 << 4, 1 << 5
SA_DATA = 56              # the SA attribute starts after the MAD (24), RMPP (12), SM_Key (8), offsets and mask
WINDOW = 32               # queries in flight


def main() -> int:
    sm_lid = int(sys.argv[1])
    pairs = [(int(a), int(b)) for a, b in (line.split() for line in sys.stdin if line.strip())]
    lib = ctypes.CDLL("libibumad.so.3")
    lib.umad_open_port.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.umad_register.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p]
    lib.umad_set_addr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.umad_send.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.umad_recv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.umad_status.argtypes = [ctypes.c_void_p]
    if lib.umad_init() < 0:
        print("umad_init failed", file=sys.stderr)
        return 1
    fd = lib.umad_open_port(None, 0)
    agent = lib.umad_register(fd, SA_CLASS, SA_VERSION, 0, None) if fd >= 0 else -1
    if fd < 0 or agent < 0:
        print(f"no umad port (fd {fd}, agent {agent}): is ibsim running and libumad2sim.so preloaded?",
              file=sys.stderr)
        return 1
    head = lib.umad_size()
    send = ctypes.create_string_buffer(head + 256)
    recv = ctypes.create_string_buffer(head + 256)
    answers: dict[int, int] = {}
    pending: dict[int, int] = {}            # transaction id -> pair index
    next_pair, tries = 0, 0
    while len(answers) < len(pairs):
        while next_pair < len(pairs) and len(pending) < WINDOW:
            _send(lib, fd, agent, send, head, sm_lid, next_pair + 1, pairs[next_pair])
            pending[next_pair + 1] = next_pair
            next_pair += 1
        length = ctypes.c_int(256)
        if lib.umad_recv(fd, recv, ctypes.byref(length), 5000) < 0:
            tries += 1
            if tries > 3:
                print(f"the SA did not answer {len(pending)} queries", file=sys.stderr)
                return 1
            for tid, i in pending.items():                 # lost in the simulator: ask again
                _send(lib, fd, agent, send, head, sm_lid, tid, pairs[i])
            continue
        mad = recv.raw[head:head + 256]
        status = struct.unpack_from(">H", mad, 4)[0]
        tid = struct.unpack_from(">Q", mad, 8)[0] & 0xFFFFFFFF
        if tid not in pending:
            continue
        i = pending.pop(tid)
        if lib.umad_status(recv) != 0 or status != 0:
            print(f"path {pairs[i][0]} -> {pairs[i][1]}: SA status {status:#x}", file=sys.stderr)
            return 1
        dlid, slid = struct.unpack_from(">HH", mad, SA_DATA + 40)
        if (slid, dlid) != pairs[i]:
            print(f"path {pairs[i]}: the SA answered for {slid} -> {dlid}", file=sys.stderr)
            return 1
        answers[i] = struct.unpack_from(">H", mad, SA_DATA + 52)[0] & 0xF
    out = sys.stdout
    for i, (slid, dlid) in enumerate(pairs):
        out.write(f"{slid} {dlid} {answers[i]}\n")
    return 0


def _send(lib: ctypes.CDLL, fd: int, agent: int, buf: ctypes.Array[ctypes.c_char], head: int, sm_lid: int,
          tid: int, pair: tuple[int, int]) -> None:
    mad = bytearray(256)
    struct.pack_into(">BBBBHHQHHI", mad, 0, 1, SA_CLASS, SA_VERSION, METHOD_GET, 0, 0, tid, PATH_RECORD, 0, 0)
    struct.pack_into(">Q", mad, 48, COMPMASK_DLID | COMPMASK_SLID)
    struct.pack_into(">HH", mad, SA_DATA + 40, pair[1], pair[0])
    ctypes.memset(buf, 0, head)
    ctypes.memmove(ctypes.byref(buf, head), bytes(mad), 256)
    lib.umad_set_addr(buf, sm_lid, 1, 0, QP1_QKEY)
    if lib.umad_send(fd, agent, buf, 256, 0, 0) != 0:
        raise SystemExit("umad_send failed")


if __name__ == "__main__":
    sys.exit(main())
