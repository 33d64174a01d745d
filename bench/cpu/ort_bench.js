// Times ONNX Runtime's CPU execution provider (onnxruntime-node) on one model with .npy inputs,
// the peer of kiln_bench in bench/cpu/run.sh.
//   node ort_bench.js MODEL.onnx THREADS WARMUP ITERS NAME=FILE.npy ...
// Prints one line: "ort MODEL median_ms=M min_ms=M iters=N threads=T".
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

async function main() {
  const [model, threads, warmup, iters, ...specs] = process.argv.slice(2);
  const feeds = {};
  for (const s of specs) {
    const i = s.indexOf('=');
    feeds[s.slice(0, i)] = readNpy(s.slice(i + 1));
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    graphOptimizationLevel: 'all', logSeverityLevel: 3});
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(iters); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`ort ${path.basename(model)} median_ms=${times[times.length >> 1].toFixed(3)} ` +
              `min_ms=${times[0].toFixed(3)} iters=${times.length} threads=${threads}`);
}

main().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
