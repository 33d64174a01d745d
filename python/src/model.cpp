#include "model.h"

#include "exec/executor.h"

#include <cstring>
#include <fmt/format.h>

namespace py = pybind11;

namespace kiln::python {

void check(kiln_status status) {
  if (!status) return;
  std::string message = kiln_status_message(status);
  std::string code = kiln_status_code_name(kiln_status_code_of(status));
  kiln_status_free(status);
  throw Error(message, code);
}

void check(const Status &status) {
  if (!status) throw Error(status.message());
}

namespace {

struct NumpyName {
  kiln_dtype dtype;
  const char *name;
};
// Every kiln dtype numpy holds natively; bf16 has no numpy dtype.
constexpr NumpyName kNumpyNames[] = {
    {KILN_F32, "float32"}, {KILN_F16, "float16"}, {KILN_F64, "float64"}, {KILN_I8, "int8"},
    {KILN_U8, "uint8"},    {KILN_I16, "int16"},   {KILN_U16, "uint16"},  {KILN_I32, "int32"},
    {KILN_U32, "uint32"},  {KILN_I64, "int64"},   {KILN_U64, "uint64"},  {KILN_BOOL, "bool"},
};

std::vector<py::ssize_t> dims_of(const TensorInfo &info) {
  return {info.shape.begin(), info.shape.end()};
}

// Outputs are created by the caller here, so the device writes straight into numpy memory.
py::array new_output(const TensorInfo &info) {
  return py::array(numpy_dtype(info.dtype), dims_of(info));
}

} // namespace

py::dtype numpy_dtype(kiln_dtype dtype) {
  for (const NumpyName &n : kNumpyNames)
    if (n.dtype == dtype) return py::dtype(n.name);
  throw Error(fmt::format("dtype {} has no numpy equivalent", kiln_dtype_name(dtype)));
}

std::optional<kiln_dtype> kiln_dtype_of(const py::dtype &dtype) {
  for (const NumpyName &n : kNumpyNames)
    if (dtype.equal(py::dtype(n.name))) return n.dtype;
  return std::nullopt;
}

Tensor to_tensor(const py::array &a) {
  Tensor t(static_cast<DType>(*kiln_dtype_of(a.dtype())), Shape(a.shape(), a.shape() + a.ndim()));
  if (t.nbytes()) std::memcpy(t.raw_mut(), a.data(), t.nbytes());
  return t;
}

std::unique_ptr<Model> Model::from_artifact(const std::string &uri, const void *data,
                                            size_t size) {
  auto m = std::unique_ptr<Model>(new Model());
  m->device_ = uri;
  kiln_device *device = nullptr;
  check(kiln_device_open(uri.c_str(), &device));
  kiln_status st = kiln_module_load_memory(device, data, size, &m->module_);
  kiln_device_release(device); // the module keeps its device alive
  check(st);
  m->read_signature();
  return m;
}

std::unique_ptr<Model> Model::from_artifact_file(const std::string &uri,
                                                 const std::string &path) {
  auto m = std::unique_ptr<Model>(new Model());
  m->device_ = uri;
  kiln_device *device = nullptr;
  check(kiln_device_open(uri.c_str(), &device));
  kiln_status st = kiln_module_load_file(device, path.c_str(), &m->module_);
  kiln_device_release(device);
  check(st);
  m->read_signature();
  return m;
}

std::unique_ptr<Model> Model::reference(std::unique_ptr<Module> module) {
  auto m = std::unique_ptr<Model>(new Model());
  m->device_ = "cpu-ref";
  m->reference_ = std::move(module);
  m->read_signature();
  return m;
}

Model::~Model() { kiln_module_release(module_); }

void Model::read_signature() {
  if (reference_) {
    const Graph &g = reference_->main()->body;
    auto info = [](const Value *v, const std::string &fallback) {
      return TensorInfo{v->name.empty() ? fallback : v->name, static_cast<kiln_dtype>(v->type.dtype),
                        v->type.dims};
    };
    for (size_t i = 0; i < g.params.size(); ++i)
      inputs_.push_back(info(g.params[i], fmt::format("input{}", i)));
    for (size_t i = 0; i < g.results.size(); ++i)
      outputs_.push_back(info(g.results[i], fmt::format("output{}", i)));
    return;
  }
  auto read = [&](bool input, size_t i) {
    kiln_tensor_info t{};
    check(input ? kiln_module_input_info(module_, i, &t) : kiln_module_output_info(module_, i, &t));
    (input ? inputs_ : outputs_)
        .push_back(TensorInfo{t.name, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank)});
  };
  for (size_t i = 0; i < kiln_module_input_count(module_); ++i) read(true, i);
  for (size_t i = 0; i < kiln_module_output_count(module_); ++i) read(false, i);
}

std::vector<py::array> Model::run(const std::vector<py::array> &inputs) {
  if (inputs.size() != inputs_.size())
    throw Error(fmt::format("expected {} inputs, got {}", inputs_.size(), inputs.size()),
                "INVALID_ARGUMENT");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!kiln_dtype_of(inputs[i].dtype()))
      throw Error(fmt::format("input '{}': numpy dtype {} has no kiln equivalent (expected {})",
                              inputs_[i].name, std::string(py::str(inputs[i].dtype())),
                              kiln_dtype_name(inputs_[i].dtype)),
                  "INVALID_ARGUMENT");
  return reference_ ? run_reference(inputs) : run_device(inputs);
}

// Inputs are read in place from the arrays and outputs written into fresh arrays: the host
// copies nothing. kiln checks every dtype, shape and size before anything runs.
std::vector<py::array> Model::run_device(const std::vector<py::array> &inputs) {
  std::vector<std::vector<int64_t>> shapes(inputs.size());
  std::vector<kiln_tensor> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const py::array &a = inputs[i];
    shapes[i].assign(a.shape(), a.shape() + a.ndim());
    in[i] = kiln_tensor{*kiln_dtype_of(a.dtype()), static_cast<uint32_t>(a.ndim()),
                        shapes[i].data(), const_cast<void *>(a.data()),
                        static_cast<size_t>(a.nbytes())};
  }
  std::vector<py::array> outs;
  std::vector<kiln_tensor> out(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const TensorInfo &o = outputs_[i];
    outs.push_back(new_output(o));
    out[i] = kiln_tensor{o.dtype, static_cast<uint32_t>(o.shape.size()), o.shape.data(),
                         outs.back().mutable_data(), static_cast<size_t>(outs.back().nbytes())};
  }
  kiln_status st = nullptr;
  {
    py::gil_scoped_release nogil;
    st = kiln_module_run(module_, in.data(), in.size(), out.data(), out.size());
  }
  check(st);
  return outs;
}

// The reference executor computes on kiln tensors: each input is copied into one, and each
// result copied out (a result may share storage with a constant of the model or an input,
// which the caller's array must not alias).
std::vector<py::array> Model::run_reference(const std::vector<py::array> &inputs) {
  std::vector<Tensor> in;
  for (const py::array &a : inputs) in.push_back(to_tensor(a));
  const Function &f = *reference_->main();
  Result<std::vector<Tensor>> results = Status::error("not run");
  {
    py::gil_scoped_release nogil;
    Status st = check_inputs(f, in);
    results = st ? execute(f, std::move(in)) : Result<std::vector<Tensor>>(st);
  }
  check(results.status());
  std::vector<py::array> outs;
  for (const Tensor &t : results.value()) {
    py::array a(numpy_dtype(static_cast<kiln_dtype>(t.dtype())),
                std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
    if (t.nbytes()) std::memcpy(a.mutable_data(), t.raw(), t.nbytes());
    outs.push_back(std::move(a));
  }
  return outs;
}

} // namespace kiln::python
