// Times ONNX Runtime's CPU execution provider (onnxruntime-node) on one model with .npy inputs,
// the peer of kiln_bench in bench/cpu/run.sh.
//   node ort_bench.js MODEL.onnx THREADS WARMUP ITERS NAME=FILE.npy ... [--save DIR]
// Prints one line: "ort MODEL median_ms=M min_ms=M iters=N threads=T". --save DIR also writes
// each output of the last call as DIR/NAME.npy (float32, int64, int32, uint8, int8 outputs).
// ORT_PROFILE=PREFIX writes ORT's per-node profile (PREFIX_<date>.json; the timed calls are
// then slower by the profiler's overhead, so not for ratios).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(process.env.ORT_NODE_DIR || __dirname, 'node_modules', 'onnxruntime-node'));

// A .npy file (format 1.0-3.0, little-endian, C order) as an ort.Tensor.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
      .filter(s => s.length).map(Number);
  const body = buf.subarray(hstart + hlen);
  const copy = (Ctor) => {
    const out = new Ctor(body.length / Ctor.BYTES_PER_ELEMENT);
    new Uint8Array(out.buffer).set(body);
    return out;
  };
  const types = {'<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
                 '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
                 '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array]};
  const t = types[descr];
  if (!t) throw new Error(`${file}: dtype ${descr} not handled`);
  return new ort.Tensor(t[0], copy(t[1]), shape);
}

// An ort.Tensor as a .npy file (format 1.0).
function writeNpy(file, t) {
  const descr = {float32: '<f4', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1'}[t.type];
  if (!descr) throw new Error(`${file}: output type ${t.type} not handled`);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const [model, threads, warmup, iters, ...specs] = process.argv.slice(2);
  const feeds = {};
  let save = null;
  const saveAt = specs.indexOf('--save');
  if (saveAt >= 0) save = specs.splice(saveAt, 2)[1];
  for (const s of specs) {
    const i = s.indexOf('=');
    feeds[s.slice(0, i)] = readNpy(s.slice(i + 1));
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    graphOptimizationLevel: process.env.ORT_OPT_LEVEL || 'all', logSeverityLevel: 3,
    // ORT_PROFILE=PREFIX: ORT's own per-node timings of every call, written as PREFIX*.json
    // (for comparing layer by layer with kiln_bench --profile).
    ...(process.env.ORT_PROFILE ? {enableProfiling: true, profileFilePrefix: process.env.ORT_PROFILE} : {})});
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  let outs = null;
  for (let i = 0; i < Number(iters); ++i) {
    const t0 = process.hrtime.bigint();
    outs = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (process.env.ORT_PROFILE) session.endProfiling();
  times.sort((a, b) => a - b);
  if (save && outs) for (const [name, t] of Object.entries(outs)) writeNpy(path.join(save, `${name}.npy`), t);
  console.log(`ort ${path.basename(model)} median_ms=${times[times.length >> 1].toFixed(3)} ` +
              `min_ms=${times[0].toFixed(3)} iters=${times.length} threads=${threads}`);
}

main().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
