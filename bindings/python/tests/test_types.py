"""orrery.types (the TypedDicts) against the published JSON Schema: the
same keys, required exactly where the schema requires them."""

import json
import os
import sys
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


if __name__ == "__main__":
    unittest.main()
