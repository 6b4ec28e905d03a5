/* Artifacts for the Python runtime's tests (test/e2e/test_runtime_*.py),
 * written by hand the way codegen will generate them: a descriptor, entries
 * whose rewritten code is marshalled at build time from
 * pyrt_*_rewritten.py (MarshalCode.py writes TEST_CODE_HEADER), their native
 * guards, and one graph.
 *
 * Definitions:
 *   TEST_SET            1: pyrt_model.py's scale, linear, mixed, countdown,
 *                          Model.forward and numbers; 2: pyrt_other.py's
 *                          triple
 *   TEST_CODE_HEADER    the generated header (code_* arrays, LINE_* numbers)
 *   TEST_PYTHON_MAGIC   importlib.util.MAGIC_NUMBER's four bytes
 *   TEST_TORCH_VERSION  torch.__version__ at "export"
 *   TEST_SOURCE_PATH    the source file and its SHA-256
 *   TEST_SOURCE_SHA256
 *   TEST_BAD_CODE       optional: scale's code is marshal.dumps(42), not a
 *                       code object
 */
#include "test/runtime/Inputs/TestArtifactSupport.h"

#include TEST_CODE_HEADER

/* The float32 tensor in `obj`, or NULL with *reason set. Only C-level reads:
 * the shim's borrow checks the object's type without running Python code. */
static const dync_tensor* float32_tensor(struct _object* obj, const char* not_tensor,
                                         const char* not_float32, const char** reason) {
  const dync_tensor* t =
      api->tensor_borrow_from_pyobject ? api->tensor_borrow_from_pyobject(obj) : NULL;
  if (!t) {
    *reason = not_tensor;
    return NULL;
  }
  if (api->tensor_dtype(t) != DYNC_DTYPE_FLOAT32) {
    *reason = not_float32;
    return NULL;
  }
  return t;
}

#if TEST_SET == 1

/* L['x']: a float32 tensor of rank 2. */
static int guard_scale(struct _object* const* fast_locals, struct _object* globals,
                       const char** reason) {
  const dync_tensor* x = float32_tensor(fast_locals[0], "isinstance(L['x'], torch.Tensor)",
                                        "L['x'].dtype == torch.float32", reason);
  (void)globals;
  if (!x)
    return 0;
  if (api->tensor_dim(x) != 2) {
    *reason = "L['x'].dim() == 2";
    return 0;
  }
  return 1;
}

/* L['x'], L['w'], L['b']: float32 tensors of ranks 2, 2, 1 that fit addmm. */
static int guard_linear(struct _object* const* fast_locals, struct _object* globals,
                        const char** reason) {
  const dync_tensor* x = float32_tensor(fast_locals[0], "isinstance(L['x'], torch.Tensor)",
                                        "L['x'].dtype == torch.float32", reason);
  const dync_tensor* w = x ? float32_tensor(fast_locals[1], "isinstance(L['w'], torch.Tensor)",
                                            "L['w'].dtype == torch.float32", reason)
                           : NULL;
  const dync_tensor* b = w ? float32_tensor(fast_locals[2], "isinstance(L['b'], torch.Tensor)",
                                            "L['b'].dtype == torch.float32", reason)
                           : NULL;
  (void)globals;
  if (!b)
    return 0;
  return addmm_shapes_fit(x, w, b, reason);
}

/* mixed(a, /, b, *args, c=3, **kw): localsplus is a, b, c, args, kw. */
static int guard_mixed(struct _object* const* fast_locals, struct _object* globals,
                       const char** reason) {
  (void)globals;
  return float32_tensor(fast_locals[0], "isinstance(L['a'], torch.Tensor)",
                        "L['a'].dtype == torch.float32", reason) != NULL;
}

/* countdown(x, n) */
static int guard_countdown(struct _object* const* fast_locals, struct _object* globals,
                           const char** reason) {
  (void)globals;
  return float32_tensor(fast_locals[0], "isinstance(L['x'], torch.Tensor)",
                        "L['x'].dtype == torch.float32", reason) != NULL;
}

/* Model.forward(self, x): L['x'] a float32 tensor of rank 2. */
static int guard_forward(struct _object* const* fast_locals, struct _object* globals,
                         const char** reason) {
  return guard_scale(fast_locals + 1, globals, reason);
}

static int guard_numbers(struct _object* const* fast_locals, struct _object* globals,
                         const char** reason) {
  (void)fast_locals;
  (void)globals;
  (void)reason;
  return 1;
}

/* inputs: b, x, w. outputs: relu(addmm(b, x, w)). */
static int graph_linear(dync_tensor* const* inputs, size_t num_inputs, const int64_t* int_inputs,
                        size_t num_int_inputs, dync_tensor** outputs, size_t num_outputs,
                        char* error, size_t error_size) {
  (void)int_inputs;
  if (num_inputs != 3 || num_int_inputs != 0 || num_outputs != 1) {
    snprintf(error, error_size, "graph_linear takes 3 tensors and returns 1");
    return DYNC_ARTIFACT_ERROR;
  }
  outputs[0] = NULL;
  return run_addmm_relu(inputs, outputs, error, error_size);
}

static const dync_artifact_graph graphs_linear[] = {
    {"__dync_graph_linear_0", 3, 0, 1, graph_linear},
};

#ifdef TEST_BAD_CODE
static const unsigned char code_scale_bad[] = {0xe9, 42, 0, 0, 0};
#define SCALE_CODE code_scale_bad
#else
#define SCALE_CODE code_scale
#endif

static const dync_artifact_entry entries[] = {
    {"scale", LINE_scale, SCALE_CODE, sizeof(SCALE_CODE), guard_scale, 0, NULL},
    {"linear", LINE_linear, code_linear, sizeof(code_linear), guard_linear, 1, graphs_linear},
    {"mixed", LINE_mixed, code_mixed, sizeof(code_mixed), guard_mixed, 0, NULL},
    {"countdown", LINE_countdown, code_countdown, sizeof(code_countdown), guard_countdown, 0, NULL},
    {"Model.forward", LINE_Model_forward, code_Model_forward, sizeof(code_Model_forward),
     guard_forward, 0, NULL},
    {"numbers", LINE_numbers, code_numbers, sizeof(code_numbers), guard_numbers, 0, NULL},
};

#else /* TEST_SET == 2 */

/* L['x']: a float32 tensor of any rank. */
static int guard_triple(struct _object* const* fast_locals, struct _object* globals,
                        const char** reason) {
  (void)globals;
  return float32_tensor(fast_locals[0], "isinstance(L['x'], torch.Tensor)",
                        "L['x'].dtype == torch.float32", reason) != NULL;
}

static const dync_artifact_entry entries[] = {
    {"triple", LINE_triple, code_triple, sizeof(code_triple), guard_triple, 0, NULL},
};

#endif

static const dync_artifact_descriptor descriptor = {
    DYNC_ARTIFACT_MAGIC,
    DYNC_ARTIFACT_FORMAT_VERSION,
    sizeof(dync_artifact_descriptor),
    DYNC_SHIM_ABI_VERSION,
    {TEST_PYTHON_MAGIC},
    TEST_TORCH_VERSION,
    "x86-64",
    "",
    TEST_SOURCE_PATH,
    TEST_SOURCE_SHA256,
    init_shim,
    sizeof(entries) / sizeof(entries[0]),
    entries,
};

__attribute__((visibility("default"))) const dync_artifact_descriptor*
dync_artifact_get_descriptor(void) {
  return &descriptor;
}
