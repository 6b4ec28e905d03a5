/* A dync artifact written by hand the way codegen will generate one: a
 * descriptor, one entry for model.py's f(x, w, b), its guard, and one graph
 * computing relu(addmm(b, x, w)) through the shim.
 *
 * CMake compiles it several times with different definitions to make
 * artifacts the loader must accept or refuse:
 *   TEST_FORMAT_VERSION   the descriptor's format_version
 *   TEST_MANIFEST_VERSION the same number without its `u`, for the manifest
 *   TEST_PYTHON_MAGIC     the four bytes of importlib.util.MAGIC_NUMBER
 *   TEST_TORCH_VERSION    torch.__version__ at "export"
 *   TEST_CPU_FEATURES     required CPU features
 *   TEST_SOURCE_PATH      the source file and its SHA-256
 *   TEST_SOURCE_SHA256
 *   TEST_INIT_OP          an operator init resolves (a missing one fails init)
 *   TEST_CODE_HEADER      optional: a header defining test_code[] (marshalled
 *                         rewritten code), else placeholder bytes
 */
#include "test/runtime/Inputs/TestArtifactSupport.h"

#ifdef TEST_CODE_HEADER
#include TEST_CODE_HEADER
#else
static const unsigned char test_code[] = {0xe3, 0, 0, 0, 0};
#endif

static int init(const dync_shim_api* shim, char* error, size_t error_size) {
  dync_op* probe;
  if (init_shim(shim, error, error_size) != DYNC_ARTIFACT_OK)
    return DYNC_ARTIFACT_ERROR;
  if (api->op_lookup(TEST_INIT_OP, "default", &probe) != DYNC_OK) {
    snprintf(error, error_size, "%s", api->last_error());
    return DYNC_ARTIFACT_ERROR;
  }
  return DYNC_ARTIFACT_OK;
}

/* L['x'], L['w'], L['b']: float32 tensors of ranks 2, 2, 1 whose sizes fit
 * addmm. Only C-level reads, as guards must. */
static int guard_f(struct _object* const* fast_locals, struct _object* globals,
                   const char** reason) {
  const dync_tensor* x;
  const dync_tensor* w;
  const dync_tensor* b;
  (void)globals;
  if (!api->tensor_borrow_from_pyobject) {
    *reason = "no Python in this process";
    return 0;
  }
  x = api->tensor_borrow_from_pyobject(fast_locals[0]);
  w = api->tensor_borrow_from_pyobject(fast_locals[1]);
  b = api->tensor_borrow_from_pyobject(fast_locals[2]);
  if (!x || !w || !b) {
    *reason = "isinstance(L['x'], L['w'], L['b'], torch.Tensor)";
    return 0;
  }
  if (api->tensor_dtype(x) != DYNC_DTYPE_FLOAT32 || api->tensor_dtype(w) != DYNC_DTYPE_FLOAT32 ||
      api->tensor_dtype(b) != DYNC_DTYPE_FLOAT32) {
    *reason = "L['x'].dtype == L['w'].dtype == L['b'].dtype == torch.float32";
    return 0;
  }
  return addmm_shapes_fit(x, w, b, reason);
}

/* inputs: b, x, w. outputs: relu(addmm(b, x, w)). */
static int graph_0(dync_tensor* const* inputs, size_t num_inputs, const int64_t* int_inputs,
                   size_t num_int_inputs, dync_tensor** outputs, size_t num_outputs, char* error,
                   size_t error_size) {
  (void)int_inputs;
  outputs[0] = NULL;
  if (num_inputs != 3 || num_int_inputs != 0 || num_outputs != 1) {
    snprintf(error, error_size, "graph_0 takes 3 tensors and returns 1");
    return DYNC_ARTIFACT_ERROR;
  }
  return run_addmm_relu(inputs, outputs, error, error_size);
}

static const dync_artifact_graph graphs_f[] = {
    {"__dync_graph_0", 3, 0, 1, graph_0},
};

static const dync_artifact_entry entries[] = {
    {"f", 5, test_code, sizeof(test_code), guard_f, 1, graphs_f},
};

/* Code identity: where f is defined and the one function its capture ran.
 * TEST_BAD_ORIGIN points the digest outside the file (at libc's stderr),
 * which the loader must refuse. */
static const dync_artifact_function functions_f[] = {
    {"model", "f", TEST_SOURCE_PATH, 5,
#ifdef TEST_BAD_ORIGIN
     (const char*)&stderr
#else
     "0000000000000000000000000000000000000000000000000000000000000000"
#endif
    },
};

static const dync_artifact_entry_origin origins[] = {
    {"model", TEST_SOURCE_PATH, 1, functions_f},
};

static const dync_artifact_descriptor descriptor = {
    DYNC_ARTIFACT_MAGIC,
    TEST_FORMAT_VERSION,
    sizeof(dync_artifact_descriptor),
    DYNC_SHIM_ABI_VERSION,
    {TEST_PYTHON_MAGIC},
    TEST_TORCH_VERSION,
    "x86-64",
    TEST_CPU_FEATURES,
    TEST_SOURCE_PATH,
    TEST_SOURCE_SHA256,
    init,
    1,
    entries,
    origins,
};

/* The manifest's first lines, in the section codegen puts it in. */
#define TEST_STRING(x) #x
#define TEST_EXPAND(x) TEST_STRING(x)
__attribute__((section(".dync.manifest"), used)) static const char manifest[] =
    "# dync artifact\nformat_version " TEST_EXPAND(TEST_MANIFEST_VERSION) "\n";

__attribute__((visibility("default"))) const dync_artifact_descriptor*
dync_artifact_get_descriptor(void) {
  return &descriptor;
}
