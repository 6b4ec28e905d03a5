//===- TensorAttributes.cpp - dtype, device, layout, memory format --------===//
#include "ir/TensorAttributes.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::ir {

/// The enumerator whose spelling is \p text, for enums spelled by a table
/// indexed by their values.
template <typename Enum, size_t N>
static std::optional<Enum> lookup(const llvm::StringLiteral (&spellings)[N], llvm::StringRef text) {
  for (auto [index, spelling] : llvm::enumerate(spellings))
    if (spelling == text)
      return static_cast<Enum>(index);
  return std::nullopt;
}

static constexpr llvm::StringLiteral dtypeSpellings[] = {
    "f32", "f64", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool", "c64", "c128"};
static constexpr llvm::StringLiteral dtypeTorchNames[] = {
    "float32", "float64", "float16", "bfloat16", "int64",     "int32",
    "int16",   "int8",    "uint8",   "bool",     "complex64", "complex128"};
static constexpr llvm::StringLiteral deviceSpellings[] = {"cpu", "cuda", "meta"};
static constexpr llvm::StringLiteral layoutSpellings[] = {"strided",    "sparse_coo", "sparse_csr",
                                                          "sparse_csc", "sparse_bsr", "sparse_bsc",
                                                          "_mkldnn",    "jagged"};
static constexpr llvm::StringLiteral memoryFormatSpellings[] = {
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"};

llvm::StringRef spelling(DType dtype) { return dtypeSpellings[static_cast<size_t>(dtype)]; }
std::optional<DType> parseDType(llvm::StringRef text) {
  return lookup<DType>(dtypeSpellings, text);
}

llvm::StringRef torchName(DType dtype) { return dtypeTorchNames[static_cast<size_t>(dtype)]; }
std::optional<DType> dtypeOfTorchName(llvm::StringRef name) {
  return lookup<DType>(dtypeTorchNames, name);
}

llvm::StringRef spelling(DeviceKind kind) { return deviceSpellings[static_cast<size_t>(kind)]; }
std::optional<DeviceKind> parseDeviceKind(llvm::StringRef text) {
  return lookup<DeviceKind>(deviceSpellings, text);
}

void Device::print(llvm::raw_ostream& os) const {
  os << spelling(kind);
  if (index >= 0)
    os << ':' << index;
}

llvm::StringRef spelling(Layout layout) { return layoutSpellings[static_cast<size_t>(layout)]; }
std::optional<Layout> parseLayout(llvm::StringRef text) {
  return lookup<Layout>(layoutSpellings, text);
}

llvm::StringRef spelling(MemoryFormat format) {
  return memoryFormatSpellings[static_cast<size_t>(format)];
}
std::optional<MemoryFormat> parseMemoryFormat(llvm::StringRef text) {
  return lookup<MemoryFormat>(memoryFormatSpellings, text);
}

} // namespace dync::ir
