//===- GeneratorState.h - torch's default random generator's state --------===//
//
// A graph's random operators (bernoulli, dropout, rand_like, ...) draw from
// torch's default CPU generator when the compiled call runs, in the order
// eager's calls draw, so a served call consumes the generator exactly as
// eager does. A program that also reseeds the generator, saves its state or
// restores it between draws (`torch.manual_seed`, `torch.get_rng_state`,
// `torch.set_rng_state`) has those steps captured as graph nodes too, at
// their place among the draws: they are calls of dync's own operators
// (`dync::manual_seed`, `dync::get_rng_state`, `dync::set_rng_state`;
// frontend/oracle/embedded/oracle_generator.py, runtime/shim/
// GeneratorOps.cpp). Running them at capture time or replaying them after
// the graph would put them out of order with the draws.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <optional>
#include <string>
#include <vector>

namespace dync::capture {

class MachineContext;

/// torch's functions on the default generator's state.
enum class GeneratorStateFunction { ManualSeed, Seed, GetState, SetState };

/// Which of them \p function is (by identity, as `torch.NAME` or
/// `torch.random.NAME`), else none.
std::optional<GeneratorStateFunction> generatorStateFunction(PyObject* function);

/// Captures a call of \p function: a node of dync's operator for it, or a
/// refusal naming the function where the graph cannot hold the call.
llvm::Expected<ValuePtr> callGeneratorStateFunction(MachineContext& context,
                                                    GeneratorStateFunction function,
                                                    const std::vector<ValuePtr>& args,
                                                    const KeywordArgs& kwargs);

} // namespace dync::capture
