"""TLS: rediss:// and --tls against redis-server's TLS port, with certificates the tests make:
verification on by default, each handshake failure named (exit 1, not retried, never a hang),
client certificates, SNI, and a TLS cluster whose discovered nodes are reached over TLS."""

import os
import signal
import subprocess
import time
import unittest

from harness import (RedisCluster, RedisServer, certificates, clean_env, keyslot, run,
                     spawn_to_file)

# Long enough that a failure that was retried (instead of reported at once) would show as a
# subprocess timeout in these tests.
NO_RETRY = ("--retry-timeout", "600000")


def plain_env(**extra):
    """An environment whose default trust store does not hold the test CA."""
    env = clean_env()
    env.pop("SSL_CERT_FILE", None)
    env.update(extra)
    return env


def sc(*args, **kw):
    kw.setdefault("env", plain_env())
    kw.setdefault("timeout", 60)
    return run(*args, **kw)


class TlsTest(unittest.TestCase):
    server_kwargs = {}

    @classmethod
    def setUpClass(cls):
        cls.certs = certificates()
        cls.server = RedisServer(tls=True, **cls.server_kwargs)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        self.r = self.server.client()
        self.r("FLUSHALL")

    def tearDown(self):
        self.r.close()

    def cert(self, name):
        return self.certs.path(name)

    def url(self, host="127.0.0.1", scheme="rediss"):
        return "%s://%s:%d" % (scheme, host, self.server.tls_port)

    def assert_fails(self, res, *reasons):
        self.assertEqual(res.rc, 1, res)
        for reason in reasons:
            self.assertIn(reason, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)


class Verified(TlsTest):
    def test_rediss_with_cacert_by_ip_and_by_name(self):
        for host in ("127.0.0.1", "localhost"):
            self.r("SET", "stock:{a}", "10")
            res = sc("deduct", "a", "3", "--url", self.url(host), "--cacert", self.cert("ca.pem"))
            self.assertEqual((res.rc, res.one["stock"]), (0, 7), res)

    def test_tls_flag_on_a_redis_url(self):
        self.r("SET", "stock:{a}", "5")
        res = sc("get", "a", "--url", self.url(scheme="redis"), "--tls", "--cacert", self.cert("ca.pem"))
        self.assertEqual((res.rc, res.one["stock"]), (0, 5), res)

    def test_the_systems_trust_store_is_the_default(self):
        self.r("SET", "stock:{a}", "5")
        res = sc("get", "a", "--url", self.url(), env=plain_env(SSL_CERT_FILE=self.cert("ca.pem")))
        self.assertEqual((res.rc, res.one["stock"]), (0, 5), res)

    def test_cacertdir(self):
        hashed = os.path.join(self.certs.dir, "hashed")
        os.makedirs(hashed, exist_ok=True)
        subprocess.run(["openssl", "rehash", hashed], check=True)  # empty first: idempotent
        with open(self.cert("ca.pem")) as src, open(os.path.join(hashed, "ca.pem"), "w") as dst:
            dst.write(src.read())
        subprocess.run(["openssl", "rehash", hashed], check=True)
        self.r("SET", "stock:{a}", "5")
        res = sc("get", "a", "--url", self.url(), "--cacertdir", hashed)
        self.assertEqual((res.rc, res.one["stock"]), (0, 5), res)

    def test_unknown_ca_is_refused_at_once(self):
        res = sc("get", "a", "--url", self.url(), "--cacert", self.cert("other-ca.pem"), *NO_RETRY)
        self.assert_fails(res, "TLS handshake with 127.0.0.1:%d" % self.server.tls_port,
                          "unknown CA", "--cacert")
        self.assertEqual((res.one["sku"], res.one["status"]), ("a", "error"))

    def test_no_ca_given_and_none_in_the_store(self):
        res = sc("get", "a", "--url", self.url(), *NO_RETRY)
        self.assert_fails(res, "unknown CA")

    def test_insecure_skips_verification(self):
        self.r("SET", "stock:{a}", "5")
        res = sc("get", "a", "--url", self.url(), "--insecure")
        self.assertEqual((res.rc, res.one["stock"]), (0, 5), res)

    def test_a_bad_cacert_file_names_the_file(self):
        res = sc("get", "a", "--url", self.url(), "--cacert", "/nonexistent/ca.pem")
        self.assert_fails(res, "--cacert /nonexistent/ca.pem: cannot load CA certificates")

    def test_tls_options_without_tls_are_a_usage_error(self):
        res = sc("get", "a", "--url", self.url(scheme="redis"), "--cacert", self.cert("ca.pem"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("need a rediss:// URL or --tls", res.stderr)

    def test_plain_url_to_a_tls_port_is_named(self):
        res = sc("deduct", "a", "1", "--url", self.url(scheme="redis"), "--request-id", "r1",
                 *NO_RETRY)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("speaks TLS on this port; use rediss:// or --tls", res.stderr)

    def test_tls_url_to_a_plain_port_is_named_and_bounded(self):
        url = "rediss://127.0.0.1:%d" % self.server.port
        res = sc("get", "a", "--url", url, "--cacert", self.cert("ca.pem"), "--connect-timeout",
                 "1000", *NO_RETRY)
        self.assert_fails(res, "not TLS", "redis:// without --tls")

    def test_password_never_printed_on_tls_failures(self):
        url = "rediss://:s3cret-pw@127.0.0.1:%d" % self.server.tls_port
        res = sc("get", "a", "--url", url, "--cacert", self.cert("other-ca.pem"), *NO_RETRY)
        self.assertEqual(res.rc, 1, res)
        self.assertNotIn("s3cret-pw", res.stderr + res.stdout)

    def test_a_paused_server_times_out_over_tls(self):
        self.r("SET", "stock:{a}", "5")
        self.server.kill(signal.SIGSTOP)
        try:
            res = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"),
                     "--connect-timeout", "500", "--timeout", "500", "--retry-timeout", "0")
        finally:
            self.server.kill(signal.SIGCONT)
        self.assertEqual(res.rc, 1, res)
        self.assertIn("within 500 ms", res.stderr)


class WrongName(TlsTest):
    server_kwargs = {"tls_cert": "wrong-name"}

    def test_host_name_mismatch(self):
        res = sc("get", "a", "--url", self.url("localhost"), "--cacert", self.cert("ca.pem"), *NO_RETRY)
        self.assert_fails(res, "not issued for 'localhost' (name mismatch)", "--sni")

    def test_ip_mismatch(self):
        res = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"), *NO_RETRY)
        self.assert_fails(res, "not issued for '127.0.0.1' (name mismatch)")

    def test_sni_names_the_host_to_verify(self):
        self.r("SET", "stock:{a}", "5")
        res = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"), "--sni",
                 "elsewhere.example")
        self.assertEqual((res.rc, res.one["stock"]), (0, 5), res)


class Expired(TlsTest):
    server_kwargs = {"tls_cert": "expired"}

    def test_expired_certificate(self):
        res = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"), *NO_RETRY)
        self.assert_fails(res, "certificate has expired")


class ClientCertificateRequired(TlsTest):
    server_kwargs = {"tls_auth_clients": "yes"}

    def test_without_a_client_certificate(self):
        res = sc("deduct", "a", "1", "--url", self.url(), "--cacert", self.cert("ca.pem"), *NO_RETRY)
        self.assert_fails(res, "requires a client certificate", "--cert")

    def test_with_a_client_certificate(self):
        self.r("SET", "stock:{a}", "5")
        res = sc("deduct", "a", "1", "--url", self.url(), "--cacert", self.cert("ca.pem"), "--cert",
                 self.cert("client.pem"), "--key", self.cert("client.key"))
        self.assertEqual((res.rc, res.one["stock"]), (0, 4), res)

    def test_a_client_certificate_from_another_ca(self):
        res = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"), "--cert",
                 self.cert("other-server.pem"), "--key", self.cert("other-server.key"), *NO_RETRY)
        self.assert_fails(res, "refused the client certificate --cert %s" % self.cert("other-server.pem"))

    def test_key_without_cert(self):
        res = sc("get", "a", "--url", self.url(), "--key", self.cert("client.key"))
        self.assertEqual(res.rc, 2, res)
        self.assertIn("--cert and --key go together", res.stderr)


class ClientCertificateOptional(TlsTest):
    server_kwargs = {"tls_auth_clients": "optional"}

    def test_with_and_without(self):
        self.r("SET", "stock:{a}", "5")
        plain = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"))
        self.assertEqual((plain.rc, plain.one["stock"]), (0, 5), plain)
        with_cert = sc("get", "a", "--url", self.url(), "--cacert", self.cert("ca.pem"), "--cert",
                       self.cert("client.pem"), "--key", self.cert("client.key"))
        self.assertEqual((with_cert.rc, with_cert.one["stock"]), (0, 5), with_cert)


class UrlSecrets(unittest.TestCase):
    def test_a_password_in_any_url_position_is_never_printed(self):
        for url in ("redis://h:6379?password=s3cret", "redis://user:s3cret", "redis://h/s3cret",
                    "rediss://127.0.0.1:6379/0?password=s3cret",
                    "redis+sentinel://h:s3cret/m"):
            res = run("get", "a", "--url", url)
            self.assertEqual(res.rc, 2, (url, res))
            self.assertIn("invalid Redis URL", res.stderr)
            self.assertNotIn("s3cret", res.stderr + res.stdout, url)


class TlsCluster(unittest.TestCase):
    """3 primaries + 3 replicas with tls-cluster: stockctl is given one node's TLS port and
    reaches every discovered node over TLS, verified by IP, and follows ASK over TLS to a node
    it had not reached before."""

    @classmethod
    def setUpClass(cls):
        cls.certs = certificates()
        cls.cluster = RedisCluster(tls=True)
        cls.r = cls.cluster.client()

    @classmethod
    def tearDownClass(cls):
        cls.r.close()
        cls.cluster.stop()

    def sc(self, *args):
        return sc(*args, "--url", self.cluster.url, "--cluster", "--cacert",
                  self.certs.path("ca.pem"))

    def test_items_on_every_primary(self):
        skus = ["t%d" % i for i in range(60)]
        self.assertEqual(len({self.r.node_port("stock:{%s}" % s) for s in skus}), 3)
        for s in skus:
            self.r("SET", "stock:{%s}" % s, "10")
        path = os.path.join(self.certs.dir, "batch.csv")
        with open(path, "w") as f:
            f.write("sku,qty\n" + "".join("%s,2\n" % s for s in skus))
        res = self.sc("deduct", "--file", path)
        self.assertEqual(res.rc, 0, res)
        self.assertEqual([l["stock"] for l in res.lines], [8] * len(skus))

    def test_nodes_announced_by_name_are_verified_by_that_name(self):
        def configure(kind):
            for n in self.cluster.live():
                c = n.client()
                c("CONFIG", "SET", "cluster-announce-hostname", "localhost")
                c("CONFIG", "SET", "cluster-preferred-endpoint-type", kind)
                c.close()

        def announced_by_name():
            c = self.cluster.nodes[0].client()
            try:
                return all(r[2][0] == "localhost" for r in c("CLUSTER", "SLOTS"))
            finally:
                c.close()

        skus = ["n%d" % i for i in range(30)]
        self.assertEqual(len({self.r.node_port("stock:{%s}" % s) for s in skus}), 3)
        for s in skus:
            self.r("SET", "stock:{%s}" % s, "3")
        configure("hostname")
        try:
            deadline = time.monotonic() + 30
            while not announced_by_name():  # hostnames travel by gossip
                self.assertLess(time.monotonic(), deadline, "hostnames announced")
                time.sleep(0.05)
            res = self.sc("get", *skus)
            self.assertEqual((res.rc, [l["stock"] for l in res.lines]), (0, [3] * 30), res)
            # The same settings for every node: a name the certificates do not hold fails.
            wrong = self.sc("get", *skus, "--sni", "elsewhere.example", "--retry-timeout", "0")
            self.assertEqual(wrong.rc, 1, wrong)
            self.assertIn("not issued for 'elsewhere.example'", wrong.stderr)
        finally:
            configure("ip")

    def test_ask_redirect_over_tls(self):
        key = "stock:{asked}"
        slot = keyslot(key)
        primaries = self.cluster.primaries()
        src = primaries[self.r.node_port(key)]
        dst = [n for p, n in primaries.items() if p != src.port][0]
        s, d = src.client(), dst.client()
        src_id, dst_id = s("CLUSTER", "MYID"), d("CLUSTER", "MYID")
        try:
            d("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
            s("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
            d("ASKING")
            d("SET", key, "9")
            res = self.sc("get", "asked")
            self.assertEqual((res.rc, res.one["stock"]), (0, 9), res)
        finally:
            d("ASKING")
            d("DEL", key)
            for node in primaries.values():
                c = node.client()
                c("CLUSTER", "SETSLOT", slot, "NODE", src_id)
                c.close()
            s.close()
            d.close()


if __name__ == "__main__":
    unittest.main()
