//===- OpTraitsTest.cpp - The traits table against torch's registry -------===//
//
// The expectations are computed at test time from the running torch, read
// off each overload's schema text (not the alias objects the generator
// uses) and its tags, so the table, the generator and the build rule that
// ties them are all checked for every aten overload.
//
//===----------------------------------------------------------------------===//
#include "ir/OpTraits.h"

#include "test/unit/PythonTestSupport.h"

using namespace dync;

namespace {

constexpr const char* kFacts = R"py(
import re
import torch
import torch.fx.node

def split_schema(text):
    # `aten::name.overload(args) -> returns`: the arguments end at the
    # parenthesis that closes the first one.
    depth = 0
    for i, c in enumerate(text):
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return text[:i + 1], text[i + 1:]
    raise ValueError(text)

side_effectful = {str(f) for f in torch.fx.node._side_effectful_functions}

# native_batch_norm writes running_mean and running_var when training, and
# its schema says not; torch's Python kernel for its autograd key calls
# _native_batch_norm_legit, whose schema declares both writes.
corrected_schemas = {
    'aten::native_batch_norm.default':
        split_schema(str(torch.ops.aten._native_batch_norm_legit.default._schema))[0],
}

def functional_twin(op, args, returns):
    # `aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)
    # -> Tensor(a!)` and `aten::add.Tensor(Tensor self, Tensor other, *,
    # Scalar alpha=1) -> Tensor`: the same text once the first argument's
    # annotation and the name's underscore are gone.
    name = op._schema.name
    if not name.endswith('_') or name.endswith('__'):
        return False
    head, _, rest = args.partition('(')
    if not rest.startswith('Tensor(a!) ') or '(' in rest[len('Tensor(a!) '):].replace('()', ''):
        return False
    if returns.strip() != '-> Tensor(a!)':
        return False
    packet = getattr(torch.ops.aten, name.split('::', 1)[1][:-1], None)
    twin = getattr(packet, op._schema.overload_name or 'default', None) if packet else None
    if twin is None:
        return False
    twin_args, twin_returns = split_schema(str(twin._schema))
    same_args = twin_args.partition('(')[2] == 'Tensor ' + rest[len('Tensor(a!) '):]
    return same_args and twin_returns.strip() == '-> Tensor'

def facts_line(qualified, op):
    args, returns = split_schema(str(op._schema))
    tags = set(op.tags)
    facts = []
    # An annotation with `!` in it, e.g. `Tensor(a!)` or `Tensor(a! -> *)[]`,
    # here or in the correctly annotated form torch gives for an overload
    # whose schema leaves its writes out.
    correct = corrected_schemas.get(qualified)
    if re.search(r'\([a-z*]+!', args) or (correct and re.search(r'\([a-z*]+!', correct)):
        facts.append('mutatesArgument')
    if re.search(r'Tensor\([a-z*]', returns):
        facts.append('returnsAlias')
    if torch.Tag.nondeterministic_seeded in tags:
        facts.append('randomSeeded')
    if torch.Tag.pointwise in tags:
        facts.append('pointwise')
    if torch.Tag.reduction in tags:
        facts.append('reduction')
    if torch.Tag.dynamic_output_shape in tags or torch.Tag.data_dependent_output in tags:
        facts.append('dataDependent')
    if torch.Tag.core in tags:
        facts.append('core')
    if str(op) in side_effectful:
        facts.append('sideEffect')
    if functional_twin(op, args, returns):
        facts.append('functionalTwin')
    return ' '.join([qualified] + facts)

lines = []
for name in torch._C._dispatch_get_all_op_names():
    if not name.startswith('aten::'):
        continue
    base, _, overload = name[len('aten::'):].partition('.')
    packet = getattr(torch.ops.aten, base, None)
    op = getattr(packet, overload or 'default', None) if packet is not None else None
    if op is None:
        continue
    lines.append(facts_line('aten::%s.%s' % (base, overload or 'default'), op))
lines.sort()
)py";

std::string factsLine(llvm::StringRef name, const ir::OpTraits& traits) {
  std::string line = name.str();
  auto add = [&](bool fact, const char* word) {
    if (fact)
      line += std::string(" ") + word;
  };
  add(traits.mutatesArgument, "mutatesArgument");
  add(traits.returnsAlias, "returnsAlias");
  add(traits.randomSeeded, "randomSeeded");
  add(traits.pointwise, "pointwise");
  add(traits.reduction, "reduction");
  add(traits.dataDependent, "dataDependent");
  add(traits.core, "core");
  add(traits.sideEffect, "sideEffect");
  add(traits.functionalTwin, "functionalTwin");
  return line;
}

class OpTraitsTest : public test::PythonTest {
protected:
  OpTraitsTest() : PythonTest(kFacts) {}
};

TEST_F(OpTraitsTest, EveryAtenOverloadMatchesTorch) {
  std::vector<std::string> lines = test::stringsOf(global("lines"));
  ASSERT_GT(lines.size(), 1000u);
  size_t pure = 0, impure = 0;
  for (const std::string& expected : lines) {
    llvm::StringRef name = llvm::StringRef(expected).split(' ').first;
    const ir::OpTraits* traits = ir::findOpTraits(name);
    ASSERT_NE(traits, nullptr) << name.str() << " is missing from the table";
    EXPECT_EQ(factsLine(name, *traits), expected);
    (traits->isPure() ? pure : impure)++;
  }
  // Both kinds occur, so isPure is not trivially constant.
  EXPECT_GT(pure, 0u);
  EXPECT_GT(impure, 0u);
}

TEST(OpTraitsLookupTest, BatchNormWritesItsRunningStatistics) {
  // Eager's training batch norm, as a graph that records autograd keeps it,
  // updates its running statistics in place: a write, so never merged,
  // removed, moved, or left out of the aliasing guards.
  for (llvm::StringRef name :
       {"aten::native_batch_norm.default", "aten::_native_batch_norm_legit.default"}) {
    const ir::OpTraits* traits = ir::findOpTraits(name);
    ASSERT_NE(traits, nullptr) << name.str();
    EXPECT_TRUE(traits->mutatesArgument) << name.str();
    EXPECT_FALSE(traits->isPure()) << name.str();
  }
  const ir::OpTraits* eval = ir::findOpTraits("aten::_native_batch_norm_legit_no_training.default");
  ASSERT_NE(eval, nullptr);
  EXPECT_FALSE(eval->mutatesArgument);
}

TEST(OpTraitsLookupTest, UnknownNamesAreNotFound) {
  // Overloads are always spelled with their overload name, `.default` too.
  EXPECT_EQ(ir::findOpTraits("aten::relu"), nullptr);
  EXPECT_EQ(ir::findOpTraits("aten::no_such_operator.default"), nullptr);
  EXPECT_EQ(ir::findOpTraits(""), nullptr);
  EXPECT_EQ(ir::findOpTraits("zzz::last.default"), nullptr);
  EXPECT_NE(ir::findOpTraits("aten::relu.default"), nullptr);
  EXPECT_EQ(ir::findOpTraits("dync::no_such_operator.default"), nullptr);
}

TEST(OpTraitsLookupTest, GeneratorOperatorsAreRandomAndWriteNoTensor) {
  // dync's own operators on the default generator (runtime/shim/
  // GeneratorOps.cpp): tagged nondeterministic_seeded there, and their
  // schemas write and alias no tensor.
  for (llvm::StringRef name : {"dync::manual_seed.default", "dync::get_rng_state.default",
                               "dync::set_rng_state.default"}) {
    const ir::OpTraits* traits = ir::findOpTraits(name);
    ASSERT_NE(traits, nullptr) << name.str();
    EXPECT_TRUE(traits->randomSeeded) << name.str();
    EXPECT_FALSE(traits->mutatesArgument) << name.str();
    EXPECT_FALSE(traits->returnsAlias) << name.str();
    EXPECT_FALSE(traits->isPure()) << name.str();
  }
}

} // namespace
