//===- OperatorSchemas.cpp - torch's schemas of the operators a graph calls ===//
#include "frontend/oracle/OperatorSchemas.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "ir/AutogradFunction.h"
#include "ir/ControlFlow.h"
#include "ir/ScalarOps.h"
#include "ir/WhileLoop.h"

#include <functional>

#include "llvm/ADT/StringSet.h"

using namespace dync;
using python::PyRef;

namespace {

/// torch.ops.<namespace>.<name>.<overload> for `namespace::name.overload`.
llvm::Expected<std::string> schemaOf(PyObject* ops, llvm::StringRef op) {
  auto [qualified, overload] = op.rsplit('.');
  auto [space, name] = qualified.split("::");
  if (overload.empty() || name.empty())
    return llvm::createStringError("malformed operator name '" + op + "'");
  PyRef object = PyRef::borrow(ops);
  for (llvm::StringRef part : {space, name, overload}) {
    object = PyRef::steal(PyObject_GetAttrString(object.get(), part.str().c_str()));
    if (!object)
      return python::takePythonError("torch has no operator " + op);
  }
  PyRef schema = PyRef::steal(PyObject_GetAttrString(object.get(), "_schema"));
  if (!schema)
    return python::takePythonError("reading the schema of " + op);
  return python::strOf(schema.get());
}

} // namespace

llvm::Expected<std::string> oracle::operatorSchemas(llvm::ArrayRef<const ir::Graph*> graphs) {
  PyRef torch = PyRef::steal(PyImport_ImportModule("torch"));
  if (!torch)
    return python::takePythonError("importing torch");
  PyRef ops = PyRef::steal(PyObject_GetAttrString(torch.get(), "ops"));
  if (!ops)
    return python::takePythonError("reading torch.ops");
  llvm::StringSet<> seen;
  std::string lines;
  // A graph's operators, and those of the backward graphs its autograd
  // nodes run and of the subgraphs its cond and while_loop nodes run.
  std::function<llvm::Error(const ir::Graph&)> add = [&](const ir::Graph& graph) -> llvm::Error {
    for (const ir::Node& node : graph.nodes()) {
      if (ir::isCondCall(node) || ir::isWhileLoopCall(node)) {
        for (llvm::StringRef name : ir::calledSubgraphNames(node)) {
          const ir::Graph* called = graph.module() ? graph.module()->findSubgraph(name) : nullptr;
          if (called && seen.insert("@" + called->name()).second)
            if (llvm::Error error = add(*called))
              return error;
        }
        continue;
      }
      if (ir::isAutogradFunctionCall(node)) {
        llvm::Expected<ir::AutogradFunctionCall> call = ir::readAutogradFunctionCall(node);
        if (!call)
          return call.takeError();
        const ir::Graph* backward =
            graph.module() ? graph.module()->findBackward(call->backward) : nullptr;
        if (backward && seen.insert("@" + backward->name()).second)
          if (llvm::Error error = add(*backward))
            return error;
        continue;
      }
      // A kernel call runs generated code, not an operator with a schema;
      // so does Python's arithmetic on numbers (ir/ScalarOps.h).
      if (node.kind() != ir::NodeKind::Call || node.isKernelCall() || ir::scalarOpOf(node) ||
          !seen.insert(node.op()).second)
        continue;
      llvm::Expected<std::string> schema = schemaOf(ops.get(), node.op());
      if (!schema)
        return schema.takeError();
      lines += *schema + "\n";
    }
    return llvm::Error::success();
  };
  for (const ir::Graph* graph : graphs)
    if (llvm::Error error = add(*graph))
      return error;
  return lines;
}
