#!/usr/bin/env python3
"""Fails when code under src/ matches the text of a Redis (or stockctl script) error reply
anywhere but the one classifier, core/error_reply.cpp.

What an error reply means is decided in one place (classify_error_reply), and the rest of the
code compares kinds: a second match of the same text drifts from the first, as the seven copies
this check replaced did. A match is a string literal naming an error code ("NOSCRIPT",
"STOCKCTL_CONFLICT", ...) or a phrase of a generic ERR reply, on a line that compares text
(find, rfind, starts_with, compare, ==, !=). Producing such text (a message, a synthesized
reply) is fine.

Usage: check_error_text.py [SRC_DIR]. Prints FILE:LINE: problem for each match.
"""
import os
import re
import sys

CLASSIFIER = "core/error_reply.cpp"
CODES = (r"NOSCRIPT|NOAUTH|NOPERM|WRONGPASS|MOVED|ASK|TRYAGAIN|CLUSTERDOWN|LOADING|READONLY|"
         r"MASTERDOWN|WRONGTYPE|BUSY|BUSYKEY|OOM|EXECABORT|NOREPLICAS|MISCONF|ERR|"
         r"STOCKCTL_(?:CONFLICT|CORRUPT|OVERFLOW|INVALID)")
PHRASES = (r"already exists|function not found|unknown command|syntax error|"
           r"cluster support disabled|no matching script")
CODE_TEXT = re.compile(r'"(?:' + CODES + r')\b[^"]*"')
PHRASE_TEXT = re.compile(r'"[^"]*(?:' + PHRASES + r')[^"]*"', re.I)
COMPARES = re.compile(r"\b(?:r?find|starts_with|ends_with|compare)\s*\(|[=!]=")


def code_of(line):
    """The line without its // comment (a rough cut that ignores "//" inside strings)."""
    in_string = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            in_string = not in_string
        elif not in_string and line.startswith("//", i):
            return line[:i]
    return line


def check(src):
    problems = []
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(root, name)
            if os.path.relpath(path, src).replace(os.sep, "/") == CLASSIFIER:
                continue
            with open(path, encoding="utf-8") as f:
                for number, raw in enumerate(f, 1):
                    line = code_of(raw)
                    if not COMPARES.search(line):
                        continue
                    found = {m.group(0) for m in CODE_TEXT.finditer(line)}
                    found |= {m.group(0) for m in PHRASE_TEXT.finditer(line)}
                    for text in sorted(found):
                        problems.append(f"{path}:{number}: matches the error text {text}; "
                                        f"classify it in {CLASSIFIER} and compare kinds")
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "src")
    problems = check(os.path.normpath(src))
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} match(es) of error text outside {CLASSIFIER}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
