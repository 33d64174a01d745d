// libFuzzer target: ONNX import of a ModelProto written in protobuf text format. Byte mutations
// of text reach what binary mutations rarely do: other op types, attribute values, dims and
// opsets on an otherwise well-formed model. The text is parsed with protobuf's TextFormat,
// serialized, and imported exactly as fuzz_onnx imports bytes.
#include "onnx_import_check.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  std::string text(reinterpret_cast<const char *>(data), size);
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  struct Quiet : google::protobuf::io::ErrorCollector {
    void AddError(int, int, const std::string &) override {}
    void AddWarning(int, int, const std::string &) override {}
  } quiet;
  parser.RecordErrorsTo(&quiet);
  if (!parser.ParseFromString(text, &model)) return 0;
  std::string bytes;
  if (!model.SerializePartialToString(&bytes)) return 0;
  kiln::fuzz::import_and_check(bytes);
  return 0;
}
