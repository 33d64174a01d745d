// The application's own pre-processing shader in examples/vulkan_interop.c: turns a camera
// frame (pixel values 0..255, interleaved HWC) into a model input (normalised, planar NCHW).
#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Frame { float frame[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Input { float x[]; };
layout(push_constant) uniform Shape {
  uint count;    // elements of the model input
  uint channels; // C
  uint plane;    // H * W
} shape;

const float kMean[3] = float[3](0.485, 0.456, 0.406);
const float kStd[3] = float[3](0.229, 0.224, 0.225);

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= shape.count) return;
  uint s = i % shape.plane;
  uint c = (i / shape.plane) % shape.channels;
  uint n = i / (shape.plane * shape.channels);
  float v = frame[(n * shape.plane + s) * shape.channels + c] / 255.0;
  x[i] = (v - kMean[c % 3]) / kStd[c % 3];
}
