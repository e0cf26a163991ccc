#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks every .onnx file of a folder with onnx.checker, full check (strict shape inference).

check-onnx-models.py DIR

Prints one line a model, in name order: "ok NAME", "fail NAME: REASON" (the reason on one
line), or "newer NAME: REASON" for a model at an opset newer than the installed onnx knows, which
its checker cannot judge. When python3-onnx is missing it prints only "skip REASON". Exits 0
either way: the test that runs it decides what a failure means.
"""
import os
import sys


def main():
    folder = sys.argv[1]
    try:
        import onnx
        import onnx.checker
        import onnx.defs
    except ImportError as e:
        print('skip python3-onnx is needed to check the exported models: ' + str(e))
        return 0
    known = onnx.defs.onnx_opset_version()
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.onnx'):
            continue
        path = os.path.join(folder, name)
        try:
            model = onnx.load(path)
            opset = max([o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')],
                        default=0)
            if opset > known:
                print('newer %s: opset %d, onnx %s knows up to %d' % (name, opset,
                                                                      onnx.__version__, known))
                continue
            onnx.checker.check_model(model, full_check=True)
            print('ok ' + name)
        except Exception as e:  # the checker raises several kinds; each is a verdict here
            reason = ' '.join(str(e).split())
            print('fail %s: %s' % (name, reason))
    sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
