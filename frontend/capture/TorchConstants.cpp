//===- TorchConstants.cpp - Guards on torch's dtype and device objects ----===//
#include "frontend/capture/TorchConstants.h"

#include "frontend/embedding/PyStrings.h"
#include "ir/TensorAttributes.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

namespace dync::capture {

namespace {

/// The IR's dtype for torch's name of one (`float16`, as
/// torch.float16.__reduce__() gives it).
std::optional<ir::DType> dtypeNamed(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ir::DType>>(name)
      .Case("float32", ir::DType::F32)
      .Case("float64", ir::DType::F64)
      .Case("float16", ir::DType::F16)
      .Case("bfloat16", ir::DType::BF16)
      .Case("int64", ir::DType::I64)
      .Case("int32", ir::DType::I32)
      .Case("int16", ir::DType::I16)
      .Case("int8", ir::DType::I8)
      .Case("uint8", ir::DType::U8)
      .Case("bool", ir::DType::Bool)
      .Case("complex64", ir::DType::C64)
      .Case("complex128", ir::DType::C128)
      .Default(std::nullopt);
}

} // namespace

std::optional<ir::Argument> torchConstantArgument(PyObject* object, TorchConstantKind kind) {
  // str() of each is torch's own spelling: `torch.float16`, `cuda:0`,
  // `torch.strided`, `torch.channels_last`.
  std::string text = python::strOf(object);
  llvm::StringRef name(text);
  bool qualified = name.consume_front("torch.");
  switch (kind) {
  case TorchConstantKind::DType:
    if (std::optional<ir::DType> dtype = qualified ? dtypeNamed(name) : std::nullopt)
      return ir::Argument::dtype(*dtype);
    return std::nullopt;
  case TorchConstantKind::Device: {
    auto [kindText, indexText] = name.split(':');
    std::optional<ir::DeviceKind> deviceKind = ir::parseDeviceKind(kindText);
    ir::Device device{deviceKind.value_or(ir::DeviceKind::CPU), -1};
    if (qualified || !deviceKind ||
        (!indexText.empty() && indexText.getAsInteger(10, device.index)))
      return std::nullopt;
    return ir::Argument::device(device);
  }
  case TorchConstantKind::Layout:
    if (std::optional<ir::Layout> layout = qualified ? ir::parseLayout(name) : std::nullopt)
      return ir::Argument::layout(*layout);
    return std::nullopt;
  case TorchConstantKind::MemoryFormat:
    if (std::optional<ir::MemoryFormat> format =
            qualified ? ir::parseMemoryFormat(name) : std::nullopt)
      return ir::Argument::memoryFormat(*format);
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace dync::capture
