"""scripts/check-includes.py fails on what it is there to catch, against the build's real graph
(GRAPH: build/module_graph.txt, ROOT: the source tree): a backward include in a module, one
hidden in a test's own header, and a module table in the docs that differs from the build."""

import os
import subprocess
import sys
import tempfile
import unittest

GRAPH = os.environ["GRAPH"]
ROOT = os.environ["ROOT"]
FIXTURES = os.path.join(ROOT, "tests", "data", "include_check")


def check(*args):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "check-includes.py"), "--graph", GRAPH,
                          "--root", ROOT, *args], capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


class CheckIncludes(unittest.TestCase):
    def test_the_tree_as_it_is_passes(self):
        code, out = check("--docs", os.path.join(ROOT, "docs", "architecture.md"))
        self.assertEqual(code, 0, out)

    def test_a_sink_source_including_a_collect_header_fails(self):
        code, out = check("--extra-source", "datacrumbs_sink=" + os.path.join(FIXTURES, "sink_includes_collect.cpp"))
        self.assertEqual(code, 1, out)
        self.assertIn('sink_includes_collect.cpp: includes "collect/decoder.h" (datacrumbs_collect), '
                      "which datacrumbs_sink does not link", out)

    def test_an_include_in_a_tests_own_header_counts_for_the_test(self):
        code, out = check("--extra-source",
                          "collect_unit_tests=" + os.path.join(FIXTURES, "collect_test_with_helper.cpp"))
        self.assertEqual(code, 1, out)
        self.assertIn('test_helper.h: includes "deploy/probe_file.h" (datacrumbs_deploy), '
                      "which collect_unit_tests does not link", out)

    def test_a_module_table_that_differs_from_the_build_fails(self):
        with open(os.path.join(ROOT, "docs", "architecture.md")) as f:
            docs = f.read()
        row = "| `sink` |"
        start = docs.index(row)
        end = docs.index("\n", start)
        wrong = docs[:start] + "| `sink` | the trace | core, collect |" + docs[end:]
        with tempfile.NamedTemporaryFile("w", suffix=".md") as f:
            f.write(wrong)
            f.flush()
            code, out = check("--docs", f.name)
        self.assertEqual(code, 1, out)
        self.assertIn("'sink' links core in the build, the table says 'core, collect'", out)


if __name__ == "__main__":
    unittest.main()
