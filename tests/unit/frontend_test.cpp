// ONNX import edge cases: bad files, external data confinement, input checking.
#include "exec/executor.h"
#include "frontend/onnx/importer.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(KILN_SOURCE_DIR) / ".." / "shared";

std::string read_all(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(OnnxImport, GarbageIsAClearError) {
  auto r = onnx_fe::import_bytes("this is not a protobuf \x01\x02\x03", "");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("not a valid ONNX model"), std::string::npos)
      << r.status().message();
}

TEST(OnnxImport, MissingFileIsAClearError) {
  auto r = onnx_fe::import_file("/nonexistent/model.onnx");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("cannot read"), std::string::npos);
}

TEST(OnnxImport, TruncatedModelNeverCrashes) {
  fs::path model = fs::path(KILN_SOURCE_DIR) / "models" / "squeezenet1_1.onnx";
  std::string bytes = read_all(model);
  ASSERT_GT(bytes.size(), 1000u);
  // Every prefix length class: header only, mid-weights, one byte short.
  for (size_t n : {size_t(1), size_t(17), bytes.size() / 3, bytes.size() - 1}) {
    auto r = onnx_fe::import_bytes(bytes.substr(0, n), model.parent_path().string());
    EXPECT_FALSE(r.is_ok()) << "prefix of " << n << " bytes was accepted";
  }
}

TEST(OnnxImport, SqueezenetSignatureAndWrongInputs) {
  fs::path model = fs::path(KILN_SOURCE_DIR) / "models" / "squeezenet1_1.onnx";
  auto r = onnx_fe::import_file(model.string());
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Function &f = *r.value()->main();
  ASSERT_EQ(f.body.params.size(), 1u);
  EXPECT_EQ(f.body.params[0]->name, "input");
  EXPECT_EQ(f.body.params[0]->type.str(), "tensor<1x3x224x224xf32>");

  Status wrong_count = check_inputs(f, {});
  ASSERT_FALSE(wrong_count.is_ok());
  EXPECT_NE(wrong_count.message().find("expected 1 inputs, got 0"), std::string::npos);

  Status wrong_shape = check_inputs(f, {Tensor(DType::f32, {1, 3, 224, 225})});
  ASSERT_FALSE(wrong_shape.is_ok());
  EXPECT_NE(wrong_shape.message().find("input 'input'"), std::string::npos) << wrong_shape.message();
  EXPECT_NE(wrong_shape.message().find("tensor<1x3x224x224xf32>"), std::string::npos);

  Status wrong_dtype = check_inputs(f, {Tensor(DType::f16, {1, 3, 224, 224})});
  ASSERT_FALSE(wrong_dtype.is_ok());
  EXPECT_NE(wrong_dtype.message().find("f16"), std::string::npos);
}

TEST(OnnxImport, ReadsTensorProtoTestData) {
  fs::path pb = kShared / "onnx-tests" / "node" / "test_add" / "test_data_set_0" / "input_0.pb";
  if (!fs::exists(pb)) GTEST_SKIP() << "../shared/onnx-tests is absent";
  auto t = onnx_fe::read_tensor_pb(pb.string());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t.value().dtype(), DType::f32);
  EXPECT_EQ(t.value().shape(), (Shape{3, 4, 5}));
}

} // namespace
} // namespace kiln
