// The Python binding's loaded model: an artifact on a runtime device (kiln_module, through the
// C API of include/kiln/kiln.h), or a model on the reference executor ("cpu-ref"). Python sees
// one class, kiln.Module; this header is the C++ side, free of pybind11 types except arrays.
#pragma once

#include "ir/graph.h"
#include "kiln/kiln.h"

#include <memory>
#include <optional>
#include <pybind11/numpy.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::python {

// Every failure the binding reports: raised in Python as kiln.Error (a RuntimeError) carrying
// kiln's message and, for runtime failures, the status code name ("INVALID_ARGUMENT", ...).
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message, std::string code = {})
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string &code() const { return code_; }

private:
  std::string code_;
};

// Throws Error for a failed runtime status (taking ownership of it); no-op for NULL.
void check(kiln_status status);
// Throws Error for a failed compiler-side status.
void check(const Status &status);

// Signature of one input or output. A dynamic dim (models on cpu-ref) is -1.
struct TensorInfo {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> shape;
};

// The numpy dtype of a kiln dtype; Error for one numpy has no equivalent of (bf16).
pybind11::dtype numpy_dtype(kiln_dtype dtype);
// The kiln dtype of a numpy dtype (native byte order); nullopt when kiln has none.
std::optional<kiln_dtype> kiln_dtype_of(const pybind11::dtype &dtype);
// A copy of a C-contiguous array in native byte order whose dtype kiln has (kiln_dtype_of).
Tensor to_tensor(const pybind11::array &a);

class Model {
public:
  // Loads an artifact held in memory onto the runtime device `uri`.
  static std::unique_ptr<Model> from_artifact(const std::string &uri, const void *data,
                                              size_t size);
  // Loads an artifact file onto the runtime device `uri`.
  static std::unique_ptr<Model> from_artifact_file(const std::string &uri,
                                                   const std::string &path);
  // A model file on the reference executor ("cpu-ref").
  static std::unique_ptr<Model> reference(std::unique_ptr<Module> module);
  ~Model();

  const std::string &device() const { return device_; }
  const std::vector<TensorInfo> &inputs() const { return inputs_; }
  const std::vector<TensorInfo> &outputs() const { return outputs_; }

  // Runs once on one array per input, in signature order (already C-contiguous, aligned and in
  // native byte order; their dtypes and shapes are checked here, by kiln). Returns one array
  // per output. The GIL is released while the model runs.
  std::vector<pybind11::array> run(const std::vector<pybind11::array> &inputs);

private:
  Model() = default;
  std::vector<pybind11::array> run_device(const std::vector<pybind11::array> &inputs);
  std::vector<pybind11::array> run_reference(const std::vector<pybind11::array> &inputs);
  void read_signature();

  std::string device_;
  kiln_module *module_ = nullptr;     // runtime devices
  std::unique_ptr<Module> reference_; // cpu-ref
  std::vector<TensorInfo> inputs_, outputs_;
};

} // namespace kiln::python
