import numpy as np
rng = np.random.default_rng(0)
for name, shape, axes, f in [('sum16m', [1 << 24], (0,), np.sum), ('mean64x256k', [64, 1 << 18], (1,), np.mean),
                             ('max4kx8k', [4096, 8192], (1,), np.max)]:
    x = rng.standard_normal(shape, dtype=np.float32)
    np.save(f'{name}.in.x.npy', x)
    np.save(f'{name}.out.y.npy', f(x.astype(np.float64), axis=axes, keepdims=True).astype(np.float32))
