//===- TensorAttributes.h - dtype, device, layout, memory format -*- C++ -*-===//
//
// The closed torch enumerations that describe tensors and appear as operator
// arguments (torch calls them tensor attributes). Each has one spelling in the
// text form: dtypes compactly (`f32` is torch.float32), the others as torch
// names them (`cuda:0`, `strided`, `contiguous_format`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

namespace dync::ir {

/// torch.float32 ... torch.complex128, in the order of their spellings:
/// f32 f64 f16 bf16 i64 i32 i16 i8 u8 bool c64 c128.
enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, I16, I8, U8, Bool, C64, C128 };

llvm::StringRef spelling(DType dtype);
std::optional<DType> parseDType(llvm::StringRef spelling);
/// torch's attribute name for \p dtype (`float32` for torch.float32).
llvm::StringRef torchName(DType dtype);
std::optional<DType> dtypeOfTorchName(llvm::StringRef name);

enum class DeviceKind : uint8_t { CPU, CUDA, Meta };

llvm::StringRef spelling(DeviceKind kind);
std::optional<DeviceKind> parseDeviceKind(llvm::StringRef spelling);

/// `cpu`, `cuda`, `cuda:0`, `meta`: torch.device's spelling.
struct Device {
  DeviceKind kind = DeviceKind::CPU;
  /// -1 when no index was given.
  int index = -1;

  void print(llvm::raw_ostream& os) const;
  friend bool operator==(const Device&, const Device&) = default;
};

/// torch.layout: strided sparse_coo sparse_csr sparse_csc sparse_bsr
/// sparse_bsc _mkldnn jagged.
enum class Layout : uint8_t {
  Strided,
  SparseCoo,
  SparseCsr,
  SparseCsc,
  SparseBsr,
  SparseBsc,
  Mkldnn,
  Jagged
};

llvm::StringRef spelling(Layout layout);
std::optional<Layout> parseLayout(llvm::StringRef spelling);

/// torch.memory_format: contiguous_format channels_last channels_last_3d
/// preserve_format.
enum class MemoryFormat : uint8_t { Contiguous, ChannelsLast, ChannelsLast3d, Preserve };

llvm::StringRef spelling(MemoryFormat format);
std::optional<MemoryFormat> parseMemoryFormat(llvm::StringRef spelling);

} // namespace dync::ir
