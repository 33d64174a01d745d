// kiln's Python extension (kiln._kiln, re-exported by the package kiln): compile a model into
// an artifact, load an artifact (or a model) onto a device, run it on numpy arrays, quantise an
// ONNX model. Built on
// the compiler libraries and the runtime's C API, as the CLI is (src/tools).
#include "model.h"

#include "calibrate/precision_auto.h"
#include "calibrate/quantize_calibration.h"
#include "calibrate/reference.h"
#include "compiler/compiler.h"
#include "frontend/model_import.h"
#include "kir/target.h"
#include "passes/pass.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace kiln::python;

namespace {

std::string fspath(const py::handle &path) {
  return py::str(py::module_::import("os").attr("fspath")(path));
}

// An artifact starts with a FlatBuffers root offset and the file identifier "KLN1"
// (schema/kiln.fbs); anything else given by path is a model.
bool is_artifact_file(const std::string &path) {
  char head[8] = {};
  std::ifstream f(path, std::ios::binary);
  return f.read(head, sizeof head) && std::string_view(head + 4, 4) == "KLN1";
}

std::string join(const std::vector<std::string> &names) {
  std::string s;
  for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Imports a model file; with a target, runs the graph passes and compiles it. The GIL is
// released throughout (import and compilation can take seconds).
std::unique_ptr<kiln::Module> import_model(const std::string &path) {
  kiln::Result<std::unique_ptr<kiln::Module>> m = kiln::Status::error("not imported");
  {
    py::gil_scoped_release nogil;
    m = kiln::frontend::import_model(path);
  }
  check(m.status());
  return std::move(m).value();
}

std::string type_name(const py::handle &v) {
  return py::str(py::type::of(v).attr("__name__"));
}

// precision='auto': its error budget and calibration inputs.
struct AutoRequest {
  double max_error = 1e-2;
  py::object inputs = py::none(); // a dict {input name: array} or None
};

// The calibration inputs of `f` for precision='auto': the arrays of `inputs` by name, the same
// seeded random data as `kiln compile --precision auto` for the others (calibrate/reference.h).
std::vector<kiln::Tensor> calibration_inputs(const kiln::Function &f, const py::object &inputs) {
  std::map<std::string, kiln::Tensor> given;
  std::vector<std::string> names;
  for (const kiln::Value *p : f.body.params) names.push_back(p->name);
  if (!inputs.is_none()) {
    if (!py::isinstance<py::dict>(inputs))
      throw py::type_error(fmt::format("inputs: expected a dict {{input name: numpy array}}, got "
                                       "{}",
                                       type_name(inputs)));
    py::object numpy = py::module_::import("numpy");
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(inputs)) {
      if (!py::isinstance<py::str>(key))
        throw py::type_error(fmt::format("inputs: keys are input names (str), got {}",
                                         type_name(key)));
      const std::string name = py::str(key);
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end())
        throw py::value_error(fmt::format("inputs: unknown input '{}' (the model's inputs: {})",
                                          name, join(names)));
      const kiln::Value *p = f.body.params[static_cast<size_t>(it - names.begin())];
      py::object v = py::reinterpret_borrow<py::object>(value);
      if (!py::isinstance<py::array>(v))
        v = numpy.attr("asarray")(v, numpy_dtype(static_cast<kiln_dtype>(p->type.dtype)));
      py::array a = py::reinterpret_borrow<py::array>(v);
      if (!a.dtype().attr("isnative").cast<bool>())
        a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
      if (!kiln_dtype_of(a.dtype()))
        throw py::value_error(fmt::format("inputs['{}']: numpy dtype {} has no kiln equivalent",
                                          name, std::string(py::str(a.dtype()))));
      a = py::array::ensure(a, py::array::c_style);
      given.emplace(name, to_tensor(a));
    }
  }
  kiln::Result<std::vector<kiln::Tensor>> r =
      kiln::calibrate::seeded_inputs(f, std::move(given), "give its data in inputs=");
  if (!r) throw py::value_error("inputs: " + r.status().message());
  return std::move(r).value();
}

// Imports and compiles a model as `kiln compile` does; with `auto_request`, as `kiln compile
// --precision auto` (options.precision is then fp16): the search on the reference executor
// (calibrate/precision_auto.h) picks the nodes kept in f32, recorded in the artifact.
std::vector<uint8_t> compile_model(const std::string &path, const std::string &target,
                                   kiln::CompileOptions options,
                                   const AutoRequest *auto_request = nullptr) {
  const kiln::kir::TargetDesc *t = kiln::kir::find_target(target);
  if (!t)
    throw Error(fmt::format("unknown target '{}' (targets: {})", target,
                            join(kiln::kir::target_names())));
  std::unique_ptr<kiln::Module> m = import_model(path);
  std::vector<kiln::Tensor> inputs;
  if (auto_request) inputs = calibration_inputs(*m->main(), auto_request->inputs);
  kiln::Result<std::vector<uint8_t>> bytes = kiln::Status::error("not compiled");
  {
    py::gil_scoped_release nogil;
    const std::vector<std::string> passes = kiln::target_pipeline(*t, options.precision);
    kiln::Status st = kiln::check_precision(*t, options.precision);
    if (st && auto_request) {
      auto ap = kiln::calibrate::choose_precision(path, inputs, auto_request->max_error, passes);
      if (ap) {
        m->keep_f32 = ap.value().f32_nodes;
        options.auto_precision = kiln::CompileOptions::AutoPrecision{
            auto_request->max_error,
            {ap.value().f32_nodes.begin(), ap.value().f32_nodes.end()},
            ap.value().half_nodes,
            ap.value().output_errors};
      } else {
        st = ap.status();
      }
    }
    if (st) st = kiln::run_pipeline(*m, passes);
    bytes = st ? kiln::compile_to_artifact(*m, *t, options) : kiln::Result<std::vector<uint8_t>>(st);
  }
  check(bytes.status());
  return std::move(bytes).value();
}

py::object compile(const py::object &model, const std::string &target,
                   const py::object &precision, const py::object &output,
                   const std::string &schedule, const py::object &max_error,
                   const py::object &inputs) {
  kiln::CompileOptions options;
  bool is_auto = false;
  if (!precision.is_none()) {
    std::string p = py::str(precision);
    is_auto = p == "auto";
    std::optional<kiln::Precision> parsed = kiln::parse_precision(is_auto ? "fp16" : p);
    if (!parsed)
      throw Error(fmt::format("precision '{}' is not supported: expected None, 'fp32', 'fp16', "
                              "'bf16' or 'auto'",
                              p));
    options.precision = *parsed;
  }
  AutoRequest request;
  if (!is_auto) {
    if (!max_error.is_none())
      throw py::value_error("max_error applies to precision='auto' only");
    if (!inputs.is_none()) throw py::value_error("inputs applies to precision='auto' only");
  } else {
    if (!max_error.is_none()) {
      if (py::isinstance<py::bool_>(max_error) ||
          !(py::isinstance<py::float_>(max_error) || py::isinstance<py::int_>(max_error)))
        throw py::type_error(fmt::format("max_error: expected a float, got {}",
                                         type_name(max_error)));
      request.max_error = max_error.cast<double>();
      if (!(request.max_error > 0))
        throw py::value_error(fmt::format("max_error={}: expected a positive fraction of each "
                                          "output's range",
                                          request.max_error));
    }
    request.inputs = inputs;
  }
  if (!kiln::compiler::parse_schedule_mode(schedule, &options.schedule))
    throw Error(fmt::format("schedule '{}': expected 'auto' or 'naive'", schedule));
  std::vector<uint8_t> bytes =
      compile_model(fspath(model), target, options, is_auto ? &request : nullptr);
  if (output.is_none())
    return py::bytes(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  const std::string out = fspath(output);
  std::ofstream f(out, std::ios::binary);
  f.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error(fmt::format("{}: cannot write the artifact", out));
  return py::none();
}

// kiln.quantize: `kiln quantize` (calibrate/quantize_calibration.h), its options as keywords.
py::dict quantize(const py::object &model, const py::object &output, const std::string &mode,
                  const py::object &calibrate, const std::string &method, double percentile,
                  const std::string &activations, const std::string &weights, bool per_tensor,
                  int64_t block_size, const py::object &op_types, const py::object &exclude) {
  kiln::onnx_fe::QuantizeOptions o;
  if (mode == "static") o.mode = kiln::onnx_fe::QuantMode::static_qdq;
  else if (mode == "dynamic") o.mode = kiln::onnx_fe::QuantMode::dynamic;
  else if (mode == "weight-only") o.mode = kiln::onnx_fe::QuantMode::weight_only;
  else
    throw py::value_error(fmt::format("mode='{}': expected 'static', 'dynamic' or 'weight-only'",
                                      mode));
  if (method != "minmax" && method != "percentile")
    throw py::value_error(fmt::format("method='{}': expected 'minmax' or 'percentile'", method));
  if (!(percentile > 50 && percentile <= 100))
    throw py::value_error(fmt::format("percentile={}: expected a value in (50, 100]", percentile));
  std::optional<kiln::DType> act = kiln::calibrate::parse_quant_type(activations);
  if (!act || (*act != kiln::DType::u8 && *act != kiln::DType::i8))
    throw py::value_error(fmt::format("activations='{}': expected 'u8' or 'i8'", activations));
  std::optional<kiln::DType> w = kiln::calibrate::parse_quant_type(weights);
  const bool weight_only = o.mode == kiln::onnx_fe::QuantMode::weight_only;
  if (!w)
    throw py::value_error(fmt::format("weights='{}': expected 'i8', 'u8' or (mode='weight-only') "
                                      "'i4'",
                                      weights));
  if (weight_only && *w == kiln::DType::u8)
    throw py::value_error(fmt::format("weights='{}': mode='weight-only' takes 'i8' or 'i4'",
                                      weights));
  if (!weight_only && *w == kiln::DType::i4)
    throw py::value_error(fmt::format("weights='{}': mode='{}' takes 'i8' or 'u8' (int4: "
                                      "mode='weight-only')",
                                      weights, mode));
  if (block_size < 0)
    throw py::value_error(fmt::format("block_size={}: expected >= 0", block_size));
  if (block_size > 0 && !weight_only)
    throw py::value_error(fmt::format("block_size={} needs mode='weight-only'", block_size));
  o.activations = *act;
  o.weights = *w;
  o.per_channel = !per_tensor;
  o.block_size = block_size;
  auto names = [](const py::object &v, const char *arg) {
    std::set<std::string> out;
    if (py::isinstance<py::str>(v) || !py::isinstance<py::iterable>(v))
      throw py::type_error(fmt::format("{}: expected a list of str, got {}", arg, type_name(v)));
    for (const py::handle &e : v) {
      if (!py::isinstance<py::str>(e))
        throw py::type_error(fmt::format("{}: expected a list of str, got an element of type {}",
                                         arg, type_name(e)));
      out.insert(py::str(e));
    }
    return out;
  };
  if (!op_types.is_none()) o.op_types = names(op_types, "op_types");
  if (!exclude.is_none()) o.exclude = names(exclude, "exclude");
  kiln::calibrate::CalibrationOptions c;
  c.percentile = method == "percentile";
  c.percent = percentile;
  c.missing = "calibrate=DIR (or mode='dynamic' / 'weight-only')";
  if (!calibrate.is_none()) {
    if (o.mode != kiln::onnx_fe::QuantMode::static_qdq)
      throw py::value_error(fmt::format("calibrate applies to mode='static' only, not '{}'",
                                        mode));
    c.dir = fspath(calibrate);
    std::error_code ec;
    if (!std::filesystem::is_directory(c.dir, ec))
      throw py::value_error(fmt::format("calibrate='{}': not a folder", c.dir));
    c.label = fmt::format("calibrate='{}'", c.dir);
  }
  const std::string in = fspath(model), out = fspath(output);
  kiln::Result<kiln::calibrate::QuantizeResult> r = kiln::Status::error("not quantised");
  {
    py::gil_scoped_release nogil;
    r = kiln::calibrate::quantize_model(in, out, o, c);
  }
  check(r.status());
  const kiln::onnx_fe::QuantizeSummary &s = r.value().summary;
  py::dict d;
  d["nodes"] = s.nodes;
  d["weights"] = s.weights;
  d["activations"] = s.activations;
  d["weight_bytes_before"] = s.weight_bytes_before;
  d["weight_bytes_after"] = s.weight_bytes_after;
  d["opset_from"] = s.opset_from;
  d["opset_to"] = s.opset_to;
  d["skipped"] = s.skipped;
  d["calibration_samples"] = r.value().samples;
  return d;
}

std::unique_ptr<Model> load(const py::object &source, const std::string &device) {
  const bool reference = device == "cpu-ref";
  if (py::isinstance<py::bytes>(source) || py::isinstance<py::bytearray>(source) ||
      py::isinstance<py::memoryview>(source)) {
    if (reference)
      throw Error("device 'cpu-ref' runs models, not artifacts: pass the model's path");
    py::buffer_info buf = py::reinterpret_borrow<py::buffer>(source).request();
    py::gil_scoped_release nogil; // the view keeps the bytes alive and unchanged
    return Model::from_artifact(device, buf.ptr, static_cast<size_t>(buf.size * buf.itemsize));
  }
  const std::string path = fspath(source);
  if (is_artifact_file(path)) {
    if (reference)
      throw Error(fmt::format("{}: device 'cpu-ref' runs models, not artifacts: pass the model's "
                              "path",
                              path));
    py::gil_scoped_release nogil;
    return Model::from_artifact_file(device, path);
  }
  if (reference) return Model::reference(import_model(path));
  // A model for a runtime device: compiled in-process for the device's target, as `kiln run`
  // does.
  kiln_device_info info{};
  check(kiln_device_describe(device.c_str(), &info));
  std::vector<uint8_t> bytes =
      compile_model(path, kiln::kir::target_for_device(info.driver, info.name), {});
  py::gil_scoped_release nogil;
  return Model::from_artifact(device, bytes.data(), bytes.size());
}

py::list devices() {
  py::list out;
  py::dict ref;
  ref["uri"] = "cpu-ref";
  ref["driver"] = "reference";
  ref["name"] = "kiln reference executor (runs models, not artifacts)";
  ref["type"] = "cpu";
  out.append(ref);
  size_t n = 0;
  check(kiln_devices_list(nullptr, 0, &n));
  std::vector<kiln_device_info> infos(n);
  check(kiln_devices_list(infos.data(), infos.size(), &n));
  for (size_t i = 0; i < n && i < infos.size(); ++i) {
    const kiln_device_info &d = infos[i];
    py::dict e;
    e["uri"] = d.uri;
    e["driver"] = d.driver;
    e["name"] = d.name;
    e["type"] = d.device_type;
    e["target"] = kiln::kir::target_for_device(d.driver, d.name);
    out.append(e);
  }
  return out;
}

py::tuple shape_tuple(const TensorInfo &info) {
  py::tuple t(info.shape.size());
  for (size_t i = 0; i < info.shape.size(); ++i)
    t[i] = info.shape[i] < 0 ? py::object(py::none()) : py::object(py::int_(info.shape[i]));
  return t;
}

py::object dtype_object(const TensorInfo &info) {
  return info.dtype == KILN_BF16 ? py::object(py::str("bf16"))
                                 : py::object(numpy_dtype(info.dtype));
}

// One array per input in signature order from a mapping (name -> value), a sequence
// (positional) or both. Values that are not arrays (lists, scalars) become arrays of the
// input's dtype; arrays keep theirs (kiln refuses a wrong one) and are used in place when they
// are C-contiguous, aligned and in native byte order.
std::vector<py::array> gather_inputs(const Model &m, const py::sequence &positional,
                                     const py::dict &named) {
  const auto &sig = m.inputs();
  std::vector<py::object> values(sig.size());
  std::vector<std::string> names;
  for (const auto &s : sig) names.push_back(s.name);
  if (py::len(positional) > sig.size())
    throw Error(fmt::format("expected at most {} inputs ({}), got {}", sig.size(), join(names),
                            py::len(positional)),
                "INVALID_ARGUMENT");
  for (size_t i = 0; i < py::len(positional); ++i) values[i] = positional[i];
  for (auto [key, value] : named) {
    std::string name = py::str(key);
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw Error(fmt::format("unknown input '{}' (the model's inputs: {})", name, join(names)),
                  "INVALID_ARGUMENT");
    size_t i = static_cast<size_t>(it - names.begin());
    if (values[i]) throw Error(fmt::format("input '{}' is given twice", name), "INVALID_ARGUMENT");
    values[i] = py::reinterpret_borrow<py::object>(value);
  }
  std::vector<py::array> arrays;
  py::object numpy = py::module_::import("numpy");
  for (size_t i = 0; i < sig.size(); ++i) {
    if (!values[i])
      throw Error(fmt::format("missing input '{}' (the model's inputs: {})", names[i], join(names)),
                  "INVALID_ARGUMENT");
    py::object v = values[i];
    if (!py::isinstance<py::array>(v)) v = numpy.attr("asarray")(v, dtype_object(sig[i]));
    py::array a = py::reinterpret_borrow<py::array>(v);
    if (!a.dtype().attr("isnative").cast<bool>())
      a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
    constexpr int kInPlace = static_cast<int>(py::array::c_style) |
                             static_cast<int>(py::detail::npy_api::NPY_ARRAY_ALIGNED_);
    arrays.push_back(py::array::ensure(a, kInPlace));
  }
  return arrays;
}

py::dict run(Model &m, const py::sequence &positional, const py::dict &named) {
  std::vector<py::array> outs = m.run(gather_inputs(m, positional, named));
  py::dict result;
  for (size_t i = 0; i < outs.size(); ++i) result[py::str(m.outputs()[i].name)] = outs[i];
  return result;
}

std::string info_repr(const TensorInfo &info) {
  std::string dims;
  for (int64_t d : info.shape) dims += (dims.empty() ? "" : ", ") + (d < 0 ? "None" : std::to_string(d));
  if (info.shape.size() == 1) dims += ",";
  return fmt::format("TensorInfo(name='{}', shape=({}), dtype={})", info.name, dims,
                     kiln_dtype_name(info.dtype));
}

} // namespace

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "kiln: compile ML models ahead of time and run them on Vulkan or the CPU";
  m.attr("__version__") = KILN_VERSION;

  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  error.doc() = "A kiln failure. str(e) is kiln's message; e.code is the runtime's status code "
                "name ('INVALID_ARGUMENT', 'NOT_FOUND', ...) or None for compiler errors.";
  error.attr("code") = py::none();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error &e) {
      py::object instance = py::handle(error.ptr())(e.what());
      instance.attr("code") = e.code().empty() ? py::object(py::none()) : py::str(e.code());
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });

  py::class_<TensorInfo>(m, "TensorInfo", "Name, shape and dtype of a model input or output.")
      .def_property_readonly("name", [](const TensorInfo &t) { return t.name; })
      .def_property_readonly("shape", &shape_tuple, "dimensions; None where dynamic (cpu-ref)")
      .def_property_readonly("dtype", &dtype_object, "a numpy dtype ('bf16' for bfloat16)")
      .def("__repr__", &info_repr);

  py::class_<Model>(m, "Module", "A model loaded on a device (kiln.load).")
      .def_property_readonly("device", &Model::device)
      .def_property_readonly("inputs", &Model::inputs, py::return_value_policy::copy)
      .def_property_readonly("outputs", &Model::outputs, py::return_value_policy::copy)
      .def(
          "run",
          [](Model &self, const py::object &inputs) {
            if (py::isinstance<py::dict>(inputs))
              return run(self, py::tuple(), py::reinterpret_borrow<py::dict>(inputs));
            if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs))
              return run(self, py::reinterpret_borrow<py::sequence>(inputs), py::dict());
            throw py::type_error("run() takes a dict {name: array} or a list of arrays in "
                                 "input order");
          },
          py::arg("inputs"),
          "Runs once. `inputs`: a dict {name: array} or a list of arrays in input order. "
          "Returns a dict {output name: numpy array}.")
      .def(
          "__call__",
          [](Model &self, const py::args &args, const py::kwargs &kwargs) {
            return run(self, args, kwargs);
          },
          "module(x) or module(input=x): as run(), inputs given by position or name.")
      .def("__repr__", [](const Model &self) {
        return fmt::format("<kiln.Module on '{}': {} inputs, {} outputs>", self.device(),
                           self.inputs().size(), self.outputs().size());
      });

  m.def("compile", &compile, py::arg("model"), py::kw_only(), py::arg("target"),
        py::arg("precision") = py::none(), py::arg("output") = py::none(),
        py::arg("schedule") = "auto", py::arg("max_error") = py::none(),
        py::arg("inputs") = py::none(),
        "Compiles a model file (ONNX, StableHLO .mlir, .tflite, NNEF) for `target` (see "
        "kiln.targets()). precision: None or 'fp32' (the model's dtypes), 'fp16' or 'bf16' "
        "(weights and activations stored in half precision, f32 accumulation, softmax / norms "
        "/ reductions kept f32, inputs and outputs as declared; as kiln compile --precision), "
        "or 'auto': fp16 with the nodes that break `max_error` (default 0.01 of each output's "
        "range) on calibration inputs kept f32, chosen on the reference executor and recorded "
        "in the artifact (as kiln compile --precision auto --max-error E --input NAME=FILE). "
        "inputs: {input name: array} for 'auto'; the others get the CLI's seeded random data. "
        "Returns the artifact's bytes, or writes them to `output` and returns None.");
  m.def("quantize", &quantize, py::arg("model"), py::arg("output"), py::kw_only(),
        py::arg("mode") = "static", py::arg("calibrate") = py::none(),
        py::arg("method") = "minmax", py::arg("percentile") = 99.999,
        py::arg("activations") = "u8", py::arg("weights") = "i8", py::arg("per_tensor") = false,
        py::arg("block_size") = 0, py::arg("op_types") = py::none(),
        py::arg("exclude") = py::none(),
        "Post-training quantisation of an ONNX model into a QDQ ONNX model written to `output` "
        "(as kiln quantize). mode: 'static' (calibrated activations and weights; calibrate: a "
        "folder of INPUT.npy files, or one subfolder of them per sample), 'dynamic' (weights; "
        "activations quantised per call) or 'weight-only' (weights='i8' or 'i4', block_size: "
        "one scale per block along the reduction axis). method: 'minmax' or 'percentile' "
        "(percentile: the range kept, in percent). activations: 'u8' or 'i8'; weights: 'i8' or "
        "'u8'; per_tensor: one weight scale per tensor. op_types (default Conv, MatMul, Gemm) "
        "and exclude (node names left in float): lists of str. Returns a summary dict.");
  m.def("load", &load, py::arg("artifact"), py::kw_only(), py::arg("device") = "vulkan",
        "Loads an artifact (bytes, or a .kiln file) onto `device` ('vulkan', 'vulkan:N', "
        "'cpu', 'null'); a model file is compiled for the device first. device='cpu-ref' runs "
        "a model file on the reference executor.");
  m.def("devices", &devices, "The devices kiln can run on, as dicts (uri, driver, name, ...).");
  m.def("targets", &kiln::kir::target_names, "The compile targets kiln.compile accepts.");
}
