"""Test harness: real redis-server processes on free loopback ports, and the stockctl binary.

Every server is started by this module and stopped by it (by the exact process it started);
nothing here relies on a service running on the machine.
"""

import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

STOCKCTL = os.environ.get("STOCKCTL_BIN", "stockctl")
# STOCKCTL_TARGET=cluster runs the same tests against a real Redis Cluster (one per process);
# STOCKCTL_TARGET=tls runs them with stockctl talking TLS to every server, and
# STOCKCTL_TARGET=tls-cluster against a cluster with tls-cluster yes.
TARGET = os.environ.get("STOCKCTL_TARGET", "standalone")
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def lua_script(name):
    """The text of lua/NAME as stockctl sends it: each line "-- @include X" replaced by
    lua/include/X.lua, indented as the line was (what lua/embed.cmake does at build time)."""
    with open(os.path.join(ROOT, "lua", name)) as f:
        text = f.read()

    def splice(directive):
        indent, include = directive.group(1), directive.group(2)
        with open(os.path.join(ROOT, "lua", "include", include + ".lua")) as f:
            body = spliced(f.read())  # an include may include another, one level deep
        lines = body.removesuffix("\n").split("\n")
        return "\n".join(indent + line if line or i == 0 else line for i, line in enumerate(lines))

    def spliced(text):
        return re.sub(r"^( *)-- @include ([a-z_]+)$", splice, text, flags=re.M)

    return spliced(text)


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


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class Certificates:
    """Certificates made with `openssl` for the TLS tests, in one temporary directory: a CA and a
    server certificate for localhost/127.0.0.1 (`ca.pem`, `server.pem`/`server.key`), a client
    certificate from the same CA, a second CA with its own server certificate, a server
    certificate that has expired, and one for another name."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="stockctl-certs-")
        self.ca("ca")
        self.ca("other-ca")
        self.leaf("server", "ca", "DNS:localhost,IP:127.0.0.1,IP:::1")
        self.leaf("client", "ca", None)
        self.leaf("other-server", "other-ca", "DNS:localhost,IP:127.0.0.1")
        self.leaf("wrong-name", "ca", "DNS:elsewhere.example")
        self.leaf("expired", "ca", "DNS:localhost,IP:127.0.0.1",
                  dates=("20200101000000Z", "20200102000000Z"))
        atexit.register(shutil.rmtree, self.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def ca(self, name):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj",
                "/CN=stockctl test %s" % name, "-keyout", name + ".key", "-out", name + ".pem",
                cwd=self.dir)

    def leaf(self, name, ca, san, dates=None):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=%s" % name,
                "-keyout", name + ".key", "-out", name + ".csr", cwd=self.dir)
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\n")
            if san:
                f.write("subjectAltName=%s\n" % san)
        if dates is None:
            openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
                    "-CAcreateserial", "-days", "30", "-extfile", ext, "-out", name + ".pem",
                    cwd=self.dir)
            return
        # `openssl x509` cannot date a certificate in the past; `openssl ca` can.
        db = self.path(name + ".db")
        open(db, "w").close()
        conf = self.path(name + ".cnf")
        with open(conf, "w") as f:
            f.write("[ca]\ndefault_ca=d\n[d]\ndatabase=%s\nnew_certs_dir=%s\nserial=%s\n"
                    "default_md=sha256\npolicy=p\nunique_subject=no\n[p]\ncommonName=supplied\n"
                    % (db, self.dir, self.path(name + ".serial")))
        with open(self.path(name + ".serial"), "w") as f:
            f.write("1000\n")
        openssl("ca", "-batch", "-config", conf, "-cert", ca + ".pem", "-keyfile", ca + ".key",
                "-in", name + ".csr", "-out", name + ".pem", "-startdate", dates[0],
                "-enddate", dates[1], "-extfile", ext, "-notext", cwd=self.dir)


_certificates = None


def certificates():
    """The process's test certificates, made on first use."""
    global _certificates
    if _certificates is None:
        _certificates = Certificates()
    return _certificates


class RedisServer:
    """One private redis-server on a free loopback port (and optionally a unix socket). With
    `tls` (by default when STOCKCTL_TARGET=tls) it listens with TLS on a second port, which its
    `url` names; the tests' own client keeps the plain port."""

    def __init__(self, *extra, password=None, unix=False, persist=False, port_picker=None,
                 tls=None, tls_cert="server", tls_auth_clients="no"):
        self.port_picker = port_picker or free_port
        self.dir = tempfile.mkdtemp(prefix="stockctl-redis-")
        self.password = password
        self.unix = os.path.join(self.dir, "redis.sock") if unix else None
        self.extra = list(extra)
        self.persist = persist
        self.tls = TARGET in ("tls", "tls-cluster") if tls is None else tls
        self.tls_cert = tls_cert
        self.tls_auth_clients = tls_auth_clients
        self.tls_port = None
        self.proc = None
        self.port = None
        self.start()

    def tls_args(self):
        certs = certificates()
        return ["--tls-port", str(self.tls_port), "--tls-cert-file", certs.path(self.tls_cert + ".pem"),
                "--tls-key-file", certs.path(self.tls_cert + ".key"),
                "--tls-ca-cert-file", certs.path("ca.pem"),
                "--tls-auth-clients", self.tls_auth_clients]

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
        if self.tls:
            a += self.tls_args()
        return a + self.extra

    def start(self, same_port=False):
        for _ in range(5):
            if not same_port or self.port is None:
                self.port = self.port_picker()
                self.tls_port = free_port() if self.tls else None
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
            c = None
            try:
                c = self.client()
                c("PING")
                return True
            except (OSError, RespError) as e:
                if isinstance(e, RespError) and "LOADING" not in str(e):
                    return True
            finally:
                if c is not None:
                    c.close()
            time.sleep(0.02)  # readiness poll, bounded by the deadline
        return False

    def client(self):
        c = Resp(self.port)
        if self.password:
            c("AUTH", self.password)
        return c

    @property
    def url(self):
        if self.tls:
            return "rediss://127.0.0.1:%d" % self.tls_port
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


def calls_on(server, command):
    """How many times `server` has run `command`, by its own INFO commandstats."""
    c = server.client()
    try:
        for line in c("INFO", "commandstats").splitlines():
            if line.startswith("cmdstat_%s:calls=" % command):
                return int(line.split("calls=")[1].split(",")[0])
        return 0
    finally:
        c.close()


def wait_for_calls(server, command, at_least, seconds=60):
    """Polls INFO commandstats until `server` has run `command` at least `at_least` times."""
    deadline = time.monotonic() + seconds
    while calls_on(server, command) < at_least:
        if time.monotonic() > deadline:
            raise AssertionError("the server never saw %d %s calls" % (at_least, command))
        time.sleep(0.01)  # polling the server's own counter, bounded by the deadline


def wait_for_blocked_client(server, seconds=60):
    """Polls INFO clients until `server` holds a blocked client (a WAIT waiting for replicas)."""
    deadline = time.monotonic() + seconds
    while True:
        c = server.client()
        try:
            info = c("INFO", "clients")
        finally:
            c.close()
        if any(line.startswith("blocked_clients:") and int(line.split(":")[1]) > 0
               for line in info.splitlines()):
            return
        if time.monotonic() > deadline:
            raise AssertionError("no client of %d was ever blocked" % server.port)
        time.sleep(0.01)  # polling the server's own state, bounded by the deadline


def replica_stopped_past_timeout(replica, primary, *args):
    """Runs stockctl with `replica` stopped from before its first write until its WAIT has
    been blocked on `primary` for 0.4 s, twice a --timeout of 200 ms given in `args`, then
    resumed: a run whose read of WAIT's reply gave up at --timeout fails. Returns its result."""
    replica.proc.send_signal(signal.SIGSTOP)
    try:
        proc = spawn(*args)
        wait_for_blocked_client(primary)
        time.sleep(0.4)  # the fault's length: past the --timeout, well within --wait-timeout
    finally:
        replica.proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    return Result(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))


def free_cluster_port():
    """A port whose cluster bus port (port + 10000) is free too."""
    for _ in range(100):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


class RedisCluster:
    """A real Redis Cluster on loopback: 3 primaries and 3 replicas, joined with
    `redis-cli --cluster create`, with a short node timeout so that failovers take seconds (a
    test that pauses a node without wanting a failover gives a longer `node_timeout_ms`)."""

    def __init__(self, primaries=3, replicas_per_primary=1, tls=None, node_timeout_ms=1000):
        self.nodes = []
        count = primaries * (1 + replicas_per_primary)
        tls = TARGET in ("tls", "tls-cluster") if tls is None else tls
        # With tls-cluster the bus and replication use TLS too, and CLUSTER SLOTS names each
        # node's TLS port to a TLS client (its plain port to the tests' plain client).
        tls_args = ("--tls-cluster", "yes", "--tls-replication", "yes") if tls else ()
        for _ in range(count):
            node = RedisServer("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                               "--cluster-node-timeout", str(node_timeout_ms),
                               "--cluster-replica-validity-factor", "0",
                               "--repl-diskless-sync-delay", "0", *tls_args,
                               port_picker=free_cluster_port, tls=tls)
            self.nodes.append(node)
        addresses = ["127.0.0.1:%d" % n.port for n in self.nodes]
        subprocess.run(["redis-cli", "--cluster", "create", *addresses, "--cluster-replicas",
                        str(replicas_per_primary), "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_ok()

    def wait_ok(self, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if all(self._ok(n) for n in self.nodes if n.proc.poll() is None):
                    return
            except (OSError, RespError):
                pass
            time.sleep(0.05)  # waiting for cluster_state:ok, bounded by the deadline
        raise RuntimeError("the cluster never reached cluster_state:ok")

    @staticmethod
    def _ok(node):
        c = node.client()
        try:
            info = c("CLUSTER", "INFO")
            slots = c("CLUSTER", "SLOTS")
            replication = c("INFO", "replication")
            # A replica counts only once its link is up: it can only take over with the data.
            synced = "role:slave" not in replication or "master_link_status:up" in replication
            return ("cluster_state:ok" in info and synced and
                    sum(r[1] - r[0] + 1 for r in slots) == 16384)
        finally:
            c.close()

    @property
    def url(self):
        return self.nodes[0].url

    def live(self):
        return [n for n in self.nodes if n.proc.poll() is None]

    def primaries(self):
        """{port: node} of the live primaries."""
        out = {}
        for n in self.live():
            c = n.client()
            try:
                if "role:master" in c("INFO", "replication"):
                    out[n.port] = n
            finally:
                c.close()
        return out

    def client(self):
        return ClusterResp(self)

    def stop(self):
        for n in self.nodes:
            n.stop()


class ClusterResp:
    """A small cluster-aware client for tests: routes by slot, follows MOVED, and spreads the
    key-less commands tests use (FLUSHALL, DBSIZE, SCRIPT FLUSH, MSET/MGET) over the primaries."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.conns = {}
        self.refresh()

    def refresh(self):
        for n in self.cluster.live():
            try:
                c = self._conn(n.port)
                self.slots = {}
                for start, end, primary, *_ in c("CLUSTER", "SLOTS"):
                    for slot in range(start, end + 1):
                        self.slots[slot] = primary[1]
                return
            except (OSError, RespError):
                self.conns.pop(n.port, None)
        raise RuntimeError("no live cluster node")

    def _conn(self, port):
        if port not in self.conns:
            self.conns[port] = Resp(port)
        return self.conns[port]

    def node_port(self, key):
        return self.slots[keyslot(key)]

    def primaries(self):
        return sorted(set(self.slots.values()))

    def close(self):
        for c in self.conns.values():
            c.close()
        self.conns = {}

    def __call__(self, *args):
        name = str(args[0]).upper()
        if name in ("FLUSHALL", "SCRIPT", "CONFIG", "FUNCTION") and not (name == "SCRIPT" and str(args[1]).upper() == "LOAD"):
            return [self._conn(p)(*args) for p in self.primaries()][0]
        if name == "DBSIZE":
            return sum(self._conn(p)("DBSIZE") for p in self.primaries())
        if name == "MSET":
            for k, v in zip(args[1::2], args[2::2]):
                self("SET", k, v)
            return "OK"
        if name == "MGET":
            return [self("GET", k) for k in args[1:]]
        if name in ("EVAL", "EVALSHA", "FCALL"):
            key = args[3]
        elif name == "SCRIPT":
            return [self._conn(p)(*args) for p in self.primaries()][0]
        else:
            key = args[1]
        for _ in range(5):
            try:
                return self._conn(self.node_port(str(key)))(*args)
            except RespError as e:
                if not str(e).startswith("MOVED"):
                    raise
                self.refresh()
        raise RuntimeError("too many redirects")


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
           if k not in ("STOCKCTL_URL", "REDIS_URL", "STOCKCTL_PASSWORD", "REDISCLI_AUTH",
                        "SSL_CERT_FILE", "SSL_CERT_DIR")}
    if TARGET in ("tls", "tls-cluster"):
        # OpenSSL's default trust store, as a managed Redis's CA in the system's store would be.
        env["SSL_CERT_FILE"] = certificates().path("ca.pem")
    env.update(extra)
    return env


def run(*args, input=None, env=None, timeout=60):
    proc = subprocess.run([STOCKCTL, *map(str, args)], input=input, capture_output=True,
                          text=True, env=env or clean_env(), timeout=timeout)
    return Result(proc)


def run_on_terminal(*args, env=None, timeout=60):
    """Runs stockctl with standard output and standard error on one pseudo-terminal, as a person
    at a terminal sees them (line ends as the terminal sends them, "\\r\\n"). Returns the exit
    status and everything the terminal received, in the order it was written."""
    import pty
    import select
    master, slave = pty.openpty()
    proc = subprocess.Popen([STOCKCTL, *map(str, args)], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=env or clean_env())
    os.close(slave)
    received = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], deadline - time.monotonic())
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(master)
    return proc.wait(timeout=timeout), received.decode(errors="replace")


def spawn(*args, env=None, stdout=subprocess.PIPE, **kw):
    return subprocess.Popen([STOCKCTL, *map(str, args)], stdout=stdout,
                            stderr=subprocess.PIPE, text=True, env=env or clean_env(), **kw)


def spawn_to_file(path, *args, env=None):
    """Starts stockctl with its (possibly large) standard output going to `path`, so that a
    test waiting on something else never blocks it on a full pipe."""
    with open(path, "w") as out:
        return spawn(*args, env=env, stdout=out)


_shared_cluster = None


def shared_cluster():
    global _shared_cluster
    if _shared_cluster is None:
        _shared_cluster = RedisCluster()
        atexit.register(_shared_cluster.stop)
    return _shared_cluster


def standalone_only(test):
    """For tests of one server's own behaviour (its config, its client list, its replica)."""
    return unittest.skipIf(TARGET in ("cluster", "tls-cluster"), "standalone server only")(test)


class ServerTest(unittest.TestCase):
    """Tests sharing one private server (or, with STOCKCTL_TARGET=cluster, one cluster) for the
    class; each test starts from an empty database."""

    server_args = ()
    server_kwargs = {}

    @classmethod
    def setUpClass(cls):
        cls.cluster = (TARGET in ("cluster", "tls-cluster") and not cls.server_args
                       and not cls.server_kwargs)
        cls.server = shared_cluster() if cls.cluster else RedisServer(*cls.server_args, **cls.server_kwargs)
        cls.tmp = tempfile.mkdtemp(prefix="stockctl-test-")

    @classmethod
    def tearDownClass(cls):
        if not cls.cluster:
            cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.r = self.server.client()
        self.r("FLUSHALL")

    def tearDown(self):
        self.r.close()

    def target_args(self):
        return ("--url", self.server.url) + (("--cluster",) if self.cluster else ())

    def sc(self, *args, **kw):
        """Runs stockctl against this test's server or cluster."""
        return run(*args, *self.target_args(), **kw)

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
