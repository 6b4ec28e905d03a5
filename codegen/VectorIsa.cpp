//===- VectorIsa.cpp - Vector instructions kernels ask for by name --------===//
//
// Each named instruction is an internal function in four widths: the scalar
// one the kernel calls (kept out of line until the vectorizer has run, or
// it would be inlined first and the vectorizer would see an intrinsic it
// cannot widen) and variants of 4, 8 and 16 lanes, the widths the
// vectorizer picks for f32 loops on AVX-512. Every width computes on a
// 512-bit register, its lanes placed in the low ones: one intrinsic per
// instruction, and the spare lanes cost nothing.
//
//===----------------------------------------------------------------------===//
#include "codegen/VectorIsa.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/PassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cassert>

using namespace dync;
using namespace dync::codegen;
using llvm::Value;

namespace {

constexpr llvm::StringLiteral IsaFlag = "dync.vector-isa";
/// Marks the functions inlineVectorIsaCalls() inlines.
constexpr llvm::StringLiteral HelperAttribute = "dync-vector-isa-helper";
constexpr unsigned Lanes = 16;
constexpr unsigned VariantWidths[] = {4, 8, 16};

/// \p v (a scalar or a vector of at most 16 lanes) in the low lanes of a
/// 16-lane vector.
Value* widen(llvm::IRBuilder<>& b, Value* v) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!vector)
    return b.CreateInsertElement(
        llvm::PoisonValue::get(llvm::FixedVectorType::get(v->getType(), Lanes)), v, uint64_t(0));
  unsigned width = vector->getNumElements();
  if (width == Lanes)
    return v;
  llvm::SmallVector<int, Lanes> mask;
  for (unsigned i = 0; i < Lanes; ++i)
    mask.push_back(i < width ? int(i) : -1);
  return b.CreateShuffleVector(v, llvm::PoisonValue::get(vector), mask);
}

/// The low lanes of the 16-lane \p v, as the type \p like.
Value* narrow(llvm::IRBuilder<>& b, Value* v, llvm::Type* like) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(like);
  if (!vector)
    return b.CreateExtractElement(v, uint64_t(0));
  unsigned width = vector->getNumElements();
  if (width == Lanes)
    return v;
  llvm::SmallVector<int, Lanes> mask;
  for (unsigned i = 0; i < width; ++i)
    mask.push_back(int(i));
  return b.CreateShuffleVector(v, mask);
}

llvm::Type* withWidth(llvm::Type* scalar, unsigned width) {
  return width == 1 ? scalar : llvm::FixedVectorType::get(scalar, width);
}

/// Computes the 16-lane result from the 16-lane arguments.
using Body = llvm::function_ref<Value*(llvm::IRBuilder<>&, llvm::ArrayRef<Value*>)>;

/// The helper \p name of the given scalar signature in \p module, made with
/// its vector variants the first time it is asked for.
llvm::Function* helper(llvm::Module& module, llvm::StringRef name, llvm::Type* result,
                       llvm::ArrayRef<llvm::Type*> params, Body body) {
  if (llvm::Function* existing = module.getFunction(name))
    return existing;
  llvm::LLVMContext& ctx = module.getContext();
  auto define = [&](unsigned width, const llvm::Twine& fnName) {
    llvm::SmallVector<llvm::Type*, 2> types;
    for (llvm::Type* p : params)
      types.push_back(withWidth(p, width));
    auto* fn =
        llvm::Function::Create(llvm::FunctionType::get(withWidth(result, width), types, false),
                               llvm::GlobalValue::InternalLinkage, fnName, module);
    fn->setDoesNotAccessMemory();
    fn->setDoesNotThrow();
    fn->setWillReturn();
    fn->setDoesNotFreeMemory();
    fn->addFnAttr(llvm::Attribute::NoSync);
    fn->addFnAttr(HelperAttribute);
    llvm::IRBuilder<> fb(llvm::BasicBlock::Create(ctx, "entry", fn));
    llvm::SmallVector<Value*, 2> args;
    for (llvm::Argument& arg : fn->args())
      args.push_back(widen(fb, &arg));
    fb.CreateRet(narrow(fb, body(fb, args), fn->getReturnType()));
    return fn;
  };
  llvm::Function* scalar = define(1, name);
  // Inlined into the loop before vectorization, the intrinsic inside would
  // keep the loop scalar.
  scalar->addFnAttr(llvm::Attribute::NoInline);
  std::string mappings;
  llvm::SmallVector<llvm::GlobalValue*, 3> variants;
  for (unsigned width : VariantWidths) {
    std::string variantName = (name + "_v" + llvm::Twine(width)).str();
    variants.push_back(define(width, variantName));
    if (!mappings.empty())
      mappings += ",";
    mappings += "_ZGV_LLVM_N" + std::to_string(width) + std::string(params.size(), 'v') + "_" +
                name.str() + "(" + variantName + ")";
  }
  scalar->addFnAttr("vector-function-abi-variant", mappings);
  // Nothing calls the variants until the vectorizer does.
  llvm::appendToCompilerUsed(module, variants);
  return scalar;
}

llvm::Module& moduleOf(llvm::IRBuilder<>& b) { return *b.GetInsertBlock()->getModule(); }

} // namespace

VectorIsa codegen::vectorIsaOf(const llvm::TargetMachine& tm) {
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  bool avx512 = sti->checkFeatures("+avx512f,+avx512vl");
  return avx512 ? VectorIsa::Avx512 : VectorIsa::Generic;
}

void codegen::setVectorIsa(llvm::Module& module, VectorIsa isa) {
  if (isa == VectorIsa::Avx512)
    module.addModuleFlag(llvm::Module::Error, IsaFlag,
                         llvm::MDString::get(module.getContext(), "avx512"));
}

VectorIsa codegen::vectorIsaOf(const llvm::Module& module) {
  auto* flag = llvm::dyn_cast_or_null<llvm::MDString>(module.getModuleFlag(IsaFlag));
  return flag && flag->getString() == "avx512" ? VectorIsa::Avx512 : VectorIsa::Generic;
}

Value* codegen::emitTableLookup(llvm::IRBuilder<>& b, llvm::ArrayRef<float> table, Value* index) {
  assert(table.size() == Lanes && "a table fills one 16-lane register");
  llvm::Module& module = moduleOf(b);
  assert(vectorIsaOf(module) == VectorIsa::Avx512 && "table lookups need AVX-512");
  llvm::SmallVector<llvm::Constant*, Lanes> entries;
  std::string bits;
  for (float v : table) {
    entries.push_back(llvm::ConstantFP::get(b.getFloatTy(), v));
    bits += llvm::utohexstr(llvm::bit_cast<uint32_t>(v)) + ",";
  }
  llvm::Constant* constant = llvm::ConstantVector::get(entries);
  std::string name = "dync_isa_table_" + llvm::utohexstr(llvm::xxh3_64bits(bits));
  llvm::Function* fn =
      helper(module, name, b.getFloatTy(), {b.getInt32Ty()},
             [&](llvm::IRBuilder<>& fb, llvm::ArrayRef<Value*> args) -> Value* {
               // vpermps reads the low four bits of each index.
               return fb.CreateIntrinsic(llvm::Intrinsic::x86_avx512_permvar_sf_512, {},
                                         {constant, args[0]});
             });
  return b.CreateCall(fn, {index});
}

Value* codegen::emitScalef(llvm::IRBuilder<>& b, Value* x, Value* n) {
  llvm::Module& module = moduleOf(b);
  assert(vectorIsaOf(module) == VectorIsa::Avx512 && "scalef needs AVX-512");
  llvm::Function* fn = helper(
      module, "dync_isa_scalef", b.getFloatTy(), {b.getFloatTy(), b.getFloatTy()},
      [](llvm::IRBuilder<>& fb, llvm::ArrayRef<Value*> args) -> Value* {
        // All lanes, rounded as MXCSR says (4: the current direction).
        return fb.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                                  {args[0], args[1], llvm::PoisonValue::get(args[0]->getType()),
                                   fb.getInt16(0xFFFF), fb.getInt32(4)});
      });
  return b.CreateCall(fn, {x, n});
}

void codegen::inlineVectorIsaCalls(llvm::Module& module, llvm::ModuleAnalysisManager& analyses) {
  bool any = false;
  for (llvm::Function& fn : module) {
    if (!fn.hasFnAttribute(HelperAttribute))
      continue;
    any = true;
    fn.removeFnAttr(llvm::Attribute::NoInline);
    fn.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  if (!any)
    return;
  llvm::removeFromUsedLists(module, [](llvm::Constant* c) {
    auto* fn = llvm::dyn_cast<llvm::Function>(c->stripPointerCasts());
    return fn && fn->hasFnAttribute(HelperAttribute);
  });
  llvm::ModulePassManager passes;
  passes.addPass(llvm::AlwaysInlinerPass());
  // Folds the shuffles that move a narrow variant's lanes into a 16-lane
  // register and back into the instructions around them.
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::InstCombinePass()));
  passes.addPass(llvm::GlobalDCEPass());
  passes.run(module, analyses);
}
