#!/usr/bin/env python3
"""The test suite's time budget (tests/budget.txt), read by scripts/test and checked by CTest.

  budget.py check FILE                 the file is well formed, the stages fit in the total and
                                       the total in 30 minutes (exit 1 naming the line otherwise)
  budget.py stage FILE NAME SECONDS    one line saying how long stage NAME took against its
                                       budget, a warning past it; always exit 0 (a warning,
                                       not a failure: the tests' own result decides)
  budget.py total FILE SECONDS         the same for the whole run
  budget.py slowest JUNIT [N]          the N (default 10) slowest tests of a CTest JUnit file
"""

import sys
import xml.etree.ElementTree as ET

LIMIT = 1800  # CI's whole run must stay under 30 minutes on 2 cores


class BudgetError(Exception):
    pass


def read_budget(path):
    """{stage: seconds} in file order, 'total' included; BudgetError names file and line."""
    stages = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            where = f"{path}:{number}"
            if len(words) != 2 or not words[1].isdigit() or int(words[1]) == 0:
                raise BudgetError(f"{where}: expected 'STAGE SECONDS', got {line.strip()!r}")
            if words[0] in stages:
                raise BudgetError(f"{where}: stage {words[0]!r} given twice")
            stages[words[0]] = int(words[1])
    if "total" not in stages:
        raise BudgetError(f"{path}: no 'total' line")
    return stages


def check(path):
    stages = read_budget(path)
    total = stages.pop("total")
    if not stages:
        raise BudgetError(f"{path}: no stage before the total")
    if sum(stages.values()) > total:
        raise BudgetError(f"{path}: the stages add up to {sum(stages.values())} s, "
                          f"more than the total of {total} s")
    if total > LIMIT:
        raise BudgetError(f"{path}: the total of {total} s is past the {LIMIT} s a CI run may take")
    print(f"budget: {len(stages)} stages, {sum(stages.values())} s of {total} s")


def verdict(name, seconds, budget):
    line = f"budget: {name} took {seconds} s of its {budget} s"
    if seconds > budget:
        return f"{line}: WARNING, {seconds - budget} s past its budget (tests/budget.txt)"
    return line


def stage(path, name, seconds):
    stages = read_budget(path)
    if name not in stages:
        raise BudgetError(f"{path}: no budget for stage {name!r}")
    print(verdict(name, int(seconds), stages[name]), file=sys.stderr)


def slowest(junit, count=10):
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        status = case.get("status", "run")
        cases.append((float(case.get("time", "0")), case.get("name"), status))
    cases.sort(reverse=True)
    print(f"slowest of {len(cases)} tests ({junit.rsplit('/', 1)[-1]}):", file=sys.stderr)
    for seconds, name, status in cases[:count]:
        print(f"  {seconds:8.1f} s  {name}{'' if status == 'run' else '  (' + status + ')'}",
              file=sys.stderr)


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "check":
            check(argv[2])
        elif len(argv) == 5 and argv[1] == "stage":
            stage(argv[2], argv[3], argv[4])
        elif len(argv) == 4 and argv[1] == "total":
            stage(argv[2], "total", argv[3])
        elif len(argv) in (3, 4) and argv[1] == "slowest":
            slowest(argv[2], int(argv[3]) if len(argv) == 4 else 10)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (BudgetError, OSError, ET.ParseError) as e:
        print(f"budget: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
