#!/usr/bin/env python3
"""Hostile and spying peers for tests/rpc/test_rpc.sh (tools/rpc/PROTOCOL.md).

  rpc_raw.py attack PORT MODE   speaks raw bytes to a server on 127.0.0.1:PORT; prints what
                                came back ("ERROR <code> <message>", "CLOSED", ...), one line
  rpc_raw.py proxy PORT CAPTURE forwards one connection from a port it picks (printed as
                                "proxy on PORT") to 127.0.0.1:PORT, appending every byte the
                                client sent to CAPTURE
MODE: huge (2 GiB length after authenticating), huge-preauth (before), truncated (a header
that announces 100 bytes, then 10 and EOF), random (4 KiB of random bytes), badmagic,
oversize-put (a PUT_MODEL of 1 MiB; run the server with a smaller --max-message),
mismatch-put (a PUT_MODEL whose bytes do not match its SHA-256, then INFO on the same
session), unknown-type (type 200 after authenticating, then INFO), stall (connects and
sends nothing). The token comes from TINYINFER_RPC_TOKEN."""
import hashlib, hmac, os, socket, struct, sys, threading


def frame(t, payload=b""):
    return b"TIRP" + bytes([1, t]) + b"\0\0" + struct.pack("<I", len(payload)) + payload


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def recv_frame(s):
    h = recv_exact(s, 12)
    if h is None:
        return None, None
    n = struct.unpack("<I", h[8:12])[0]
    return h[5], recv_exact(s, n) if n else b""


def describe(t, p):
    if t is None:
        return "CLOSED"
    if t == 4:
        code = struct.unpack("<I", p[:4])[0]
        n = struct.unpack("<I", p[4:8])[0]
        return "ERROR %d %s" % (code, p[8:8 + n].decode(errors="replace"))
    return "TYPE %d (%d bytes)" % (t, len(p))


def login(s):
    token = os.environ["TINYINFER_RPC_TOKEN"].encode()
    t, p = recv_frame(s)
    assert t == 1, describe(t, p)
    snonce = p[4:36]
    cnonce = os.urandom(32)
    mac = hmac.new(token, b"tirp-client" + snonce + cnonce, hashlib.sha256).digest()
    s.sendall(frame(2, cnonce + mac))
    t, p = recv_frame(s)
    assert t == 3, describe(t, p)
    assert p == hmac.new(token, b"tirp-server" + cnonce + snonce, hashlib.sha256).digest()


def attack(port, mode):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    if mode == "huge-preauth":
        recv_frame(s)  # HELLO
        s.sendall(b"TIRP\x01\x02\0\0\xff\xff\xff\x7f")
    elif mode == "badmagic":
        recv_frame(s)
        s.sendall(b"XXXX\x01\x02\0\0\x40\0\0\0" + b"\0" * 64)
    elif mode == "random":
        recv_frame(s)
        s.sendall(os.urandom(4096))
    elif mode == "stall":
        recv_frame(s)
    else:
        login(s)
        if mode == "huge":
            s.sendall(b"TIRP\x01\x09\0\0\xff\xff\xff\x7f")
        elif mode == "truncated":
            s.sendall(b"TIRP\x01\x0a\0\0\x64\0\0\0" + b"\1" * 10)
            s.shutdown(socket.SHUT_WR)
        elif mode == "oversize-put":
            data = os.urandom(1 << 20)
            s.sendall(frame(9, hashlib.sha256(data).digest() + struct.pack("<Q", len(data)) + data))
        elif mode in ("mismatch-put", "unknown-type"):
            if mode == "mismatch-put":
                data = b"not the model you are looking for"
                s.sendall(frame(9, b"\0" * 32 + struct.pack("<Q", len(data)) + data))
            else:
                s.sendall(frame(200))
            first = describe(*recv_frame(s))
            s.sendall(frame(5))  # INFO: the session must go on
            second = describe(*recv_frame(s))
            print(first + " / then " + second.split(" (")[0])
            return
    try:
        print(describe(*recv_frame(s)))
    except (ConnectionResetError, socket.timeout, BrokenPipeError):
        print("CLOSED")


def proxy(port, capture):
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    print("proxy on %d" % ls.getsockname()[1], flush=True)
    a, _ = ls.accept()
    b = socket.create_connection(("127.0.0.1", port))
    out = open(capture, "ab")

    def pump(src, dst, log):
        while True:
            try:
                d = src.recv(65536)
            except OSError:
                d = b""
            if not d:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            if log:
                log.write(d)
                log.flush()
            dst.sendall(d)

    t1 = threading.Thread(target=pump, args=(a, b, out))
    t2 = threading.Thread(target=pump, args=(b, a, None))
    t1.start(), t2.start()
    t1.join(), t2.join()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "attack":
        attack(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "proxy":
        proxy(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)
