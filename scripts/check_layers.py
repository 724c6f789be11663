#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer above its own.

The layers are the folders of src/, in the order the root CMakeLists.txt includes them
(its `foreach(layer IN ITEMS ...)`): the one place the order is declared. A file in
src/<layer>/ may include "<other>/..." only when <other> comes before <layer> in that list
or is <layer> itself. Includes of anything that is not a layer folder ("toolport_version.hpp",
system headers) are not checked.

    scripts/check_layers.py          # checks this checkout
    scripts/check_layers.py ROOT     # checks the tree at ROOT (tests/scripts run it on a temporary one)

Prints every offending include as file:line and exits 1; an allow-list entry below that no
longer matches anything fails too, so the list only ever shrinks.
"""
import pathlib
import re
import sys

# Includes against the order that are known and scheduled to go, each naming the item of
# the issue that removes it: (file or folder prefix under src/, included header).
ALLOWED: list[tuple[str, str]] = [
    # (file prefix, header): an include against the order, allowed with the reason said here.
    # None today; an entry that no longer matches anything fails the check.
]

FOREACH = re.compile(r"foreach\s*\(\s*layer\s+IN\s+ITEMS\s+([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]*"')


def declared_layers(root: pathlib.Path) -> list[str]:
    cmake = root / "CMakeLists.txt"
    match = FOREACH.search(cmake.read_text())
    if not match:
        sys.exit(f"{cmake}: no 'foreach(layer IN ITEMS ...)' declares the layers")
    return match.group(1).split()


def allowed(path: str, header: str, used: set[int]) -> bool:
    for index, (prefix, allowed_header) in enumerate(ALLOWED):
        if path.startswith(prefix) and header == allowed_header:
            used.add(index)
            return True
    return False


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    layers = declared_layers(root)
    rank = {layer: i for i, layer in enumerate(layers)}
    src = root / "src"
    missing = [layer for layer in layers if not (src / layer).is_dir()]
    if missing:
        print(f"CMakeLists.txt declares layers with no folder in src/: {', '.join(missing)}")
        return 1
    undeclared = sorted(p.name for p in src.iterdir() if p.is_dir() and p.name not in rank)
    if undeclared:
        print(f"folders of src/ missing from the layer order in CMakeLists.txt: {', '.join(undeclared)}")
        return 1

    violations = []
    used: set[int] = set()
    files = 0
    for layer in layers:
        for path in sorted((src / layer).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h", ".ipp") or not path.is_file():
                continue
            files += 1
            relative = path.relative_to(root).as_posix()
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match or match.group(1) not in rank:
                    continue
                if rank[match.group(1)] > rank[layer]:
                    header = line.split('"')[1]
                    if not allowed(relative, header, used):
                        violations.append(f"{relative}:{number}: {layer} includes \"{header}\" "
                                          f"({match.group(1)} is a later layer)")
    stale = [f"{prefix} -> {header}" for i, (prefix, header) in enumerate(ALLOWED) if i not in used]
    for v in violations:
        print(v)
    for s in stale:
        print(f"scripts/check_layers.py: the allowed include {s} is gone: remove it from ALLOWED")
    if violations or stale:
        print(f"layer check failed: {len(violations)} include(s) against the order {' < '.join(layers)}")
        return 1
    exceptions = f" ({len(ALLOWED)} known exception(s) allowed)" if ALLOWED else ""
    print(f"layers: {files} files follow the order {' < '.join(layers)}{exceptions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
