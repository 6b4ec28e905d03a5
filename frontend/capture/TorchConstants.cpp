//===- TorchConstants.cpp - Guards on torch's dtype and device objects ----===//
#include "frontend/capture/TorchConstants.h"

#include "frontend/embedding/PyStrings.h"
#include "ir/TensorAttributes.h"

#include "llvm/ADT/StringRef.h"

namespace dync::capture {

std::optional<TorchConstantKind> torchConstantKind(PyObject* object, const TorchTypes& types) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  if (type == types.dtype.get())
    return TorchConstantKind::DType;
  if (type == types.device.get())
    return TorchConstantKind::Device;
  if (type == types.layout.get())
    return TorchConstantKind::Layout;
  if (type == types.memoryFormat.get())
    return TorchConstantKind::MemoryFormat;
  return std::nullopt;
}

std::optional<ir::Argument> torchConstantArgument(PyObject* object, TorchConstantKind kind) {
  // str() of each is torch's own spelling: `torch.float16`, `cuda:0`,
  // `torch.strided`, `torch.channels_last`.
  std::string text = python::strOf(object);
  llvm::StringRef name(text);
  bool qualified = name.consume_front("torch.");
  switch (kind) {
  case TorchConstantKind::DType:
    if (std::optional<ir::DType> dtype = qualified ? ir::dtypeOfTorchName(name) : std::nullopt)
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
