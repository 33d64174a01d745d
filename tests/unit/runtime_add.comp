#version 450
// c[i] = a[i] + b[i] for i < n: the test kernel of tests/unit/runtime_test.cpp.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform P { uint n; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.n)
    c[i] = a[i] + b[i];
}
