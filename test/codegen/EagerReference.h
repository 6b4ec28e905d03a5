//===- EagerReference.h - A graph run eagerly through torch's dispatcher --===//
//
// The reference the end-to-end codegen tests compare with: each node of a
// graph is run in order through torch's own dispatcher, with keyword
// arguments placed by torch's own schemas. A kernel call runs the kernel's
// nodes the same way, so a fused graph is checked against the ATen calls it
// replaced.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/ops/scalar_tensor.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace dync::test {

inline c10::ScalarType scalarType(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F32:
    return c10::kFloat;
  case ir::DType::F64:
    return c10::kDouble;
  case ir::DType::BF16:
    return c10::kBFloat16;
  case ir::DType::F16:
    return c10::kHalf;
  case ir::DType::I64:
    return c10::kLong;
  case ir::DType::I32:
    return c10::kInt;
  case ir::DType::Bool:
    return c10::kBool;
  default:
    ADD_FAILURE() << "dtype " << ir::spelling(dtype).str() << " not handled by this test";
    return c10::kFloat;
  }
}

inline c10::MemoryFormat memoryFormat(ir::MemoryFormat format) {
  switch (format) {
  case ir::MemoryFormat::Contiguous:
    return c10::MemoryFormat::Contiguous;
  case ir::MemoryFormat::Preserve:
    return c10::MemoryFormat::Preserve;
  case ir::MemoryFormat::ChannelsLast:
    return c10::MemoryFormat::ChannelsLast;
  case ir::MemoryFormat::ChannelsLast3d:
    return c10::MemoryFormat::ChannelsLast3d;
  }
  return c10::MemoryFormat::Contiguous;
}

inline c10::OperatorHandle findOp(const std::string& op) {
  size_t dot = op.find('.', op.find("::"));
  std::string overload = op.substr(dot + 1);
  return c10::Dispatcher::singleton().findSchemaOrThrow(
      op.substr(0, dot).c_str(), overload == "default" ? "" : overload.c_str());
}

/// \p number as the 0-dim tensor torch's Python binding makes of a number
/// passed for a Tensor parameter.
inline at::Tensor wrappedNumber(const c10::IValue& number) {
  at::Tensor wrapped = number.isDouble() ? at::scalar_tensor(number.toDouble(), at::kDouble)
                       : number.isBool() ? at::scalar_tensor(number.toBool(), at::kBool)
                                         : at::scalar_tensor(number.toInt(), at::kLong);
  wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
  return wrapped;
}

/// Runs a graph (or a kernel) eagerly, node by node, through the dispatcher.
class EagerInterpreter {
public:
  EagerInterpreter(const ir::Graph& graph, const ir::SymbolValues& symbols)
      : graph_(graph), symbols_(symbols) {}

  /// The tensors the compiled function returns (ir::outputLeaves), for
  /// \p inputs in the order of the graph's inputs.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) {
    size_t next = 0;
    for (const ir::Node& node : graph_.nodes()) {
      if (node.isInput()) {
        values_[&node] = {c10::IValue(inputs[next++])};
        continue;
      }
      if (node.isOutput()) {
        std::vector<at::Tensor> outputs;
        for (const ir::ValueRef& leaf : ir::outputLeaves(graph_))
          outputs.push_back(values_[leaf.node][leaf.index.value_or(0)].toTensor());
        return outputs;
      }
      if (node.isKernelCall()) {
        runKernel(node);
        continue;
      }
      c10::OperatorHandle op = findOp(node.op());
      const c10::FunctionSchema& schema = op.schema();
      std::vector<std::optional<c10::IValue>> args(schema.arguments().size());
      for (size_t i = 0; i < node.args().size(); ++i)
        args[i] = value(node.args()[i]);
      for (const ir::KeywordArgument& kw : node.kwargs())
        args[*schema.argumentIndexWithName(kw.name)] = value(kw.value);
      torch::jit::Stack stack;
      for (size_t i = 0; i < args.size(); ++i) {
        const c10::Argument& formal = schema.arguments()[i];
        // A number for a Tensor parameter is a wrapped number, as torch's
        // Python binding passes it.
        if (args[i] && !args[i]->isTensor() && formal.type()->kind() == c10::TypeKind::TensorType)
          args[i] = c10::IValue(wrappedNumber(*args[i]));
        stack.push_back(args[i] ? *args[i] : *formal.default_value());
      }
      op.callBoxed(stack);
      if (node.type().kind() == ir::Type::Kind::List)
        for (const at::Tensor& t : stack[0].toTensorList().vec())
          values_[&node].push_back(c10::IValue(t));
      else
        values_[&node] = stack;
    }
    return {};
  }

private:
  void runKernel(const ir::Node& node) {
    const ir::Graph* kernel = graph_.module()->findKernel(node.kernelName());
    ASSERT_NE(kernel, nullptr);
    std::vector<at::Tensor> args;
    for (const ir::Argument& arg : node.args())
      args.push_back(value(arg).toTensor());
    for (const at::Tensor& t : EagerInterpreter(*kernel, symbols_).run(args))
      values_[&node].push_back(c10::IValue(t));
  }

  c10::IValue value(const ir::Argument& arg) {
    using Kind = ir::Argument::Kind;
    switch (arg.kind()) {
    case Kind::Value:
      return values_[arg.valueRef().node][arg.valueRef().index.value_or(0)];
    case Kind::Sym:
      return c10::IValue(*arg.symValue().evaluate(symbols_));
    case Kind::Float:
      return c10::IValue(arg.floatValue());
    case Kind::Bool:
      return c10::IValue(arg.boolValue());
    case Kind::String:
      return c10::IValue(arg.stringValue());
    case Kind::None:
      return c10::IValue();
    case Kind::MemoryFormat:
      return c10::IValue(memoryFormat(arg.memoryFormatValue()));
    case Kind::DType:
      return c10::IValue(scalarType(arg.dtypeValue()));
    case Kind::List:
    case Kind::Tuple: {
      std::vector<int64_t> ints;
      for (const ir::Argument& e : arg.elements())
        ints.push_back(*e.symValue().evaluate(symbols_));
      return c10::IValue(ints);
    }
    default:
      ADD_FAILURE() << "argument kind not handled by this test";
      return c10::IValue();
    }
  }

  const ir::Graph& graph_;
  const ir::SymbolValues& symbols_;
  std::map<const ir::Node*, std::vector<c10::IValue>> values_;
};

} // namespace dync::test
