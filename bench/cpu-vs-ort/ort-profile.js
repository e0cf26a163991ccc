// SPDX-License-Identifier: GPL-3.0-or-later
// ONNX Runtime's per-node profile of one model, to set beside bench/cpu-kernel-bench's per-kernel
// times: 2 intra-op threads, as ort-bench.js (FB_ORT_THREADS=N for another count); N profiled
// runs after one warm-up; prints every node's median kernel time (ms), largest first, its share
// of the sum, its operator and name;
// with "min", each node's fastest run instead (cpu-kernel-bench --min: on a shared machine,
// the run nothing preempted).
//   node ort-profile.js ORT_MODULE_DIR MODEL.onnx DATA_DIR [N] [min]
// The profile file ONNX Runtime writes goes to a temporary folder and is removed.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

(async () => {
  const [ortDir, model, dataDir, nArg, stat] = process.argv.slice(2);
  const useMin = stat === 'min';
  const runs = Number(nArg || 20);
  const threads = Number(process.env.FB_ORT_THREADS || 2);
  const ort = require(ortDir);
  const { readInputs } = require(path.join(__dirname, 'ort-bench.js'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
  try {
    const session = await ort.InferenceSession.create(model, {
      intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
      enableProfiling: true, profileFilePrefix: path.join(tmp, 'profile'),
    });
    const feeds = readInputs(ort, session, dataDir);
    for (let i = 0; i <= runs; i++) await session.run(feeds);
    session.endProfiling();
    const file = fs.readdirSync(tmp).find((f) => f.endsWith('.json'));
    if (!file) throw new Error('ONNX Runtime wrote no profile');
    const events = JSON.parse(fs.readFileSync(path.join(tmp, file), 'utf8'));
    // Node events are "<node name>_kernel_time", one per node per run; the first run is the
    // warm-up.
    const per = new Map();
    for (const e of events) {
      if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
      const name = e.name.slice(0, -'_kernel_time'.length);
      if (!per.has(name)) per.set(name, { op: (e.args && e.args.op_name) || '?', us: [] });
      per.get(name).us.push(e.dur);
    }
    const rows = [];
    for (const [name, v] of per) {
      const us = v.us.slice(1).sort((a, b) => a - b);
      if (us.length === 0) continue;
      const m = useMin ? us[0]
        : us.length % 2 ? us[(us.length - 1) / 2] : (us[us.length / 2 - 1] + us[us.length / 2]) / 2;
      rows.push({ name, op: v.op, ms: m / 1000 });
    }
    rows.sort((a, b) => b.ms - a.ms);
    const sum = rows.reduce((s, r) => s + r.ms, 0);
    console.log(`${'ms'.padStart(9)} ${'share'.padStart(6)}  op / node`);
    for (const r of rows)
      console.log(`${r.ms.toFixed(4).padStart(9)} ${(100 * r.ms / sum).toFixed(1).padStart(5)}%  ${r.op}  ${r.name}`);
    console.log(`nodes: ${rows.length}, sum of ${useMin ? 'minima' : 'medians'} ${sum.toFixed(3)} ms over ${runs} runs`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
})().catch((e) => { console.error(e.message || e); process.exit(1); });
