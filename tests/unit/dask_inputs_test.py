"""datacrumbs_dask's input expansion and split (no cluster): which traces, in which parts."""

import os
import tempfile
import unittest

from datacrumbs_dask.csv_parts import csv_stems, gather_event_tables, part_dir
from datacrumbs_dask.inputs import expand_paths, split_balanced, split_indices


class ExpandPaths(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        for name, size in (("b.pfw.gz", 30), ("a.pfw", 10), ("notes.txt", 5), ("sub/c.pfw.gz", 20)):
            path = os.path.join(self.root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(b"x" * size)

    def tearDown(self):
        self.tmp.cleanup()

    def test_directories_are_searched_recursively_for_traces_in_name_order(self):
        self.assertEqual(expand_paths([self.root]),
                         [os.path.join(self.root, n) for n in ("a.pfw", "b.pfw.gz", "sub/c.pfw.gz")])

    def test_files_and_globs_as_analyze_takes_them(self):
        a = os.path.join(self.root, "a.pfw")
        # Named twice, read twice (as analyze does); an unexpanded glob gives its sorted matches.
        self.assertEqual(expand_paths([a, os.path.join(self.root, "*.pfw*"), a]),
                         [a, a, os.path.join(self.root, "b.pfw.gz"), a])

    def test_paths_that_give_nothing_are_kept_for_analyze_to_report(self):
        empty = os.path.join(self.root, "empty")
        os.mkdir(empty)
        missing, nothing = os.path.join(self.root, "nope"), os.path.join(self.root, "*.none")
        self.assertEqual(expand_paths([missing, empty, nothing]), [missing, empty, nothing])


class SplitBalanced(unittest.TestCase):
    def test_every_file_once_in_parts_of_about_equal_bytes(self):
        sizes = {"f1": 100, "f2": 60, "f3": 50, "f4": 40, "f5": 10}
        parts = split_balanced(list(sizes), 2, size_of=sizes.get)
        self.assertEqual(sorted(f for p in parts for f in p), sorted(sizes))
        # Largest first into the lightest part: 100+40 and 60+50+10.
        self.assertEqual(sorted(sum(sizes[f] for f in p) for p in parts), [120, 140])
        # Each part keeps the files' order.
        for p in parts:
            self.assertEqual(p, sorted(p))

    def test_never_more_parts_than_files_nor_empty_parts(self):
        self.assertEqual(split_balanced(["x", "y"], 8, size_of=lambda f: 1), [["x"], ["y"]])
        self.assertEqual(split_balanced(["x"], 0, size_of=lambda f: 1), [["x"]])


if __name__ == "__main__":
    unittest.main()


class CsvParts(unittest.TestCase):
    """The per-event tables' names: analyze's rule (src/analyze/csv_events.cpp), over all inputs."""

    def test_stems_as_analyze_names_them(self):
        files = ["/a/run.pfw.gz", "/b/run.pfw", "/c/run.gz", "/d/x.pfw.gz", "/missing/run.pfw.gz", "/e/run.pfw.gz"]
        readable = lambda f: not f.startswith("/missing")
        self.assertEqual(csv_stems(files, readable), ["run", "run-2", "run-3", "x", None, "run-4"])

    def test_each_parts_tables_get_the_names_of_one_analyze(self):
        with tempfile.TemporaryDirectory() as out:
            files = ["/t/host-a/run.pfw.gz", "/t/host-b/run.pfw.gz", "/t/other.pfw.gz"]
            parts = split_indices(files, 2, size_of=lambda f: 1)
            self.assertEqual(sorted(i for p in parts for i in p), [0, 1, 2])
            # What each part's analyze wrote: its own stems ("run" in both parts that read one).
            for i, p in enumerate(parts):
                for j, stem in zip(p, csv_stems([files[j] for j in p], lambda f: True)):
                    for kind in ("syscall", "fs"):
                        d = os.path.join(part_dir(out, i), kind)
                        os.makedirs(d, exist_ok=True)
                        with open(os.path.join(d, f"{kind}_{stem}.csv"), "w") as f:
                            f.write(files[j])
                os.makedirs(os.path.join(part_dir(out, i), "snapshots"))
                with open(os.path.join(part_dir(out, i), "layers.csv"), "w") as f:
                    f.write("part")
            gather_event_tables(out, files, parts, readable=lambda f: True)
            self.assertEqual(sorted(os.listdir(out)), ["fs", "syscall"])
            for kind in ("syscall", "fs"):
                got = {}
                for name in os.listdir(os.path.join(out, kind)):
                    with open(os.path.join(out, kind, name)) as f:
                        got[name] = f.read()
                self.assertEqual(got, {f"{kind}_run.csv": files[0], f"{kind}_run-2.csv": files[1],
                                       f"{kind}_other.csv": files[2]})
