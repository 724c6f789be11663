#!/usr/bin/env python3
"""Tests of scripts/check_layers.py on small trees made in a temporary folder.

    python3 tests/scripts/check_layers_test.py
"""
import contextlib
import importlib.util
import io
import pathlib
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_layers.py"
spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)

CMAKE = """project(x)
foreach(layer IN ITEMS util async
                       server app)
  include(src/${layer}/sources.cmake)
endforeach()
"""


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        (self.root / "CMakeLists.txt").write_text(CMAKE)
        for layer in ("util", "async", "server", "app"):
            (self.root / "src" / layer).mkdir(parents=True)
        # Includes that follow the order: the own layer, earlier layers, non-layer headers.
        self.write("src/util/text.hpp", "#pragma once\n#include <string>\n")
        self.write("src/async/task.hpp", '#pragma once\n#include "util/text.hpp"\n')
        self.write("src/server/session.cpp",
                   '#include "server/session.hpp"\n#include "async/task.hpp"\n#include "toolport_version.hpp"\n')
        self.write("src/server/session.hpp", '#pragma once\n#include "util/text.hpp"\n')
        self.write("src/app/commands/main.cpp", '#include "server/session.hpp"\n#include "app/config.hpp"\n')
        self.saved_allowed = check_layers.ALLOWED
        check_layers.ALLOWED = []

    def tearDown(self):
        check_layers.ALLOWED = self.saved_allowed
        self.tmp.cleanup()

    def write(self, relative, text):
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def run_check(self):
        out = io.StringIO()
        saved_argv = sys.argv
        sys.argv = ["check_layers.py", str(self.root)]
        try:
            with contextlib.redirect_stdout(out):
                status = check_layers.main()
        finally:
            sys.argv = saved_argv
        return status, out.getvalue()

    def test_a_tree_that_follows_the_order_passes(self):
        status, out = self.run_check()
        self.assertEqual(status, 0, out)
        self.assertIn("util < async < server < app", out)

    def test_an_include_of_a_later_layer_fails_with_file_line_and_header(self):
        self.write("src/async/executor.cpp", '#include "async/task.hpp"\n\n#include "server/session.hpp"\n')
        self.write("src/util/deep/bad.hpp", '#pragma once\n  #  include "app/commands/main.hpp"\n')
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn('src/async/executor.cpp:3: async includes "server/session.hpp"', out)
        self.assertIn('src/util/deep/bad.hpp:2: util includes "app/commands/main.hpp"', out)
        self.assertNotIn("task.hpp", out)

    def test_an_allowed_include_passes_and_a_stale_allowance_fails(self):
        self.write("src/util/legacy.cpp", '#include "server/session.hpp"\n')
        check_layers.ALLOWED = [("src/util/legacy.", "server/session.hpp")]
        status, out = self.run_check()
        self.assertEqual(status, 0, out)
        self.assertIn("1 known exception", out)
        (self.root / "src/util/legacy.cpp").write_text("// fixed\n")
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("src/util/legacy. -> server/session.hpp is gone", out)

    def test_a_folder_missing_from_the_order_fails(self):
        (self.root / "src" / "extra").mkdir()
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn("missing from the layer order in CMakeLists.txt: extra", out)

    def test_the_order_comes_from_cmakelists(self):
        # Swapping two layers in the one declaration turns a legal include into a failure.
        (self.root / "CMakeLists.txt").write_text(CMAKE.replace("util async", "async util"))
        status, out = self.run_check()
        self.assertEqual(status, 1, out)
        self.assertIn('src/async/task.hpp:2: async includes "util/text.hpp"', out)


if __name__ == "__main__":
    unittest.main()
