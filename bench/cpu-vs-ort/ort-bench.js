// SPDX-License-Identifier: GPL-3.0-or-later
// ONNX Runtime's side of the comparison: one model, the inputs of a backend-test data set,
// 2 intra-op threads (FB_ORT_THREADS sets another count), N timed runs after one warm-up;
// prints {"median_ms": ...}.
//   node ort-bench.js ORT_MODULE_DIR MODEL.onnx DATA_DIR N
//   node ort-bench.js ORT_MODULE_DIR MODEL.onnx DATA_DIR shapes   (prints NAME=AxB, one a line)
//   node ort-bench.js ORT_MODULE_DIR MODEL.onnx DATA_DIR outputs OUT_DIR
//     (writes ONNX Runtime's outputs as OUT_DIR/output_K.pb, what fusebench's are checked against)
'use strict';
const fs = require('fs');
const path = require('path');

// The few fields of an ONNX TensorProto a backend-test input uses.
function readTensor(file) {
  const buf = fs.readFileSync(file);
  let pos = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = buf[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  const t = { dims: [], type: 0, name: '', raw: null, floats: [], int64s: [] };
  while (pos < buf.length) {
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 1) t.dims.push(Number(v));
      else if (field === 2) t.type = Number(v);
      else if (field === 7) t.int64s.push(BigInt.asIntN(64, v));
    } else if (wire === 2) {
      const len = Number(varint()), body = buf.subarray(pos, pos + len);
      pos += len;
      if (field === 1) { let p = 0; while (p < body.length) { let v = 0, s = 0, b; do { b = body[p++]; v += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80); t.dims.push(v); } }
      else if (field === 8) t.name = body.toString();
      else if (field === 9) t.raw = Buffer.from(body);
      else if (field === 4) for (let i = 0; i + 4 <= body.length; i += 4) t.floats.push(body.readFloatLE(i));
    } else if (wire === 5) { t.floats.push(buf.readFloatLE(pos)); pos += 4; }
    else if (wire === 1) pos += 8;
    else throw new Error(`${file}: unexpected wire type ${wire}`);
  }
  return t;
}

// raw_data copied into a fresh, aligned ArrayBuffer (a Buffer's may be pooled and unaligned).
function aligned(raw, bytes) {
  const ab = new ArrayBuffer(bytes);
  new Uint8Array(ab).set(raw.subarray(0, bytes));
  return ab;
}

function toOrt(ort, t) {
  const n = t.dims.reduce((a, b) => a * b, 1);
  if (t.type === 1) {
    const data = t.raw ? new Float32Array(aligned(t.raw, 4 * n)) : Float32Array.from(t.floats);
    return new ort.Tensor('float32', data, t.dims);
  }
  if (t.type === 7) {
    const data = t.raw ? new BigInt64Array(aligned(t.raw, 8 * n)) : BigInt64Array.from(t.int64s);
    return new ort.Tensor('int64', data, t.dims);
  }
  throw new Error(`element type ${t.type} is not handled by this benchmark`);
}

// A TensorProto with dims, data_type, name and raw_data: all a backend-test output needs.
function writeTensor(file, name, t) {
  const types = { float32: [1, Float32Array], int64: [7, BigInt64Array], int32: [6, Int32Array], bool: [9, Uint8Array] };
  if (!types[t.type]) throw new Error(`output '${name}': element type ${t.type} is not handled by this benchmark`);
  const bytes = [];
  const varint = (v) => { v = BigInt.asUintN(64, BigInt(v)); do { let b = Number(v & 0x7fn); v >>= 7n; if (v) b |= 0x80; bytes.push(b); } while (v); };
  for (const d of t.dims) { bytes.push(0x08); varint(d); }
  bytes.push(0x10); varint(types[t.type][0]);
  const nameBuf = Buffer.from(name);
  bytes.push(0x42); varint(nameBuf.length);
  const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const head = Buffer.from(bytes);
  const tail = [0x4a]; let n = BigInt(data.length);
  do { let b = Number(n & 0x7fn); n >>= 7n; if (n) b |= 0x80; tail.push(b); } while (n);
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, Buffer.concat([head, nameBuf, Buffer.from(tail), data]));
  fs.renameSync(tmp, file);
}

function readDataSet(dataDir) {
  return fs.readdirSync(dataDir).filter((f) => /^input_\d+\.pb$/.test(f))
    .sort((a, b) => parseInt(a.slice(6)) - parseInt(b.slice(6))).map((f) => readTensor(path.join(dataDir, f)));
}

// The feeds of a session from a data set's inputs, in the order of the session's inputs.
function readInputs(ort, session, dataDir) {
  const inputs = readDataSet(dataDir), feeds = {};
  session.inputNames.forEach((name, k) => { feeds[name] = toOrt(ort, inputs[k]); });
  return feeds;
}
module.exports = { readInputs };

if (require.main === module) (async () => {
  const [ortDir, model, dataDir, what, outDir] = process.argv.slice(2);
  const inputs = readDataSet(dataDir);
  const ort = require(ortDir);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(process.env.FB_ORT_THREADS || 2), interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  if (what === 'shapes') {
    session.inputNames.forEach((name, k) => console.log(`${name}=${inputs[k].dims.join('x')}`));
    return;
  }
  const feeds = {};
  session.inputNames.forEach((name, k) => { feeds[name] = toOrt(ort, inputs[k]); });
  const first = await session.run(feeds);
  if (what === 'outputs') {
    session.outputNames.forEach((name, k) => writeTensor(path.join(outDir, `output_${k}.pb`), name, first[name]));
    return;
  }
  const times = [];
  for (let i = 0; i < Number(what); i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const m = times.length;
  console.log(JSON.stringify({ median_ms: m % 2 ? times[(m - 1) / 2] : (times[m / 2 - 1] + times[m / 2]) / 2 }));
})().catch((e) => { console.error(e.message || e); process.exit(1); });
