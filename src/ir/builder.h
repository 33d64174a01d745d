// Builds graph IR: creates ops by name, infers result types immediately and, when every
// operand is a small constant, folds the op through its reference implementation so that
// shape sub-graphs become constants as they are imported.
#pragma once

#include "ir/op_registry.h"

namespace kiln {

class Builder {
public:
  Builder(const OpRegistry &ops, Graph &g) : ops_(&ops), g_(&g) {}
  const OpRegistry &ops() const { return *ops_; }

  Graph &graph() { return *g_; }
  void set_graph(Graph &g) { g_ = &g; }
  void set_loc(std::string loc) { loc_ = std::move(loc); }
  const std::string &loc() const { return loc_; }
  // Constant folding at build time (on by default; element cap per folded result).
  void set_fold_limit(int64_t max_elements) { fold_limit_ = max_elements; }

  // Creates `name` (e.g. "kiln.add") and returns its results.
  Result<std::vector<Value *>> create(std::string_view name, std::vector<Value *> operands,
                                      AttrMap attrs = {}, int num_results = 1);
  // Single-result convenience.
  Result<Value *> create1(std::string_view name, std::vector<Value *> operands,
                          AttrMap attrs = {});
  // Ops with regions: the caller fills the regions before types are inferred.
  Result<std::vector<Value *>> create_with_regions(std::string_view name,
                                                   std::vector<Value *> operands, AttrMap attrs,
                                                   std::vector<std::unique_ptr<Graph>> regions,
                                                   int num_results);

  Value *constant(Tensor t, std::string name = {});
  Value *scalar_f(DType dt, double v) { return constant(Tensor::scalar_f64(dt, v)); }
  Value *scalar_i(DType dt, int64_t v) { return constant(Tensor::scalar_i64(dt, v)); }
  Value *i64s(const std::vector<int64_t> &v) { return constant(Tensor::from_i64s(v)); }

  // The value of `v` when it is defined by kiln.constant, else nullptr.
  static const Tensor *constant_value(const Value *v);

private:
  const OpRegistry *ops_;
  Graph *g_;
  std::string loc_;
  int64_t fold_limit_ = 1 << 16;
};

} // namespace kiln
