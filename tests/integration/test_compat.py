"""Older servers: what stockctl does where Redis predates a command form it prefers.

A proxy in front of a real server answers the forms Redis < 6.2 does not know with the error
such a server gives ("ERR syntax error") and passes everything else through, one command at a
time, so stockctl sees a server of that age.
"""

import json
import os
import socket
import threading
import unittest

from harness import RedisServer, run


def read_line(conn, buf):
    while b"\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    line, rest = buf.split(b"\r\n", 1)
    return line, rest


def read_exact(conn, buf, n):
    while len(buf) < n:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf[:n], buf[n:]


def read_command(conn, buf):
    """One RESP command (an array of bulk strings): its raw bytes, its words, the rest."""
    header, buf = read_line(conn, buf)
    if not header.startswith(b"*"):  # an inline command ("PING"), as a real server takes it
        return header + b"\r\n", header.split(), buf
    raw, words = [header + b"\r\n"], []
    for _ in range(int(header[1:])):
        length, buf = read_line(conn, buf)
        data, buf = read_exact(conn, buf, int(length[1:]) + 2)
        raw += [length + b"\r\n", data]
        words.append(data[:-2])
    return b"".join(raw), words, buf


def read_reply(conn, buf):
    """One RESP2 reply, raw."""
    line, buf = read_line(conn, buf)
    raw = [line + b"\r\n"]
    kind, value = line[:1], line[1:]
    if kind == b"$" and int(value) >= 0:
        data, buf = read_exact(conn, buf, int(value) + 2)
        raw.append(data)
    elif kind == b"*" and int(value) > 0:
        for _ in range(int(value)):
            element, buf = read_reply(conn, buf)
            raw.append(element)
    return b"".join(raw), buf


class OldServerProxy:
    """Listens on a free loopback port; refuses the commands `refuse(words)` picks."""

    def __init__(self, upstream_port, refuse, error=b"-ERR syntax error\r\n"):
        self.upstream_port = upstream_port
        self.refuse = refuse
        self.error = error
        self.refused = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.relay, args=(client,), daemon=True).start()

    def relay(self, client):
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        cbuf = ubuf = b""
        try:
            while True:
                raw, words, cbuf = read_command(client, cbuf)
                if self.refuse(words):
                    self.refused += 1
                    client.sendall(self.error)
                    continue
                upstream.sendall(raw)
                reply, ubuf = read_reply(upstream, ubuf)
                client.sendall(reply)
        except (ConnectionError, OSError, ValueError):
            pass
        finally:
            client.close()
            upstream.close()

    def close(self):
        self.listener.close()


def set_with_get(words):
    return words[0].upper() == b"SET" and any(w.upper() == b"GET" for w in words[3:])


class BeforeSetGet(unittest.TestCase):
    """Redis before 6.2 has no SET ... GET: init, forced or not, never sends it (--force writes
    through the put script, which also leaves the units of live holds out of the value)."""

    def setUp(self):
        self.server = RedisServer()
        self.addCleanup(self.server.stop)
        self.proxy = OldServerProxy(self.server.port, set_with_get)
        self.addCleanup(self.proxy.close)
        self.url = "redis://127.0.0.1:%d" % self.proxy.port
        self.r = self.server.client()
        self.addCleanup(self.r.close)
        self.report = os.path.join(self.server.dir, "report.jsonl")

    def init(self, rows, *options):
        res = run("init", "--file", "-", "--format", "csv", "--report", self.report, "--url", self.url, *options,
                  input="sku,stock\n" + "".join("%s,%s\n" % row for row in rows))
        self.assertEqual(res.rc, 0, res)
        with open(self.report) as f:
            return {item["sku"]: (item["status"], item["stock"]) for item in map(json.loads, f)}

    def test_init_force_needs_no_set_get(self):
        self.r("SET", "stock:{a}", "5", "EX", "1000")
        self.r("SET", "stock:{c}", "9")
        items = self.init([("a", 7), ("b", 3), ("c", 9)], "--force", "--no-log")
        self.assertEqual(items, {"a": ("ok", 7), "b": ("ok", 3), "c": ("ok", 9)})  # c: forced
        self.assertEqual([self.r("GET", "stock:{%s}" % s) for s in "abc"], ["7", "3", "9"])
        self.assertTrue(900 < self.r("TTL", "stock:{a}") <= 1000, "a forced overwrite keeps the TTL")
        self.assertEqual(self.proxy.refused, 0)

    def test_init_without_force_needs_no_set_get(self):
        self.r("SET", "stock:{a}", "5")
        items = self.init([("a", 7), ("b", 3)])
        self.assertEqual(items, {"a": ("exists", 5), "b": ("ok", 3)})
        self.assertEqual(self.proxy.refused, 0)


if __name__ == "__main__":
    unittest.main()
