//===- KernelInlining.cpp - Turning kernel calls back into ATen calls -----===//
#include "passes/KernelInlining.h"

#include "ir/Graph.h"
#include "passes/Uses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

namespace dync::transforms {

namespace {

/// Copies the body of \p kernel before \p call and makes the call's uses
/// uses of the copies; \p names holds every name the graph uses.
llvm::Error inlineCall(ir::Graph& graph, ir::Node& call, const ir::Graph& kernel,
                       llvm::StringSet<>& names) {
  llvm::DenseMap<const ir::Node*, ir::ValueRef> mapped;
  unsigned inputIndex = 0;
  for (const ir::Node& node : kernel.nodes()) {
    if (!node.isInput())
      continue;
    if (inputIndex >= call.args().size() || !call.args()[inputIndex].isValue())
      return llvm::createStringError("the call of kernel @" + kernel.name() +
                                     " does not pass a value for each of its inputs" +
                                     call.location().suffix());
    mapped[&node] = call.args()[inputIndex++].valueRef();
  }
  unsigned counter = 0;
  auto freshName = [&] {
    std::string name;
    do
      name = call.name() + "_" + std::to_string(counter++);
    while (names.contains(name));
    names.insert(name);
    return name;
  };
  auto remap = [&](ir::Argument argument) -> llvm::Expected<ir::Argument> {
    bool ok = true;
    argument.forEachValue([&](ir::ValueRef& ref) {
      auto it = mapped.find(ref.node);
      if (it == mapped.end()) {
        ok = false;
        return;
      }
      // A kernel's inputs are whole tensors; its nodes' elements keep theirs.
      ir::ValueRef target = it->second;
      if (ref.index)
        target.index = ref.index;
      ref = target;
    });
    if (!ok)
      return llvm::createStringError("kernel @" + kernel.name() +
                                     " uses a value it does not define");
    return argument;
  };
  for (const ir::Node& node : kernel.nodes()) {
    if (!node.isCall())
      continue;
    std::vector<ir::Argument> args;
    for (const ir::Argument& arg : node.args()) {
      llvm::Expected<ir::Argument> copy = remap(arg);
      if (!copy)
        return copy.takeError();
      args.push_back(std::move(*copy));
    }
    std::vector<ir::KeywordArgument> kwargs;
    for (const ir::KeywordArgument& kwarg : node.kwargs()) {
      llvm::Expected<ir::Argument> copy = remap(kwarg.value);
      if (!copy)
        return copy.takeError();
      kwargs.push_back({kwarg.name, std::move(*copy)});
    }
    ir::Node* copy =
        graph.insert(call.getIterator(), ir::Node::call(freshName(), node.op(), std::move(args),
                                                        std::move(kwargs), node.type()));
    // The kernel's node remembers the user's line; a kernel written by hand
    // has none, and its nodes take the call's.
    copy->setLocation(node.location().empty() ? call.location() : node.location());
    mapped[&node] = ir::ValueRef{copy, std::nullopt};
  }
  const ir::Node* output = kernel.output();
  if (!output)
    return llvm::createStringError("kernel @" + kernel.name() + " has no return");
  llvm::Expected<ir::Argument> result = remap(output->returnValue());
  if (!result)
    return result.takeError();
  if (result->isValue()) {
    replaceUses(graph, ir::ValueRef{&call, std::nullopt}, *result);
  } else {
    llvm::ArrayRef<ir::Argument> elements = result->elements();
    for (size_t i = 0; i < elements.size(); ++i)
      replaceUses(graph, ir::ValueRef{&call, static_cast<unsigned>(i)}, elements[i]);
  }
  graph.erase(&call);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<unsigned> inlineKernelCalls(ir::Module& module, ir::Graph& graph,
                                           llvm::function_ref<bool(const ir::Graph&)> inlineIt) {
  llvm::StringSet<> names;
  std::vector<ir::Node*> calls;
  for (ir::Node& node : graph.nodes()) {
    names.insert(node.name());
    if (node.isKernelCall())
      calls.push_back(&node);
  }
  unsigned inlined = 0;
  for (ir::Node* call : calls) {
    const ir::Graph* kernel = module.findKernel(call->kernelName());
    if (!kernel)
      return llvm::createStringError("graph @" + graph.name() + " calls kernel @" +
                                     call->kernelName().str() + ", which the module lacks");
    if (!inlineIt(*kernel))
      continue;
    if (llvm::Error error = inlineCall(graph, *call, *kernel, names))
      return error;
    ++inlined;
  }
  return inlined;
}

} // namespace dync::transforms
