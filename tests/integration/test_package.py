"""cmake --install and cpack -G DEB put everything where Debian expects it."""

import os
import shutil
import subprocess
import tempfile
import unittest

BUILD = os.environ.get("STOCKCTL_BUILD_DIR")

EXPECTED = [
    "usr/bin/stockctl",
    "usr/share/man/man1/stockctl.1.gz",
    "usr/share/bash-completion/completions/stockctl",
    "usr/share/zsh/vendor-completions/_stockctl",
    "usr/share/fish/vendor_completions.d/stockctl.fish",
]


@unittest.skipUnless(BUILD, "STOCKCTL_BUILD_DIR is not set (run through ctest)")
class Package(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stockctl-pkg-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_cmake_install(self):
        root = os.path.join(self.tmp, "root")
        subprocess.run(["cmake", "--install", BUILD, "--prefix", os.path.join(root, "usr")],
                       check=True, capture_output=True)
        for path in EXPECTED:
            self.assertTrue(os.path.isfile(os.path.join(root, path)), path)
        out = subprocess.run([os.path.join(root, "usr/bin/stockctl"), "--version"],
                             capture_output=True, text=True, check=True).stdout
        self.assertTrue(out.startswith("stockctl "))
        man = subprocess.run(["gzip", "-dc", os.path.join(root, EXPECTED[1])],
                             capture_output=True, text=True, check=True).stdout
        self.assertTrue(man.startswith(".TH STOCKCTL 1"))

    @unittest.skipUnless(shutil.which("dpkg-shlibdeps"), "dpkg-dev is not installed")
    def test_cpack_deb(self):
        subprocess.run(["cpack", "-G", "DEB", "-B", self.tmp, "--config",
                        os.path.join(BUILD, "CPackConfig.cmake")], check=True, capture_output=True)
        debs = [f for f in os.listdir(self.tmp) if f.endswith(".deb")]
        self.assertEqual(len(debs), 1, os.listdir(self.tmp))
        deb = os.path.join(self.tmp, debs[0])
        listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True,
                                 check=True).stdout
        for path in EXPECTED:
            self.assertIn("./" + path, listing)
        depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True,
                                 text=True, check=True).stdout
        # libstdc++, fmt and hiredis are linked in (a short process's start costs no
        # relocations of theirs); OpenSSL too. What is left is the C library.
        self.assertIn("libc6", depends)
        for linked_in in ("libhiredis", "libfmt", "libstdc++", "libssl"):
            self.assertNotIn(linked_in, depends)
        name = subprocess.run(["dpkg-deb", "-f", deb, "Package"], capture_output=True, text=True,
                              check=True).stdout.strip()
        self.assertEqual(name, "stockctl")


if __name__ == "__main__":
    unittest.main()
