#!/usr/bin/env python3
"""Fails when an #include under src/ points outside the layer diagram in layers.txt.

A library header that only some layers may include (`only <CLI/: ...`) is followed through
project headers too: app/context.h including a cli/ header that includes <CLI/CLI.hpp> pays for
CLI11 as much as including it directly, so it is reported at the include that leads there.

Usage: check_layers.py [SRC_DIR [LAYERS_FILE]]; by default the repository's src/ and the
layers.txt beside this script. Prints one line per forbidden include, as FILE:LINE: problem.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_diagram(path):
    allowed, generated, only, forbidden = {}, {}, {}, {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            head, _, tail = line.partition(":")
            words, targets = head.split(), tail.split()
            if len(words) == 1:
                allowed[words[0]] = set(targets)
            elif len(words) == 2 and words[0] == "generated" and len(targets) == 1:
                generated[words[1]] = targets[0]
            elif len(words) == 2 and words[0] == "only":
                only[words[1]] = set(targets)
            elif len(words) == 2 and words[0] == "forbid":
                forbidden[words[1]] = set(targets)
            else:
                sys.exit(f"{path}:{number}: cannot read this line")
    for layer, targets in allowed.items():
        for target in targets - set(allowed):
            sys.exit(f"{path}: {layer} may include {target}, which is not a layer")
    for layer in set(forbidden) - set(allowed):
        sys.exit(f"{path}: forbid {layer}: not a layer")
    return allowed, generated, only, forbidden


def layer_of(relative, layers):
    """The longest layer name that is the file itself or a directory holding it."""
    best = None
    for layer in layers:
        if relative == layer or relative.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def read_includes(path):
    """(line number, "<" or '"', header) for each #include of the file."""
    found = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                found.append((number, m.group(1), m.group(2)))
    return found


def library_headers_reached(relative, includes, seen=None):
    """Every <library header> the file reaches through project headers: {header: via}, where
    via is the chain of project headers that leads there (empty for a direct include)."""
    seen = set() if seen is None else seen
    seen.add(relative)
    reached = {}
    for _, kind, header in includes.get(relative, ()):
        if kind == "<":
            reached.setdefault(header, [])
        elif header in includes and header not in seen:
            for library, via in library_headers_reached(header, includes, seen).items():
                reached.setdefault(library, [header] + via)
    return reached


def check_file(path, layer, includes, src, diagram, rules):
    allowed, generated, only, forbidden = rules
    problems = []
    for number, kind, header in includes:
        where = f"{path}:{number}"
        if kind == "<":
            for prefix, layers in only.items():
                if header.startswith(prefix[1:]) and layer not in layers:
                    problems.append(f"{where}: {layer} includes <{header}>, "
                                    f"which only {' '.join(sorted(layers))} may")
            continue
        if header in generated:
            target = generated[header]
        elif os.path.exists(os.path.join(src, header)):
            target = layer_of(header, allowed)
        else:
            problems.append(f'{where}: "{header}" is not a path under src/ '
                            "(include project headers by their path from src/)")
            continue
        if header in forbidden.get(layer, ()):
            problems.append(f'{where}: {layer} may not include "{header}" '
                            f"(forbidden in {diagram})")
        elif target != layer and target not in allowed[layer]:
            problems.append(f'{where}: {layer} includes "{header}" ({target}); '
                            f"{layer} may include only: "
                            f"{' '.join(sorted(allowed[layer])) or 'nothing'}")
    return problems


def check_indirect(path, relative, layer, includes, only):
    """Library headers of an `only` rule that the file reaches through project headers."""
    problems = []
    for number, kind, header in includes[relative]:
        if kind == "<" or header not in includes:
            continue
        for library, via in library_headers_reached(header, includes, {relative}).items():
            for prefix, layers in only.items():
                if library.startswith(prefix[1:]) and layer not in layers:
                    chain = " -> ".join([header] + via)
                    problems.append(f"{path}:{number}: {layer} includes <{library}> through "
                                    f"{chain}, which only {' '.join(sorted(layers))} may")
    return problems


def check(src, diagram):
    rules = read_diagram(diagram)
    allowed, _, only, _ = rules
    problems, files, includes = [], [], {}
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith((".h", ".cpp")):
                path = os.path.join(root, name)
                relative = os.path.relpath(path, src).replace(os.sep, "/")
                files.append((path, relative))
                includes[relative] = read_includes(path)
    for path, relative in sorted(files):
        layer = layer_of(relative, allowed)
        if layer is None:
            problems.append(f"{path}:1: in no layer: add its directory to {diagram}")
            continue
        problems += check_file(path, layer, includes[relative], src, diagram, rules)
        problems += check_indirect(path, relative, layer, includes, only)
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "src")
    diagram = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "layers.txt")
    problems = check(os.path.normpath(src), diagram)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} include(s) outside the layer diagram ({diagram})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
