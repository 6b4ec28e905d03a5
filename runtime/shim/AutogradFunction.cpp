//===- AutogradFunction.cpp - autograd.Function's backward, compiled ------===//
//
// The shim's one translation unit that includes torch's autograd headers.
// A graph that records autograd applies a custom autograd.Function as its
// forward's ATen calls (over detached inputs) and one call of
// dync_autograd_function_apply, which does what the rest of eager's apply
// does: a grad_fn node whose next edges are the inputs', the differentiable
// outputs given history through it, and, when autograd runs it, the user's
// backward as the compiled backward graph over the saved tensors and the
// outputs' gradients.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>

#include <c10/core/GradMode.h>

#include <string>
#include <vector>

using dync::shim::fail;

namespace {

/// What one application holds for backward.
struct CompiledFunctionBackward final : torch::autograd::Node {
  std::string function; // the Function's qualified name
  std::string graph;    // the backward graph's name
  dync_backward_fn backward = nullptr;
  size_t numBackwardOutputs = 0;
  std::vector<at::Tensor> saved;
  std::vector<uint32_t> savedVersions;
  std::vector<int64_t> sizes;     // the symbolic sizes its tensors do not carry
  std::vector<int64_t> gradIndex; // per input: backward's result, or -1
  // Per output: the sizes and options of the zeros an absent gradient is.
  std::vector<std::pair<std::vector<int64_t>, at::TensorOptions>> outputTypes;
  std::vector<bool> differentiable; // per output
  bool materializeGrads = true;
  bool released = false;

  std::string name() const override {
    // `pkg.mod.Clamp` -> `ClampBackward`, the name eager's grad_fn has.
    size_t dot = function.rfind('.');
    return (dot == std::string::npos ? function : function.substr(dot + 1)) + "Backward";
  }

  void release_variables() override {
    saved.clear();
    outputTypes.clear();
    released = true;
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override;
};

torch::autograd::variable_list
CompiledFunctionBackward::apply(torch::autograd::variable_list&& grads) {
  TORCH_CHECK(!released,
              "Trying to backward through the graph a second time (or directly access "
              "saved tensors after they have already been freed): ",
              name(),
              "'s saved tensors were freed. Specify retain_graph=True on the first "
              "backward call.");
  TORCH_CHECK(!c10::GradMode::is_enabled(), name(),
              ": double backward (create_graph=True) through a custom autograd.Function run by "
              "compiled code is not supported; run it without the artifact");
  for (size_t i = 0; i < saved.size(); ++i)
    TORCH_CHECK(saved[i]._version() == savedVersions[i],
                "one of the variables needed for gradient computation has been modified by an "
                "inplace operation: saved tensor ",
                i, " of ", name(), " is at version ", saved[i]._version(), "; expected version ",
                savedVersions[i], " instead.");
  std::vector<dync_tensor*> inputs;
  for (const at::Tensor& t : saved)
    inputs.push_back(reinterpret_cast<dync_tensor*>(t.unsafeGetTensorImpl()));
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      // An output that is not differentiable never has a gradient; its
      // backward graph was captured with None there and ignores the input.
      TORCH_CHECK(materializeGrads || !differentiable[i], name(), ": output ", i,
                  " has no gradient and forward called ctx.set_materialize_grads(False); the "
                  "compiled backward was captured with a gradient for every differentiable output");
      grads[i] = at::zeros(outputTypes[i].first, outputTypes[i].second);
    }
    inputs.push_back(reinterpret_cast<dync_tensor*>(grads[i].unsafeGetTensorImpl()));
  }
  std::vector<dync_tensor*> outputs(numBackwardOutputs, nullptr);
  char error[1024] = {0};
  int status = backward(inputs.data(), inputs.size(), sizes.data(), sizes.size(), outputs.data(),
                        outputs.size(), error, sizeof error);
  std::vector<at::Tensor> results;
  for (dync_tensor* handle : outputs)
    results.push_back(
        handle ? at::Tensor(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::reclaim(
                     dync::shim::toImpl(handle)))
               : at::Tensor());
  TORCH_CHECK(status == 0, name(), ": ", error);
  torch::autograd::variable_list gradients(gradIndex.size());
  for (size_t k = 0; k < gradIndex.size(); ++k)
    if (gradIndex[k] >= 0 && should_compute_output(k))
      gradients[k] = results[gradIndex[k]];
  return gradients;
}

std::vector<at::Tensor> tensorList(const c10::IValue& value, const char* what) {
  // An empty list reaches the shim as int[].
  if (value.isIntList() && value.toIntList().empty())
    return {};
  TORCH_CHECK(value.isTensorList(), "dync_autograd_function_apply: ", what, " must be a Tensor[]");
  return value.toTensorVector();
}

dync_status apply(dync_stack* stack, dync_backward_fn backward, size_t numBackwardOutputs) {
  const std::string* pushError = nullptr;
  std::vector<c10::IValue>& args = dync::shim::stackArguments(stack, &pushError);
  if (!pushError->empty())
    return fail(DYNC_ERR_INVALID_ARGUMENT,
                "dync_autograd_function_apply: bad argument: " + *pushError);
  // Artifacts made before the sizes and the modified inputs were appended
  // push eight or nine.
  TORCH_CHECK(args.size() >= 8 && args.size() <= 10 && args[0].isString() && args[1].isString() &&
                  args[7].isBool() && (args.size() < 9 || args[8].isIntList()) &&
                  (args.size() < 10 || args[9].isIntList()),
              "dync_autograd_function_apply: expected the ten arguments of the node");
  std::vector<at::Tensor> inputs = tensorList(args[2], "the inputs");
  std::vector<at::Tensor> outputs = tensorList(args[3], "the outputs");
  std::vector<at::Tensor> saved = tensorList(args[4], "the saved tensors");
  std::vector<int64_t> gradIndex = args[5].toIntVector();
  std::vector<int64_t> dirty =
      args.size() == 10 ? args[9].toIntVector() : std::vector<int64_t>(outputs.size(), -1);
  std::vector<bool> differentiable;
  if (args[6].isBoolList())
    for (bool flag : args[6].toBoolList())
      differentiable.push_back(flag);
  TORCH_CHECK(gradIndex.size() == inputs.size() && differentiable.size() == outputs.size() &&
                  dirty.size() == outputs.size(),
              "dync_autograd_function_apply: one gradient index per input and one flag and "
              "modified input per output are needed");
  for (int64_t index : dirty)
    TORCH_CHECK(index >= -1 && index < static_cast<int64_t>(inputs.size()),
                "dync_autograd_function_apply: modified input ", index, " out of range");

  bool executable =
      c10::GradMode::is_enabled() && torch::autograd::any_variable_requires_grad(inputs);
  std::vector<c10::IValue> results;
  if (!executable) {
    // A modified input is returned itself, as eager's apply returns it.
    for (size_t i = 0; i < outputs.size(); ++i)
      results.emplace_back(dirty[i] >= 0 ? inputs[dirty[i]] : std::move(outputs[i]));
    dync::shim::setStackResults(stack, std::move(results));
    return DYNC_OK;
  }
  auto node = c10::make_intrusive<CompiledFunctionBackward>();
  node->function = args[0].toStringRef();
  node->graph = args[1].toStringRef();
  node->backward = backward;
  node->numBackwardOutputs = numBackwardOutputs;
  node->gradIndex = std::move(gradIndex);
  node->materializeGrads = args[7].toBool();
  node->differentiable = differentiable;
  if (args.size() >= 9)
    node->sizes = args[8].toIntVector();
  node->set_next_edges(torch::autograd::collect_next_edges(inputs));
  for (const at::Tensor& t : saved)
    node->savedVersions.push_back(t._version());
  node->saved = std::move(saved);
  for (size_t i = 0; i < outputs.size(); ++i) {
    node->outputTypes.emplace_back(outputs[i].sizes().vec(), outputs[i].options());
    if (dirty[i] >= 0) {
      // Modified in place by forward: the input itself takes the node as
      // its history, as eager's apply rebases it.
      const at::Tensor& input = inputs[dirty[i]];
      TORCH_CHECK(!(input.is_leaf() && input.requires_grad()),
                  "a leaf Variable that requires grad has been used in an in-place operation.");
      TORCH_CHECK(!input.is_view(), node->name(),
                  ": an input modified in place (ctx.mark_dirty) that is a view of another "
                  "tensor is not supported by compiled code; run it without the artifact");
      node->add_input_metadata(input);
      torch::autograd::impl::rebase_history(input, {node, static_cast<uint32_t>(i)});
      results.emplace_back(input);
      continue;
    }
    if (!differentiable[i]) {
      node->add_input_metadata(torch::autograd::Node::undefined_input());
      results.emplace_back(outputs[i]);
      continue;
    }
    // A new tensor over the same data, so the saved forward results hold
    // no reference back to the node.
    at::Tensor out = outputs[i].detach();
    torch::autograd::create_gradient_edge(out, node);
    results.emplace_back(std::move(out));
  }
  dync::shim::setStackResults(stack, std::move(results));
  return DYNC_OK;
}

} // namespace

extern "C" dync_status dync_autograd_function_apply(dync_stack* stack, dync_backward_fn backward,
                                                    size_t num_backward_outputs) {
  if (!stack || !backward)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_autograd_function_apply: NULL stack or backward");
  try {
    return apply(stack, backward, num_backward_outputs);
  } catch (const c10::Error& e) {
    return fail(DYNC_ERR_ATEN, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(DYNC_ERR_ATEN, e.what());
  }
}
