#!/usr/bin/env python3
"""Lists the loops of every function in `cuobjdump -sass` output, with the
instructions of each loop body by opcode, so that a microbenchmark's SASS per
iteration can be read off without counting by hand.

    cuobjdump -sass fma.cubin | python3 sass-loops.py

A loop is a backward branch: its body runs from the branch's target to the
branch itself, both included. The loop marked `timed` is the innermost loop
(one holding no other loop) with the most instructions between the last two
clock reads (CS2R SR_CLOCKLO), which for every kernel of programs/timing/ is
the loop that its clock64() reads time.
"""
import collections
import re
import sys

FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
TARGET = re.compile(r"\bBRA\s+(?:\S+\s+)?(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))")
LABEL = re.compile(r"^\s*\.L_x_(\d+):")


def parse(text):
    """Returns {function: [(address, instruction text)]} and each function's labels."""
    functions = collections.OrderedDict()
    labels = {}
    name = None
    pending = []
    for line in text.splitlines():
        match = FUNCTION.match(line)
        if match:
            name = match.group(1)
            functions[name] = []
            labels[name] = {}
            continue
        if name is None:
            continue
        match = LABEL.match(line)
        if match:
            pending.append(match.group(1))
            continue
        match = INSTRUCTION.match(line)
        if match:
            address = int(match.group(1), 16)
            for label in pending:
                labels[name][label] = address
            pending = []
            functions[name].append((address, match.group(2)))
    return functions, labels


def opcode(instruction):
    """The opcode of an instruction, without its guard predicate."""
    words = instruction.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def loops(instructions, labels):
    """The (start, end) addresses of every backward branch's loop."""
    found = []
    for address, text in instructions:
        if opcode(text) != "BRA":
            continue
        label = re.search(r"\.L_x_(\d+)", text)
        if label and label.group(1) in labels:
            target = labels[label.group(1)]
        else:
            match = TARGET.search(text)
            if not match or match.group(1) is None:
                continue
            target = int(match.group(1), 16)
        if target <= address:
            found.append((target, address))
    return found


def main():
    functions, labels = parse(sys.stdin.read())
    print("function,loop,instructions,timed,opcodes")
    for name, instructions in functions.items():
        spans = loops(instructions, labels[name])
        innermost = [
            (start, end)
            for start, end in spans
            if not any((s, e) != (start, end) and start <= s and e <= end for s, e in spans)
        ]
        bodies = {}
        for start, end in spans:
            bodies[(start, end)] = [text for address, text in instructions if start <= address <= end]
        # The timed loop lies between the last two clock reads, where there
        # are two; otherwise anywhere.
        clocks = [address for address, text in instructions if "SR_CLOCKLO" in text]
        window = (clocks[-2], clocks[-1]) if len(clocks) >= 2 else (0, 1 << 62)
        candidates = [span for span in innermost if window[0] <= span[0] and span[1] <= window[1]] or innermost
        timed = max(candidates, key=lambda span: len(bodies[span]), default=None)
        for span in sorted(spans):
            counts = collections.Counter(opcode(text) for text in bodies[span])
            summary = " ".join(f"{op}x{count}" for op, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])))
            print(f"{name},{span[0]:#06x}-{span[1]:#06x},{len(bodies[span])},{'yes' if span == timed else 'no'},{summary}")


if __name__ == "__main__":
    main()
