"""An import-linter contract: no module of a package is in an import cycle (`./run lint` checks it).

import-linter's own contracts catch an import from a lower layer to a higher one; modules that share a layer, and
the siblings of a package, may still import each other in a circle. This contract finds every strongly connected
set of modules in the import graph import-linter built, and reports each with one of its cycles."""

from __future__ import annotations

from typing import Any

from importlinter import Contract, ContractCheck, fields, output


class AcyclicModulesContract(Contract):
    """No import cycle among the modules of `package`, at any depth."""

    type_name = "acyclic_modules"
    package = fields.StringField()

    def check(self, graph: Any, verbose: bool) -> ContractCheck:
        """Kept when the package's modules import each other in no circle."""
        root = str(self.package)  # type: ignore[attr-defined]
        modules = sorted(m for m in graph.modules if m == root or m.startswith(f"{root}."))
        inside = set(modules)
        edges = {m: sorted(graph.find_modules_directly_imported_by(m) & inside - {m}) for m in modules}
        cycles = [_a_cycle(group, edges) for group in _strongly_connected(modules, edges) if len(group) > 1]
        return ContractCheck(kept=not cycles, metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        """Each cycle found, as the chain of imports that closes it."""
        for cycle in check.metadata["cycles"]:
            output.print_error(" -> ".join([*cycle, cycle[0]]), bold=False)
            output.new_line()


def _strongly_connected(modules: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (the graph is deeper than Python's recursion limit
    allows for large packages)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            for position in range(child, len(edges[node])):
                nxt = edges[node][position]
                if nxt not in index:
                    work += [(node, position + 1), (nxt, 0)]
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                if low[node] == index[node]:
                    group: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    groups.append(sorted(group))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return groups


def _a_cycle(group: list[str], edges: dict[str, list[str]]) -> list[str]:
    """One shortest cycle through the group's first module, by breadth-first search within the group."""
    members = set(group)
    start = group[0]
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in edges[node]:
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return path[::-1]
                if nxt in members and nxt not in came:
                    came[nxt] = node
                    following.append(nxt)
        frontier = following
    return group
