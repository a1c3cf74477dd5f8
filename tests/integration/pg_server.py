"""One private PostgreSQL server on a free loopback port, for the tests and bench/run.

Started in a data directory of its own and stopped by the exact process started here. As root it
runs as the postgres user (initdb refuses root). With a password, connections over TCP need it
(scram-sha-256) while the server's own unix socket, used by `sql()`, stays trusted."""

import glob
import os
import shutil
import signal
import subprocess
import time

from harness import free_port


class Postgres:
    @staticmethod
    def find(need=("pgbench",)):
        """The newest PostgreSQL bin directory with a server, when `need` are on PATH too."""
        if not all(shutil.which(tool) for tool in ("psql",) + tuple(need)):
            return None
        for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
            if os.path.exists(os.path.join(bindir, "postgres")):
                return bindir
        return None

    def __init__(self, bindir, parent, password=None):
        import pwd
        self.bindir = bindir
        self.dir = os.path.join(parent, "pg")
        os.mkdir(self.dir)
        self.user = {}
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chmod(parent, 0o711)  # mkdtemp's 0700 would keep the postgres user out
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.user = {"user": pw.pw_uid, "group": pw.pw_gid}
        data = os.path.join(self.dir, "data")
        auth = ["--auth-local=trust", "--auth-host=scram-sha-256"] if password else ["--auth=trust"]
        init = subprocess.run([os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", *auth,
                               "--no-sync"], capture_output=True, text=True, cwd=self.dir, **self.user)
        if init.returncode != 0:
            raise RuntimeError("initdb failed: " + init.stderr[-1000:])
        self.port = free_port()
        # No flush to disk per commit: these servers hold test data only.
        self.proc = subprocess.Popen(
            [os.path.join(bindir, "postgres"), "-D", data, "-p", str(self.port), "-k", self.dir,
             "-c", "listen_addresses=127.0.0.1", "-c", "synchronous_commit=off", "-c", "max_connections=120"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir, **self.user)
        deadline = time.monotonic() + 30
        while subprocess.run([os.path.join(bindir, "pg_isready"), "-h", self.dir, "-p", str(self.port)],
                             capture_output=True).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL did not start")
            time.sleep(0.1)  # readiness poll, bounded by the deadline
        if password:
            self.sql("ALTER USER postgres PASSWORD '%s'" % password.replace("'", "''"))
        self.version = self.sql("SHOW server_version").strip()

    def sql(self, text):
        """Runs SQL as postgres over the server's unix socket; returns psql -At output."""
        return subprocess.run(["psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-At", "-X",
                               "-v", "ON_ERROR_STOP=1", "-c", text], check=True, capture_output=True,
                              text=True).stdout

    def stop(self):
        self.proc.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown, of this server only
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
