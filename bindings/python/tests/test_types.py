"""orrery.types (the TypedDicts) against the published JSON Schema: the
same keys, required exactly where the schema requires them."""

import json
import os
import shutil
import subprocess
import sys
import typing
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from orrery import types  # noqa: E402

SCHEMA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "schema", "v1.json"))


class TypesTest(unittest.TestCase):
    def test_typed_dicts_are_the_schema(self):
        with open(SCHEMA) as fh:
            defs = json.load(fh)["$defs"]
        self.assertGreater(len(defs), 40)
        for name, d in defs.items():
            td = getattr(types, name, None)
            self.assertIsNotNone(td, "orrery.types has no %s" % name)
            self.assertEqual(set(td.__annotations__), set(d["properties"]), name)
            if hasattr(td, "__required_keys__"):
                self.assertEqual(set(td.__required_keys__), set(d.get("required", [])), name)

    def test_every_op_has_its_types(self):
        with open(SCHEMA) as fh:
            ops = json.load(fh)["x-orrery-ops"]
        for op in ops:
            for ref in (op["request"], op["response"]):
                self.assertTrue(hasattr(types, ref.rsplit("/", 1)[1]), "%s: %s" % (op["op"], ref))

    def test_signatures_are_typed(self):
        """Engine's operations take and return the schema's TypedDicts, and
        the package says it is typed (py.typed)."""
        from orrery._common import Engine, Scheduler

        for meth, req, resp in (("link", "LinkRequest", "LinkResponse"), ("rank", "RankRequest", "RankResponse"),
                                ("profile", "ProfileRequest", "ProfileResponse"),
                                ("plan", "ShockwavePlanRequest", "ShockwavePlanResponse"),
                                ("predict", "ShockwavePlanRequest", "ShockwavePredictResponse")):
            hints = typing.get_type_hints(getattr(Engine, meth))
            self.assertIs(hints["request"], getattr(types, req), meth)
            self.assertIs(hints["return"], getattr(types, resp), meth)
        self.assertIs(typing.get_type_hints(Scheduler.add)["return"], types.SchedulerState)
        pkg = os.path.dirname(types.__file__)
        self.assertTrue(os.path.isfile(os.path.join(pkg, "py.typed")))

    @unittest.skipUnless(shutil.which("mypy"), "mypy is not installed")
    def test_mypy(self):
        pkg = os.path.dirname(os.path.dirname(types.__file__))
        out = subprocess.run(["mypy", "--no-error-summary", "orrery"], cwd=pkg, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


if __name__ == "__main__":
    unittest.main()
