"""doctor against real servers configured each bad way (and one good way)."""

import os
import signal
import socket
import time
import unittest

from harness import RedisCluster, RedisServer, clean_env, free_port, keyslot, run


def findings(res):
    """{check: [finding, ...]} of a doctor run."""
    out = {}
    for line in res.lines:
        assert line["op"] == "doctor", line
        assert set(line) == {"op", "check", "node", "status", "detail", "hint"}, line
        out.setdefault(line["check"], []).append(line)
    return out


def statuses(res, check):
    return [f["status"] for f in findings(res)[check]]


class DoctorTest(unittest.TestCase):
    def setUp(self):
        self.servers = []
        self.stopped = []  # servers this test sent SIGSTOP

    def tearDown(self):
        for s in self.stopped:
            s.proc.send_signal(signal.SIGCONT)
        for s in self.servers:
            s.stop()
        self.servers = []

    def server(self, *args, **kw):
        s = RedisServer(*args, **kw)
        self.servers.append(s)
        return s

    def doctor(self, server, *args):
        return run("doctor", "--url", server.url, *args)

    def refuse(self, server, *commands):
        """The ACL user "doctor" (password "pw") on `server`, refused each of `commands`."""
        c = server.client()
        c("ACL", "SETUSER", "doctor", "on", ">pw", "~*", "&*", "+@all", *("-" + x for x in commands))
        c.close()


class Standalone(DoctorTest):
    def primary_with_replica(self, primary_args=(), replica_persists=True):
        primary = self.server(*primary_args, persist=True)
        replica = self.server("--replicaof", "127.0.0.1", str(primary.port), persist=replica_persists)
        deadline = time.monotonic() + 30
        c = primary.client()
        while "slave0:" not in c("INFO", "replication") or "state=online" not in c("INFO", "replication"):
            self.assertLess(time.monotonic(), deadline, "the replica never came online")
            time.sleep(0.05)  # waiting for the replica's sync, bounded by the deadline
        c.close()
        return primary, replica

    def test_a_persistent_primary_with_a_replica_passes_strict(self):
        primary, replica = self.primary_with_replica(("--min-replicas-to-write", "1"))
        res = self.doctor(primary, "--strict")
        self.assertEqual(res.rc, 0, res)
        got = findings(res)
        self.assertEqual(sorted(got), ["clock", "cluster", "eviction", "holds", "locks", "memory",
                                       "persistence", "replication", "version"])
        self.assertEqual([f["node"] for f in got["replication"]],
                         ["127.0.0.1:%d" % primary.port, "127.0.0.1:%d" % replica.port])
        self.assertEqual(got["replication"][0]["detail"],
                         "1 replicas online; min-replicas-to-write 1, min-replicas-max-lag 10")
        self.assertEqual(got["replication"][1]["detail"],
                         "replica of 127.0.0.1:%d; AOF (appendfsync always)" % primary.port)
        self.assertTrue(all(f["status"] == "ok" and f["hint"] is None for fs in got.values() for f in fs), res)
        self.assertEqual(got["cluster"][0]["detail"], "not a cluster")
        self.assertIn("holds", got["holds"][0]["detail"])
        self.assertEqual(got["eviction"][0]["node"], "127.0.0.1:%d" % primary.port)
        replica_res = self.doctor(replica)
        self.assertEqual(findings(replica_res)["replication"][0]["detail"],
                         "replica of 127.0.0.1:%d, link up" % primary.port)

    def test_replicas_without_min_replicas_to_write_warn(self):
        primary, _ = self.primary_with_replica()
        res = self.doctor(primary)
        self.assertEqual(res.rc, 0, res)
        replication = findings(res)["replication"][0]
        self.assertEqual(replication["status"], "warn", res)
        self.assertIn("min-replicas-to-write 0", replication["detail"])
        for setting in ("min-replicas-to-write 1", "min-replicas-max-lag", "--wait-replicas 1"):
            self.assertIn(setting, replication["hint"])
        self.assertEqual(self.doctor(primary, "--strict").rc, 1)

    def test_min_replicas_to_write_with_no_replica_fails(self):
        # Every write is refused with NOREPLICAS: not a warning about durability, an outage.
        server = self.server("--min-replicas-to-write", "1", "--min-replicas-max-lag", "10",
                             persist=True)
        refused = run("deduct", "a", "1", "--init-value", "5", "--url", server.url)
        self.assertIn("NOREPLICAS", refused.stdout + refused.stderr)  # the server really refuses
        res = self.doctor(server)
        self.assertEqual(res.rc, 1, res)
        replication = findings(res)["replication"][0]
        self.assertEqual(replication["status"], "fail", res)
        self.assertEqual(replication["detail"],
                         "0 good replicas (online, heard from within min-replicas-max-lag 10 s) of "
                         "the 1 that min-replicas-to-write requires (0 attached): this primary "
                         "refuses every write with NOREPLICAS")
        self.assertIn("lower min-replicas-to-write", replication["hint"])
        self.assertIn("stockctl: error: doctor: check replication failed on 127.0.0.1:%d: 0 good "
                      "replicas" % server.port, res.stderr)

    def test_fewer_replicas_than_min_replicas_to_write_requires_fails(self):
        primary, replica = self.primary_with_replica(("--min-replicas-to-write", "1"))
        c = primary.client()
        try:
            c("CONFIG", "SET", "min-replicas-to-write", "2")
            refused = run("deduct", "a", "1", "--init-value", "5", "--url", primary.url)
            self.assertIn("NOREPLICAS", refused.stdout + refused.stderr)
            res = self.doctor(primary)
            self.assertEqual(res.rc, 1, res)
            replication = findings(res)["replication"]
            self.assertEqual(replication[0]["status"], "fail", res)
            self.assertTrue(replication[0]["detail"].startswith(
                "1 good replicas (online, heard from within min-replicas-max-lag 10 s) of the 2 "
                "that min-replicas-to-write requires (1 attached)"), replication[0])
            # The replica itself is fine, and still asked.
            self.assertEqual((replication[1]["node"], replication[1]["status"]),
                             ("127.0.0.1:%d" % replica.port, "ok"))
        finally:
            c.close()

    def test_a_replica_without_persistence_warns_on_the_replica(self):
        primary, replica = self.primary_with_replica(("--min-replicas-to-write", "1"),
                                                     replica_persists=False)
        res = self.doctor(primary)
        by_node = {f["node"]: f for f in findings(res)["replication"]}
        self.assertEqual(by_node["127.0.0.1:%d" % primary.port]["status"], "ok", res)
        bare = by_node["127.0.0.1:%d" % replica.port]
        self.assertEqual(bare["status"], "warn", res)
        self.assertIn("replica of 127.0.0.1:%d with neither AOF nor RDB" % primary.port, bare["detail"])
        self.assertIn("appendonly yes on the replica", bare["hint"])
        own = findings(self.doctor(replica))["replication"][0]  # asked directly: the same
        self.assertEqual(own["status"], "warn", own)

    def test_a_stopped_replica_is_reported_within_the_connect_timeout(self):
        primary, replica = self.primary_with_replica(("--min-replicas-to-write", "1"))
        replica.proc.send_signal(signal.SIGSTOP)
        self.stopped.append(replica)
        started = time.monotonic()
        res = self.doctor(primary, "--connect-timeout", "1000")
        elapsed = time.monotonic() - started
        replication = {f["node"]: f for f in findings(res)["replication"]}
        stopped = replication["127.0.0.1:%d" % replica.port]
        self.assertEqual(stopped["status"], "warn", res)  # doctor could not look: not ok
        self.assertEqual(stopped["detail"],
                         "replica of 127.0.0.1:%d: not reachable from here (talking to "
                         "127.0.0.1:%d: no answer within 1000 ms (server down, paused or "
                         "unreachable?)), its persistence not checked" % (primary.port, replica.port))
        self.assertIn("redis-cli -h 127.0.0.1 -p %d PING" % replica.port, stopped["hint"])
        # One connect timeout, not --timeout (5 s) twice as before; loosely, for a busy machine.
        self.assertLess(elapsed, 4, res)

    def test_a_node_that_never_answers_is_asked_once(self):
        # A socket that accepts connections (the kernel does, for a stopped process too) and
        # never answers. A plain connection whose first read timed out used to be followed by a
        # second one, to see whether the port speaks TLS, which waited as long again.
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        try:
            port = silent.getsockname()[1]
            res = run("doctor", "--url", "redis://127.0.0.1:%d" % port, "--timeout", "300")
            self.assertEqual(res.rc, 1, res)
            self.assertEqual(statuses(res, "connect"), ["fail"], res)
            self.assertIn("no answer within 300 ms", findings(res)["connect"][0]["detail"])
            silent.settimeout(0)
            connections = 0
            while True:
                try:
                    conn, _ = silent.accept()
                except BlockingIOError:
                    break
                conn.close()
                connections += 1
            self.assertEqual(connections, 1)
        finally:
            silent.close()

    def test_memory_full_fails_and_little_headroom_warns(self):
        server = self.server()
        memory = findings(self.doctor(server))["memory"][0]
        self.assertEqual(memory["status"], "ok")
        self.assertIn("no maxmemory", memory["detail"])
        c = server.client()
        try:
            c("SET", "stock:{a}", "5")
            c("CONFIG", "SET", "maxmemory", "1")
            refused = run("deduct", "a", "1", "--url", server.url)
            self.assertIn("OOM", refused.stdout + refused.stderr)  # the server really refuses
            res = self.doctor(server)
            self.assertEqual(res.rc, 1, res)
            memory = findings(res)["memory"][0]
            self.assertEqual(memory["status"], "fail", res)
            self.assertIn("refuses writes with OOM now", memory["detail"])
            self.assertIn("raise maxmemory", memory["hint"])
            info = dict(l.split(":", 1) for l in c("INFO", "memory").splitlines() if ":" in l)
            used = int(info["used_memory"]) - int(info["mem_not_counted_for_evict"])
            c("CONFIG", "SET", "maxmemory", str(used * 100 // 93))
            memory = findings(self.doctor(server))["memory"][0]
            self.assertEqual(memory["status"], "warn", memory)
            self.assertIn("little headroom", memory["detail"])
        finally:
            c("CONFIG", "SET", "maxmemory", "0")
            c.close()

    def test_no_persistence_warns_and_strict_fails(self):
        server = self.server()
        res = self.doctor(server)
        self.assertEqual(res.rc, 0, res)
        persistence = findings(res)["persistence"][0]
        self.assertEqual(persistence["status"], "warn")
        self.assertIn("a restart loses every item", persistence["detail"])
        self.assertIn("appendonly yes", persistence["hint"])
        self.assertEqual(self.doctor(server, "--strict").rc, 1)

    def test_table_has_one_aligned_row_per_finding(self):
        server = self.server()
        json_findings = self.doctor(server).lines
        res = self.doctor(server, "--table")
        self.assertEqual(res.rc, 0, res)
        header, *rows = res.stdout.splitlines()
        self.assertEqual(header.split(), ["op", "check", "node", "status", "detail", "hint"])
        self.assertEqual(len(rows), len(json_findings))
        # Every column starts where its header does; a finding without hint shows "-".
        starts = [header.index(name) for name in ("check", "node", "status", "detail", "hint")]
        for row, finding in zip(rows, json_findings):
            self.assertEqual(row, row.rstrip(), res.stdout)
            for start, name in zip(starts, ("check", "node", "status", "detail", "hint")):
                if finding["check"] == "memory" and name != "status":
                    continue  # used_memory differs between the two runs
                value = finding[name] if finding[name] is not None else "-"
                self.assertEqual(row[start:start + len(value)], value, res.stdout)
        persistence = next(r for r in rows if r.split()[1] == "persistence")
        self.assertIn("a restart loses every item", persistence)

    def test_allkeys_lru_that_really_evicts_stock_keys_fails(self):
        server = self.server("--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru")
        path = os.path.join(server.dir, "stock.csv")
        with open(path, "w") as f:
            f.write("sku,stock\n")
            f.writelines("item-%d,%d\n" % (i, i) for i in range(50000))
        loaded = run("init", "--file", path, "--url", server.url)
        self.assertEqual((loaded.rc, loaded.one["counts"]["ok"]), (0, 50000), loaded)
        c = server.client()
        self.assertLess(c("DBSIZE"), 50000)  # stock keys written "ok" are gone
        c.close()
        res = self.doctor(server)
        self.assertEqual(res.rc, 1, res)
        eviction = findings(res)["eviction"][0]
        self.assertEqual(eviction["status"], "fail")
        self.assertIn("allkeys-lru with maxmemory 2097152", eviction["detail"])
        self.assertIn("noeviction", eviction["hint"])

    def test_lock_without_expiry_fails(self):
        server = self.server()
        c = server.client()
        c("SET", "stock:{a}:lock", "token", "PX", "60000")
        c("SET", "other:{b}:lock", "not ours")
        self.assertEqual(statuses(self.doctor(server), "locks"), ["ok"])
        c("SET", "stock:{b}:lock", "token")
        res = self.doctor(server)
        self.assertEqual((res.rc, statuses(res, "locks")), (1, ["fail"]), res)
        lock = findings(res)["locks"][0]
        self.assertIn("stock:{b}:lock", lock["detail"])
        self.assertNotIn("stock:{a}:lock", lock["detail"])
        self.assertIn("DEL 'stock:{b}:lock'", lock["hint"])
        c("DEL", "stock:{b}:lock")
        c("SET", "stockctl:rebuild-lock:stock:", "token")
        res = self.doctor(server)
        self.assertEqual((res.rc, statuses(res, "locks")), (1, ["fail"]), res)
        self.assertEqual(statuses(self.doctor(server, "--prefix", "other:"), "locks"), ["fail"])
        c.close()

    def test_scan_reports_each_corrupt_value(self):
        server = self.server()
        c = server.client()
        c("MSET", "stock:{good}", "5", "stock:{free}", "-1", "stock:{bad}", "abc", "stock:{neg}", "-5",
          "stock:{good}:lock", "x")
        c("LPUSH", "stock:{list}", "1")
        c.close()
        self.assertNotIn("values", findings(self.doctor(server)))
        res = self.doctor(server, "--scan")
        self.assertEqual(res.rc, 1, res)
        values = findings(res)["values"]
        bad = sorted(f["detail"] for f in values if f["detail"].startswith("stock:"))
        self.assertEqual(bad, ["stock:{bad} holds 'abc', not a stock value",
                               "stock:{list} is not a string key",
                               "stock:{neg} holds '-5', not a stock value"])
        self.assertEqual(values[-1]["detail"], "5 items read, 3 corrupt")
        # The hint for a key of another type is one that works: init --force stops at WRONGTYPE.
        hint = next(f["hint"] for f in values if f["detail"] == "stock:{list} is not a string key")
        self.assertEqual(hint, "look at what it holds (redis-cli TYPE stock:{list}), remove it "
                               "(redis-cli DEL stock:{list}), then set the item: stockctl init "
                               "SKU VALUE")

    def test_metrics_file_has_a_gauge_per_check_node_and_status(self):
        server = self.server()
        path = os.path.join(server.dir, "doctor.prom")
        res = self.doctor(server, "--metrics-file", path)
        self.assertEqual(res.rc, 0, res)
        with open(path) as f:
            text = f.read()
        node = "127.0.0.1:%d" % server.port
        self.assertIn('stockctl_doctor_check{check="persistence",node="%s",status="warn"} 1\n' % node, text)
        self.assertIn('stockctl_doctor_check{check="persistence",node="%s",status="ok"} 0\n' % node, text)
        self.assertIn('stockctl_doctor_check{check="eviction",node="%s",status="ok"} 1\n' % node, text)
        self.assertIn('stockctl_last_exit_code{op="doctor"} 0\n', text)

    def doctor_as(self, server, user, *args):
        """doctor as the ACL user `user` (password "pw")."""
        return run("doctor", "--url", server.url, "--user", user, *args,
                   env=clean_env(STOCKCTL_PASSWORD="pw"))

    def test_config_get_refused_warns_on_each_check_that_needs_it(self):
        # An ACL user without +config|get: the checks that read CONFIG could not look, and an
        # operator who reads ok takes it for "looked, and fine".
        server, replica = self.primary_with_replica(("--maxmemory", "10mb", "--maxmemory-policy",
                                                      "allkeys-lru", "--min-replicas-to-write", "1"))
        for node in (server, replica):
            self.refuse(node, "config|get")
        res = self.doctor_as(server, "doctor")
        got = {check: fs[0] for check, fs in findings(res).items()}
        refusal = "NOPERM this user has no permissions to run the 'config|get' command"
        eviction = got["eviction"]
        self.assertEqual(eviction["status"], "warn", res)
        self.assertEqual(eviction["detail"], "maxmemory-policy could not be read (CONFIG GET "
                         "maxmemory-policy: %s): eviction not checked" % refusal)
        self.assertIn("check by hand", eviction["hint"])
        self.assertIn("noeviction, or volatile-* only while no key has an expiry", eviction["hint"])
        for check in ("persistence", "replication", "memory"):
            self.assertEqual(got[check]["status"], "warn", got[check])
            self.assertIn("could not be read (CONFIG GET ", got[check]["detail"])
            self.assertIn(refusal, got[check]["detail"])
            self.assertIn("check by hand", got[check]["hint"])
        self.assertIn("min-replicas-to-write could not be read", got["replication"]["detail"])
        asked = findings(res)["replication"][1]  # the replica, asked in turn
        self.assertEqual((asked["node"], asked["status"]), ("127.0.0.1:%d" % replica.port, "warn"))
        self.assertIn("its AOF and RDB settings could not be read", asked["detail"])
        # Nothing it could not read is stated as a fact about the server.
        self.assertNotIn("neither AOF nor RDB", got["persistence"]["detail"] + asked["detail"])
        self.assertNotIn("no maxmemory", got["memory"]["detail"])
        self.assertEqual(self.doctor_as(server, "doctor", "--strict").rc, 1)

    def test_a_renamed_config_command_warns_rather_than_passing(self):
        # A managed Redis that renames CONFIG, and an allkeys policy doctor cannot see.
        server = self.server("--maxmemory-policy", "allkeys-lru", "--rename-command", "CONFIG", "")
        res = self.doctor(server)
        eviction = findings(res)["eviction"][0]
        self.assertEqual(eviction["status"], "warn", res)
        self.assertRegex(eviction["detail"], r"^maxmemory-policy could not be read \(CONFIG GET "
                         r"maxmemory-policy: ERR unknown command 'CONFIG'.*\): eviction not checked$")

    def test_info_refused_warns_on_each_check_that_needs_it(self):
        primary, _ = self.primary_with_replica(("--min-replicas-to-write", "1"))
        self.refuse(primary, "info")
        res = self.doctor_as(primary, "doctor")
        got = {check: fs[0] for check, fs in findings(res).items()}
        refusal = "INFO: NOPERM this user has no permissions to run the 'info' command"
        for check in ("replication", "version"):
            self.assertEqual(got[check]["status"], "warn", got[check])
            self.assertIn(refusal, got[check]["detail"])
        # Not "no replica": it has one, which doctor could not see.
        self.assertEqual(got["replication"]["detail"],
                         "INFO could not be read (%s): replication not checked" % refusal)
        # CLUSTER INFO tells a plain server from a cluster node without INFO.
        self.assertEqual((got["cluster"]["status"], got["cluster"]["detail"]), ("ok", "not a cluster"))
        self.assertEqual(got["persistence"]["status"], "ok", got["persistence"])  # CONFIG alone

    def test_holds_that_could_not_be_looked_for_warn_naming_the_refusal(self):
        server = self.server()
        self.assertEqual(run("init", "a", "5", "--url", server.url).rc, 0)
        held = run("hold", "h1", "a=1", "--expire", "1", "--url", server.url)
        self.assertEqual(held.rc, 0, held)
        c = server.client()
        while True:  # ZCOUNT is asked about an item only once the index says it is due
            sec, usec = c("TIME")
            if int(sec) * 1000 + int(usec) // 1000 > held.one["expires_at_ms"]:
                break
            time.sleep(0.05)
        c.close()
        self.assertTrue(findings(self.doctor(server))["holds"][0]["detail"].startswith(
            "1 item has expired holds"))
        for command in ("time", "zrangebyscore", "zcount"):
            with self.subTest(refused=command):
                self.refuse(server, command)
                res = self.doctor_as(server, "doctor")
                holds = findings(res)["holds"][0]
                # Not "no expired holds wait to be given back": doctor did not look.
                self.assertEqual(holds["status"], "warn", res)
                self.assertRegex(holds["detail"], r"^expired holds could not be looked for "
                                 r"\(%s( .*)?: NOPERM this user has no permissions to run the "
                                 r"'%s' command\): holds not checked$" % (command.upper(), command))
                self.assertIn("stockctl reap runs from cron every minute", holds["hint"])

    def test_a_lock_whose_expiry_could_not_be_read_warns(self):
        server = self.server()
        c = server.client()
        c("SET", "stock:{b}:lock", "token")  # no expiry: it blocks item b forever
        c.close()
        self.refuse(server, "pttl")
        res = self.doctor_as(server, "doctor")
        lock = findings(res)["locks"][0]
        self.assertEqual(lock["status"], "warn", res)  # not "1 locks held, each with an expiry"
        self.assertEqual(lock["detail"], "1 locks whose expiry could not be read (PTTL: NOPERM this "
                         "user has no permissions to run the 'pttl' command): stock:{b}:lock; not "
                         "checked whether they block their item (or every rebuild) forever")
        self.assertIn("redis-cli -h 127.0.0.1 -p %d PTTL 'stock:{b}:lock'" % server.port, lock["hint"])

    def test_a_refused_scan_warns_under_the_checks_that_walk_keys(self):
        # It was a "connect" failure ("check that the node runs"), and the holds check that
        # follows was skipped.
        server = self.server()
        self.refuse(server, "scan")
        res = self.doctor_as(server, "doctor", "--scan")
        got = findings(res)
        self.assertNotIn("connect", got, res)
        for check in ("locks", "values"):
            self.assertEqual(got[check][0]["status"], "warn", res)
            self.assertIn("its keys could not be walked (SCAN on 127.0.0.1:%d: NOPERM "
                          % server.port, got[check][0]["detail"])
            self.assertIn("+scan", got[check][0]["hint"])
        self.assertIn("holds", got, res)

    def test_a_clock_that_could_not_be_read_warns_naming_the_node(self):
        server = self.server()
        self.refuse(server, "time")
        res = self.doctor_as(server, "doctor")
        clock = findings(res).get("clock")
        self.assertIsNotNone(clock, res)  # the node was left out, and no finding said so
        self.assertEqual([(f["node"], f["status"]) for f in clock],
                         [("127.0.0.1:%d" % server.port, "warn")], res)
        self.assertEqual(clock[0]["detail"], "its clock could not be read (TIME: NOPERM this user "
                         "has no permissions to run the 'time' command)")
        self.assertIn("ACL +time", clock[0]["hint"])

    def test_a_replica_whose_info_is_refused_is_known_by_its_role(self):
        primary, replica = self.primary_with_replica(("--min-replicas-to-write", "1"))
        self.refuse(replica, "info")
        res = self.doctor_as(replica, "doctor")
        got = findings(res)
        # ROLE says replica: it is not checked as a primary (locks, holds), as with INFO.
        self.assertNotIn("locks", got, res)
        self.assertNotIn("holds", got, res)
        refusal = "INFO: NOPERM this user has no permissions to run the 'info' command"
        self.assertEqual(got["replication"][0]["detail"],
                         "INFO could not be read (%s): replication not checked" % refusal)
        self.refuse(replica, "info", "role")
        res = self.doctor_as(replica, "doctor")
        replication = findings(res)["replication"][0]
        self.assertEqual(replication["status"], "warn", res)
        self.assertEqual(replication["detail"],
                         "INFO could not be read (%s), nor its role (ROLE: NOPERM this user has no "
                         "permissions to run the 'role' command): not known whether it is a "
                         "primary or a replica; replication not checked" % refusal)
        self.assertIn("ACL +role", replication["hint"])

    def test_unreachable_server_is_a_failure(self):
        res = run("doctor", "--url", "redis://127.0.0.1:%d" % free_port(), "--connect-timeout", "500")
        self.assertEqual(res.rc, 1, res)
        self.assertEqual(statuses(res, "connect"), ["fail"])
        # Cron alerting reads standard error: one error line, as every other command's exit 1.
        errors = [l for l in res.stderr.splitlines() if l.startswith("stockctl: error: ")]
        self.assertEqual(len(errors), 1, res.stderr)
        self.assertRegex(errors[0], r"^stockctl: error: doctor: check connect failed on 127\.0\.0\.1:\d+: ")

    def test_a_failed_check_says_so_on_stderr_and_a_clean_run_says_nothing(self):
        server = self.server("--maxmemory", "10mb", "--maxmemory-policy", "allkeys-lru")
        res = self.doctor(server)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("stockctl: error: doctor: check eviction failed on 127.0.0.1:%d: " % server.port,
                      res.stderr)
        self.assertEqual(res.stderr.count("stockctl: error:"), 1, res.stderr)
        good = self.server("--appendonly", "yes")
        res = self.doctor(good)
        self.assertEqual(res.rc, 0, res)
        self.assertNotIn("stockctl: error:", res.stderr)


class Cluster(DoctorTest):
    def test_a_cluster_hold_past_its_expiry_not_reaped_warns_on_its_records_primary(self):
        cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        self.servers = cluster.nodes
        router = cluster.client()
        try:
            on = ("--url", cluster.url, "--cluster")
            self.assertEqual(run("init", "a", "10", *on).rc, 0)
            res = run("hold", "h1", "a=2", "--expire", "1", *on)
            self.assertEqual(res.rc, 0, res)
            expires = res.one["expires_at_ms"]
            record_node = router.node_port("stockctl:cart:stock:{h1}")
            self.assertEqual(statuses(run("doctor", *on), "holds"), ["ok"] * 3)
            c = router._conn(record_node)
            while True:  # the record's expiry is its own node's time
                sec, usec = c("TIME")
                if int(sec) * 1000 + int(usec) // 1000 > expires:
                    break
                time.sleep(0.05)
            res = run("doctor", *on)
            by_node = {f["node"]: f for f in findings(res)["holds"]}
            warned = by_node.pop("127.0.0.1:%d" % record_node)
            self.assertEqual(warned["status"], "warn", res)
            self.assertTrue(warned["detail"].startswith(
                "1 cluster holds or orders are past due and not reaped yet"), warned)
            self.assertIn("stockctl reap --cluster from cron every minute", warned["hint"])
            self.assertEqual([f["status"] for f in by_node.values()], ["ok", "ok"])
            self.assertEqual(run("reap", *on).one, {"op": "reap", "holds": 1, "units": 2, "units_nowhere": 0})
            self.assertEqual(statuses(run("doctor", *on), "holds"), ["ok"] * 3)
        finally:
            router.close()

    def test_info_refused_on_a_cluster_reads_cluster_info_itself(self):
        cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        self.servers = cluster.nodes
        for n in cluster.nodes:
            self.refuse(n, "info")
        res = run("doctor", "--url", cluster.url, "--cluster", "--user", "doctor",
                  env=clean_env(STOCKCTL_PASSWORD="pw"))
        self.assertEqual(statuses(res, "cluster"), ["ok"] * 3, res)
        self.assertTrue(all(f["detail"].startswith("cluster_state ok, 16384 slots covered")
                            for f in findings(res)["cluster"]), res)
        self.assertEqual(statuses(res, "replication"), ["warn"] * 3, res)
        # Each node is known as a cluster primary: its cluster holds are read.
        self.assertEqual(statuses(res, "holds"), ["ok"] * 3, res)
        for n in cluster.nodes:
            self.refuse(n, "info", "cluster|info")
        res = run("doctor", "--url", cluster.url, "--cluster", "--user", "doctor",
                  env=clean_env(STOCKCTL_PASSWORD="pw"))
        cluster_findings = findings(res)["cluster"]
        self.assertEqual([f["status"] for f in cluster_findings], ["warn"] * 3, res)
        self.assertIn("CLUSTER INFO: NOPERM", cluster_findings[0]["detail"])

    def test_a_node_whose_time_is_refused_warns_in_clock_and_holds(self):
        cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        self.servers = cluster.nodes
        refused = cluster.nodes[0]
        for n in cluster.nodes:
            self.refuse(n, *(["time"] if n is refused else []))
        res = run("doctor", "--url", cluster.url, "--cluster", "--user", "doctor",
                  env=clean_env(STOCKCTL_PASSWORD="pw"))
        node = "127.0.0.1:%d" % refused.port
        refusal = "TIME: NOPERM this user has no permissions to run the 'time' command"
        clock = {f["node"]: f for f in findings(res)["clock"]}
        self.assertIn(node, clock, res)  # not left out of the comparison unsaid
        self.assertEqual((clock[node]["status"], clock[node]["detail"]),
                         ("warn", "its clock could not be read (%s): not compared with the other "
                          "nodes'" % refusal))
        self.assertEqual([f["status"] for n, f in clock.items() if n != node], ["ok", "ok"], res)
        holds = {f["node"]: f for f in findings(res)["holds"]}
        self.assertEqual(holds[node]["status"], "warn", res)
        self.assertEqual(holds[node]["detail"], "expired holds and past-due cluster holds and orders "
                         "could not be looked for (%s): holds not checked" % refusal)
        self.assertIn("stockctl reap --cluster", holds[node]["hint"])
        self.assertEqual([f["status"] for n, f in holds.items() if n != node], ["ok", "ok"], res)

    def test_a_slot_left_migrating_fails_on_both_nodes(self):
        cluster = RedisCluster(primaries=3, replicas_per_primary=0)
        self.servers = cluster.nodes
        ids = {}
        for n in cluster.nodes:
            c = n.client()
            ids[n.port] = c("CLUSTER", "MYID")
            c.close()
        res = run("doctor", "--url", cluster.url, "--cluster")
        self.assertEqual(len(findings(res)["cluster"]), 3, res)
        self.assertEqual(statuses(res, "cluster"), ["ok"] * 3, res)
        self.assertEqual(statuses(res, "clock"), ["ok"] * 3, res)
        slot = keyslot("stock:{42}")
        router = cluster.client()
        owner = router.node_port("stock:{42}")
        router.close()
        target = next(p for p in ids if p != owner)
        nodes = {n.port: n for n in cluster.nodes}
        for port, args in ((owner, ("MIGRATING", ids[target])), (target, ("IMPORTING", ids[owner]))):
            c = nodes[port].client()
            c("CLUSTER", "SETSLOT", slot, *args)
            c.close()
        res = run("doctor", "--url", cluster.url, "--cluster")
        self.assertEqual(res.rc, 1, res)
        by_node = {f["node"]: f for f in findings(res)["cluster"]}
        migrating = by_node["127.0.0.1:%d" % owner]
        self.assertEqual(migrating["status"], "fail")
        self.assertEqual(migrating["detail"], "slot %d migrating to %s" % (slot, ids[target][:8]))
        self.assertEqual(migrating["hint"], "run redis-cli --cluster fix 127.0.0.1:%d (then redis-cli "
                         "--cluster check 127.0.0.1:%d)" % (owner, owner))
        self.assertEqual(by_node["127.0.0.1:%d" % target]["detail"],
                         "slot %d importing from %s" % (slot, ids[owner][:8]))
        self.assertEqual(sorted(f["status"] for f in by_node.values()), ["fail", "fail", "ok"])
