#!/usr/bin/env python3
"""The dependency rules of the tree (issue 15), checked over the include lines and the CMake link graph.

usage: check_deps.py --repo DIR --link-graph BUILD/link-graph.tsv [--list]
       check_deps.py --self-test

Components (folders): the libraries gpu, vle, cavlc, avc, canny and plugin/stage (targets gpuec_stage*),
and sequences (the clip library); above them tools/, tests/ and the other plugin/ folders.
Rules:
  1. Dependencies between libraries point one way: gpu <- vle <- cavlc <- {avc, plugin/stage}, gpu <- canny;
     sequences uses none of them. A library neither includes the headers nor links the targets of a
     library it may not use.
  2. Nobody includes another component's src/ (its private files), and no library includes anything in
     plugin/, tools/ or tests/.
  3. A tool may use tests/common (the fixtures tests and tools share, target gpuec_test_common) and nothing
     else under tests/: no include path into another folder of tests/, no include of a file there. No test
     or tool compiles a library's source files itself.
  4. Only the stage's own tests (tests/stage) and those of the patched x264 that calls it (tests/x264) link
     the stage.
Every violation found must be listed in KNOWN (each is a step of issue 15 still to do), and every entry of
KNOWN must still occur: a new violation fails, and so does one that is gone (remove it from KNOWN then).
--list prints every violation found. --self-test: the check on a made-up tree with one violation of each
kind must find exactly those. Exit 0 pass, 1 fail, 2 usage.
"""
import argparse
import os
import re
import sys

LIBRARIES = ["gpu", "vle", "cavlc", "avc", "canny", "plugin/stage", "sequences"]
MAY_USE = {
    "gpu": set(),
    "vle": {"gpu"},
    "cavlc": {"gpu", "vle"},
    "avc": {"gpu", "vle", "cavlc"},
    "plugin/stage": {"gpu", "vle", "cavlc"},
    "canny": {"gpu"},
    "sequences": set(),
}
# The public include prefix of each library: #include "PREFIX/..." names it.
PREFIX = {"gpu": "gpu", "vle": "vle", "cavlc": "cavlc", "avc": "avc", "canny": "canny", "gpuec": "plugin/stage"}

# Violations of today's tree, each removed by a step of issue 15 ("One home for the frame coder ..."). The
# strings are exactly what the check prints for them.
KNOWN = set()  # issue 15 fixed every violation the check found; a new one fails

# The fixtures tests and tools share: the one folder of tests/ a tool may use.
TEST_COMMON = "tests/common"

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".c", ".cu", ".cuh")


def component_of_path(rel):
    """The component a repository path belongs to (the longest library folder it is in), or its top folder."""
    for lib in sorted(LIBRARIES, key=len, reverse=True):
        if rel == lib or rel.startswith(lib + "/"):
            return lib
    return rel.split("/", 1)[0]


def source_files(repo, top):
    for root, dirs, files in os.walk(os.path.join(repo, top)):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.relpath(os.path.join(root, f), repo)


def include_violations(repo):
    out = []
    tops = [t for t in ("gpu", "vle", "cavlc", "avc", "canny", "plugin", "sequences", "tools", "tests")
            if os.path.isdir(os.path.join(repo, t))]
    for top in tops:
        for rel in source_files(repo, top):
            comp = component_of_path(rel)
            is_lib = comp in MAY_USE
            with open(os.path.join(repo, rel), errors="replace") as f:
                lines = f.readlines()
            for line in lines:
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if inc.startswith("."):  # a relative include: the file it names
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                    tcomp = component_of_path(target)
                    if tcomp != comp and "/src/" in "/" + target + "/" and tcomp in MAY_USE:
                        out.append(f"include: {rel} includes {tcomp}/src ({inc})")
                    elif is_lib and tcomp != comp and tcomp in ("tools", "tests", "plugin"):
                        out.append(f"include: {rel} includes {target.split('/', 1)[0]} ({inc})")
                    elif is_lib and tcomp != comp and tcomp in MAY_USE and tcomp not in MAY_USE[comp]:
                        out.append(f"include: {rel} includes {tcomp} ({inc})")
                    elif comp == "tools" and tcomp == "tests" and not target.startswith(TEST_COMMON + "/"):
                        out.append(f"include: {rel} includes tests/ outside {TEST_COMMON} ({inc})")
                    continue
                head = inc.split("/", 1)[0]
                if is_lib and head in PREFIX and PREFIX[head] != comp and PREFIX[head] not in MAY_USE[comp]:
                    out.append(f"include: {rel} includes {PREFIX[head]} ({inc})")
    return out


def link_violations(graph_path):
    out = []
    targets = {}
    with open(graph_path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            name, kind, src, links = parts
            targets[name] = (kind, src, [l for l in links.split(";") if l])
    def comp_of_target(name):
        if name.startswith("gpuec_stage"):
            return "plugin/stage"
        return component_of_path(targets[name][1]) if name in targets else None
    for name, (kind, src, links) in sorted(targets.items()):
        comp = comp_of_target(name)
        for dep in links:
            if dep not in targets:
                continue
            dcomp = comp_of_target(dep)
            if comp in MAY_USE and dcomp in MAY_USE and dcomp != comp and dcomp not in MAY_USE[comp]:
                out.append(f"link: {name} ({comp}) links {dep} ({dcomp})")
            if dcomp == "plugin/stage" and src.startswith("tests") and not \
                    any((src + "/").startswith(d) for d in ("tests/stage/", "tests/x264/")):
                out.append(f"link: {name} ({src}) links the stage ({dep})")
    return out


def cmake_violations(repo):
    out = []
    for top in ("tools", "tests"):
        for root, dirs, files in os.walk(os.path.join(repo, top)):
            if "CMakeLists.txt" not in files:
                continue
            path = os.path.join(root, "CMakeLists.txt")
            rel = os.path.relpath(path, repo)
            text = open(path).read()
            text = "\n".join(l.split("#", 1)[0] for l in text.splitlines())  # comments out
            for m in re.finditer(r"target_include_directories\s*\(([^)]*)\)", text):
                for d in sorted(set(re.findall(r"PROJECT_SOURCE_DIR\}/([\w/]+)", m.group(1)))):
                    d = d.rstrip("/")
                    dcomp = component_of_path(d)
                    if top == "tools" and dcomp == "tests" and d != TEST_COMMON:
                        out.append(f"include path: {rel} gives a tool {d}")
                    elif dcomp in MAY_USE and "/src" in "/" + d:
                        out.append(f"include path: {rel} gives a target {d}")
            for m in re.finditer(r"NAME\s+(\S+)\s+SOURCES\s+([^\n]*(?:\n\s+[^\n]*)*?)\s+LIBS", text):
                for s in re.findall(r"PROJECT_SOURCE_DIR\}/([\w/.]+)", m.group(2)):
                    if component_of_path(s) in MAY_USE:
                        out.append(f"sources: {m.group(1)} ({os.path.dirname(rel)}) compiles {s}")
            for m in re.finditer(r"add_executable\s*\(\s*(\S+)([^)]*)\)", text):
                for s in re.findall(r"PROJECT_SOURCE_DIR\}/([\w/.]+)", m.group(2)):
                    if component_of_path(s) in MAY_USE:
                        out.append(f"sources: {m.group(1)} ({os.path.dirname(rel)}) compiles {s}")
    return out


def self_test():
    import tempfile
    files = {
        "vle/src/a.cpp": '#include "vle/x.h"\n#include "gpu/device.h"\n#include "canny/canny.h"\n',
        "cavlc/src/b.cu": '#include "../../tests/common/seed.h"\n#include "vle/y.h"\n',
        "canny/src/c.cpp": '#include "../../vle/src/z.h"\n',
        "tests/t/t.cpp": '#include "../../canny/src/p.h"\n#include "cavlc/ok.h"\n',
        "tools/CMakeLists.txt": "target_include_directories(x PRIVATE ${PROJECT_SOURCE_DIR}/tests/canny)\n"
                                "target_include_directories(z PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)\n"
                                "add_executable(y y.cpp ${PROJECT_SOURCE_DIR}/vle/src/v.cpp)\n",
        "tools/bench/b.cu": '#include "../../tests/cavlc/r.h"\n#include "../../tests/common/ok.h"\n',
    }
    graph = ("gpuec_vle\tSTATIC_LIBRARY\tvle\tgpuec_gpu;gpuec_canny\n"
             "gpuec_gpu\tSTATIC_LIBRARY\tgpu\t\n"
             "gpuec_canny\tSTATIC_LIBRARY\tcanny\tgpuec_gpu\n"
             "gpuec_stage\tSTATIC_LIBRARY\tplugin\tgpuec_vle\n"
             "t_test\tEXECUTABLE\ttests/t\tgpuec_stage\n"
             "s_test\tEXECUTABLE\ttests/stage\tgpuec_stage\n")
    want = {
        "include: vle/src/a.cpp includes canny (canny/canny.h)",
        "include: cavlc/src/b.cu includes tests (../../tests/common/seed.h)",
        "include: canny/src/c.cpp includes vle/src (../../vle/src/z.h)",
        "include: tests/t/t.cpp includes canny/src (../../canny/src/p.h)",
        "include path: tools/CMakeLists.txt gives a tool tests/canny",
        "include: tools/bench/b.cu includes tests/ outside tests/common (../../tests/cavlc/r.h)",
        "sources: y (tools) compiles vle/src/v.cpp",
        "link: gpuec_vle (vle) links gpuec_canny (canny)",
        "link: t_test (tests/t) links the stage (gpuec_stage)",
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        with open(os.path.join(d, "graph.tsv"), "w") as f:
            f.write(graph)
        found = set(include_violations(d) + link_violations(os.path.join(d, "graph.tsv")) + cmake_violations(d))
    for v in sorted(want - found):
        print(f"FAIL self-test: not found: {v}")
    for v in sorted(found - want):
        print(f"FAIL self-test: found but not there: {v}")
    print(f"self-test: {len(want & found)} of {len(want)} planted violations found, {len(found - want)} spurious")
    return 0 if found == want else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo")
    p.add_argument("--link-graph")
    p.add_argument("--list", action="store_true", help="print every violation found")
    p.add_argument("--self-test", action="store_true", help="check the check on a made-up tree")
    args = p.parse_args()
    if args.self_test:
        return self_test()
    if not args.repo or not args.link_graph:
        p.print_usage()
        return 2
    if not os.path.isfile(args.link_graph):
        print(f"check_deps: {args.link_graph} not found (the top-level CMakeLists.txt writes it at configure time)")
        return 2
    found = sorted(set(include_violations(args.repo) + link_violations(args.link_graph) + cmake_violations(args.repo)))
    if args.list:
        print("\n".join(found))
    new = [v for v in found if v not in KNOWN]
    # A known link violation of a target this build does not have (no CUDA, no x264) is not gone.
    built = {line.split("\t", 1)[0] for line in open(args.link_graph)}
    gone = sorted(v for v in KNOWN - set(found) if not v.startswith("link: ") or v.split()[1] in built)
    for v in new:
        print(f"FAIL new violation: {v}")
    for v in gone:
        print(f"FAIL no longer occurs (remove it from KNOWN in {os.path.basename(__file__)}): {v}")
    print(f"{len(found)} violations, {len(found) - len(new)} of them known (issue 15 to do); "
          f"{len(new)} new, {len(gone)} gone")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
