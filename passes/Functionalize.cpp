//===- Functionalize.cpp - In-place updates of temporaries made pure ------===//
//
// torch's composite kernels often finish a temporary in place: RMS norm's
// `mean(x^2).add_(eps)`. A write is a barrier to fusion and CSE, yet when
// nothing else can see the temporary it is the same as the out-of-place
// twin (`add`) whose result takes the temporary's place from then on.
//
// "Nothing else can see it" is checked from the graph: the temporary is the
// fresh result of a pure call (not an input, not a view, not an alias of
// anything), and no other use of it makes a view or an alias, since a view
// taken before the write would see the new values. Uses before the write
// keep reading the old value, which is now simply a different value.
//
// The twin must compute a result of the in-place call's type. Its dtype and
// sizes are the temporary's whenever every tensor argument has the
// temporary's dtype: the in-place call succeeded, so the broadcast shape is
// the temporary's own, and type promotion of equal dtypes with non-complex
// numbers leaves the dtype. Its strides are contiguous when the temporary's
// are: a pointwise (TensorIterator) kernel lays its output out in the order
// of its first argument's strides. They are also the temporary's when that
// is the only tensor argument and lies densely in another order of its
// dimensions (channels-last): the kernel's output follows its one operand.
// Only pointwise overloads torch pairs with a twin of the same arguments
// qualify (OpTraits::functionalTwin).
//
//===----------------------------------------------------------------------===//
#include "ir/Graph.h"
#include "ir/OpTraits.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace dync::transforms {

namespace {

/// `aten::add_.Tensor` -> `aten::add.Tensor`.
std::string twinName(llvm::StringRef op) {
  auto [name, overload] = op.split('.');
  return (name.drop_back() + "." + overload).str();
}

const ir::OpTraits* traitsOf(const ir::Node& node) {
  if (!node.isCall() || node.isKernelCall())
    return nullptr;
  return ir::findOpTraits(node.op());
}

/// Whether the result of \p node is fresh storage nothing else refers to.
bool makesFreshTensor(const ir::Node& node) {
  const ir::OpTraits* traits = traitsOf(node);
  return traits && traits->isPure() && !traits->returnsAlias && node.type().isTensor();
}

/// Whether tensor types \p a and \p b describe the same storage layout and
/// element type. requires_grad is left out: it says what autograd would
/// record, which a graph does not, and torch's composite kernels often
/// finish below autograd a temporary (unflagged) that a top-level in-place
/// call (flagged) then writes, as batch norm's output and `relu_`.
bool sameTensorLayout(const ir::Type& a, const ir::Type& b) {
  return a.isTensor() && b.isTensor() && a.dtype() == b.dtype() && a.device() == b.device() &&
         a.sizes() == b.sizes() && a.strides() == b.strides();
}

/// Whether \p type lies densely in memory in some order of its dimensions,
/// all of which have numeric sizes above 1 (where a size-1 dimension's
/// stride is anyone's guess).
bool isDensePermuted(const ir::Type& type) {
  if (!type.isTensor() || type.sizes().size() != type.strides().size())
    return false;
  llvm::SmallVector<std::pair<int64_t, int64_t>, 4> strideAndSize;
  for (auto [size, stride] : llvm::zip(type.sizes(), type.strides())) {
    if (!size || !stride || !size.isConstant() || !stride.isConstant() || size.constantValue() < 2)
      return false;
    strideAndSize.push_back({stride.constantValue(), size.constantValue()});
  }
  llvm::sort(strideAndSize);
  int64_t expected = 1;
  for (auto [stride, size] : strideAndSize) {
    if (stride != expected)
      return false;
    expected *= size;
  }
  return true;
}

/// How many tensor values \p call reads.
unsigned tensorArgumentCount(const ir::Node& call) {
  unsigned count = 0;
  call.forEachUse([&](const ir::ValueRef& ref) {
    const ir::Type* type = ref.node->resultType(ref.index);
    count += type && type->isTensor();
  });
  return count;
}

/// Whether every value argument of \p call is a tensor of \p dtype (numbers
/// are literals, and the IR has no complex ones).
bool argumentsKeepDType(const ir::Node& call, ir::DType dtype) {
  bool keeps = true;
  call.forEachUse([&](const ir::ValueRef& ref) {
    const ir::Type* type = ref.node->resultType(ref.index);
    if (!type || !type->isTensor() || type->dtype() != dtype)
      keeps = false;
  });
  return keeps;
}

/// Whether \p user reads \p node's result.
bool uses(const ir::Node& user, const ir::Node* node) {
  bool found = false;
  user.forEachUse([&](const ir::ValueRef& ref) { found |= ref.node == node; });
  return found;
}

/// Rewrites \p write, an in-place call on \p temporary, into its twin, and
/// makes the uses of \p temporary after it uses of the twin's result.
void rewrite(ir::Graph& graph, ir::Node& write, ir::Node& temporary) {
  ir::Node* twin =
      graph.insert(write.getIterator(), ir::Node::call(write.name(), twinName(write.op()),
                                                       write.args(), write.kwargs(), write.type()));
  twin->setLocation(write.location());
  auto redirect = [&](ir::Argument& arg) {
    arg.forEachValue([&](ir::ValueRef& ref) {
      if (ref.node == &temporary || ref.node == &write)
        ref = ir::ValueRef{twin, std::nullopt};
    });
  };
  for (auto it = std::next(write.getIterator()); it != graph.nodes().end(); ++it) {
    for (ir::Argument& arg : it->args())
      redirect(arg);
    for (ir::KeywordArgument& kwarg : it->kwargs())
      redirect(kwarg.value);
  }
  graph.erase(&write);
}

} // namespace

llvm::Error runInPlaceToFunctional(ir::Graph& graph) {
  std::vector<ir::Node*> writes;
  for (ir::Node& node : graph.nodes()) {
    const ir::OpTraits* traits = traitsOf(node);
    if (traits && traits->functionalTwin && traits->pointwise && !node.args().empty())
      writes.push_back(&node);
  }
  for (ir::Node* write : writes) {
    const ir::Argument& self = write->args().front();
    if (!self.isValue() || self.valueRef().index)
      continue;
    ir::Node& temporary = *self.valueRef().node;
    const ir::OpTraits* twin = ir::findOpTraits(twinName(write->op()));
    if (!twin || !twin->isPure() || !twin->pointwise || !makesFreshTensor(temporary))
      continue;
    const ir::Type& type = temporary.type();
    bool twinKeepsLayout =
        type.hasContiguousStrides() || (isDensePermuted(type) && tensorArgumentCount(*write) == 1);
    if (!twinKeepsLayout || !sameTensorLayout(write->type(), type) ||
        !argumentsKeepDType(*write, type.dtype()))
      continue;
    // Uses before the write must neither alias nor write the temporary:
    // they would see the write. Uses after it read the twin's result, and
    // may do anything with it.
    bool private_ = true;
    for (ir::Node& user : graph.nodes()) {
      if (&user == write)
        break;
      if (!uses(user, &temporary))
        continue;
      const ir::OpTraits* traits = traitsOf(user);
      if (!traits || traits->returnsAlias || traits->mutatesArgument)
        private_ = false;
    }
    if (!private_)
      continue;
    rewrite(graph, *write, temporary);
  }
  return llvm::Error::success();
}

} // namespace dync::transforms
