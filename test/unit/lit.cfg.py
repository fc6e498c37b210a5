# GoogleTest binaries under build/test/unit, run by lit's GoogleTest format.
import os

import lit.formats

config.name = "stencilc-unit"
config.suffixes = []
config.test_source_root = os.path.join(config.stencilc_obj_root, "test", "unit")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
