//===- OperatorSchemas.cpp - torch's schemas of the operators a graph calls ===//
#include "frontend/oracle/OperatorSchemas.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "ir/ControlFlow.h"

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
  // The branches of cond nodes call operators too.
  std::vector<const ir::Graph*> all;
  for (const ir::Graph* graph : graphs) {
    std::vector<const ir::Graph*> branches = ir::condSubgraphs(*graph);
    all.insert(all.end(), branches.begin(), branches.end());
    all.push_back(graph);
  }
  for (const ir::Graph* graph : all)
    for (const ir::Node& node : graph->nodes()) {
      // A kernel call runs generated code, and a cond runs subgraphs: no
      // operator with a schema.
      if (node.kind() != ir::NodeKind::Call || node.isKernelCall() || ir::isCondCall(node) ||
          !seen.insert(node.op()).second)
        continue;
      llvm::Expected<std::string> schema = schemaOf(ops.get(), node.op());
      if (!schema)
        return schema.takeError();
      lines += *schema + "\n";
    }
  return lines;
}
