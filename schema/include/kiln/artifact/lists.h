/* The one list of element types and the one list of device features, shared by the compiler
 * (support/dtype.h, kir/target.h, the artifact writer) and the runtime (C API tables, artifact
 * reader, driver capability checks). Plain preprocessor lists, usable from C and C++; nothing
 * else is defined here.
 *
 * Places that cannot expand a list keep their own copy, checked against it:
 *   - schema/kiln.fbs `DType` (flatc): the artifact writer static_asserts each value;
 *   - include/kiln/kiln.h `kiln_dtype` (a public C enum with stable values) and the int
 *     feature fields of `kiln_device_info`: the runtime static_asserts each value and reads
 *     each field by name;
 *   - schema/kiln.fbs `Requirements` fields: the writer and reader name each field. */
#ifndef KILN_ARTIFACT_LISTS_H
#define KILN_ARTIFACT_LISTS_H

/* X(id, text, api, bytes, c_enum, fb): `id` names kiln::DType::id and kiln::fb::DType::fb;
 * `text` is the graph IR's spelling, `api` kiln_dtype_name's; `bytes` per element (booleans
 * one byte). The position is the value in the artifact, the C API and kiln::DType. Append
 * only (artifacts store the value). */
#define KILN_DTYPES(X)                                                                          \
  X(f32, "f32", "f32", 4, KILN_F32, f32)                                                        \
  X(f16, "f16", "f16", 2, KILN_F16, f16)                                                        \
  X(bf16, "bf16", "bf16", 2, KILN_BF16, bf16)                                                   \
  X(f64, "f64", "f64", 8, KILN_F64, f64)                                                        \
  X(i8, "i8", "i8", 1, KILN_I8, i8)                                                             \
  X(u8, "u8", "u8", 1, KILN_U8, u8)                                                             \
  X(i16, "i16", "i16", 2, KILN_I16, i16)                                                        \
  X(u16, "u16", "u16", 2, KILN_U16, u16)                                                        \
  X(i32, "i32", "i32", 4, KILN_I32, i32)                                                        \
  X(u32, "u32", "u32", 4, KILN_U32, u32)                                                        \
  X(i64, "i64", "i64", 8, KILN_I64, i64)                                                        \
  X(u64, "u64", "u64", 8, KILN_U64, u64)                                                        \
  X(boolean, "i1", "bool", 1, KILN_BOOL, bool_)

/* Yes/no device features a kernel may need: X(field, name). `field` names the member of
 * kir::TargetDesc (offered), kir::Requirements and the runtime's Requirements (needed), the
 * schema's Requirements table and kiln_device_info (offered by an open device); `name` is the
 * Vulkan feature or extension reported when a device lacks it. Numeric limits (subgroup size,
 * shared memory, workgroup invocations, loop iterations) are separate fields. */
#define KILN_DEVICE_FEATURES(X)                                                                 \
  X(float16, "shaderFloat16")                                                                   \
  X(float64, "shaderFloat64")                                                                   \
  X(int8, "shaderInt8")                                                                         \
  X(int16, "shaderInt16")                                                                       \
  X(int64, "shaderInt64")                                                                       \
  X(storage8, "storageBuffer8BitAccess")                                                        \
  X(storage16, "storageBuffer16BitAccess")                                                      \
  X(cooperative_matrix, "VK_KHR_cooperative_matrix")

#endif
