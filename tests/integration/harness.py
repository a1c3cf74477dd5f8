"""Test harness: real redis-server processes on free loopback ports, and the stockctl binary.

Every server is started by this module and stopped by it (by the exact process it started);
nothing here relies on a service running on the machine.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

STOCKCTL = os.environ.get("STOCKCTL_BIN", "stockctl")
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RespError(Exception):
    pass


class Resp:
    """A minimal RESP2 client, so tests can set up and inspect Redis byte for byte."""

    def __init__(self, port=None, unix=None, timeout=10):
        if unix:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.settimeout(timeout)
            self.sock.connect(unix)
        else:
            self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if not isinstance(a, bytes):
                a = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RespError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n).decode("utf-8", "surrogateescape")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RespError("bad reply %r" % line)

    def __call__(self, *args):
        self.send(*args)
        return self.read()


class RedisServer:
    """One private redis-server on a free loopback port (and optionally a unix socket)."""

    def __init__(self, *extra, password=None, unix=False, persist=False):
        self.dir = tempfile.mkdtemp(prefix="stockctl-redis-")
        self.password = password
        self.unix = os.path.join(self.dir, "redis.sock") if unix else None
        self.extra = list(extra)
        self.persist = persist
        self.proc = None
        self.port = None
        self.start()

    def args(self):
        a = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.dir, "--daemonize", "no", "--logfile", "redis.log"]
        if self.persist:
            a += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
        else:
            a += ["--save", "", "--appendonly", "no"]
        if self.password:
            a += ["--requirepass", self.password]
        if self.unix:
            a += ["--unixsocket", self.unix, "--unixsocketperm", "700"]
        return a + self.extra

    def start(self, same_port=False):
        for _ in range(5):
            if not same_port or self.port is None:
                self.port = free_port()
            self.proc = subprocess.Popen(self.args(), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            if self._wait_ready():
                return
            self.kill()
        raise RuntimeError("redis-server did not start; see %s/redis.log" % self.dir)

    def _wait_ready(self, seconds=10):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                c = self.client()
                c("PING")
                c.close()
                return True
            except (OSError, RespError) as e:
                if isinstance(e, RespError) and "LOADING" not in str(e):
                    return True
            time.sleep(0.02)  # readiness poll, bounded by the deadline
        return False

    def client(self):
        c = Resp(self.port)
        if self.password:
            c("AUTH", self.password)
        return c

    @property
    def url(self):
        return "redis://127.0.0.1:%d" % self.port

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            if sig in (signal.SIGKILL, signal.SIGTERM):
                self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def lines(self):
        return [json.loads(l) for l in self.stdout.splitlines() if l.strip()]

    @property
    def one(self):
        lines = self.lines
        assert len(lines) == 1, self.stdout
        return lines[0]

    def __repr__(self):
        return "rc=%s stdout=%r stderr=%r" % (self.rc, self.stdout, self.stderr)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("STOCKCTL_URL", "REDIS_URL", "STOCKCTL_PASSWORD", "REDISCLI_AUTH")}
    env.update(extra)
    return env


def run(*args, input=None, env=None, timeout=60):
    proc = subprocess.run([STOCKCTL, *map(str, args)], input=input, capture_output=True,
                          text=True, env=env or clean_env(), timeout=timeout)
    return Result(proc)


def spawn(*args, env=None, stdout=subprocess.PIPE, **kw):
    return subprocess.Popen([STOCKCTL, *map(str, args)], stdout=stdout,
                            stderr=subprocess.PIPE, text=True, env=env or clean_env(), **kw)


def spawn_to_file(path, *args, env=None):
    """Starts stockctl with its (possibly large) standard output going to `path`, so that a
    test waiting on something else never blocks it on a full pipe."""
    with open(path, "w") as out:
        return spawn(*args, env=env, stdout=out)


class ServerTest(unittest.TestCase):
    """Tests sharing one private server for the module; each test starts from an empty db."""

    server_args = ()
    server_kwargs = {}

    @classmethod
    def setUpClass(cls):
        cls.server = RedisServer(*cls.server_args, **cls.server_kwargs)
        cls.tmp = tempfile.mkdtemp(prefix="stockctl-test-")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.r = self.server.client()
        self.r("FLUSHALL")

    def tearDown(self):
        self.r.close()

    def sc(self, *args, **kw):
        """Runs stockctl against this test's server."""
        return run(*args, "--url", self.server.url, **kw)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", newline="") as f:
            f.write(text)
        return path


def crc16(data):
    """CRC16-XMODEM, as Redis Cluster hashes keys."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def keyslot(key):
    """The Redis Cluster slot of a key, with hash tag rules."""
    k = key.encode()
    start = k.find(b"{")
    if start >= 0:
        end = k.find(b"}", start + 1)
        if end > start + 1:
            k = k[start + 1:end]
    return crc16(k) % 16384
