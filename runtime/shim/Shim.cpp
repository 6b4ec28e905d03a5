//===- Shim.cpp - The stable C shim over ATen's dispatcher ----------------===//
//
// The one translation unit that knows libtorch's C++ API (apart from the small
// Python bridge in ShimPython.cpp). It includes only ATen/core and c10
// headers (the dispatcher, IValue and the schema types), plus ATen's CPU
// allocation for generated kernels; no operator
// declarations, which keeps it quick to compile.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/OutputCache.h"
#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/GradMode.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <torch/headeronly/version.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

// The enum values in the C header are part of the artifact ABI; they must be
// c10's.
static_assert(static_cast<int>(c10::ScalarType::Byte) == DYNC_DTYPE_UINT8);
static_assert(static_cast<int>(c10::ScalarType::Char) == DYNC_DTYPE_INT8);
static_assert(static_cast<int>(c10::ScalarType::Short) == DYNC_DTYPE_INT16);
static_assert(static_cast<int>(c10::ScalarType::Int) == DYNC_DTYPE_INT32);
static_assert(static_cast<int>(c10::ScalarType::Long) == DYNC_DTYPE_INT64);
static_assert(static_cast<int>(c10::ScalarType::Half) == DYNC_DTYPE_FLOAT16);
static_assert(static_cast<int>(c10::ScalarType::Float) == DYNC_DTYPE_FLOAT32);
static_assert(static_cast<int>(c10::ScalarType::Double) == DYNC_DTYPE_FLOAT64);
static_assert(static_cast<int>(c10::ScalarType::ComplexHalf) == DYNC_DTYPE_COMPLEX32);
static_assert(static_cast<int>(c10::ScalarType::ComplexFloat) == DYNC_DTYPE_COMPLEX64);
static_assert(static_cast<int>(c10::ScalarType::ComplexDouble) == DYNC_DTYPE_COMPLEX128);
static_assert(static_cast<int>(c10::ScalarType::Bool) == DYNC_DTYPE_BOOL);
static_assert(static_cast<int>(c10::ScalarType::BFloat16) == DYNC_DTYPE_BFLOAT16);
static_assert(static_cast<int>(c10::DeviceType::CPU) == DYNC_DEVICE_CPU);
static_assert(static_cast<int>(c10::DeviceType::CUDA) == DYNC_DEVICE_CUDA);
static_assert(static_cast<int>(c10::DeviceType::Meta) == DYNC_DEVICE_META);

namespace dync::shim {

/// What an argument of a schema accepts, by kind: decided once per operator
/// when it is looked up, so a call checks each pushed value with a switch
/// instead of walking the schema's type objects.
enum class Accepts : uint8_t {
  Tensor,
  Int,   // int, SymInt, ScalarType, Layout, MemoryFormat
  Float, // float, SymFloat; an int is promoted in place
  Bool,
  Number, // Scalar
  String,
  Device,
  Generator,
  TensorList,
  IntList,
  DoubleList,
  BoolList,
  List, // Tensor?[] and the rarer element kinds
  Any,  // kinds ATen operators do not take; the kernel's unboxing decides
};

struct ArgumentCheck {
  Accepts accepts;
  bool optional; // None fits too
  /// The schema's default, copied so a call never reads the schema.
  std::optional<c10::IValue> defaultValue;
};

} // namespace dync::shim

struct dync_op {
  c10::OperatorHandle handle;
  std::string qualifiedName;
  std::string schemaText;
  std::vector<dync::shim::ArgumentCheck> checks;
};

struct dync_stack {
  // Arguments until dync_op_call, results after it.
  std::vector<c10::IValue> values;
  // Parallel to `values` while they are arguments: take the schema default.
  std::vector<bool> useDefault;
  // The first failed push since the last clear, reported by dync_op_call.
  std::string pushError;
  // `values` are the last call's results; the next push starts a new call,
  // so generated code never has to clear between nodes.
  bool holdsResults = false;

  void beginArguments() {
    if (holdsResults) {
      values.clear();
      holdsResults = false;
    }
  }
};

namespace dync::shim {

namespace {
thread_local std::string lastError;
} // namespace

dync_status fail(dync_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

const char* lastErrorMessage() { return lastError.c_str(); }

c10::TensorImpl* toImpl(const dync_tensor* t) {
  return reinterpret_cast<c10::TensorImpl*>(const_cast<dync_tensor*>(t));
}

at::Tensor toTensor(const dync_tensor* t) {
  // A new owning at::Tensor; the handle keeps its own reference.
  return at::Tensor(
      c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::reclaim_copy(toImpl(t)));
}

dync_tensor* releaseToHandle(at::Tensor&& t) {
  if (!t.defined())
    return nullptr;
  return reinterpret_cast<dync_tensor*>(t.unsafeReleaseTensorImpl());
}

std::vector<c10::IValue>& stackArguments(dync_stack* stack, const std::string** pushError) {
  stack->beginArguments();
  *pushError = &stack->pushError;
  return stack->values;
}

void setStackResults(dync_stack* stack, std::vector<c10::IValue> results) {
  stack->values = std::move(results);
  stack->useDefault.clear();
  stack->pushError.clear();
  stack->holdsResults = true;
}

} // namespace dync::shim

using namespace dync::shim;

namespace {

// Runs `body`, turning every exception into a status and message: nothing may
// unwind into C callers.
template <typename Body> dync_status guarded(dync_status onError, Body&& body) {
  try {
    return body();
  } catch (const c10::Error& e) {
    return fail(onError, e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    return fail(DYNC_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(onError, e.what());
  } catch (...) {
    return fail(DYNC_ERR_INTERNAL, "unknown C++ exception");
  }
}

dync_status push(dync_stack* stack, c10::IValue value, bool useDefault = false) {
  if (!stack)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "NULL dync_stack");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    stack->beginArguments();
    stack->values.push_back(std::move(value));
    stack->useDefault.push_back(useDefault);
    return DYNC_OK;
  });
}

dync_status pushFailed(dync_stack* stack, std::string message) {
  if (stack) {
    stack->beginArguments();
    if (stack->pushError.empty())
      stack->pushError = message;
  }
  return fail(DYNC_ERR_INVALID_ARGUMENT, std::move(message));
}

// The kind an argument of schema type `type` accepts. By kind only:
// building a value's full type (IValue::type()) would compute a complete
// tensor type for every argument of every call.
dync::shim::ArgumentCheck classify(const c10::Argument& arg) {
  using dync::shim::Accepts;
  const c10::TypePtr* type = &arg.real_type();
  bool optional = false;
  while ((*type)->kind() == c10::TypeKind::OptionalType) {
    optional = true;
    type = &(*type)->castRaw<c10::OptionalType>()->getElementType();
  }
  auto accepts = [&]() {
    switch ((*type)->kind()) {
    case c10::TypeKind::TensorType:
      return Accepts::Tensor;
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
      return Accepts::Int;
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType:
      return Accepts::Float;
    case c10::TypeKind::BoolType:
    case c10::TypeKind::SymBoolType:
      return Accepts::Bool;
    case c10::TypeKind::NumberType:
      return Accepts::Number;
    case c10::TypeKind::StringType:
      return Accepts::String;
    case c10::TypeKind::DeviceObjType:
      return Accepts::Device;
    case c10::TypeKind::GeneratorType:
      return Accepts::Generator;
    case c10::TypeKind::ListType:
      switch ((*type)->castRaw<c10::ListType>()->getElementType()->kind()) {
      case c10::TypeKind::TensorType:
        return Accepts::TensorList;
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType:
        return Accepts::IntList;
      case c10::TypeKind::FloatType:
        return Accepts::DoubleList;
      case c10::TypeKind::BoolType:
        return Accepts::BoolList;
      default:
        return Accepts::List;
      }
    default:
      return Accepts::Any;
    }
  };
  return {accepts(), optional, arg.default_value()};
}

// Whether `value` can be passed where `check` says. Lossless int->float
// promotion is applied in place because generated code may not know whether
// an argument is `float` or `Scalar`.
bool fits(c10::IValue& value, const dync::shim::ArgumentCheck& check) {
  using dync::shim::Accepts;
  if (check.optional && value.isNone())
    return true;
  switch (check.accepts) {
  case Accepts::Tensor:
    return value.isTensor();
  case Accepts::Int:
    return value.isInt() || value.isSymInt();
  case Accepts::Float:
    if (value.isInt())
      value = c10::IValue(static_cast<double>(value.toInt()));
    return value.isDouble() || value.isSymFloat();
  case Accepts::Bool:
    return value.isBool() || value.isSymBool();
  case Accepts::Number:
    return value.isInt() || value.isDouble() || value.isBool() || value.isComplexDouble() ||
           value.isSymInt() || value.isSymFloat();
  case Accepts::String:
    return value.isString();
  case Accepts::Device:
    return value.isDevice();
  case Accepts::Generator:
    return value.isGenerator();
  case Accepts::TensorList:
    return value.isTensorList();
  case Accepts::IntList:
    return value.isIntList();
  case Accepts::DoubleList:
    return value.isDoubleList();
  case Accepts::BoolList:
    return value.isBoolList();
  case Accepts::List:
    return value.isList();
  case Accepts::Any:
    return true;
  }
  return true;
}

const char* kindName(const c10::IValue& v) {
  if (v.isNone())
    return "None";
  if (v.isTensor())
    return "Tensor";
  if (v.isInt())
    return "int";
  if (v.isDouble())
    return "float";
  if (v.isBool())
    return "bool";
  if (v.isString())
    return "str";
  if (v.isTensorList())
    return "Tensor[]";
  if (v.isIntList())
    return "int[]";
  if (v.isDoubleList())
    return "float[]";
  if (v.isBoolList())
    return "bool[]";
  if (v.isList())
    return "list";
  if (v.isDevice())
    return "Device";
  return v.tagKind().c_str();
}

// Completes the pushed arguments with schema defaults and checks every one
// against the schema, so the boxed kernel never sees a stack it would read
// out of bounds or mis-unbox. Reads only the checks made at lookup; the
// schema itself is consulted for error messages.
dync_status prepareArguments(const dync_op& op, dync_stack& stack) {
  const std::vector<dync::shim::ArgumentCheck>& checks = op.checks;
  if (stack.values.size() > checks.size())
    return fail(DYNC_ERR_SCHEMA_MISMATCH,
                op.qualifiedName + " takes " + std::to_string(checks.size()) + " arguments but " +
                    std::to_string(stack.values.size()) + " were pushed; schema: " + op.schemaText);
  stack.values.reserve(checks.size());
  for (size_t i = 0; i < checks.size(); ++i) {
    const dync::shim::ArgumentCheck& check = checks[i];
    bool pushed = i < stack.values.size();
    if (!pushed || stack.useDefault[i]) {
      if (!check.defaultValue)
        return fail(DYNC_ERR_SCHEMA_MISMATCH,
                    op.qualifiedName + ": argument " + std::to_string(i) + " '" +
                        op.handle.schema().arguments()[i].name() +
                        "' has no default and was not given; schema: " + op.schemaText);
      if (pushed)
        stack.values[i] = *check.defaultValue;
      else
        stack.values.push_back(*check.defaultValue);
      continue;
    }
    if (!fits(stack.values[i], check)) {
      const c10::Argument& arg = op.handle.schema().arguments()[i];
      std::ostringstream os;
      os << op.qualifiedName << ": argument " << i << " '" << arg.name() << "' expects "
         << arg.real_type()->str() << " but got " << kindName(stack.values[i])
         << "; schema: " << op.schemaText;
      return fail(DYNC_ERR_SCHEMA_MISMATCH, os.str());
    }
  }
  stack.useDefault.clear();
  return DYNC_OK;
}

dync_status resultAt(dync_stack* stack, size_t index, const void* out) {
  if (!stack || !out)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "NULL stack or out-parameter");
  if (index >= stack->values.size())
    return fail(DYNC_ERR_INVALID_ARGUMENT, "result index " + std::to_string(index) +
                                               " out of range (" +
                                               std::to_string(stack->values.size()) + " results)");
  return DYNC_OK;
}

dync_status wrongKind(const dync_stack* stack, size_t index, const char* wanted) {
  return fail(DYNC_ERR_INVALID_ARGUMENT, std::string("result ") + std::to_string(index) + " is " +
                                             kindName(stack->values[index]) + ", not " + wanted);
}

// The take_* of a single result: checks the index and the kind (`is`, named
// `wanted` in the error), then stores `convert` of the value in *out.
template <typename T, typename Convert>
dync_status takeResult(dync_stack* stack, size_t index, T* out, const char* wanted,
                       bool (c10::IValue::*is)() const, Convert convert) {
  if (dync_status s = resultAt(stack, index, out); s != DYNC_OK)
    return s;
  const c10::IValue& v = stack->values[index];
  if (!(v.*is)())
    return wrongKind(stack, index, wanted);
  *out = convert(v);
  return DYNC_OK;
}

std::mutex opTableMutex;
// Handles are never freed: generated code caches them in globals for the life
// of the process, and the dispatcher's own handles are equally permanent.
std::map<std::pair<std::string, std::string>, std::unique_ptr<dync_op>>& opTable() {
  static auto* table = new std::map<std::pair<std::string, std::string>, std::unique_ptr<dync_op>>;
  return *table;
}

} // namespace

extern "C" {

const char* dync_last_error(void) { return lastErrorMessage(); }

int dync_shim_abi_version(void) { return DYNC_SHIM_ABI_VERSION; }

const char* dync_shim_torch_version(void) { return TORCH_VERSION; }

dync_status dync_op_lookup(const char* name, const char* overload, dync_op** out) {
  if (!name || !out)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_op_lookup: NULL name or out-parameter");
  *out = nullptr;
  std::string overloadName = overload ? overload : "";
  // Python spells the unnamed overload "default"; the dispatcher spells it "".
  if (overloadName == "default")
    overloadName.clear();
  return guarded(DYNC_ERR_INTERNAL, [&] {
    std::lock_guard<std::mutex> lock(opTableMutex);
    auto key = std::make_pair(std::string(name), overloadName);
    auto it = opTable().find(key);
    if (it != opTable().end()) {
      *out = it->second.get();
      return DYNC_OK;
    }
    std::optional<c10::OperatorHandle> handle =
        c10::Dispatcher::singleton().findSchema(c10::OperatorName(key.first, key.second));
    if (!handle)
      return fail(DYNC_ERR_UNKNOWN_OP, "no operator " + key.first + "." +
                                           (overloadName.empty() ? "default" : overloadName) +
                                           " is registered with the dispatcher");
    std::ostringstream schema;
    schema << handle->schema();
    auto op = std::make_unique<dync_op>(
        dync_op{*handle,
                key.first + "." + (overloadName.empty() ? "default" : overloadName),
                schema.str(),
                {}});
    for (const c10::Argument& arg : handle->schema().arguments())
      op->checks.push_back(classify(arg));
    *out = op.get();
    opTable().emplace(std::move(key), std::move(op));
    return DYNC_OK;
  });
}

const char* dync_op_schema(const dync_op* op) { return op ? op->schemaText.c_str() : ""; }

dync_status dync_op_call(const dync_op* op, dync_stack* stack) {
  if (!op || !stack)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_op_call: NULL operator or stack");
  if (!stack->pushError.empty()) {
    std::string message = op->qualifiedName + ": bad argument: " + stack->pushError;
    dync_stack_clear(stack);
    return fail(DYNC_ERR_INVALID_ARGUMENT, std::move(message));
  }
  dync_status status = guarded(DYNC_ERR_INTERNAL, [&] { return prepareArguments(*op, *stack); });
  if (status == DYNC_OK)
    status = guarded(DYNC_ERR_ATEN, [&] {
      op->handle.callBoxed(stack->values);
      return DYNC_OK;
    });
  if (status != DYNC_OK)
    dync_stack_clear(stack);
  stack->useDefault.clear();
  stack->holdsResults = status == DYNC_OK;
  return status;
}

dync_stack* dync_stack_new(void) {
  try {
    return new dync_stack();
  } catch (...) {
    fail(DYNC_ERR_INTERNAL, "out of memory");
    return nullptr;
  }
}

void dync_stack_free(dync_stack* stack) { delete stack; }

void dync_stack_clear(dync_stack* stack) {
  if (!stack)
    return;
  stack->values.clear();
  stack->useDefault.clear();
  stack->pushError.clear();
  stack->holdsResults = false;
}

dync_status dync_stack_push_tensor(dync_stack* stack, const dync_tensor* t) {
  if (!t)
    return pushFailed(stack, "NULL tensor pushed (use dync_stack_push_none for an absent "
                             "optional tensor)");
  return push(stack, c10::IValue(toTensor(t)));
}

dync_status dync_stack_push_int(dync_stack* stack, int64_t value) {
  return push(stack, c10::IValue(value));
}

dync_status dync_stack_push_symint(dync_stack* stack, int64_t value) {
  // Symbolic sizes reach run time already evaluated; a SymInt argument accepts
  // a plain integer IValue.
  return push(stack, c10::IValue(value));
}

dync_status dync_stack_push_double(dync_stack* stack, double value) {
  return push(stack, c10::IValue(value));
}

namespace {

// A number passed where a schema takes a Tensor becomes, as torch's Python
// binding makes it, a 0-dim CPU tensor of double, int64 or bool marked as a
// wrapped number, so that type promotion treats it as a Python scalar. It is
// built with aten::scalar_tensor through the dispatcher.
dync_status pushWrappedNumber(dync_stack* stack, c10::Scalar value, c10::ScalarType dtype) {
  if (!stack)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "NULL dync_stack");
  return guarded(DYNC_ERR_ATEN, [&] {
    static const c10::OperatorHandle op =
        c10::Dispatcher::singleton().findSchemaOrThrow("aten::scalar_tensor", "");
    std::vector<c10::IValue> args = {c10::IValue(value), c10::IValue(dtype), c10::IValue(),
                                     c10::IValue(c10::Device(c10::kCPU)), c10::IValue()};
    op.callBoxed(args);
    at::Tensor tensor = args.at(0).toTensor();
    tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
    return push(stack, c10::IValue(std::move(tensor)));
  });
}

} // namespace

dync_status dync_stack_push_wrapped_double(dync_stack* stack, double value) {
  return pushWrappedNumber(stack, c10::Scalar(value), c10::kDouble);
}

dync_status dync_stack_push_wrapped_int(dync_stack* stack, int64_t value) {
  return pushWrappedNumber(stack, c10::Scalar(value), c10::kLong);
}

dync_status dync_stack_push_wrapped_bool(dync_stack* stack, int value) {
  return pushWrappedNumber(stack, c10::Scalar(value != 0), c10::kBool);
}

dync_status dync_stack_push_complex(dync_stack* stack, double real, double imag) {
  return push(stack, c10::IValue(c10::complex<double>(real, imag)));
}

dync_status dync_stack_push_wrapped_complex(dync_stack* stack, double real, double imag) {
  return pushWrappedNumber(stack, c10::Scalar(c10::complex<double>(real, imag)),
                           c10::kComplexDouble);
}

dync_status dync_stack_push_bool(dync_stack* stack, int value) {
  return push(stack, c10::IValue(value != 0));
}

dync_status dync_stack_push_none(dync_stack* stack) { return push(stack, c10::IValue()); }

dync_status dync_stack_push_default(dync_stack* stack) {
  return push(stack, c10::IValue(), /*useDefault=*/true);
}

dync_status dync_stack_push_int_list(dync_stack* stack, const int64_t* values, size_t count) {
  if (count && !values)
    return pushFailed(stack, "NULL int list with nonzero length");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    // Filled in place: going through a std::vector would allocate twice.
    c10::List<int64_t> list;
    list.reserve(count);
    for (size_t i = 0; i < count; ++i)
      list.push_back(values[i]);
    return push(stack, c10::IValue(std::move(list)));
  });
}

dync_status dync_stack_push_double_list(dync_stack* stack, const double* values, size_t count) {
  if (count && !values)
    return pushFailed(stack, "NULL float list with nonzero length");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    return push(stack, c10::IValue(c10::List<double>(std::vector<double>(values, values + count))));
  });
}

dync_status dync_stack_push_bool_list(dync_stack* stack, const int* values, size_t count) {
  if (count && !values)
    return pushFailed(stack, "NULL bool list with nonzero length");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    c10::List<bool> list;
    list.reserve(count);
    for (size_t i = 0; i < count; ++i)
      list.push_back(values[i] != 0);
    return push(stack, c10::IValue(std::move(list)));
  });
}

dync_status dync_stack_push_tensor_list(dync_stack* stack, const dync_tensor* const* tensors,
                                        size_t count) {
  if (count && !tensors)
    return pushFailed(stack, "NULL tensor list with nonzero length");
  for (size_t i = 0; i < count; ++i)
    if (!tensors[i])
      return pushFailed(stack, "NULL element " + std::to_string(i) + " in a tensor list");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    c10::List<at::Tensor> list;
    list.reserve(count);
    for (size_t i = 0; i < count; ++i)
      list.push_back(toTensor(tensors[i]));
    return push(stack, c10::IValue(std::move(list)));
  });
}

dync_status dync_stack_push_optional_tensor_list(dync_stack* stack,
                                                 const dync_tensor* const* tensors, size_t count) {
  if (count && !tensors)
    return pushFailed(stack, "NULL tensor list with nonzero length");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    c10::List<std::optional<at::Tensor>> list;
    list.reserve(count);
    for (size_t i = 0; i < count; ++i)
      list.push_back(tensors[i] ? std::optional<at::Tensor>(toTensor(tensors[i])) : std::nullopt);
    return push(stack, c10::IValue(std::move(list)));
  });
}

dync_status dync_stack_push_dtype(dync_stack* stack, int dtype) {
  if (dtype < 0 || dtype >= static_cast<int>(c10::ScalarType::NumOptions))
    return pushFailed(stack, "invalid dtype " + std::to_string(dtype));
  return push(stack, c10::IValue(static_cast<c10::ScalarType>(dtype)));
}

dync_status dync_stack_push_layout(dync_stack* stack, int layout) {
  if (layout < 0 || layout >= static_cast<int>(c10::Layout::NumOptions))
    return pushFailed(stack, "invalid layout " + std::to_string(layout));
  return push(stack, c10::IValue(static_cast<c10::Layout>(layout)));
}

dync_status dync_stack_push_memory_format(dync_stack* stack, int format) {
  if (format < 0 || format >= static_cast<int>(c10::MemoryFormat::NumOptions))
    return pushFailed(stack, "invalid memory format " + std::to_string(format));
  return push(stack, c10::IValue(static_cast<c10::MemoryFormat>(format)));
}

dync_status dync_stack_push_device(dync_stack* stack, int deviceType, int index) {
  if (deviceType < 0 ||
      deviceType >= static_cast<int>(c10::DeviceType::COMPILE_TIME_MAX_DEVICE_TYPES) ||
      index < -1 || index > 127)
    return pushFailed(stack,
                      "invalid device " + std::to_string(deviceType) + ":" + std::to_string(index));
  return guarded(DYNC_ERR_INVALID_ARGUMENT, [&] {
    return push(stack, c10::IValue(c10::Device(static_cast<c10::DeviceType>(deviceType),
                                               static_cast<c10::DeviceIndex>(index))));
  });
}

dync_status dync_stack_push_string(dync_stack* stack, const char* value) {
  if (!value)
    return pushFailed(stack, "NULL string");
  return guarded(DYNC_ERR_INTERNAL, [&] { return push(stack, c10::IValue(std::string(value))); });
}

size_t dync_stack_num_results(const dync_stack* stack) { return stack ? stack->values.size() : 0; }

dync_value_kind dync_stack_result_kind(const dync_stack* stack, size_t index) {
  if (!stack || index >= stack->values.size())
    return DYNC_VALUE_OTHER;
  const c10::IValue& v = stack->values[index];
  if (v.isNone())
    return DYNC_VALUE_NONE;
  if (v.isTensor())
    return DYNC_VALUE_TENSOR;
  if (v.isInt())
    return DYNC_VALUE_INT;
  if (v.isDouble())
    return DYNC_VALUE_DOUBLE;
  if (v.isBool())
    return DYNC_VALUE_BOOL;
  if (v.isTensorList())
    return DYNC_VALUE_TENSOR_LIST;
  if (v.isIntList())
    return DYNC_VALUE_INT_LIST;
  return DYNC_VALUE_OTHER;
}

dync_status dync_stack_take_tensor(dync_stack* stack, size_t index, dync_tensor** out) {
  return takeResult(stack, index, out, "Tensor", &c10::IValue::isTensor,
                    [](const c10::IValue& v) { return releaseToHandle(at::Tensor(v.toTensor())); });
}

dync_status dync_stack_take_int(dync_stack* stack, size_t index, int64_t* out) {
  return takeResult(stack, index, out, "int", &c10::IValue::isInt,
                    [](const c10::IValue& v) { return v.toInt(); });
}

dync_status dync_stack_take_double(dync_stack* stack, size_t index, double* out) {
  return takeResult(stack, index, out, "float", &c10::IValue::isDouble,
                    [](const c10::IValue& v) { return v.toDouble(); });
}

dync_status dync_stack_take_bool(dync_stack* stack, size_t index, int* out) {
  return takeResult(stack, index, out, "bool", &c10::IValue::isBool,
                    [](const c10::IValue& v) { return v.toBool() ? 1 : 0; });
}

dync_status dync_stack_take_tensor_list(dync_stack* stack, size_t index, dync_tensor** out,
                                        size_t capacity, size_t* count) {
  if (dync_status s = resultAt(stack, index, count); s != DYNC_OK)
    return s;
  if (capacity && !out)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "NULL output array with nonzero capacity");
  if (!stack->values[index].isTensorList())
    return wrongKind(stack, index, "Tensor[]");
  return guarded(DYNC_ERR_INTERNAL, [&] {
    c10::List<at::Tensor> list = stack->values[index].toTensorList();
    *count = list.size();
    for (size_t i = 0; i < list.size() && i < capacity; ++i)
      out[i] = releaseToHandle(at::Tensor(list.get(i)));
    return DYNC_OK;
  });
}

void dync_tensor_retain(const dync_tensor* t) {
  if (t)
    c10::raw::intrusive_ptr::incref(toImpl(t));
}

void dync_tensor_release(const dync_tensor* t) {
  if (t)
    c10::raw::intrusive_ptr::decref(toImpl(t));
}

int64_t dync_tensor_dim(const dync_tensor* t) { return t ? toImpl(t)->dim() : -1; }

// The metadata accessors below read a plain strided tensor's fields; for
// tensors whose sizes are not plain integers (nested, sparse) TensorImpl
// throws, which must not escape.
const int64_t* dync_tensor_sizes(const dync_tensor* t) {
  if (!t)
    return nullptr;
  try {
    return toImpl(t)->sizes().data();
  } catch (...) {
    return nullptr;
  }
}

const int64_t* dync_tensor_strides(const dync_tensor* t) {
  if (!t)
    return nullptr;
  try {
    return toImpl(t)->strides().data();
  } catch (...) {
    return nullptr;
  }
}

int64_t dync_tensor_storage_offset(const dync_tensor* t) {
  if (!t)
    return -1;
  try {
    return toImpl(t)->storage_offset();
  } catch (...) {
    return -1;
  }
}

int dync_tensor_dtype(const dync_tensor* t) {
  return t ? static_cast<int>(c10::typeMetaToScalarType(toImpl(t)->dtype())) : -1;
}

int dync_tensor_device_type(const dync_tensor* t) {
  return t ? static_cast<int>(toImpl(t)->device_type()) : -1;
}

int dync_tensor_device_index(const dync_tensor* t) {
  return t ? static_cast<int>(toImpl(t)->device().index()) : -1;
}

int dync_tensor_requires_grad(const dync_tensor* t) {
  return t && toImpl(t)->requires_grad() ? 1 : 0;
}

int dync_tensor_is_contiguous(const dync_tensor* t) {
  if (!t)
    return 0;
  try {
    return toImpl(t)->is_contiguous() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void* dync_tensor_data_ptr(const dync_tensor* t) {
  if (!t)
    return nullptr;
  try {
    return toImpl(t)->mutable_data();
  } catch (...) {
    return nullptr;
  }
}

/* What dync_tensor_info_of and dync_sparse_coo_info_of read alike: sizes,
 * dtype, device, requires_grad and the flags. */
static void fillTensorInfo(c10::TensorImpl* impl, dync_tensor_info* out) {
  c10::IntArrayRef sizes = impl->sizes();
  c10::Device device = impl->device();
  out->sizes = sizes.data();
  out->dim = static_cast<int64_t>(sizes.size());
  out->dtype = static_cast<int32_t>(c10::typeMetaToScalarType(impl->dtype()));
  out->device_type = static_cast<int32_t>(device.type());
  out->device_index = static_cast<int32_t>(device.index());
  out->requires_grad = impl->requires_grad() ? 1 : 0;
  // Keys a graph does not model: data that is not what the tensor means
  // until resolved (negative, conjugate), or operations routed elsewhere.
  static const c10::DispatchKeySet otherKeys({
      c10::DispatchKey::Python,
      c10::DispatchKey::PythonTLSSnapshot,
      c10::DispatchKey::Functionalize,
      c10::DispatchKey::ZeroTensor,
      c10::DispatchKey::FuncTorchBatched,
      c10::DispatchKey::FuncTorchGradWrapper,
      c10::DispatchKey::FuncTorchDynamicLayerFrontMode,
      c10::DispatchKey::FuncTorchDynamicLayerBackMode,
      c10::DispatchKey::Batched,
      c10::DispatchKey::BatchedNestedTensor,
  });
  c10::DispatchKeySet keys = impl->key_set();
  out->flags = (impl->is_neg() ? DYNC_TENSOR_NEG : 0) | (impl->is_conj() ? DYNC_TENSOR_CONJ : 0) |
               ((keys & otherKeys).empty() ? 0 : DYNC_TENSOR_OTHER_KEYS);
}

int dync_tensor_info_of(const dync_tensor* t, dync_tensor_info* out) {
  if (!t || !out)
    return 0;
  try {
    c10::TensorImpl* impl = toImpl(t);
    // Sparse and nested tensors have sizes but no strides that describe
    // their memory; sizes() and strides() throw for some others.
    if (impl->layout() != c10::kStrided)
      return 0;
    c10::IntArrayRef strides = impl->strides();
    fillTensorInfo(impl, out);
    out->strides = strides.data();
    out->is_contiguous = impl->is_contiguous() ? 1 : 0;
    return 1;
  } catch (...) {
    return 0;
  }
}

int dync_sparse_coo_info_of(const dync_tensor* t, dync_tensor_info* out, int64_t* sparse) {
  if (!t || !out || !sparse)
    return 0;
  try {
    c10::TensorImpl* impl = toImpl(t);
    if (impl->layout() != c10::kSparse)
      return 0;
    fillTensorInfo(impl, out);
    out->strides = nullptr;
    out->is_contiguous = 0;
    // The tensor's public API reads these through its SparseTensorImpl.
    at::Tensor tensor = toTensor(t);
    sparse[0] = tensor.sparse_dim();
    sparse[1] = tensor._nnz();
    sparse[2] = tensor.is_coalesced() ? 1 : 0;
    return 1;
  } catch (...) {
    return 0;
  }
}

dync_status dync_tensor_empty_strided(const int64_t* sizes, const int64_t* strides, size_t dim,
                                      int dtype, dync_tensor** out) {
  if (!out || (dim && (!sizes || !strides)))
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_tensor_empty_strided: NULL argument");
  *out = nullptr;
  return guarded(DYNC_ERR_ATEN, [&] {
    c10::IntArrayRef sizeArray(sizes, dim), strideArray(strides, dim);
    auto type = static_cast<c10::ScalarType>(dtype);
    size_t bytes = at::detail::computeStorageNbytes(sizeArray, strideArray, c10::elementSize(type));
    OutputCache* cache = bytes >= OutputCacheMinBytes ? processOutputCache() : nullptr;
    at::Tensor t =
        cache ? at::detail::empty_strided_generic(sizeArray, strideArray, cache,
                                                  c10::DispatchKeySet(c10::DispatchKey::CPU), type)
              : at::detail::empty_strided_cpu(sizeArray, strideArray, type);
    *out = releaseToHandle(std::move(t));
    return DYNC_OK;
  });
}

dync_status dync_tensor_view_storage(const dync_tensor* base, const int64_t* sizes,
                                     const int64_t* strides, size_t dim, int dtype,
                                     dync_tensor** out) {
  if (!base || !out || (dim && (!sizes || !strides)))
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_tensor_view_storage: NULL argument");
  *out = nullptr;
  return guarded(DYNC_ERR_INVALID_ARGUMENT, [&]() -> dync_status {
    c10::TensorImpl* impl = toImpl(base);
    auto type = caffe2::TypeMeta::fromScalarType(static_cast<c10::ScalarType>(dtype));
    // The last byte the view reaches, computed with overflow checks: a view
    // past the storage would let a kernel write memory nobody owns.
    uint64_t lastElement = 0;
    bool empty = false;
    for (size_t d = 0; d < dim; ++d) {
      if (sizes[d] < 0 || strides[d] < 0)
        return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_tensor_view_storage: negative size or stride");
      if (sizes[d] == 0)
        empty = true;
      uint64_t step = 0;
      if (sizes[d] > 0 &&
          (__builtin_mul_overflow(uint64_t(sizes[d] - 1), uint64_t(strides[d]), &step) ||
           __builtin_add_overflow(lastElement, step, &lastElement)))
        return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_tensor_view_storage: view too large");
    }
    uint64_t bytes = 0;
    if (!empty && __builtin_mul_overflow(lastElement + 1, uint64_t(type.itemsize()), &bytes))
      return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_tensor_view_storage: view too large");
    const c10::Storage& storage = impl->storage();
    if (bytes > storage.nbytes())
      return fail(DYNC_ERR_INVALID_ARGUMENT,
                  "dync_tensor_view_storage: the view needs " + std::to_string(bytes) +
                      " bytes, the storage has " + std::to_string(storage.nbytes()));
    at::Tensor view =
        at::detail::make_tensor<c10::TensorImpl>(c10::Storage(storage), impl->key_set(), type);
    view.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes, dim),
                                                      c10::IntArrayRef(strides, dim));
    *out = releaseToHandle(std::move(view));
    return DYNC_OK;
  });
}

int dync_grad_mode_enabled(void) { return c10::GradMode::is_enabled() ? 1 : 0; }

int dync_default_dtype(void) { return static_cast<int>(c10::get_default_dtype_as_scalartype()); }

void dync_shim_fill_api(dync_shim_api* api) {
  if (!api)
    return;
  api->size = sizeof(dync_shim_api);
  api->abi_version = DYNC_SHIM_ABI_VERSION;

  // Assigning each function to its field checks its declaration against the
  // table's row.
#define DYNC_SHIM_CORE_FN(Name, field, function, Result, Params) api->field = function;
#include "runtime/shim/ShimApi.def"
}

} // extern "C"
