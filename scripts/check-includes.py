#!/usr/bin/env python3
"""Fails when a file includes a header of a module its target does not link.

The linker only stops a module from calling what it does not link; every module library
publishes src/ as its include directory, so without this check a header of any module could be
included anywhere. The arrows come from the build itself (cmake/module_graph.cmake writes the
targets, their sources and what they link, as target_link_libraries declared them), so they are
declared once. Rules:
  - a source file of a target (a module library, a tool, a test executable) may include the
    headers of its own module, of the libraries it links and of what those link publicly;
  - a module's header may include only its own module and its public dependencies (whoever
    includes it gets only those by linking it);
  - the module table of docs/architecture.md (--docs) names the same links as the build.
A header belongs to the library that compiles its .cpp, else to the library of its directory (a
header with a .cpp that no target of this build compiles belongs to none).
Headers of tests/ are followed into (they are part of the test that includes them).

Usage: check-includes.py --graph BUILD/module_graph.txt --root SOURCE_DIR [--docs FILE]
                         [--extra-source TARGET=FILE]...
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
CODE = (".c", ".cpp", ".h")


def read_graph(path):
    targets = {}
    with open(path) as f:
        for line in f:
            kind, name, *rest = line.split()
            if kind == "target":
                targets[name] = {"type": rest[0], "dir": rest[1], "sources": [], "links": [], "public": []}
            elif kind == "source":
                targets[name]["sources"].append(rest[0])
            elif kind in ("links", "public"):
                # $<LINK_ONLY:x> is a private dependency of a static library: not public.
                targets[name][kind] = [x for x in rest if not x.startswith("$<")]
    return targets


class graph:
    def __init__(self, targets, root):
        self.targets = targets
        self.root = root
        # Module libraries: datacrumbs_* libraries built in a directory under src/.
        self.libs = {n for n, t in targets.items() if n.startswith("datacrumbs_") and t["type"] in (
            "STATIC_LIBRARY", "SHARED_LIBRARY") and t["dir"].startswith(os.path.join(root, "src") + os.sep)}
        self.by_stem = {}
        for lib in self.libs:
            for s in targets[lib]["sources"]:
                self.by_stem[os.path.splitext(s)[0]] = lib

    def owner(self, path):
        """The module library a header under src/ belongs to, or None (also for a header whose
        own .cpp/.c this build does not compile: a build without BPF has no cli library)."""
        stem = os.path.splitext(path)[0]
        lib = self.by_stem.get(stem)
        if lib:
            return lib
        if any(os.path.isfile(stem + ext) for ext in (".cpp", ".c")):
            return None
        best = None
        for lib in self.libs:
            d = self.targets[lib]["dir"] + os.sep
            if path.startswith(d) and (best is None or len(d) > len(self.targets[best]["dir"]) + 1):
                best = lib
        return best

    def public_closure(self, lib, seen=None):
        seen = set() if seen is None else seen
        for d in self.targets.get(lib, {}).get("public", []):
            if d in self.libs and d not in seen:
                seen.add(d)
                self.public_closure(d, seen)
        return seen

    def allowed_in_sources(self, target):
        allowed = {target} if target in self.libs else set()
        for d in self.targets[target]["links"]:
            if d in self.libs:
                allowed |= {d} | self.public_closure(d)
        return allowed

    def module(self, lib):
        """A library's module: its directory's top component under src/ (analyze/report is analyze)."""
        rel = os.path.relpath(self.targets[lib]["dir"], os.path.join(self.root, "src"))
        return rel.split(os.sep)[0]


def includes_of(path):
    with open(path, errors="replace") as f:
        return INCLUDE.findall(f.read())


def resolve(name, includer, root):
    for base in (os.path.dirname(includer), os.path.join(root, "src"), os.path.join(root, "tests")):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return candidate
    return None  # a system, generated (skeleton) or bpf/ header: no module's


def check_file(g, path, allowed, who, problems, follow_local, seen):
    """Checks the includes of `path` (and of the non-module headers it includes, if follow_local)."""
    if path in seen:
        return
    seen.add(path)
    for name in includes_of(path):
        header = resolve(name, path, g.root)
        if header is None:
            continue
        lib = g.owner(header) if header.startswith(os.path.join(g.root, "src") + os.sep) else None
        if lib is not None:
            if lib not in allowed:
                rel = os.path.relpath(path, g.root)
                problems.append(f"{rel}: includes \"{name}\" ({lib}), which {who} does not link")
        elif follow_local:
            check_file(g, header, allowed, who, problems, follow_local, seen)


def check_docs(g, docs, problems):
    """The module table's 'links' column against the libraries' direct links."""
    modules = {}
    for lib in g.libs:
        modules.setdefault(g.module(lib), set())
    for lib in g.libs:
        m = g.module(lib)
        modules[m] |= {g.module(d) for d in g.targets[lib]["links"] if d in g.libs and g.module(d) != m}
    row = re.compile(r"^\|\s*`(\w+)`\s*\|[^|]*\|\s*([^|]*?)\s*\|\s*$")
    documented = {}
    with open(docs) as f:
        for line in f:
            m = row.match(line)
            if m:
                documented[m.group(1)] = m.group(2)
    for module, links in sorted(modules.items()):
        if module not in documented:
            problems.append(f"{docs}: the module table has no row for '{module}'")
            continue
        text = documented[module]
        if text == "all":
            said = set(modules) - {module}
        else:
            said = {w for w in re.findall(r"[a-z]+", text.split("(")[0])}
        if said != links:
            problems.append(f"{docs}: '{module}' links {', '.join(sorted(links)) or 'nothing'} in the build, "
                            f"the table says '{text}'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--docs")
    ap.add_argument("--extra-source", action="append", default=[],
                    help="TARGET=FILE: check FILE as if it were one of TARGET's sources")
    args = ap.parse_args()
    root = os.path.realpath(args.root)
    targets = read_graph(args.graph)
    for extra in args.extra_source:
        target, path = extra.split("=", 1)
        targets[target]["sources"].append(os.path.realpath(path))
    g = graph(targets, root)
    problems, files = [], 0
    for name, t in sorted(targets.items()):
        allowed = g.allowed_in_sources(name)
        seen = set()
        for s in t["sources"]:
            if s.endswith(CODE) and os.path.isfile(s):
                files += 1
                check_file(g, s, allowed, name, problems, follow_local=True, seen=seen)
    for lib in sorted(g.libs):
        allowed = {lib} | g.public_closure(lib)
        for dirpath, _, names in os.walk(targets[lib]["dir"]):
            for n in names:
                path = os.path.join(dirpath, n)
                if n.endswith(".h") and g.owner(path) == lib:
                    files += 1
                    check_file(g, path, allowed, f"{lib} (publicly)", problems, follow_local=False, seen=set())
    if args.docs:
        check_docs(g, args.docs, problems)
    for p in sorted(set(problems)):
        print(p)
    if problems:
        print(f"check-includes: {len(set(problems))} include(s) across module lines the build does not allow")
        return 1
    print(f"check-includes: {files} files of {len(targets)} targets include only what they link")
    return 0


if __name__ == "__main__":
    sys.exit(main())
