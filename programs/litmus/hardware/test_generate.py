#!/usr/bin/env python3
"""Checks of generate.py that need no GPU: python3 programs/litmus/hardware/test_generate.py"""

import glob
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, str(HERE))
import generate  # noqa: E402

MP = '''
name = "MP"
[locations]
x = 0
y = 0
[[thread]]
body = """
{st} [x], 1;
{fence}
st.global.u32 [y], 1;
"""
[[thread]]
body = """
ld.global.u32 r0, [y];
{fence}
ld.global.u32 r1, [x];
"""
[exists]
"1:r0" = 1
"1:r1" = 0
[[variant]]
name = "plain"
st = "st.global.u32"
fence = ""
[[variant]]
name = "membar"
st = "st.global.u32"
fence = "membar.gl;"
'''


def expand(text: str):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.litmus"
        p.write_text(text)
        return generate.expand_file(p)


class Expand(unittest.TestCase):
    def test_names_placements_observables(self):
        tests = expand(MP)
        self.assertEqual([t.name for t in tests], [
            "MP+plain@warp", "MP+plain@block", "MP+plain@grid",
            "MP+membar@warp", "MP+membar@block", "MP+membar@grid"])
        t = tests[2]
        self.assertEqual(t.observables, ["1:r0", "1:r1", "x", "y"])
        self.assertEqual(t.pos, [(0, 0, 0), (1, 0, 0)])
        self.assertEqual(tests[1].pos, [(0, 0, 0), (0, 1, 0)])
        self.assertEqual(tests[0].pos, [(0, 0, 0), (0, 0, 1)])
        self.assertEqual(t.exists, [(0, 1), (1, 0)])
        # the empty fence line is dropped
        self.assertEqual(len(tests[0].threads[0].stmts), 2)
        self.assertEqual(len(tests[3].threads[0].stmts), 3)

    def test_errors(self):
        bad = {
            "unknown placeholder": MP.replace("{fence}\nst.global", "{fnce}\nst.global"),
            "reads r": MP.replace("st.global.u32 [y], 1;", "st.global.u32 [y], r3;"),
            "unknown location": MP.replace("[y], 1;", "[z], 1;"),
            "not an observable": MP.replace('"1:r1" = 0', '"0:r1" = 0'),
            "out of range": MP.replace("r1, [x]", "r16, [x]"),
        }
        for what, text in bad.items():
            with self.subTest(what):
                with self.assertRaisesRegex(generate.LitmusError, what):
                    expand(text)

    def test_barrier_grid_skipped(self):
        text = MP.replace("{fence}", "bar.sync 0;")
        tests = expand(text)
        skipped = {t.name for t in tests if t.skip}
        self.assertEqual(skipped, {"MP+plain@grid", "MP+membar@grid"})
        self.assertIn("barrier.sync 0;", generate.emit_kernel(_named(tests[0])))

    def test_explicit(self):
        text = MP.replace('[[thread]]\nbody = """\nld', '[[thread]]\nplacement = { block = 5, warp = 1, lane = 2 }\nbody = """\nld')
        text = text.replace('[[thread]]\nbody = """\n{st}', '[[thread]]\nplacement = { block = 2 }\nbody = """\n{st}')
        tests = expand(text)
        self.assertEqual([t.name for t in tests], ["MP+plain@explicit", "MP+membar@explicit"])
        self.assertEqual(tests[0].pos, [(0, 0, 0), (1, 1, 2)])
        self.assertEqual((tests[0].nblocks, tests[0].nwarps), (2, 2))


def _named(t):
    t.kernel = "k"
    return t


class Program(unittest.TestCase):
    def test_generates_for_all_files(self):
        files = sorted(glob.glob(str(HERE.parent / "*.litmus"))) + sorted(glob.glob(str(HERE / "selftest" / "*.litmus")))
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "litmus.cu"
            r = subprocess.run([sys.executable, str(HERE / "generate.py"), *files, "-o", str(out)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            src = out.read_text()
            self.assertIn("int main(", src)
            self.assertEqual(src.count("{"), src.count("}"))


if __name__ == "__main__":
    os.chdir(HERE)
    unittest.main()
