#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generates ONNX's node test cases (the ONNX backend-test layout) for the node-suite test.

make-node-suite.py OUTDIR STAMP

Runs `onnx.backend.test.cmd_tools generate-data` from the installed python3-onnx (nothing is
downloaded) into a temporary folder beside OUTDIR and renames its node/ cases to OUTDIR, so a
reader never sees half a suite. STAMP gets one line: "ok N" (N cases), or "skip REASON" when
python3-onnx or numpy is missing, which the test reports as a skip with that reason.
"""
import os
import shutil
import sys
import tempfile


def write_stamp(path, line):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(line + '\n')
    os.replace(tmp, path)


def main():
    out_dir, stamp = sys.argv[1], sys.argv[2]
    try:
        import numpy as np
        # python3-onnx 1.12 still uses the aliases that numpy 1.24 removed.
        np.float = float
        np.int = int
        np.bool = bool
        np.object = object
        import onnx
        from onnx.backend.test import cmd_tools
    except ImportError as e:
        write_stamp(stamp, 'skip python3-onnx (with numpy) is needed to generate the node cases: '
                    + str(e))
        return 0
    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix='.node-suite-', dir=parent)
    try:
        sys.argv = ['generate-data', 'generate-data', '-o', work]
        # Its errors propagate and fail the build step that runs this.
        cmd_tools.main()
        cases = sorted(os.listdir(os.path.join(work, 'node')))
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        os.replace(os.path.join(work, 'node'), out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_stamp(stamp, 'ok %d onnx %s' % (len(cases), onnx.__version__))
    return 0


if __name__ == '__main__':
    sys.exit(main())
