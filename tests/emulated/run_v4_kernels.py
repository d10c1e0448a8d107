#!/usr/bin/env python3
"""Runs v4_kernels_harness (a static, freestanding x86-64 program) in an emulated Sapphire Rapids
CPU and reports what it found: tunekit's x86-64-v4 kernels (AVX-512, AVX512-BF16) checked on a
machine whose own CPU lacks those extensions.

The CPU is Bochs's, through the bochscpu-python package (PyPI). Its wheel emulates a Cannon Lake
(no AVX512-BF16) and needs glibc 2.38's C23 entry points, so `shim.c` (built by
v4_kernels_test.sh and preloaded) supplies those and swaps in Bochs's Sapphire
Rapids model. The program runs at user level in long mode with its ELF segments, a stack and a
thread pointer mapped; it ends with `hlt`, which faults at user level and stops the run.

Usage: run_v4_kernels.py HARNESS   (exit status 0 when every case matched)
"""
import struct
import subprocess
import sys

import bochscpu
import bochscpu.cpu
import bochscpu.memory

PAGE = bochscpu.memory.page_size()
PML4 = 0x10_0000
STACK_TOP = 0x7F00_0000
TLS_BASE = 0x7E00_0000
GPA_FIRST = 0x100_0000
DONE = 0x7634216B6E6C  # tk_report.magic once every case ran (kDone)
PATHS = ("entry point", "threads sharing blocks", "whole-K driver", "decode")  # Path


class Space:
    """Guest pages: virtual addresses mapped one to one onto fresh physical pages."""

    def __init__(self):
        self.table = bochscpu.memory.PageMapLevel4Table()
        self.next_gpa = GPA_FIRST
        self.mapped = set()

    def map(self, start, end):
        for gva in range(start // PAGE * PAGE, end, PAGE):
            if gva in self.mapped:
                continue
            self.mapped.add(gva)
            hva = bochscpu.memory.allocate_host_page()
            bochscpu.memory.page_insert(self.next_gpa, hva)
            self.table.insert(gva, self.next_gpa, 1)  # read, write and execute
            self.next_gpa += PAGE

    def commit(self):
        for hva, gpa in self.table.commit(PML4):
            bochscpu.memory.page_insert(gpa, hva)

    @staticmethod
    def write(gva, data):
        for at in range(0, len(data), PAGE):
            chunk = data[at : at + PAGE]
            if not bochscpu.memory.virt_write(PML4, gva + at, list(chunk)):
                raise RuntimeError(f"cannot write guest address {gva + at:#x}")

    @staticmethod
    def read(gva, size):
        return bytes(bochscpu.memory.virt_read(PML4, gva, size))


def segments(image):
    """(kind, vaddr, file bytes, memsz, align) of the ELF64 program headers."""
    phoff, = struct.unpack_from("<Q", image, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", image, 0x36)
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz, memsz, align = struct.unpack_from(
            "<IIQQQQQQ", image, phoff + i * phentsize)
        yield kind, vaddr, image[offset : offset + filesz], memsz, align


def symbol(path, name):
    for line in subprocess.run(["nm", path], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == name:
            return int(fields[0], 16)
    raise RuntimeError(f"{path}: no symbol {name}")


def load(path, space):
    """Maps the program's segments and thread-local block; returns (entry, thread pointer)."""
    image = open(path, "rb").read()
    entry, = struct.unpack_from("<Q", image, 0x18)
    loads, tls = [], None
    for kind, vaddr, data, memsz, align in segments(image):
        if kind == 1:  # PT_LOAD
            space.map(vaddr, vaddr + memsz)
            loads.append((vaddr, data))
        elif kind == 7:  # PT_TLS: x86-64 variant II, the block ends at the thread pointer
            tls = (data, memsz, max(align, 1))
    size = 0 if tls is None else (tls[1] + tls[2] - 1) // tls[2] * tls[2]
    tp = TLS_BASE + (size + PAGE - 1) // PAGE * PAGE
    space.map(tp - size, tp + PAGE)
    space.map(STACK_TOP - 64 * PAGE, STACK_TOP)
    space.commit()
    for vaddr, data in loads:
        space.write(vaddr, data)
    if tls is not None:
        space.write(tp - size, tls[0])
    space.write(tp, struct.pack("<Q", tp))  # the thread control block points at itself
    return entry, tp


def segment(selector, attr, base=0):
    s = bochscpu.Segment()
    s.present, s.selector, s.base, s.limit, s.attr = True, selector, base, 0xFFFF_FFFF, attr
    return s


def run(path):
    session = bochscpu.Session()
    session.missing_page_handler = lambda gpa: (_ for _ in ()).throw(
        RuntimeError(f"missing guest page {gpa:#x}"))
    space = Space()
    entry, tp = load(path, space)
    state = bochscpu.State()
    bochscpu.cpu.set_long_mode(state)
    # CR4: OSFXSR, OSXMMEXCPT, OSXSAVE; XCR0: x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM.
    state.cr4 = int(state.cr4) | (1 << 9) | (1 << 10) | (1 << 18)
    state.xcr0 = 0xE7
    state.mxcsr = 0x1F80  # floating-point exceptions masked, as a process starts
    state.cr3 = PML4
    state.rip = entry
    state.rsp = STACK_TOP - 8
    state.cs = segment(0x33, 0x22FB)
    data = segment(0x2B, 0xCF3)
    state.ds = state.ss = state.es = state.gs = data
    state.fs = segment(0x2B, 0xCF3, base=tp)
    session.cpu.state = state
    stop = {}

    def exception(sess, cpu_id, vector, error_code):
        stop.update(vector=vector, rip=sess.cpu.state.rip)
        sess.stop()

    hook = bochscpu.Hook()
    hook.exception = exception
    session.run([hook])
    report = space.read(symbol(path, "tk_report"), 8 * 14)
    magic, cases, failures = struct.unpack_from("<QQQ", report, 0)
    worst, = struct.unpack_from("<d", report, 24)
    first = struct.unpack_from("<10q", report, 32)
    return stop, magic, cases, failures, worst, first


def main():
    stop, magic, cases, failures, worst, first = run(sys.argv[1])
    if magic != DONE:
        print(f"the harness did not finish: exception {stop.get('vector')} at "
              f"{stop.get('rip', 0):#x} after {cases} cases")
        return 1
    print(f"{cases} cases on an emulated Sapphire Rapids (AVX-512, AVX512-BF16), {failures} "
          f"failed, largest difference from the double reference {worst:.3g}")
    if failures:
        kind, bf16, mr, nr, ta, tb, m, n, k, kc = first
        dtype = "bf16" if bf16 else "fp32"
        where = f"decode rows={mr}" if kind == 3 else f"{PATHS[kind]} {mr}x{nr} kc={kc}"
        print(f"first failure: {dtype} {where} {chr(ta)}{chr(tb)} m={m} n={n} k={k}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
