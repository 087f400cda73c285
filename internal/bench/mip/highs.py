# HiGHS driver for orrery's benchmark suite (package mip): reads a model in
# the JSON form mip.Model.WriteJSON writes, solves it with SciPy's milp
# (HiGHS), and prints one JSON object with the result. Only the Python
# standard library, NumPy and SciPy are used (Debian: python3-scipy).
import json
import math
import sys
import time


def main():
    with open(sys.argv[1]) as f:
        m = json.load(f)
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix

    def arr(v):
        return np.array([math.inf if x == "inf" else -math.inf if x == "-inf" else float(x) for x in v])

    n = len(m["c"])
    c = np.array(m["c"], dtype=float)
    if m["maximize"]:
        c = -c
    cons = []
    if m["rows"] > 0:
        a = csr_matrix((np.array(m["data"], dtype=float), np.array(m["indices"]), np.array(m["indptr"])),
                       shape=(m["rows"], n))
        cons = [LinearConstraint(a, arr(m["row_lo"]), arr(m["row_hi"]))]
    opts = {"disp": bool(m.get("disp", False))}
    if m.get("time_limit", 0) > 0:
        opts["time_limit"] = float(m["time_limit"])
    if m.get("mip_rel_gap", -1) >= 0:
        opts["mip_rel_gap"] = float(m["mip_rel_gap"])
    t0, c0 = time.perf_counter(), time.process_time()
    res = milp(c, integrality=np.array(m["integrality"]), bounds=Bounds(arr(m["lb"]), arr(m["ub"])),
               constraints=cons, options=opts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"status": int(res.status), "message": str(res.message), "wall": wall, "cpu": cpu,
           "x": None if res.x is None else [float(v) for v in res.x]}
    for key in ("fun", "mip_dual_bound", "mip_gap", "mip_node_count"):
        v = getattr(res, key, None)
        if v is not None and not (isinstance(v, float) and not math.isfinite(v)):
            out[key] = float(v)
    json.dump(out, sys.stdout)


main()
