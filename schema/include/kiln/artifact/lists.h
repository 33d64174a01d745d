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
 * only (artifacts store the value).
 *
 * The narrow types after bool are held one element per byte everywhere in kiln (tensors, .npy,
 * the artifact, the C API): i4/i2 as a sign-extended int8, u4/u2 as a uint8 in range, the
 * float8/float4/e8m0 types as their bit pattern in the low bits. Only the ONNX importer sees
 * them packed (two 4-bit or four 2-bit elements a byte, low bits first). */
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
  X(boolean, "i1", "bool", 1, KILN_BOOL, bool_)                                                \
  X(i4, "i4", "i4", 1, KILN_I4, i4)                                                             \
  X(u4, "u4", "u4", 1, KILN_U4, u4)                                                             \
  X(i2, "i2", "i2", 1, KILN_I2, i2)                                                             \
  X(u2, "u2", "u2", 1, KILN_U2, u2)                                                             \
  X(f8e4m3fn, "f8e4m3fn", "f8e4m3fn", 1, KILN_F8E4M3FN, f8e4m3fn)                               \
  X(f8e4m3fnuz, "f8e4m3fnuz", "f8e4m3fnuz", 1, KILN_F8E4M3FNUZ, f8e4m3fnuz)                     \
  X(f8e5m2, "f8e5m2", "f8e5m2", 1, KILN_F8E5M2, f8e5m2)                                         \
  X(f8e5m2fnuz, "f8e5m2fnuz", "f8e5m2fnuz", 1, KILN_F8E5M2FNUZ, f8e5m2fnuz)                     \
  X(f4e2m1, "f4e2m1", "f4e2m1", 1, KILN_F4E2M1, f4e2m1)                                         \
  X(f8e8m0, "f8e8m0", "f8e8m0", 1, KILN_F8E8M0, f8e8m0)

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
