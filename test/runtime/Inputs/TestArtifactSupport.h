/* What the hand-written test artifacts (TestArtifact.c, PyRuntimeArtifact.c)
 * share: the shim table and the addmm/relu handles init resolves, the shape
 * checks of a guard for addmm(b, x, w), and the graph relu(addmm(b, x, w)).
 * Included by one translation unit per artifact; everything is static, and
 * marked unused where an artifact (PyRuntimeArtifact.c's set 2) has no graph. */
#ifndef DYNC_TEST_RUNTIME_INPUTS_TESTARTIFACTSUPPORT_H
#define DYNC_TEST_RUNTIME_INPUTS_TESTARTIFACTSUPPORT_H

#include "runtime/artifact/dync_artifact.h"

#include <stdio.h>

static const dync_shim_api* api;
static dync_op* op_addmm;
static dync_op* op_relu;

/* init's common part: checks the shim table, keeps it in `api` and resolves
 * op_addmm and op_relu. */
static int init_shim(const dync_shim_api* shim, char* error, size_t error_size) {
  if (shim->abi_version != DYNC_SHIM_ABI_VERSION || shim->size < sizeof(dync_shim_api)) {
    snprintf(error, error_size, "shim table too old");
    return DYNC_ARTIFACT_ERROR;
  }
  api = shim;
  if (api->op_lookup("aten::addmm", "default", &op_addmm) != DYNC_OK ||
      api->op_lookup("aten::relu", "default", &op_relu) != DYNC_OK) {
    snprintf(error, error_size, "%s", api->last_error());
    return DYNC_ARTIFACT_ERROR;
  }
  return DYNC_ARTIFACT_OK;
}

/* Float32 tensors x, w, b of ranks 2, 2, 1 whose sizes fit addmm(b, x, w);
 * else 0 with *reason set. */
__attribute__((unused)) static int addmm_shapes_fit(const dync_tensor* x, const dync_tensor* w,
                                                    const dync_tensor* b, const char** reason) {
  if (api->tensor_dim(x) != 2 || api->tensor_dim(w) != 2 || api->tensor_dim(b) != 1) {
    *reason = "L['x'].dim() == 2 and L['w'].dim() == 2 and L['b'].dim() == 1";
    return 0;
  }
  if (api->tensor_sizes(x)[1] != api->tensor_sizes(w)[0]) {
    *reason = "L['x'].size(1) == L['w'].size(0)";
    return 0;
  }
  if (api->tensor_sizes(b)[0] != api->tensor_sizes(w)[1]) {
    *reason = "L['b'].size(0) == L['w'].size(1)";
    return 0;
  }
  return 1;
}

/* A graph's body once its counts are checked: inputs b, x, w; outputs[0] =
 * relu(addmm(b, x, w)). */
__attribute__((unused)) static int run_addmm_relu(dync_tensor* const* inputs, dync_tensor** outputs,
                                                  char* error, size_t error_size) {
  dync_stack* stack;
  dync_tensor* t0 = NULL;
  int status = DYNC_ARTIFACT_ERROR;
  stack = api->stack_new();
  if (!stack) {
    snprintf(error, error_size, "out of memory");
    return DYNC_ARTIFACT_ERROR;
  }
  api->stack_push_tensor(stack, inputs[0]);
  api->stack_push_tensor(stack, inputs[1]);
  api->stack_push_tensor(stack, inputs[2]);
  if (api->op_call(op_addmm, stack) != DYNC_OK || api->stack_take_tensor(stack, 0, &t0) != DYNC_OK)
    goto fail;
  api->stack_push_tensor(stack, t0);
  if (api->op_call(op_relu, stack) != DYNC_OK ||
      api->stack_take_tensor(stack, 0, &outputs[0]) != DYNC_OK)
    goto fail;
  status = DYNC_ARTIFACT_OK;
  goto done;
fail:
  snprintf(error, error_size, "%s", api->last_error());
done:
  api->tensor_release(t0);
  api->stack_free(stack);
  return status;
}

#endif
