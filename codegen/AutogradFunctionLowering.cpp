//===- AutogradFunctionLowering.cpp - Applying an autograd.Function -------===//
//
// `dync::autograd_function.apply` (ir/AutogradFunction.h) lowers to its
// arguments pushed as an operator's are, then one call of the shim's
// autograd_function_apply with the backward graph's function, which this
// module compiles once (an internal function with the graph signature,
// named after the backward graph), and its results taken as a tuple
// operator's are.
//
//===----------------------------------------------------------------------===//
#include "codegen/GraphEmitter.h"
#include "ir/AutogradFunction.h"

namespace dync::codegen::detail {

std::string backwardFunctionName(const ir::Graph& backward) {
  return "__dync_backward." + backward.name();
}

llvm::Error GraphEmitter::emitAutogradFunctionCall(const ir::Node& node, unsigned position) {
  llvm::Expected<ir::AutogradFunctionCall> call = ir::readAutogradFunctionCall(node);
  if (!call)
    return unsupported(&node, "a malformed node (" + llvm::toString(call.takeError()) + ")");
  const ir::Graph* backward =
      graph_.module() ? graph_.module()->findBackward(call->backward) : nullptr;
  if (!backward)
    return unsupported(&node, "an autograd.Function whose backward graph @" + call->backward +
                                  " is not in the module");
  std::string symbol = backwardFunctionName(*backward);
  llvm::Function* function = shim_.module().getFunction(symbol);
  if (!function) {
    llvm::Expected<GraphSignature> signature =
        emitGraphFunction(shim_, *backward, symbol, schemas_);
    if (!signature)
      return signature.takeError();
    function = shim_.module().getFunction(symbol);
  }
  for (const ir::Argument& arg : node.args())
    if (llvm::Error error = pushArgument(node, arg))
      return error;
  size_t results = ir::outputLeaves(*backward).size();
  Value* status = shim_.call(b_, ShimFn::AutogradFunctionApply,
                             {stack_, function, b_.getInt64(results)}, "status." + node.name());
  llvm::BasicBlock* fail = failBlock(nodePrefix(node), nullptr, /*shimError=*/true);
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "applied." + node.name());
  if (llvm::Error error = takeResults(node, stack_, fail))
    return error;
  releaseDead(node, position);
  return llvm::Error::success();
}

} // namespace dync::codegen::detail
