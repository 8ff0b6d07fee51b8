#!/usr/bin/env python3
"""Turn litmus-test files (programs/litmus/*.litmus, TOML) into one standalone
CUDA program that runs every expanded test many times on a real GPU and prints
a histogram of outcomes per test.

    python3 generate.py FILE.litmus... -o litmus.cu [--only NAME_GLOB]
    nvcc -O3 -arch=sm_90 -o litmus litmus.cu
    ./litmus --json hw.json

Standard library only (Python 3.11+ for tomllib). See README.md beside this
file for how instances, placement and stress work.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

PLACEMENTS = ("warp", "block", "grid")
EXPLICIT = "explicit"  # placement label of tests whose threads name their own placement
NREGS = 16  # r0..r15
WARP = 32
MAX_BLOCK_THREADS = 1024
# Variant keys that are not placeholder values.
VARIANT_META = {"name", "expect", "doc", "placements"}

PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
REG_RE = re.compile(r"(?<![A-Za-z0-9_$%.])r([0-9]+)(?![A-Za-z0-9_$])")
BRACKET_RE = re.compile(r"\[([^\]]*)\]")
BARRIER_RE = re.compile(r"^(?:bar|barrier)(?:\.cta)?\.sync(?:\.aligned)?\s+(\d+)\s*$")
# Opcodes (first dot-separated component) whose operands are all read.
NO_DEST = {"st", "red", "fence", "membar", "bar", "barrier", "prefetch", "prefetchu", "discard"}


class LitmusError(Exception):
    pass


@dataclass
class Stmt:
    text: str  # PTX with registers renamed and locations as operand placeholders
    barrier: int | None = None  # barrier id for bar.sync


@dataclass
class ThreadCode:
    index: int
    stmts: list[Stmt]
    written: list[int]  # registers written, ascending
    locs_used: list[tuple[str, bool]]  # (location, global-address?) in first-use order
    barriers: list[int]  # barrier ids in program order
    source: list[str]  # the PTX lines after substitution


@dataclass
class Test:
    name: str
    file: str
    placement: str
    threads: list[ThreadCode]
    pos: list[tuple[int, int, int]]  # per thread (virtual block, warp, lane)
    nblocks: int
    nwarps: int
    locations: list[tuple[str, int]]
    exists: list[tuple[int, int]]  # (observable index, value)
    exists_text: str
    skip: str | None = None
    kernel: str = ""

    @property
    def observables(self) -> list[str]:
        obs = [f"{t.index}:r{r}" for t in self.threads for r in t.written]
        return obs + [name for name, _ in self.locations]


def u32(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LitmusError(f"{what}: expected an integer, got {value!r}")
    if not -(1 << 31) <= value < (1 << 32):
        raise LitmusError(f"{what}: {value} does not fit in 32 bits")
    return value & 0xFFFFFFFF


def substitute(body: str, values: dict[str, str] | None, where: str) -> list[str]:
    def repl(m: re.Match) -> str:
        key = m.group(1)
        if values is None:
            raise LitmusError(f"{where}: placeholder {{{key}}} but the file has no [[variant]]")
        if key not in values:
            raise LitmusError(f"{where}: unknown placeholder {{{key}}}")
        return values[key]

    out = []
    for line in PLACEHOLDER_RE.sub(repl, body).splitlines():
        line = line.split("//", 1)[0].strip()
        if line:
            out.append(line)
    return out


def split_operands(text: str) -> list[str]:
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


def compile_thread(index: int, lines: list[str], locations: dict[str, int], where: str) -> ThreadCode:
    stmts: list[Stmt] = []
    written: set[int] = set()
    locs_used: list[tuple[str, bool]] = []
    barriers: list[int] = []
    for line in lines:
        for raw in line.split(";"):
            s = " ".join(raw.split())
            if not s:
                continue
            if s.startswith("@"):
                raise LitmusError(f"{where}: predicated instruction not supported: {s!r}")
            m = BARRIER_RE.match(s)
            if m:
                bid = int(m.group(1))
                if bid > 15:
                    raise LitmusError(f"{where}: barrier id {bid} out of range: {s!r}")
                barriers.append(bid)
                # bar.sync is barrier.sync.aligned: undefined when threads of a warp
                # reach it from different code. barrier.sync (sm_70+) is the same CTA
                # barrier without that rule, which per-thread bodies need.
                stmts.append(Stmt(f"barrier.sync {bid};", barrier=bid))
                continue
            if re.match(r"^(?:bar|barrier)\b", s):
                raise LitmusError(f"{where}: only 'bar.sync N;' barriers are supported: {s!r}")
            parts = s.split(None, 1)
            opcode, rest = parts[0], (parts[1] if len(parts) > 1 else "")
            root = opcode.split(".")[0]
            is_global = "global" in opcode.split(".")[1:]
            ops = split_operands(rest)
            new_ops = []
            for i, op in enumerate(ops):
                # locations
                def loc_repl(m: re.Match) -> str:
                    name = m.group(1).strip()
                    if not IDENT_RE.match(name):
                        raise LitmusError(f"{where}: address must be [location]: {s!r}")
                    if name not in locations:
                        raise LitmusError(f"{where}: unknown location {name!r} in {s!r}")
                    key = (name, is_global)
                    if key not in locs_used:
                        locs_used.append(key)
                    return "[\x00%d\x01]" % locs_used.index(key)

                op2 = BRACKET_RE.sub(loc_repl, op)
                is_dest = i == 0 and root not in NO_DEST and REG_RE.fullmatch(op2) is not None
                regs = [int(r) for r in REG_RE.findall(re.sub(r"\[[^\]]*\]", "", op2))]
                for r in regs:
                    if r >= NREGS:
                        raise LitmusError(f"{where}: register r{r} out of range (r0..r{NREGS-1}) in {s!r}")
                if is_dest:
                    pass
                else:
                    for r in regs:
                        if r not in written:
                            raise LitmusError(f"{where}: reads r{r} before writing it: {s!r}")
                op2 = REG_RE.sub(lambda m: f"lr{m.group(1)}", op2)
                new_ops.append((op2, regs if is_dest else []))
            for _, dest_regs in new_ops:
                written.update(dest_regs)
            text = opcode + (" " + ", ".join(o for o, _ in new_ops) if new_ops else "") + ";"
            if "%" in text:
                raise LitmusError(f"{where}: '%' not allowed in litmus PTX: {s!r}")
            stmts.append(Stmt(text))
    return ThreadCode(index, stmts, sorted(written), locs_used, barriers, lines)


def expand_file(path: Path) -> list[Test]:
    where = str(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise LitmusError(f"{where}: TOML: {e}") from None
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise LitmusError(f"{where}: missing name")
    locs_raw = data.get("locations", {})
    if not isinstance(locs_raw, dict) or not locs_raw:
        raise LitmusError(f"{where}: missing [locations]")
    locations = []
    for k, v in locs_raw.items():
        if not IDENT_RE.match(k):
            raise LitmusError(f"{where}: bad location name {k!r}")
        locations.append((k, u32(v, f"{where}: location {k}")))
    locmap = dict(locations)
    threads_raw = data.get("thread")
    if not isinstance(threads_raw, list) or not threads_raw:
        raise LitmusError(f"{where}: no [[thread]]")
    explicit = [("placement" in t) for t in threads_raw]
    if any(explicit) and not all(explicit):
        raise LitmusError(f"{where}: either every [[thread]] has a placement or none does")
    placements = data.get("placements", list(PLACEMENTS))
    variants = data.get("variant")
    if variants is None:
        variant_list = [(None, None, placements)]
    else:
        if not isinstance(variants, list) or not variants:
            raise LitmusError(f"{where}: [[variant]] must be an array of tables")
        variant_list = []
        for i, v in enumerate(variants):
            vname = v.get("name")
            if not isinstance(vname, str) or not vname:
                raise LitmusError(f"{where}: variant {i} has no name")
            values = {}
            for k, val in v.items():
                if k in VARIANT_META:
                    continue
                if isinstance(val, bool) or not isinstance(val, (str, int)):
                    raise LitmusError(f"{where}: variant {vname}: value of {k} must be a string")
                values[k] = str(val)
            variant_list.append((vname, values, v.get("placements", placements)))
    exists_raw = data.get("exists", {})
    if not isinstance(exists_raw, dict):
        raise LitmusError(f"{where}: [exists] must be a table")

    tests: list[Test] = []
    for vname, values, vplacements in variant_list:
        base = name + (f"+{vname}" if vname is not None else "")
        tw = f"{where}: {base}"
        threads = []
        for i, t in enumerate(threads_raw):
            body = t.get("body")
            if not isinstance(body, str):
                raise LitmusError(f"{tw}: thread {i} has no body")
            lines = substitute(body, values, f"{tw}: thread {i}")
            threads.append(compile_thread(i, lines, locmap, f"{tw}: thread {i}"))
        # observables and exists
        obs = [f"{t.index}:r{r}" for t in threads for r in t.written] + [n for n, _ in locations]
        exists = []
        for k, v in exists_raw.items():
            if k not in obs:
                raise LitmusError(f"{tw}: [exists] names {k!r}, not an observable ({' '.join(obs)})")
            exists.append((obs.index(k), u32(v, f"{tw}: exists {k}")))
        exists_text = " ".join(f"{k}={u32(v, k)}" for k, v in exists_raw.items())
        if all(explicit):
            pls = [EXPLICIT]
        else:
            if not isinstance(vplacements, list) or not vplacements:
                raise LitmusError(f"{tw}: placements must be a non-empty list")
            pls = vplacements
        for pl in pls:
            tname = f"{base}@{pl}"
            test = Test(tname, where, pl, threads, [], 1, 1, locations, exists, exists_text)
            place(test, threads_raw, tw)
            tests.append(test)
    return tests


def place(test: Test, threads_raw: list, where: str) -> None:
    n = len(test.threads)
    pl = test.placement
    if pl == "warp":
        if n > WARP:
            test.skip = f"{n} threads do not fit in one warp"
            return
        test.pos = [(0, 0, i) for i in range(n)]
    elif pl == "block":
        if n * WARP > MAX_BLOCK_THREADS:
            test.skip = f"{n} warps do not fit in one block"
            return
        test.pos = [(0, i, 0) for i in range(n)]
    elif pl == "grid":
        test.pos = [(i, 0, 0) for i in range(n)]
    elif pl == EXPLICIT:
        raw = []
        for i, t in enumerate(threads_raw):
            p = t["placement"]
            if not isinstance(p, dict):
                raise LitmusError(f"{where}: thread {i}: placement must be a table")
            unknown = set(p) - {"block", "warp", "lane"}
            if unknown:
                raise LitmusError(f"{where}: thread {i}: unknown placement keys {sorted(unknown)}")
            b, w, l = (u32(p.get(k, 0), f"{where}: thread {i}: placement.{k}") for k in ("block", "warp", "lane"))
            if l >= WARP or (w + 1) * WARP > MAX_BLOCK_THREADS:
                raise LitmusError(f"{where}: thread {i}: placement {p} out of range")
            raw.append((b, w, l))
        if len(set(raw)) != len(raw):
            raise LitmusError(f"{where}: two threads share a placement")
        blocks = sorted({b for b, _, _ in raw})  # compact: only "same or different block" matters
        test.pos = [(blocks.index(b), w, l) for b, w, l in raw]
    else:
        raise LitmusError(f"{where}: unknown placement {pl!r} (warp, block or grid)")
    test.nblocks = max(b for b, _, _ in test.pos) + 1
    test.nwarps = max(w for _, w, _ in test.pos) + 1
    # Barriers: every thread of a block must pass the same barriers.
    if any(t.barriers for t in test.threads):
        if test.nblocks > 1:
            test.skip = "bar.sync needs all of an instance's threads in one block"
            return
        seqs = {tuple(t.barriers) for t in test.threads}
        if len(seqs) != 1:
            test.skip = "threads pass different sequences of bar.sync (would deadlock)"
            return


# ----------------------------------------------------------------------------------------------
# CUDA emission


def c_str(s: str) -> str:
    s = s.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + s.replace("\n", "\\n").replace("\t", "\\t") + '"'


def sanitize(name: str, used: set[str]) -> str:
    base = "lt_" + re.sub(r"[^A-Za-z0-9]", "_", name)
    k, n = base, 2
    while k in used:
        k, n = f"{base}_{n}", n + 1
    used.add(k)
    return k


def emit_kernel(t: Test) -> str:
    L = len(t.locations)
    locidx = {n: i for i, (n, _) in enumerate(t.locations)}
    nr_total = sum(len(th.written) for th in t.threads)
    block = t.nwarps * WARP
    out = []
    out.append(f"// {t.name}  ({t.file})")
    for th in t.threads:
        b, w, l = t.pos[th.index]
        out.append(f"//   thread {th.index} (block {b}, warp {w}, lane {l}):")
        for line in th.source:
            out.append(f"//     {line}")
    if t.exists_text:
        out.append(f"//   exists: {t.exists_text}")
    out.append(f"__global__ void __launch_bounds__({block}) {t.kernel}(LitmusArgs a)")
    out.append("{")
    out.append("    const int role = a.roles[blockIdx.x];")
    out.append("    if (role < 0) { lt_stress(a); return; }")
    out.append(f"    const unsigned k = (unsigned)role / {t.nblocks}u;")
    out.append(f"    const unsigned vb = (unsigned)role % {t.nblocks}u;")
    out.append("    const unsigned t = threadIdx.x;")
    out.append("    (void)vb;")
    out.append("    int tid = -1;")
    for th in t.threads:
        b, w, l = t.pos[th.index]
        out.append(f"    if (vb == {b}u && t == {w * WARP + l}u) tid = {th.index};")
    out.append("    if (tid < 0) {")
    bars = next((th.barriers for th in t.threads if th.barriers), [])
    if bars:
        out.append("        // Idle threads of the block pass the same barriers as the test's threads.")
        for bid in bars:
            out.append(f'        asm volatile("barrier.sync {bid};" ::: "memory");')
    out.append("        return;")
    out.append("    }")
    out.append(f"    const unsigned* slot = a.slots + (size_t)k * {L}u;")
    # addresses, computed before the instance's threads meet
    needed = []
    for th in t.threads:
        for key in th.locs_used:
            if key not in needed:
                needed.append(key)
    var = {}
    for name, glob in needed:
        v = f"{'g' if glob else 'p'}_{name}"
        var[(name, glob)] = v
        fn = "lt_gaddr" if glob else "lt_paddr"
        out.append(f"    const unsigned long long {v} = {fn}(a.mem, slot[{locidx[name]}]);")
    if nr_total:
        out.append(f"    unsigned* const out = a.regs + (size_t)k * {nr_total}u;")
    out.append(f"    lt_instance_sync(a, k, {len(t.threads)}u);")
    out.append("    switch (tid) {")
    obs_base = 0
    for th in t.threads:
        out.append(f"    case {th.index}: {{")
        nout = len(th.written)
        in_keys = th.locs_used
        opnum = {key: nout + i for i, key in enumerate(in_keys)}
        asm_lines = ["{", f".reg .b32 lr<{NREGS}>;"]
        for st in th.stmts:
            txt = re.sub("\x00([0-9]+)\x01", lambda m: f"%{opnum[th.locs_used[int(m.group(1))]]}", st.text)
            asm_lines.append(txt)
        for i, r in enumerate(th.written):
            asm_lines.append(f"mov.b32 %{i}, lr{r};")
        asm_lines.append("}")
        if nout:
            out.append("        unsigned " + ", ".join(f"o{i}" for i in range(nout)) + ";")
        out.append("        asm volatile(")
        for j, line in enumerate(asm_lines):
            sep = "\n\t" if j + 1 < len(asm_lines) else ""
            out.append(f"            {c_str(line + sep)}")
        outs = ", ".join(f'"=r"(o{i})' for i in range(nout))
        ins = ", ".join(f'"l"({var[key]})' for key in in_keys)
        out.append(f"            : {outs}")
        out.append(f"            : {ins}")
        out.append('            : "memory");')
        for i in range(nout):
            out.append(f"        out[{obs_base + i}] = o{i};")
        obs_base += nout
        out.append("        break;")
        out.append("    }")
    out.append("    default: break;")
    out.append("    }")
    out.append("    lt_finish(a);")
    out.append("}")
    return "\n".join(out)


def emit_table_entry(i: int, t: Test) -> tuple[str, str]:
    obs = t.observables
    defs = []
    p = f"lt_t{i}"
    defs.append(f"static const unsigned {p}_init[] = {{{', '.join(str(v) + 'u' for _, v in t.locations)}}};")
    defs.append(f"static const char* const {p}_obs[] = {{{', '.join(c_str(o) for o in obs)}}};")
    if t.exists:
        defs.append(f"static const int {p}_exi[] = {{{', '.join(str(k) for k, _ in t.exists)}}};")
        defs.append(f"static const unsigned {p}_exv[] = {{{', '.join(str(v) + 'u' for _, v in t.exists)}}};")
    nr = sum(len(th.written) for th in t.threads)
    entry = (
        f"    {{{c_str(t.name)}, {t.kernel if not t.skip else 'nullptr'}, "
        f"{c_str(t.skip) if t.skip else 'nullptr'}, {len(t.threads)}, {t.nblocks}, {t.nwarps}, "
        f"{len(t.locations)}, {nr}, {p}_init, {p}_obs, {len(t.exists)}, "
        f"{p + '_exi' if t.exists else 'nullptr'}, {p + '_exv' if t.exists else 'nullptr'}}},"
    )
    return "\n".join(defs), entry


def emit_program(tests: list[Test], sources: list[str]) -> str:
    used: set[str] = set()
    for t in tests:
        t.kernel = sanitize(t.name, used)
    parts = [PRELUDE.replace("@SOURCES@", "\n".join(f"//   {s}" for s in sources))]
    for t in tests:
        if t.skip:
            parts.append(f"// {t.name}: skipped: {t.skip}")
        else:
            parts.append(emit_kernel(t))
    defs, entries = [], []
    for i, t in enumerate(tests):
        d, e = emit_table_entry(i, t)
        defs.append(d)
        entries.append(e)
    parts.append("\n".join(defs))
    parts.append("static const LitmusTest lt_tests[] = {\n" + "\n".join(entries) + "\n};")
    parts.append(f"static const int lt_ntests = {len(tests)};")
    parts.append(HOST)
    return "\n\n".join(parts) + "\n"


PRELUDE = r"""// Generated by programs/litmus/hardware/generate.py. Do not edit.
// Sources:
@SOURCES@
//
// Build: nvcc -O3 -arch=sm_90 -o litmus litmus.cu
// Run:   ./litmus [--json PATH] [--only GLOB] [--help]

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define LT_SLOT_WORDS 32u // one location per 128-byte line

struct LitmusArgs {
    unsigned* mem;            // location slots, LT_SLOT_WORDS words apart
    const unsigned* slots;    // [instances * locations] slot of each instance's location
    const int* roles;         // [grid] instance * nblocks + virtual block, or -1 for stress
    unsigned* sync;           // [instances * 32] arrival counter per instance (one line each)
    unsigned* done;           // test threads finished
    unsigned* timeouts;       // test threads that stopped waiting for their instance
    unsigned* regs;           // [instances * registers] registers observed
    unsigned* scratch;        // stress region
    unsigned stress_lines;    // 128-byte lines in the stress region
    unsigned stress_pattern;  // 0 st+ld, 1 ld, 2 st, 3 atom.add
    unsigned done_target;     // test threads in the launch
    unsigned sync_enabled;    // 0: an instance's threads do not wait for each other
    unsigned long long sync_timeout_ns;
    unsigned long long stress_timeout_ns;
};

__device__ __forceinline__ unsigned long long lt_gtimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned lt_ld_volatile(const unsigned* p)
{
    unsigned v;
    asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"((unsigned long long)__cvta_generic_to_global(p)) : "memory");
    return v;
}

__device__ __forceinline__ void lt_st_volatile(unsigned* p, unsigned v)
{
    asm volatile("st.volatile.global.u32 [%0], %1;" :: "l"((unsigned long long)__cvta_generic_to_global(p)), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned long long lt_gaddr(unsigned* mem, unsigned slot)
{
    return (unsigned long long)__cvta_generic_to_global(mem + (size_t)slot * LT_SLOT_WORDS);
}

__device__ __forceinline__ unsigned long long lt_paddr(unsigned* mem, unsigned slot)
{
    return (unsigned long long)(mem + (size_t)slot * LT_SLOT_WORDS);
}

// Memory stress (Alglave et al., ASPLOS 2015): whole warps hammer a separate
// scratch region with coalesced volatile (L2) loads and stores on pseudo-random
// lines until every test thread of the launch is done, or a time limit.
__device__ __noinline__ void lt_stress(const LitmusArgs& a)
{
    if (a.stress_lines == 0) return;
    const unsigned lane = threadIdx.x & 31u;
    unsigned line = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 2654435761u + 12345u;
    const unsigned long long t0 = lt_gtimer();
    for (unsigned it = 0;; ++it) {
        line = line * 1664525u + 1013904223u; // same in every lane of the warp
        unsigned* p = a.scratch + (size_t)((line >> 8) % a.stress_lines) * LT_SLOT_WORDS + lane;
        switch (a.stress_pattern) {
        case 0: lt_st_volatile(p, it); (void)lt_ld_volatile(p + 0); break;
        case 1: (void)lt_ld_volatile(p); break;
        case 2: lt_st_volatile(p, it); break;
        default: atomicAdd(p, 1u); break;
        }
        if ((it & 15u) == 15u) {
            if (lt_ld_volatile(a.done) >= a.done_target) break;
            if (lt_gtimer() - t0 > a.stress_timeout_ns) break;
        }
    }
}

// The threads of one instance wait for each other (bounded: a partner whose
// block is not resident makes it give up after sync_timeout_ns).
__device__ __forceinline__ void lt_instance_sync(const LitmusArgs& a, unsigned k, unsigned n)
{
    if (n <= 1u || !a.sync_enabled) return;
    unsigned* c = a.sync + (size_t)k * 32u;
    atomicAdd(c, 1u);
    const unsigned long long t0 = lt_gtimer();
    while (lt_ld_volatile(c) < n) {
        if (lt_gtimer() - t0 > a.sync_timeout_ns) { atomicAdd(a.timeouts, 1u); break; }
    }
}

__device__ __forceinline__ void lt_finish(const LitmusArgs& a)
{
    atomicAdd(a.done, 1u);
}

__global__ void lt_init_kernel(unsigned* mem, const unsigned* slots, const unsigned* init, unsigned nlocs, unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        mem[(size_t)slots[i] * LT_SLOT_WORDS] = init[i % nlocs];
}

__global__ void lt_gather_kernel(const unsigned* mem, const unsigned* slots, unsigned* out, unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = mem[(size_t)slots[i] * LT_SLOT_WORDS];
}

struct LitmusTest {
    const char* name;
    void (*kernel)(LitmusArgs);
    const char* skip;        // non-null: not run, and why
    int threads;             // test threads per instance
    int nblocks;             // blocks per instance
    int nwarps;              // warps per block
    int nlocs;
    int nregs;               // registers observed per instance
    const unsigned* init;    // [nlocs]
    const char* const* obs;  // [nregs + nlocs] observable names
    int nexists;
    const int* exists_idx;
    const unsigned* exists_val;
};
"""

HOST = r"""
#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                 \
                    cudaGetErrorString(err_));                                            \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

struct Options {
    long long total = 100000;     // instances per test (when --iterations is not given)
    long long iterations = 0;     // launches per test; 0: from total
    long long instances = 0;      // per launch; 0: fill the GPU
    long long stress_blocks = -1; // -1: 4 per SM
    bool stress = true;
    bool sync = true;
    unsigned stress_lines = 256;
    unsigned stress_pattern = 0;
    double sync_timeout_us = 100.0;
    double stress_timeout_us = 5000.0;
    unsigned long long seed = 0x5eed1234abcdull;
    const char* json = nullptr;
    std::vector<std::string> only;
    bool list = false;
    int device = 0;
    bool quiet = false;
};

static void usage(const char* argv0)
{
    printf("usage: %s [options]\n"
           "  --json PATH           also write {test: {outcome: count}} to PATH\n"
           "  --only GLOB           run only tests whose name matches (repeatable; * and ?)\n"
           "  --list                list the tests and exit\n"
           "  --total N             instances per test when --iterations is not given (default 100000)\n"
           "  --iterations N        launches per test (default: ceil(total / instances))\n"
           "  --instances N         instances per launch (default: as many as fit on the GPU at once)\n"
           "  --no-stress           no memory-stress blocks\n"
           "  --stress-blocks N     stress blocks per launch (default 4 per SM, at most half the GPU)\n"
           "  --stress-lines N      128-byte lines in the stress region (default 256)\n"
           "  --stress-pattern P    st-ld (default), ld, st or atom\n"
           "  --no-sync             an instance's threads do not wait for each other before the test\n"
           "  --sync-timeout-us T   how long an instance's threads wait for each other (default 100)\n"
           "  --stress-timeout-us T longest a stress block runs in one launch (default 5000)\n"
           "  --seed N              seed of the shuffles (default fixed)\n"
           "  --device N            CUDA device (default 0)\n"
           "  --quiet               no progress on stderr\n",
           argv0);
}

static bool glob_match(const char* p, const char* s)
{
    for (; *p; ++p, ++s) {
        if (*p == '*') {
            while (p[1] == '*') ++p;
            for (const char* t = s;; ++t) {
                if (glob_match(p + 1, t)) return true;
                if (!*t) return false;
            }
        }
        if (!*s) return false;
        if (*p != '?' && *p != *s) return false;
    }
    return *s == 0;
}

static long long parse_ll(const char* opt, const char* v)
{
    char* end = nullptr;
    long long x = strtoll(v, &end, 0);
    if (!v[0] || *end || x < 0) {
        fprintf(stderr, "%s: bad number '%s'\n", opt, v);
        exit(1);
    }
    return x;
}

static Options parse_args(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto val = [&]() -> const char* {
            if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", a.c_str()); exit(1); }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") { usage(argv[0]); exit(0); }
        else if (a == "--json") o.json = val();
        else if (a == "--only") o.only.push_back(val());
        else if (a == "--list") o.list = true;
        else if (a == "--total") o.total = parse_ll(a.c_str(), val());
        else if (a == "--iterations") o.iterations = parse_ll(a.c_str(), val());
        else if (a == "--instances") o.instances = parse_ll(a.c_str(), val());
        else if (a == "--no-stress") o.stress = false;
        else if (a == "--no-sync") o.sync = false;
        else if (a == "--stress-blocks") o.stress_blocks = parse_ll(a.c_str(), val());
        else if (a == "--stress-lines") o.stress_lines = (unsigned)parse_ll(a.c_str(), val());
        else if (a == "--stress-pattern") {
            std::string p = val();
            if (p == "st-ld") o.stress_pattern = 0;
            else if (p == "ld") o.stress_pattern = 1;
            else if (p == "st") o.stress_pattern = 2;
            else if (p == "atom") o.stress_pattern = 3;
            else { fprintf(stderr, "--stress-pattern: st-ld, ld, st or atom\n"); exit(1); }
        }
        else if (a == "--sync-timeout-us") o.sync_timeout_us = atof(val());
        else if (a == "--stress-timeout-us") o.stress_timeout_us = atof(val());
        else if (a == "--seed") o.seed = (unsigned long long)parse_ll(a.c_str(), val());
        else if (a == "--device") o.device = (int)parse_ll(a.c_str(), val());
        else if (a == "--quiet") o.quiet = true;
        else { fprintf(stderr, "unknown option %s (try --help)\n", a.c_str()); exit(1); }
    }
    if (o.stress_lines == 0) o.stress = false;
    return o;
}

static unsigned long long rng_next(unsigned long long& s)
{
    // splitmix64
    unsigned long long z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

template <class T> static void shuffle(std::vector<T>& v, unsigned long long& s)
{
    for (size_t i = v.size(); i > 1; --i) {
        size_t j = (size_t)(rng_next(s) % i);
        std::swap(v[i - 1], v[j]);
    }
}

// A device buffer that only grows.
struct DevBuf {
    void* p = nullptr;
    size_t bytes = 0;
    template <class T> T* get(size_t n)
    {
        size_t want = std::max<size_t>(n * sizeof(T), 4);
        if (want > bytes) {
            if (p) CK(cudaFree(p));
            CK(cudaMalloc(&p, want));
            bytes = want;
        }
        return (T*)p;
    }
};

static std::string json_escape(const std::string& s)
{
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') { r += '\\'; r += c; }
        else if ((unsigned char)c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); r += b; }
        else r += c;
    }
    return r;
}

typedef std::map<std::vector<unsigned>, unsigned long long> Histogram;

static std::string outcome_string(const LitmusTest& t, const std::vector<unsigned>& v)
{
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) s += ' ';
        s += t.obs[i];
        s += '=';
        s += std::to_string(v[i]);
    }
    return s;
}

static bool matches_exists(const LitmusTest& t, const std::vector<unsigned>& v)
{
    if (t.nexists == 0) return false;
    for (int i = 0; i < t.nexists; ++i)
        if (v[t.exists_idx[i]] != t.exists_val[i]) return false;
    return true;
}

static void write_json(const char* path, const std::vector<std::pair<const LitmusTest*, Histogram>>& results)
{
    FILE* f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fprintf(f, "{");
    for (size_t i = 0; i < results.size(); ++i) {
        const LitmusTest& t = *results[i].first;
        fprintf(f, "%s\n  \"%s\": {", i ? "," : "", json_escape(t.name).c_str());
        size_t j = 0;
        for (const auto& kv : results[i].second)
            fprintf(f, "%s\n    \"%s\": %llu", j++ ? "," : "", json_escape(outcome_string(t, kv.first)).c_str(), kv.second);
        fprintf(f, "%s}", j ? "\n  " : "");
    }
    fprintf(f, "\n}\n");
    fclose(f);
}

int main(int argc, char** argv)
{
    Options o = parse_args(argc, argv);
    std::vector<const LitmusTest*> selected;
    for (int i = 0; i < lt_ntests; ++i) {
        bool keep = o.only.empty();
        for (const auto& g : o.only) keep = keep || glob_match(g.c_str(), lt_tests[i].name);
        if (keep) selected.push_back(&lt_tests[i]);
    }
    if (o.list) {
        for (auto t : selected) printf("%s%s%s\n", t->name, t->skip ? "  (skipped: " : "", t->skip ? (std::string(t->skip) + ")").c_str() : "");
        return 0;
    }
    CK(cudaSetDevice(o.device));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, o.device));
    const int sms = prop.multiProcessorCount;
    if (!o.quiet)
        fprintf(stderr, "# device %d: %s, sm_%d%d, %d SMs; %zu tests\n", o.device, prop.name, prop.major, prop.minor, sms, selected.size());

    DevBuf b_mem, b_slots, b_roles, b_sync, b_regs, b_locs, b_init, b_scratch, b_counters;
    unsigned* scratch = b_scratch.get<unsigned>((size_t)std::max(o.stress_lines, 1u) * LT_SLOT_WORDS);
    CK(cudaMemset(scratch, 0, (size_t)std::max(o.stress_lines, 1u) * LT_SLOT_WORDS * sizeof(unsigned)));
    unsigned* counters = b_counters.get<unsigned>(64); // [0] done, [32] timeouts
    unsigned long long rng = o.seed;
    std::vector<std::pair<const LitmusTest*, Histogram>> results;
    auto t_all = std::chrono::steady_clock::now();

    for (const LitmusTest* tp : selected) {
        const LitmusTest& t = *tp;
        if (t.skip) {
            fprintf(stderr, "# skipped %s: %s\n", t.name, t.skip);
            continue;
        }
        auto t0 = std::chrono::steady_clock::now();
        const int block = t.nwarps * 32;
        int occ = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, t.kernel, block, 0));
        const long long cap = (long long)std::max(occ, 1) * sms; // blocks resident at once
        long long S = 0;
        if (o.stress) {
            if (o.stress_blocks >= 0) S = o.stress_blocks;
            else S = std::min<long long>(4LL * sms, cap / 2);
        }
        long long I = o.instances;
        if (I <= 0) I = std::max<long long>(1, (cap - S) / t.nblocks);
        const long long G = I * t.nblocks + S;
        if (G > cap && !o.quiet)
            fprintf(stderr, "# %s: %lld blocks but only %lld fit at once: some instances will not meet\n", t.name, G, cap);
        if (G > 0x7fffffffLL) { fprintf(stderr, "%s: grid too large\n", t.name); exit(1); }
        const long long iters = o.iterations > 0 ? o.iterations : std::max<long long>(1, (o.total + I - 1) / I);
        const size_t nslots = (size_t)I * t.nlocs;

        unsigned* mem = b_mem.get<unsigned>(nslots * LT_SLOT_WORDS);
        unsigned* slots = b_slots.get<unsigned>(nslots);
        int* roles = b_roles.get<int>((size_t)G);
        unsigned* sync = b_sync.get<unsigned>((size_t)I * 32);
        unsigned* regs = b_regs.get<unsigned>((size_t)I * std::max(t.nregs, 1));
        unsigned* locs = b_locs.get<unsigned>(nslots);
        unsigned* init = b_init.get<unsigned>((size_t)t.nlocs);
        CK(cudaMemcpy(init, t.init, t.nlocs * sizeof(unsigned), cudaMemcpyHostToDevice));
        CK(cudaMemset(mem, 0, nslots * LT_SLOT_WORDS * sizeof(unsigned)));

        std::vector<unsigned> h_slots(nslots);
        std::vector<int> h_roles((size_t)G);
        std::vector<unsigned> h_regs((size_t)I * t.nregs), h_locs(nslots);
        Histogram hist;
        unsigned long long timeouts = 0;

        LitmusArgs args;
        memset(&args, 0, sizeof args);
        args.mem = mem;
        args.slots = slots;
        args.roles = roles;
        args.sync = sync;
        args.done = counters;
        args.timeouts = counters + 32;
        args.regs = regs;
        args.scratch = scratch;
        args.stress_lines = o.stress_lines;
        args.stress_pattern = o.stress_pattern;
        args.done_target = (unsigned)(I * t.threads);
        args.sync_enabled = o.sync ? 1u : 0u;
        args.sync_timeout_ns = (unsigned long long)(o.sync_timeout_us * 1000.0);
        args.stress_timeout_ns = (unsigned long long)(o.stress_timeout_us * 1000.0);

        const int aux_blocks = (int)std::min<size_t>((nslots + 255) / 256, 1024);
        std::vector<unsigned> v(t.nregs + t.nlocs);
        for (long long it = 0; it < iters; ++it) {
            // Fresh random placement: which 128-byte slot holds each location of
            // each instance, and which block of the grid plays which role.
            for (size_t i = 0; i < nslots; ++i) h_slots[i] = (unsigned)i;
            shuffle(h_slots, rng);
            for (long long i = 0; i < G; ++i) h_roles[(size_t)i] = i < I * t.nblocks ? (int)i : -1;
            shuffle(h_roles, rng);
            CK(cudaMemcpy(slots, h_slots.data(), nslots * sizeof(unsigned), cudaMemcpyHostToDevice));
            CK(cudaMemcpy(roles, h_roles.data(), (size_t)G * sizeof(int), cudaMemcpyHostToDevice));
            lt_init_kernel<<<aux_blocks, 256>>>(mem, slots, init, (unsigned)t.nlocs, (unsigned)nslots);
            CK(cudaGetLastError());
            CK(cudaMemset(sync, 0, (size_t)I * 32 * sizeof(unsigned)));
            CK(cudaMemset(counters, 0, 64 * sizeof(unsigned)));
            t.kernel<<<(unsigned)G, block>>>(args);
            CK(cudaGetLastError());
            lt_gather_kernel<<<aux_blocks, 256>>>(mem, slots, locs, (unsigned)nslots);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            if (t.nregs) CK(cudaMemcpy(h_regs.data(), regs, (size_t)I * t.nregs * sizeof(unsigned), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h_locs.data(), locs, nslots * sizeof(unsigned), cudaMemcpyDeviceToHost));
            unsigned to = 0;
            CK(cudaMemcpy(&to, counters + 32, sizeof to, cudaMemcpyDeviceToHost));
            timeouts += to;
            for (long long k = 0; k < I; ++k) {
                for (int r = 0; r < t.nregs; ++r) v[r] = h_regs[(size_t)k * t.nregs + r];
                for (int l = 0; l < t.nlocs; ++l) v[t.nregs + l] = h_locs[(size_t)k * t.nlocs + l];
                ++hist[v];
            }
        }

        unsigned long long total = 0;
        printf("test %s\n", t.name);
        for (const auto& kv : hist) {
            total += kv.second;
            printf("%llu%s %s\n", kv.second, matches_exists(t, kv.first) ? " *" : "", outcome_string(t, kv.first).c_str());
        }
        printf("total %llu\n", total);
        fflush(stdout);
        results.emplace_back(&t, std::move(hist));
        if (o.json) write_json(o.json, results);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!o.quiet)
            fprintf(stderr, "# %s: %lld instances x %lld launches (%lld blocks of %d threads, %lld stress), %llu unsynchronized threads, %.3f s\n",
                    t.name, I, iters, G, block, S, timeouts, secs);
    }
    if (o.json) write_json(o.json, results);
    if (!o.quiet)
        fprintf(stderr, "# all done in %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count());
    return 0;
}
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate a CUDA program that runs litmus tests on a GPU.")
    ap.add_argument("files", nargs="+", type=Path, help="litmus files (TOML)")
    ap.add_argument("-o", "--output", type=Path, required=True, help="the .cu file to write")
    ap.add_argument("--only", action="append", default=[], metavar="NAME_GLOB",
                    help="keep only expanded tests whose name matches (repeatable)")
    ap.add_argument("--list", action="store_true", help="also print the expanded test names")
    args = ap.parse_args(argv)

    tests: list[Test] = []
    errors = 0
    for f in args.files:
        try:
            tests.extend(expand_file(f))
        except (LitmusError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            errors += 1
    if errors:
        print(f"{errors} file(s) with errors; nothing written", file=sys.stderr)
        return 1
    names = [t.name for t in tests]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        print(f"error: duplicate test names: {', '.join(dups)}", file=sys.stderr)
        return 1
    if args.only:
        tests = [t for t in tests if any(fnmatch.fnmatchcase(t.name, g) for g in args.only)]
    if not tests:
        print("error: no tests selected", file=sys.stderr)
        return 1
    for t in tests:
        if t.skip:
            print(f"skipping {t.name}: {t.skip}", file=sys.stderr)
        elif args.list:
            print(t.name)
    args.output.write_text(emit_program(tests, [str(f) for f in args.files]))
    ran = sum(1 for t in tests if not t.skip)
    print(f"wrote {args.output}: {ran} tests ({len(tests) - ran} skipped)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
