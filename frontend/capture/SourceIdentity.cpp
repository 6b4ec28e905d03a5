//===- SourceIdentity.cpp - Which sources reached one object --------------===//
//
// Capture reads real objects through sources and keeps what the program does
// to them by object: a list changed through `self.a` is changed when read
// through `self.b` if both reached one list, a tensor passed twice is one
// graph input. So the graph assumes the aliasing it saw, both ways:
//
// - a second source reaching an object another source reached is guarded
//   `same SECOND : FIRST` (`self.a is self.b`, one list passed twice, tied
//   weights, a tensor input that is also a parameter);
// - an object the program changes (a tensor input the graph writes, a list
//   or dict it fills, an object whose attribute it sets) is guarded
//   `distinct` from every other source's object that could pass the same
//   guards, since a call that passes it twice would see the change where
//   the graph did not;
// - `a is b` between two such objects is guarded with capture's answer.
//
// As torch.compile's duplicate-input and tensor no-aliasing guards do, with
// the no-aliasing ones kept to what the program changes. Unlike there, two
// of the modules' own parameters or buffers are checked too when the
// program writes one of them (batch norm's running statistics in training):
// tying them after export (`bn2.running_mean = bn1.running_mean`) makes
// eager's second update read the first's result. A graph calling batch
// norm's kernels in eager's order would compute the same, but other writes
// change what capture saw of the other source (`unsqueeze_`, `resize_`),
// and the guard cannot tell writers apart. Each unordered pair is checked
// once. Two
// distinct tensors sharing storage (a view and its base passed separately)
// are not checked.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/ValueBuilder.h"

#include "frontend/capture/GuardsKeepApart.h"

#include "ir/OpTraits.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <set>
#include <string>
#include <utility>

namespace dync::capture {

using ir::Guard;
using ir::Source;
using python::PyRef;

bool ValueBuilder::tracksIdentity(PyObject* object) const {
  // Constants, torch's dtype-like objects, functions, classes and Python
  // modules: their guards pin them by value or name, and the program cannot
  // change them through capture (assigning their attributes is refused).
  // Tuples hold what they held; tracking their items is enough.
  int isModule = PyObject_IsInstance(object, types_.module.get());
  if (isModule != 0) {
    PyErr_Clear();
    return isModule == 1;
  }
  if (object == Py_None || object == Py_Ellipsis || object == Py_NotImplemented ||
      PyBool_Check(object) || PyLong_Check(object) || PyFloat_Check(object) ||
      PyComplex_Check(object) || PyUnicode_Check(object) || PyBytes_Check(object) ||
      PyTuple_Check(object) || PyCode_Check(object) || PyRange_Check(object) ||
      PySlice_Check(object) || PyFrozenSet_Check(object) || PyModule_Check(object) ||
      PyType_Check(object) || PyCallable_Check(object))
    return false;
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  return type != types_.dtype.get() && type != types_.device.get() && type != types_.layout.get() &&
         type != types_.memoryFormat.get();
}

SourcePtr ValueBuilder::sourceOfReadObject(PyObject* object) const {
  auto it = identityIndex_.find(object);
  return it == identityIndex_.end() ? nullptr : identities_[it->second].source;
}

void ValueBuilder::noteIdentity(PyObject* object, const SourcePtr& source) {
  if (!source || !object || !tracksIdentity(object)) {
    PyErr_Clear();
    return;
  }
  auto [it, inserted] = identityIndex_.try_emplace(object, identities_.size());
  if (inserted) {
    identities_.push_back({PyRef::borrow(object), source});
    return;
  }
  const SourcePtr& first = identities_[it->second].source;
  if (*first != *source)
    guards_.add(Guard::same(source, first));
}

void ValueBuilder::guardIdentity(PyObject* a, const SourcePtr& sourceA, PyObject* b,
                                 const SourcePtr& sourceB, bool same) {
  if (!sourceA || !sourceB || *sourceA == *sourceB || !tracksIdentity(a) || !tracksIdentity(b)) {
    PyErr_Clear();
    return;
  }
  guards_.add(same ? Guard::same(sourceB, sourceA) : Guard::distinct(sourceB, sourceA));
}

namespace {

/// The graph inputs \p ref may write through: the input itself, or the
/// inputs a view (any call whose result may alias an argument) was taken
/// of, followed back to the graph's inputs.
void collectWrittenInputs(const ir::ValueRef& ref, llvm::StringSet<>& inputs,
                          llvm::SmallPtrSetImpl<const ir::Node*>& seen) {
  const ir::Node* node = ref.node;
  if (!node || !seen.insert(node).second)
    return;
  if (node->isInput()) {
    inputs.insert(node->source());
    return;
  }
  const ir::OpTraits* traits = node->isCall() ? ir::findOpTraits(node->op()) : nullptr;
  if (!traits || !traits->returnsAlias)
    return;
  node->forEachUse([&](const ir::ValueRef& used) { collectWrittenInputs(used, inputs, seen); });
}

} // namespace

llvm::Error ValueBuilder::guardChangedObjectsDistinct(const ir::Graph& graph) {
  // What the program changes, by source: tensor inputs a call writes
  // (every tensor argument of a call whose schema writes one: a superset),
  // and the objects side effects replay on.
  llvm::StringSet<> changed;
  for (const ir::Node& node : graph.nodes()) {
    if (node.isCall()) {
      const ir::OpTraits* traits = ir::findOpTraits(node.op());
      if (!traits || !traits->mutatesArgument)
        continue;
      llvm::SmallPtrSet<const ir::Node*, 8> seen;
      node.forEachUse([&](const ir::ValueRef& used) { collectWrittenInputs(used, changed, seen); });
    } else if (node.isOutput()) {
      for (const ir::SideEffect& effect : node.sideEffects()) {
        if (effect.kind == ir::SideEffect::Kind::Fill ||
            effect.kind == ir::SideEffect::Kind::Extend ||
            effect.kind == ir::SideEffect::Kind::Update) {
          changed.insert(effect.target);
          continue;
        }
        // A call into the world (print, a logger) changes none of the
        // caller's objects capture reads.
        if (effect.kind == ir::SideEffect::Kind::Call)
          continue;
        // `base.name = value` changes base.
        llvm::Expected<SourcePtr> target = Source::parse(effect.target);
        if (!target) {
          llvm::consumeError(target.takeError());
          continue;
        }
        if ((*target)->base())
          changed.insert((*target)->base()->str());
      }
    }
  }
  if (changed.empty())
    return llvm::Error::success();

  // The type a tensor's guard checks, for those made graph inputs.
  auto tensorType = [&](PyObject* real) -> llvm::Expected<std::optional<ir::Type>> {
    auto it = tensorInputs_.find(real);
    if (it == tensorInputs_.end())
      return std::nullopt;
    llvm::Expected<ir::Type> type = oracle_.typeOf(it->second.second->object.get());
    if (!type)
      return type.takeError();
    return std::optional<ir::Type>(std::move(*type));
  };
  PyObject* tensorClass = types_.tensor.get();
  // Pairs already guarded, either way round: two written objects are each
  // the other's `other`.
  std::set<std::pair<std::string, std::string>> guarded;
  for (const Identity& written : identities_) {
    if (!changed.contains(written.source->str()))
      continue;
    PyObject* object = written.object.get();
    bool isTensor = PyObject_IsInstance(object, tensorClass) == 1;
    llvm::Expected<std::optional<ir::Type>> writtenType =
        isTensor ? tensorType(object) : llvm::Expected<std::optional<ir::Type>>(std::nullopt);
    if (!writtenType)
      return writtenType.takeError();
    for (const Identity& other : identities_) {
      if (other.object.get() == object)
        continue;
      PyObject* otherObject = other.object.get();
      if (isTensor) {
        if (PyObject_IsInstance(otherObject, tensorClass) != 1)
          continue;
        llvm::Expected<std::optional<ir::Type>> otherType = tensorType(otherObject);
        if (!otherType)
          return otherType.takeError();
        if (*writtenType && *otherType && !couldBeOneTensor(**writtenType, **otherType))
          continue;
      } else if (Py_TYPE(otherObject) != Py_TYPE(object)) {
        // The type guards of both keep them apart.
        continue;
      }
      std::string a = written.source->str(), b = other.source->str();
      if (!guarded.insert(a < b ? std::make_pair(a, b) : std::make_pair(b, a)).second)
        continue;
      guards_.add(Guard::distinct(written.source, other.source));
    }
  }
  PyErr_Clear();
  return llvm::Error::success();
}

} // namespace dync::capture
