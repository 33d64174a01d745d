// Internal to src/kir: node allocation and operand checks shared by the factory files.
#pragma once

#include "kir/kir.h"

#include <memory>

namespace kiln::kir::detail {

template <class T> std::shared_ptr<T> node(const ValueType &t) {
  auto n = std::make_shared<T>();
  n->kind = T::node_kind;
  n->type = t.elem;
  n->lanes = t.lanes;
  n->matrix = t.matrix;
  return n;
}

template <class T> std::shared_ptr<T> stmt_node() {
  auto n = std::make_shared<T>();
  n->kind = T::node_kind;
  return n;
}

inline bool is_index_type(ScalarType t) { return t == ScalarType::i32 || t == ScalarType::u32; }

// A defined scalar i32 or u32.
inline bool is_index(const Expr &e) {
  return e.defined() && e.is_scalar() && is_index_type(e.type());
}

inline void check_operands(const Expr &a, const Expr &b) {
  KILN_ASSERT(a.defined() && b.defined(), "kir: undefined operand");
  KILN_ASSERT(a.value_type() == b.value_type(), "kir: operand types differ");
}

} // namespace kiln::kir::detail
