#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# compare.py REF.npy GOT.npy [RTOL ATOL]: prints the relative L2 error ||got - ref|| / ||ref||,
# the worst absolute error and whether every element is within rtol, atol (default 1e-3, 1e-3).
import sys

import numpy as np

ref = np.load(sys.argv[1]).astype(np.float64)
got = np.load(sys.argv[2]).astype(np.float64)
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3
atol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-3
if ref.shape != got.shape:
    print(f"shape {got.shape} against {ref.shape}: FAIL")
    sys.exit(1)
rel = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)
worst = np.abs(got - ref).max()
ok = np.allclose(got, ref, rtol=rtol, atol=atol) and not np.isnan(got).any()
print(f"rel L2 {rel:.2e}, worst abs {worst:.2e}, allclose({rtol:g}, {atol:g}) {'PASS' if ok else 'FAIL'}")
