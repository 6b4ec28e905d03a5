/*
 * dync_shim.h - the stable C interface through which generated code reaches
 * ATen.
 *
 * An artifact never calls libtorch's C++ API: that API is mangled, inline-heavy
 * and changes between releases. Everything an artifact needs from ATen goes
 * through the plain C functions below, so the only things an artifact depends
 * on are these declarations and the numeric ABI version.
 *
 * The model is the dispatcher's boxed calling convention, one operator
 * overload per graph node:
 *
 *   dync_op* addmm;
 *   dync_op_lookup("aten::addmm", "default", &addmm);   -- once, at init
 *
 *   dync_stack* s = dync_stack_new();
 *   dync_stack_push_tensor(s, bias);                     -- arguments in
 *   dync_stack_push_tensor(s, x);                        -- schema order;
 *   dync_stack_push_tensor(s, w);                        -- trailing ones
 *   if (dync_op_call(addmm, s) != DYNC_OK)               -- with defaults
 *     report(dync_last_error());                         -- may be left out
 *   dync_stack_take_tensor(s, 0, &out);                  -- results out
 *
 * Conventions:
 *  - No function throws or aborts on bad input: each returns a dync_status,
 *    and on failure the message is retrievable with dync_last_error() on the
 *    same thread until the next failing call.
 *  - dync_tensor handles are reference counted. Functions that return a
 *    handle through an out-parameter give the caller a new reference, to be
 *    dropped with dync_tensor_release(), unless documented as borrowed.
 *    Functions that take a handle only borrow it.
 *  - An undefined tensor (ATen's "no tensor", e.g. a masked-out result) is
 *    represented by a NULL handle.
 *  - Handles may be used from any thread; a dync_stack belongs to one thread
 *    at a time.
 *
 * The same functions are also available as a table of function pointers
 * (dync_shim_api), which is how artifacts receive them: an artifact loaded
 * with RTLD_LOCAL then needs no undefined symbols resolved against the
 * runtime at all.
 */
#ifndef DYNC_RUNTIME_SHIM_DYNC_SHIM_H
#define DYNC_RUNTIME_SHIM_DYNC_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DYNC_SHIM_EXPORT __attribute__((visibility("default")))
#else
#define DYNC_SHIM_EXPORT
#endif

/* Bumped whenever a function's signature or meaning changes, or the
 * dync_shim_api table changes other than by appending at its end. */
#define DYNC_SHIM_ABI_VERSION 1

/* CPython's object type, declared here so this header needs no Python.h. */
struct _object;

typedef enum dync_status {
  DYNC_OK = 0,
  /* dync_op_lookup: no operator with that name and overload is registered. */
  DYNC_ERR_UNKNOWN_OP = 1,
  /* The argument stack does not fit the operator's schema (count or kind). */
  DYNC_ERR_SCHEMA_MISMATCH = 2,
  /* The operator itself raised (shape error, dtype error, ...). */
  DYNC_ERR_ATEN = 3,
  /* Misuse: NULL handle, result index out of range, result of another kind. */
  DYNC_ERR_INVALID_ARGUMENT = 4,
  /* A Python object was not a torch.Tensor, or Python raised. */
  DYNC_ERR_PYTHON = 5,
  /* Anything else (out of memory, an unexpected C++ exception). */
  DYNC_ERR_INTERNAL = 6
} dync_status;

/* Opaque handles. A dync_tensor is an ATen tensor; a dync_op a resolved
 * operator overload (valid for the life of the process, never freed); a
 * dync_stack a reusable argument and result stack. */
typedef struct dync_tensor dync_tensor;
typedef struct dync_op dync_op;
typedef struct dync_stack dync_stack;

/* Element types. The values are c10::ScalarType's, checked at compile time in
 * the shim, so they can be stored in artifacts. */
typedef enum dync_dtype {
  DYNC_DTYPE_UINT8 = 0,
  DYNC_DTYPE_INT8 = 1,
  DYNC_DTYPE_INT16 = 2,
  DYNC_DTYPE_INT32 = 3,
  DYNC_DTYPE_INT64 = 4,
  DYNC_DTYPE_FLOAT16 = 5,
  DYNC_DTYPE_FLOAT32 = 6,
  DYNC_DTYPE_FLOAT64 = 7,
  DYNC_DTYPE_COMPLEX32 = 8,
  DYNC_DTYPE_COMPLEX64 = 9,
  DYNC_DTYPE_COMPLEX128 = 10,
  DYNC_DTYPE_BOOL = 11,
  DYNC_DTYPE_BFLOAT16 = 15
} dync_dtype;

/* Device types, c10::DeviceType's values. */
typedef enum dync_device_type {
  DYNC_DEVICE_CPU = 0,
  DYNC_DEVICE_CUDA = 1,
  DYNC_DEVICE_META = 14
} dync_device_type;

/* Kinds of values a result slot can hold (see dync_stack_result_kind). */
typedef enum dync_value_kind {
  DYNC_VALUE_NONE = 0,
  DYNC_VALUE_TENSOR = 1,
  DYNC_VALUE_INT = 2,
  DYNC_VALUE_DOUBLE = 3,
  DYNC_VALUE_BOOL = 4,
  DYNC_VALUE_TENSOR_LIST = 5,
  DYNC_VALUE_INT_LIST = 6,
  DYNC_VALUE_OTHER = 7
} dync_value_kind;

/* ---- Errors and versions ------------------------------------------------ */

/* The message of the last failing call on this thread ("" if none). The
 * pointer stays valid until the next shim call on this thread. */
DYNC_SHIM_EXPORT const char* dync_last_error(void);

/* DYNC_SHIM_ABI_VERSION as compiled into the running shim. */
DYNC_SHIM_EXPORT int dync_shim_abi_version(void);

/* The version of the libtorch the shim was built against, "2.13.0". */
DYNC_SHIM_EXPORT const char* dync_shim_torch_version(void);

/* ---- Operators ---------------------------------------------------------- */

/* Resolves "aten::addmm" with overload "default" (or "" - both name the
 * unnamed overload) through the dispatcher's schema table. */
DYNC_SHIM_EXPORT dync_status dync_op_lookup(const char* name, const char* overload, dync_op** out);

/* The operator's schema as text, for diagnostics. Never NULL. */
DYNC_SHIM_EXPORT const char* dync_op_schema(const dync_op* op);

/* Calls the operator with the arguments pushed on the stack since the last
 * call or clear. Missing trailing arguments, and ones pushed with
 * dync_stack_push_default, take the schema's default; an argument without a
 * default must be given. Every argument is checked against the schema before
 * the call. On success the stack holds the results, in schema order, until
 * the next push (which starts the next call's arguments) or clear; on failure
 * it is empty. */
DYNC_SHIM_EXPORT dync_status dync_op_call(const dync_op* op, dync_stack* stack);

/* ---- Stacks: arguments in -------------------------------------------------
 * Pushes are cheap and return a status for NULL handles or lengths that cannot
 * be right; a failed push also poisons the stack so the next dync_op_call
 * reports it, which lets generated code check only the call. */

DYNC_SHIM_EXPORT dync_stack* dync_stack_new(void);
DYNC_SHIM_EXPORT void dync_stack_free(dync_stack* stack);
/* Drops all arguments, results and a pending push error. */
DYNC_SHIM_EXPORT void dync_stack_clear(dync_stack* stack);

DYNC_SHIM_EXPORT dync_status dync_stack_push_tensor(dync_stack* stack, const dync_tensor* t);
DYNC_SHIM_EXPORT dync_status dync_stack_push_int(dync_stack* stack, int64_t value);
/* A symbolic size, already evaluated to an integer by the caller. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_symint(dync_stack* stack, int64_t value);
DYNC_SHIM_EXPORT dync_status dync_stack_push_double(dync_stack* stack, double value);
DYNC_SHIM_EXPORT dync_status dync_stack_push_bool(dync_stack* stack, int value);
/* A number given for a Tensor parameter, as torch's Python binding passes it:
 * a 0-dim double, int64 or bool tensor marked as a wrapped number, which type
 * promotion treats like a Python scalar (x_f32 * 0.5 stays float32). */
DYNC_SHIM_EXPORT dync_status dync_stack_push_wrapped_double(dync_stack* stack, double value);
DYNC_SHIM_EXPORT dync_status dync_stack_push_wrapped_int(dync_stack* stack, int64_t value);
DYNC_SHIM_EXPORT dync_status dync_stack_push_wrapped_bool(dync_stack* stack, int value);
/* A complex number (real and imaginary parts), for a Scalar parameter; and,
 * for a Tensor parameter, as a 0-dim complex128 wrapped number. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_complex(dync_stack* stack, double real, double imag);
DYNC_SHIM_EXPORT dync_status dync_stack_push_wrapped_complex(dync_stack* stack, double real,
                                                             double imag);
/* None, for an optional argument that is absent. An optional argument that is
 * present is pushed as its value. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_none(dync_stack* stack);
/* The schema's default value for this argument. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_default(dync_stack* stack);
DYNC_SHIM_EXPORT dync_status dync_stack_push_int_list(dync_stack* stack, const int64_t* values,
                                                      size_t count);
DYNC_SHIM_EXPORT dync_status dync_stack_push_double_list(dync_stack* stack, const double* values,
                                                         size_t count);
DYNC_SHIM_EXPORT dync_status dync_stack_push_bool_list(dync_stack* stack, const int* values,
                                                       size_t count);
/* Tensor[]; no element may be NULL. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_tensor_list(dync_stack* stack,
                                                         const dync_tensor* const* tensors,
                                                         size_t count);
/* Tensor?[] (indexing); NULL elements are None. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_optional_tensor_list(dync_stack* stack,
                                                                  const dync_tensor* const* tensors,
                                                                  size_t count);
/* ScalarType, Layout and MemoryFormat arguments, by their c10 enum value. */
DYNC_SHIM_EXPORT dync_status dync_stack_push_dtype(dync_stack* stack, int dtype);
DYNC_SHIM_EXPORT dync_status dync_stack_push_layout(dync_stack* stack, int layout);
DYNC_SHIM_EXPORT dync_status dync_stack_push_memory_format(dync_stack* stack, int format);
/* Device; index -1 means "the current one". */
DYNC_SHIM_EXPORT dync_status dync_stack_push_device(dync_stack* stack, int device_type, int index);
DYNC_SHIM_EXPORT dync_status dync_stack_push_string(dync_stack* stack, const char* value);

/* ---- Stacks: results out ----------------------------------------------- */

DYNC_SHIM_EXPORT size_t dync_stack_num_results(const dync_stack* stack);
/* DYNC_VALUE_OTHER also for an index out of range. */
DYNC_SHIM_EXPORT dync_value_kind dync_stack_result_kind(const dync_stack* stack, size_t index);
/* A new reference to tensor result `index` (NULL for an undefined tensor). */
DYNC_SHIM_EXPORT dync_status dync_stack_take_tensor(dync_stack* stack, size_t index,
                                                    dync_tensor** out);
DYNC_SHIM_EXPORT dync_status dync_stack_take_int(dync_stack* stack, size_t index, int64_t* out);
DYNC_SHIM_EXPORT dync_status dync_stack_take_double(dync_stack* stack, size_t index, double* out);
DYNC_SHIM_EXPORT dync_status dync_stack_take_bool(dync_stack* stack, size_t index, int* out);
/* Tensor[] result: writes min(count, capacity) new references to `out` and
 * the list's length to *count. */
DYNC_SHIM_EXPORT dync_status dync_stack_take_tensor_list(dync_stack* stack, size_t index,
                                                         dync_tensor** out, size_t capacity,
                                                         size_t* count);

/* ---- Tensors ------------------------------------------------------------ */

DYNC_SHIM_EXPORT void dync_tensor_retain(const dync_tensor* t);
/* NULL is allowed and ignored. */
DYNC_SHIM_EXPORT void dync_tensor_release(const dync_tensor* t);

/* Read-only metadata, for guards and for checking outputs. All return 0 / -1
 * / NULL for a NULL handle rather than failing. */
DYNC_SHIM_EXPORT int64_t dync_tensor_dim(const dync_tensor* t);
/* Pointer to dim() sizes / strides, valid while the tensor lives and is not
 * resized. */
DYNC_SHIM_EXPORT const int64_t* dync_tensor_sizes(const dync_tensor* t);
DYNC_SHIM_EXPORT const int64_t* dync_tensor_strides(const dync_tensor* t);
DYNC_SHIM_EXPORT int64_t dync_tensor_storage_offset(const dync_tensor* t);
DYNC_SHIM_EXPORT int dync_tensor_dtype(const dync_tensor* t);
DYNC_SHIM_EXPORT int dync_tensor_device_type(const dync_tensor* t);
DYNC_SHIM_EXPORT int dync_tensor_device_index(const dync_tensor* t);
DYNC_SHIM_EXPORT int dync_tensor_requires_grad(const dync_tensor* t);
DYNC_SHIM_EXPORT int dync_tensor_is_contiguous(const dync_tensor* t);
DYNC_SHIM_EXPORT void* dync_tensor_data_ptr(const dync_tensor* t);

/* Everything a guard or a kernel call's layout check reads of a tensor, read
 * by one call instead of one call per field: guards run before every call of
 * a compiled function, on every tensor it takes. The layout is part of the
 * ABI (generated code reads the fields by offset). */
typedef struct dync_tensor_info {
  const int64_t* sizes;   /* dim entries, as dync_tensor_sizes */
  const int64_t* strides; /* dim entries, as dync_tensor_strides */
  int64_t dim;
  int32_t dtype;         /* dync_dtype */
  int32_t device_type;   /* dync_device_type */
  int32_t device_index;  /* -1 when the device has no index */
  int32_t requires_grad; /* 0 or 1 */
  int32_t is_contiguous; /* 0 or 1, in the default memory format */
  int32_t flags;         /* DYNC_TENSOR_* bits; 0 for a plain dense tensor */
} dync_tensor_info;

/* dync_tensor_info.flags: what makes a tensor other than the plain dense one
 * a graph computes on. A negative or conjugate view's data is not what it
 * means until resolved; the other keys route operations elsewhere. */
#define DYNC_TENSOR_NEG 1
#define DYNC_TENSOR_CONJ 2
/* Python (subclass dispatch), functorch, functionalization, zero tensor. */
#define DYNC_TENSOR_OTHER_KEYS 4

/* Fills *out and returns 1 for a strided tensor whose sizes and strides are
 * plain integers; returns 0, leaving *out unspecified, for NULL arguments
 * and for other tensors (sparse, nested). */
DYNC_SHIM_EXPORT int dync_tensor_info_of(const dync_tensor* t, dync_tensor_info* out);
/* For a sparse COO tensor: fills *out as dync_tensor_info_of does, but for
 * its strides (NULL) and is_contiguous (0), and sparse[0..2] with its
 * sparse_dim(), _nnz() and is_coalesced() (0 or 1); returns 1. Returns 0
 * for NULL arguments and for tensors of any other layout. */
DYNC_SHIM_EXPORT int dync_sparse_coo_info_of(const dync_tensor* t, dync_tensor_info* out,
                                             int64_t* sparse);

/* ---- Kernels -------------------------------------------------------------
 * What a graph function needs to call a generated kernel (docs/kernels.md):
 * outputs laid out as the IR types say, and torch's own thread pool. */

/* A new, uninitialized CPU tensor with `dim` sizes and strides (elements)
 * and dtype `dtype` (a dync_dtype), as at::empty_strided makes it. */
DYNC_SHIM_EXPORT dync_status dync_tensor_empty_strided(const int64_t* sizes, const int64_t* strides,
                                                       size_t dim, int dtype, dync_tensor** out);

/* A slice [begin, end) of a parallel loop. Must not throw or longjmp. */
typedef void (*dync_parallel_fn)(void* ctx, int64_t begin, int64_t end);

/* Calls fn on consecutive slices covering [begin, end), on torch's intra-op
 * thread pool (at::parallel_for): one slice on the calling thread when the
 * range is at most `grain` long or parallelism is off. Nothing is called
 * for an empty range. */
DYNC_SHIM_EXPORT dync_status dync_parallel_for(int64_t begin, int64_t end, int64_t grain,
                                               dync_parallel_fn fn, void* ctx);

/* A new tensor of dtype `dtype` with `dim` sizes and strides (elements) that
 * shares the storage of `base` from its first byte: how a graph gives kernel
 * outputs places in one buffer that several of them reuse in turn (memory
 * planning, docs/kernels.md). Fails if the view would reach past the storage;
 * never grows it. */
DYNC_SHIM_EXPORT dync_status dync_tensor_view_storage(const dync_tensor* base, const int64_t* sizes,
                                                      const int64_t* strides, size_t dim, int dtype,
                                                      dync_tensor** out);

/* ---- Python objects (libdync_shim_python only) ------------------------------
 * These require an initialized interpreter, the GIL, and torch imported. */

/* New reference to the tensor inside a torch.Tensor object; DYNC_ERR_PYTHON
 * (no Python exception set) if `obj` is not a torch.Tensor. */
DYNC_SHIM_EXPORT dync_status dync_tensor_from_pyobject(struct _object* obj, dync_tensor** out);
/* Borrowed handle, valid while `obj` lives; NULL if `obj` is not a
 * torch.Tensor. For guards: no reference counting, no Python-level code. */
DYNC_SHIM_EXPORT const dync_tensor* dync_tensor_borrow_from_pyobject(struct _object* obj);
/* A new reference to a torch.Tensor object for `t`; NULL with a Python
 * exception set on failure. */
DYNC_SHIM_EXPORT struct _object* dync_tensor_to_pyobject(const dync_tensor* t);

/* ---- Process state guards read ------------------------------------------ */

/* torch.is_grad_enabled() on the calling thread: 1 or 0. */
DYNC_SHIM_EXPORT int dync_grad_mode_enabled(void);
/* torch.get_default_dtype() as its dync_dtype number. */
DYNC_SHIM_EXPORT int dync_default_dtype(void);
/* Items of torch's global state that change what the same calls compute. */
typedef enum dync_global_state {
  /* 0 off, 1 on, 2 on with warn_only (torch.use_deterministic_algorithms). */
  DYNC_GLOBAL_DETERMINISTIC_ALGORITHMS = 0,
  /* 1 when the calling thread flushes denormals to zero (FTZ/DAZ). */
  DYNC_GLOBAL_FLUSH_DENORMAL = 1,
  /* The calling thread's torch function mode stack depth. */
  DYNC_GLOBAL_TORCH_FUNCTION_MODES = 2,
  /* The calling thread's torch dispatch mode stack depth. */
  DYNC_GLOBAL_TORCH_DISPATCH_MODES = 3,
  /* 1 when deterministic algorithms fill uninitialized memory (NaN or the
   * integer maximum) that factories such as torch.empty return. */
  DYNC_GLOBAL_DETERMINISTIC_FILL = 4,
  /* 1 when oneDNN (mkldnn) kernels may be used (torch.backends.mkldnn.enabled). */
  DYNC_GLOBAL_MKLDNN = 5,
  /* 1 when oneDNN kernels must be deterministic (torch.backends.mkldnn.deterministic). */
  DYNC_GLOBAL_MKLDNN_DETERMINISTIC = 6,
  /* 1 when NNPACK convolutions may be used (torch._C._set_nnpack_enabled). */
  DYNC_GLOBAL_NNPACK = 7,
  /* 1 when CPU float16 reductions may accumulate in reduced precision. */
  DYNC_GLOBAL_CPU_FP16_REDUCTION = 8,
  /* oneDNN's float32 precision for matmuls, convolutions and RNNs, as
   * torch resolves it (torch.set_float32_matmul_precision,
   * torch.backends[.mkldnn[.OP]].fp32_precision): 1 ieee, 2 tf32, 3 bf16. */
  DYNC_GLOBAL_FP32_PRECISION_MATMUL = 9,
  DYNC_GLOBAL_FP32_PRECISION_CONV = 10,
  DYNC_GLOBAL_FP32_PRECISION_RNN = 11,
  /* 1 when scaled_dot_product_attention may use its flash (fused CPU)
   * kernel, its math kernel; and when the math kernel may reduce float16
   * and bfloat16 in reduced precision. */
  DYNC_GLOBAL_FLASH_SDP = 12,
  DYNC_GLOBAL_MATH_SDP = 13,
  DYNC_GLOBAL_MATH_SDP_REDUCTION = 14,
} dync_global_state;
/* The value of item `which` (a dync_global_state); -1 for an unknown item. */
DYNC_SHIM_EXPORT int64_t dync_global_state_of(int which);

/* Python's round(x, ndigits) of a float: x rounded half to even at
 * 10**-ndigits on its exact value, as CPython's float.__round__ computes it
 * (NaN and infinities round to themselves). Sets *overflow to 1 where
 * CPython raises OverflowError ("rounded value too large to represent"),
 * else to 0. */
DYNC_SHIM_EXPORT double dync_round_digits(double x, int64_t ndigits, int* overflow);

/* The state of torch's default CPU generator, as torch.get_rng_state()
 * gives it, in *out (a new reference). A graph that may fall back to the
 * original code after its random operators drew saves it before the first
 * draw, and puts it back with dync_generator_state_restore before falling
 * back, so the original code draws what eager would. */
DYNC_SHIM_EXPORT dync_status dync_generator_state_save(dync_tensor** out);
/* Sets torch's default CPU generator to `state`, one
 * dync_generator_state_save gave. */
DYNC_SHIM_EXPORT dync_status dync_generator_state_restore(const dync_tensor* state);

/* ---- Reading Python objects for guards (libdync_shim_python only) ----------
 * A guard reads the frame's objects without running Python-level code: no
 * descriptor, property, __getattr__, __eq__, __hash__ or metaclass hook of
 * any user type is ever called, and nothing is cached between calls. Each
 * function requires the GIL, never raises and never leaves a Python error
 * set (one it causes internally is cleared). Objects returned are borrowed
 * from their container. A NULL object argument gives NULL / 0. */

/* The value of key `name` in `obj`'s instance __dict__, as attribute lookup
 * finds it there: CPython 3.11's inline (managed) instance values are read
 * in place without creating the dict, a type's own attributes and
 * properties are not looked at, except a `__slots__` member of a Python
 * class, whose storage in the object is read in place. NULL if `obj` has no
 * instance dict or no such key (or the slot is empty). Works for instances
 * of Python classes (nn.Module subclasses included), module objects and
 * anything with a tp_dictoffset. */
DYNC_SHIM_EXPORT struct _object* dync_py_instance_attr(struct _object* obj, const char* name);
/* dict[key] for a dict (or an object of a dict subclass, whose items are
 * its dict's) and the str `key` (UTF-8); NULL if `dict` is not a dict or
 * has no such key. Keys that are not exact str are never compared with, so
 * no key's __eq__ runs. */
DYNC_SHIM_EXPORT struct _object* dync_py_dict_item(struct _object* dict, const char* key);
/* Item `index` of an exact list or tuple, negative counting from the end;
 * or the value at position `index` (not negative) of an exact dict or
 * collections.OrderedDict, in its iteration order (nn.Module's hook
 * tables). NULL for other types (subclasses included) or an index out of
 * range. */
DYNC_SHIM_EXPORT struct _object* dync_py_sequence_item(struct _object* seq, int64_t index);
/* 1 if type(obj).__module__ is the str `module` and type(obj).__qualname__
 * the str `qualname`, read as CPython stores them: for a class, `__module__`
 * in its own __dict__ and its ht_qualname; for a static type, split from its
 * tp_name ("builtins" when it has no dot). Exact type only: a subclass with
 * another name does not match. */
DYNC_SHIM_EXPORT int dync_py_type_is(struct _object* obj, const char* module, const char* qualname);
/* 1 if `obj` is None. */
DYNC_SHIM_EXPORT int dync_py_is_none(struct _object* obj);
/* 1 if `obj` is exactly a bool with the given truth value. */
DYNC_SHIM_EXPORT int dync_py_equals_bool(struct _object* obj, int value);
/* 1 if `obj` is exactly an int (a bool is not) equal to `value`. */
DYNC_SHIM_EXPORT int dync_py_equals_int(struct _object* obj, int64_t value);
/* 1 if `obj` is exactly a float with the same value: NaN matches NaN and
 * 0.0 does not match -0.0, since code specialized on one may differ on the
 * other. */
DYNC_SHIM_EXPORT int dync_py_equals_float(struct _object* obj, double value);
/* 1 if `obj` is exactly a str whose UTF-8 form is the `size` bytes at
 * `utf8` (which may hold NUL bytes). */
DYNC_SHIM_EXPORT int dync_py_equals_str(struct _object* obj, const char* utf8, size_t size);
/* len(obj) for an exact list, tuple, dict or collections.OrderedDict; -1
 * for any other object (other subclasses, whose len() may be Python
 * code). */
DYNC_SHIM_EXPORT int64_t dync_py_length(struct _object* obj);
/* 1 if `obj` is a dict (an OrderedDict, a defaultdict, an object of another
 * dict subclass) whose keys are, in iteration order (an OrderedDict's own),
 * exactly
 * `count` str objects whose UTF-8 forms are keys[i] (sizes[i] bytes each). */
DYNC_SHIM_EXPORT int dync_py_dict_keys_are(struct _object* obj, const char* const* keys,
                                           const int64_t* sizes, int64_t count);

/* Appended for a complete guard set. */

/* dync_tensor_info_of for the tensor in `obj` when `obj` is exactly a
 * torch.Tensor or an nn.Parameter (a subclass may override what operations
 * do) holding a defined tensor; 0 otherwise. One call for everything a
 * tensor guard reads. */
DYNC_SHIM_EXPORT int dync_py_tensor_info(struct _object* obj, dync_tensor_info* out);
/* dync_sparse_coo_info_of for the tensor in `obj`, under
 * dync_py_tensor_info's condition on `obj`; 0 otherwise (a strided tensor
 * included). */
DYNC_SHIM_EXPORT int dync_py_sparse_coo_info(struct _object* obj, dync_tensor_info* out,
                                             int64_t* sparse);
/* sys.modules[name] (the interpreter's module dict read as a dict), or
 * NULL. */
DYNC_SHIM_EXPORT struct _object* dync_py_module(const char* name);
/* The attribute `name` of type(obj) as the MRO finds it in each class's own
 * __dict__: the stored object (a function, not a bound method), never a
 * descriptor's result. NULL if no class has it. */
DYNC_SHIM_EXPORT struct _object* dync_py_class_attr(struct _object* obj, const char* name);
/* The contents of cell `index` of an exact function's closure; NULL for
 * other objects, an index out of range or an empty cell. */
DYNC_SHIM_EXPORT struct _object* dync_py_closure_cell(struct _object* fn, int64_t index);
/* 1 if `obj` is an exact dict or collections.OrderedDict with no entries. */
DYNC_SHIM_EXPORT int dync_py_is_empty_dict(struct _object* obj);
/* 1 if `obj`'s instance __dict__ (read as dync_py_instance_attr reads it)
 * has no key `name`, or `obj` has no instance dict; 0 if it has, or if the
 * dict cannot be read without running code. `_compiled_call_impl` also
 * counts as absent when it holds None or what nn.Module.compile stores there
 * (torch.compile of `obj`'s own `_call_impl`), which computes what
 * `_call_impl` computes. */
DYNC_SHIM_EXPORT int dync_py_instance_attr_absent(struct _object* obj, const char* name);
/* 1 if `obj` is exactly a Python function whose __module__ is the str
 * `module`, whose code's co_qualname is `qualname` and co_firstlineno
 * `first_line`. */
DYNC_SHIM_EXPORT int dync_py_function_is(struct _object* obj, const char* module,
                                         const char* qualname, int64_t first_line);
/* 1 if `obj` is exactly a built-in function (types.BuiltinFunctionType)
 * whose __module__ is the str `module` and __name__ `name`. */
DYNC_SHIM_EXPORT int dync_py_builtin_is(struct _object* obj, const char* module, const char* name);

/* Appended for symbolic int arguments. */

/* 1 and the value in `*out` if `obj` is exactly an int (a bool or an int
 * subclass is not) that fits in int64_t; 0 otherwise. */
DYNC_SHIM_EXPORT int dync_py_int_value(struct _object* obj, int64_t* out);
/* Kinds of torch's constant objects dync_py_torch_constant_is compares. */
typedef enum dync_torch_constant {
  DYNC_TORCH_DTYPE = 0,
  DYNC_TORCH_DEVICE = 1,
  DYNC_TORCH_LAYOUT = 2,
  DYNC_TORCH_MEMORY_FORMAT = 3,
} dync_torch_constant;
/* 1 when `obj` is exactly torch's object of that kind named `name`: a
 * dtype's name as torch.dtype keeps it ("float16"), a device as str() spells
 * it ("cpu", "cuda:0"), a layout or memory format as repr() does
 * ("torch.strided", "torch.channels_last"); else 0. */
DYNC_SHIM_EXPORT int dync_py_torch_constant_is(struct _object* obj, int kind, const char* name);

/* Appended for autograd.Function applied in a graph that records autograd. */

/* A compiled backward graph: dync_graph_fn's signature (dync_artifact.h). */
typedef int (*dync_backward_fn)(dync_tensor* const* inputs, size_t num_inputs,
                                const int64_t* int_inputs, size_t num_int_inputs,
                                dync_tensor** outputs, size_t num_outputs, char* error,
                                size_t error_size);
/* Gives the forward outputs of an autograd.Function the history eager's
 * apply gives them. `stack` holds the node's ten arguments
 * (ir/AutogradFunction.h): the Function's name, the backward graph's name,
 * the inputs (Tensor[]), the forward's outputs (Tensor[]), the tensors
 * backward reads (Tensor[]), each input's index among `backward`'s
 * `num_backward_outputs` results or -1 (int[]), each output's
 * differentiability (bool[]), whether undefined gradients become zeros
 * (bool), the sizes backward takes as ints (int[]) and each output's
 * modified input or -1 (int[]); artifacts made before the last two were
 * appended push eight or nine arguments. An empty list may be pushed as
 * int[]. When grad mode is on and an input requires grad, the results (one
 * tensor per output) are the differentiable outputs detached and given a
 * grad_fn whose backward runs `backward` over the saved tensors, the
 * outputs' gradients and the sizes, and each modified input itself, its
 * history rebased on that grad_fn; otherwise the outputs themselves (a
 * modified input itself). Take them as an operator's. */
DYNC_SHIM_EXPORT dync_status dync_autograd_function_apply(dync_stack* stack,
                                                          dync_backward_fn backward,
                                                          size_t num_backward_outputs);
/* Appended for dict entries named by keys other than str (ShimPyDictKeys.c).
 * A key is encoded as bytes: 'i' and an int64_t, 's', an int64_t size and
 * that many UTF-8 bytes, 'b' and one byte 0 or 1, 'f' and a double, 'n'
 * (None), or 't', an int64_t count and that many encoded keys (a tuple);
 * numbers in the host's byte order. A dict key is the encoded one when it
 * is of the same exact type (int, str, bool, float, None, tuple) with an
 * equal value: 1, 1.0 and True are three keys here; a float compares as
 * dync_py_equals_float does. */

/* dict[index] as Python's subscript reads it with an int: the value under
 * the exact int key `index` of a dict (or an object of a dict subclass,
 * whose items are its dict's); else dync_py_sequence_item's item of a list
 * or tuple. NULL when there is none. */
DYNC_SHIM_EXPORT struct _object* dync_py_subscript_int(struct _object* obj, int64_t index);
/* The value under the key encoded in the `size` bytes at `key` of a dict
 * (or of an object of a dict subclass); NULL when it has no such key. */
DYNC_SHIM_EXPORT struct _object* dync_py_dict_item_keyed(struct _object* dict, const char* key,
                                                         int64_t size);
/* 1 if `dict` is a dict (or an object of a dict subclass) with no entry
 * for the str of the `size` UTF-8 bytes at `key`: each of its keys is an
 * exact str other than that one, or of a type no str equals (an exact int,
 * bool, float, bytes, tuple or None). 0 otherwise, a key of any other type
 * (a str subclass, an object with an __eq__ of its own) included, so no
 * key's __eq__ or __hash__ runs and an answer of 1 is Python's. */
DYNC_SHIM_EXPORT int dync_py_dict_lacks_str(struct _object* dict, const char* key, int64_t size);
/* 1 if `obj` is a dict (subclasses included, an OrderedDict's keys in its
 * own order) whose keys are, in iteration order, the `count` keys encoded
 * one after another in the `size` bytes at `keys`. */
DYNC_SHIM_EXPORT int dync_py_dict_keys_are_keyed(struct _object* obj, const char* keys,
                                                 int64_t size, int64_t count);
/* The key at position `position` (not negative) of an exact dict or
 * collections.OrderedDict, in its iteration order; NULL for other types or
 * a position out of range. */
DYNC_SHIM_EXPORT struct _object* dync_py_dict_key_at(struct _object* dict, int64_t position);
/* Python's `key in dict` for a dict (subclasses included): 1 or 0 when the
 * key and every key of the dict are exact ints, bools, floats, strs, None
 * or tuples of those, whose comparisons are C code; -1 otherwise (a key's
 * own __eq__ could answer), and for a NULL or a non-dict. */
DYNC_SHIM_EXPORT int dync_py_dict_has_key(struct _object* dict, struct _object* key);
/* 1 if no class of type(obj)'s method resolution order has `name` in its
 * own __dict__ (what dync_py_class_attr would find); 0 if one has, or if
 * the order cannot be read. */
DYNC_SHIM_EXPORT int dync_py_class_attr_absent(struct _object* obj, const char* name);

/* Appended for guards on ints beyond 64 bits. */

/* 1 if `obj` is exactly an int (a bool or an int subclass is not) whose
 * two's complement, little-endian in `size` bytes, is the `size` bytes at
 * `bytes`; 0 otherwise (a number that needs more bytes included). */
DYNC_SHIM_EXPORT int dync_py_equals_int_bytes(struct _object* obj, const unsigned char* bytes,
                                              size_t size);

/* Appended for guards on the class a global names. */

/* 1 if `obj` is a class (a type object, of any metaclass) whose __module__
 * and __qualname__ are `module` and `qualname`, read as dync_py_type_is
 * reads an object's class. */
DYNC_SHIM_EXPORT int dync_py_class_is(struct _object* obj, const char* module,
                                      const char* qualname);

/* Appended for graphs that take a gradient inside. */

/* 1 if `obj` is exactly a torch.Tensor or an nn.Parameter holding a defined
 * tensor with no autograd history (a leaf) and no hook registered on it
 * (register_hook from Python, or from C++ even once removed): a backward
 * that reaches it neither goes on into the caller's history nor runs code
 * of the caller's. */
DYNC_SHIM_EXPORT int dync_py_tensor_autograd_leaf(struct _object* obj);

/* ---- The function table artifacts receive -------------------------------
 * Fields are only ever appended; `size` is sizeof(dync_shim_api) as the
 * runtime filled it, so an artifact can tell whether a later field exists.
 * The fields, their order and signatures are listed once, in ShimApi.def,
 * with the function each holds (declared above).
 * The Python fields are NULL in a process without the Python runtime. */
typedef struct dync_shim_api {
  uint32_t size;
  uint32_t abi_version;

  /* One function pointer per row of ShimApi.def, in its order. */
#define DYNC_SHIM_FN(Name, field, function, Result, Params) Result(*field) Params;
#include "ShimApi.def"
} dync_shim_api;

/* Fills every field but the Python ones (tensor_from_pyobject,
 * tensor_borrow_from_pyobject, tensor_to_pyobject and the py_* fields, left
 * as they are). */
DYNC_SHIM_EXPORT void dync_shim_fill_api(dync_shim_api* api);
/* Fills the Python fields (libdync_shim_python). */
DYNC_SHIM_EXPORT void dync_shim_fill_python_api(dync_shim_api* api);

#ifdef __cplusplus
}
#endif

#endif /* DYNC_RUNTIME_SHIM_DYNC_SHIM_H */
