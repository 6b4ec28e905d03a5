/*
 * dync_artifact.h - what a dync artifact (model.so) exports.
 *
 * An artifact exports exactly one symbol the runtime looks for,
 *
 *   const dync_artifact_descriptor* dync_artifact_get_descriptor(void);
 *
 * returning a pointer to a constant descriptor that lives as long as the
 * library is loaded. The descriptor says everything the runtime needs to
 * decide whether it may trust the rest of the library in this process, and
 * then what the library holds. The layout is C and fixed per format version;
 * the first three fields are the same in every version, so any runtime can
 * read them and refuse a format it does not know before touching anything
 * else. docs/artifact.md explains the format and the loader's checks.
 */
#ifndef DYNC_RUNTIME_ARTIFACT_DYNC_ARTIFACT_H
#define DYNC_RUNTIME_ARTIFACT_DYNC_ARTIFACT_H

#include "runtime/shim/dync_shim.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The symbol's name, for dlsym. */
#define DYNC_ARTIFACT_SYMBOL "dync_artifact_get_descriptor"

/* "DYNC" read as a little-endian uint32: tells a descriptor from garbage. */
#define DYNC_ARTIFACT_MAGIC 0x434e5944u

/* The format this header describes. */
#define DYNC_ARTIFACT_FORMAT_VERSION 2u

/* ---- The seal (format version 2) ----
 * A linked artifact ends with DYNC_ARTIFACT_SEAL_SIZE bytes that are not
 * part of the ELF image: the SHA-256 of every byte of the file before them
 * (32 bytes), then the 8 bytes of DYNC_ARTIFACT_SEAL_MAGIC. The loader and
 * `dync inspect` verify it before anything in the file is used, so every
 * byte of the artifact (descriptor, strings, code bytes, machine code,
 * manifest) is covered, whatever later format versions add. See
 * runtime/artifact/Seal.h. */
#define DYNC_ARTIFACT_SEAL_MAGIC "DYNCSEAL"
#define DYNC_ARTIFACT_SEAL_MAGIC_SIZE 8u
#define DYNC_ARTIFACT_SEAL_DIGEST_SIZE 32u
#define DYNC_ARTIFACT_SEAL_SIZE (DYNC_ARTIFACT_SEAL_DIGEST_SIZE + DYNC_ARTIFACT_SEAL_MAGIC_SIZE)

/* Status codes the artifact's functions return. */
#define DYNC_ARTIFACT_OK 0
#define DYNC_ARTIFACT_ERROR 1
/* A graph's run-time check failed (a branch of the program that only
 * raises, docs/capture.md): `error` holds "Type" or "Type: message", the
 * builtin exception the program raises there. Runtimes that predate it
 * report it as any other error. */
#define DYNC_ARTIFACT_CHECK_FAILED 2
/* A run-time check of a bound capture inferred (not one the program
 * states) failed before the graph did anything the caller could observe (no
 * input written, no random number drawn): `error` says which; the runtime
 * runs the original code instead, as after a guard miss. Runtimes that
 * predate it report it as any other error. */
#define DYNC_ARTIFACT_FALL_BACK 3

/* CPython's frame-local and object types, declared so this header needs no
 * Python.h. */
struct _object;

/*
 * Evaluates one entry's guards on a frame about to run the entry's code.
 *
 *   fast_locals  the frame's localsplus array: arguments and locals in
 *                co_varnames order, then cell and free variables, exactly as
 *                the interpreter holds them (entries may be NULL for unbound
 *                locals).
 *   globals      the frame's globals dictionary (borrowed), for guards on
 *                G['name'] sources.
 *   reason       on a miss, set to a static, NUL-terminated description of
 *                the first failing guard (e.g. "tensor L['x'] :
 *                tensor<f32, [batch, 8]>: size(1) is not 8").
 *
 * Returns 1 when every guard holds, 0 on a miss. The function runs with the
 * GIL held and must not run Python-level code (no attribute lookups that may
 * call __getattr__, no __eq__, no imports): it reads objects through the
 * shim's py_* readers, and tensors through the shim's
 * tensor_borrow_from_pyobject and tensor_* accessors. It must not raise.
 */
typedef int (*dync_guard_fn)(struct _object* const* fast_locals, struct _object* globals,
                             const char** reason);

/*
 * Runs one compiled graph.
 *
 *   inputs / num_inputs          tensor inputs in the graph's input order
 *                                (borrowed; never NULL)
 *   int_inputs / num_int_inputs  integer inputs (symbolic sizes and Python
 *                                ints the graph takes), in order
 *   outputs / num_outputs        filled with new references, one per output
 *   error / error_size           on failure, a NUL-terminated message
 *
 * Returns DYNC_ARTIFACT_OK, or DYNC_ARTIFACT_ERROR or
 * DYNC_ARTIFACT_CHECK_FAILED with every output slot NULL (the function
 * releases what it produced before failing).
 * num_inputs, num_int_inputs and num_outputs are passed so the function can
 * check them against its own counts rather than trust the caller.
 */
typedef int (*dync_graph_fn)(dync_tensor* const* inputs, size_t num_inputs,
                             const int64_t* int_inputs, size_t num_int_inputs,
                             dync_tensor** outputs, size_t num_outputs, char* error,
                             size_t error_size);

/*
 * Called once after the runtime has validated the descriptor and before any
 * guard or graph runs. `api` stays valid until the library is unloaded; the
 * artifact keeps it and resolves its operators through it
 * (api->op_lookup), so a missing operator is a load-time error, not a
 * run-time one. Returns DYNC_ARTIFACT_OK or DYNC_ARTIFACT_ERROR with a
 * message in `error`.
 */
typedef int (*dync_init_fn)(const dync_shim_api* api, char* error, size_t error_size);

/* One compiled graph. The rewritten bytecode calls it through a global of
 * this name that the runtime binds in the frame's globals. */
typedef struct dync_artifact_graph {
  const char* name;
  uint32_t num_inputs;
  uint32_t num_int_inputs;
  uint32_t num_outputs;
  dync_graph_fn run;
} dync_artifact_graph;

/* One captured function. */
typedef struct dync_artifact_entry {
  /* "Model.forward": the function's __qualname__; with the descriptor's
   * source file, it names the code object the entry replaces. */
  const char* qualified_name;
  /* The code object's first line number, which tells apart functions with
   * the same qualified name (e.g. defined in different branches). */
  uint32_t first_line;
  /* marshal.dumps() of the rewritten code object. */
  const unsigned char* code;
  size_t code_size;
  dync_guard_fn guard;
  uint32_t num_graphs;
  const dync_artifact_graph* graphs;
} dync_artifact_entry;

/* ---- code identity (format version 2) ----
 * What each entry's capture ran, so that a runtime can tell whether the
 * functions a process has are still that code (docs/artifact.md, "Code
 * identity"). */

/* One Python function whose bytecode capture ran. */
typedef struct dync_artifact_function {
  /* Where it is defined: its module's __name__ ("lib", "pkg.layers") and
   * __qualname__ ("Net.forward", "make.<locals>.act"). */
  const char* module_name;
  const char* qualified_name;
  /* co_filename and co_firstlineno at export, for messages. */
  const char* file;
  uint32_t first_line;
  /* The SHA-256 (64 lowercase hex digits) of the code object: bytecode,
   * constants (nested code recursively), names, variable names, flags,
   * argument counts and exception table; not line numbers. */
  const char* code_sha256;
} dync_artifact_function;

/* Where an entry's function is defined and what its capture ran. */
typedef struct dync_artifact_entry_origin {
  /* The entry function's module (__module__ of the function, not of the
   * exported file) and the file defining it (co_filename at export). */
  const char* module_name;
  const char* defining_file;
  /* Every function capture ran for this entry (the entry itself, the
   * functions and methods it inlined), except torch's and the standard
   * library's, which the version checks cover. */
  uint32_t num_functions;
  const dync_artifact_function* functions;
} dync_artifact_entry_origin;

typedef struct dync_artifact_descriptor {
  /* ---- stable across every format version ---- */
  uint32_t magic;           /* DYNC_ARTIFACT_MAGIC */
  uint32_t format_version;  /* DYNC_ARTIFACT_FORMAT_VERSION */
  uint32_t descriptor_size; /* sizeof(dync_artifact_descriptor) when built */

  /* ---- format version 1 ---- */
  uint32_t shim_abi_version; /* DYNC_SHIM_ABI_VERSION the code was built for */
  /* importlib.util.MAGIC_NUMBER of the interpreter the bytecode is for. */
  unsigned char python_magic[4];
  /* torch.__version__ at export ("2.13.0+cpu"). */
  const char* torch_version;
  /* The CPU the kernels were compiled for ("x86-64-v3", "skylake-avx512")
   * and the features they use, comma-separated in the compiler's spelling
   * ("avx2,fma"); "" when generic. */
  const char* target_cpu;
  const char* cpu_features;
  /* The exported file, absolute, and the SHA-256 of its bytes at export
   * (64 lowercase hex digits). */
  const char* source_path;
  const char* source_sha256;
  dync_init_fn init;
  uint32_t num_entries;
  const dync_artifact_entry* entries;

  /* ---- code identity (format version 2) ---- */
  /* num_entries origins, in the entries' order; NULL when the artifact
   * records none (an artifact not built from Python functions). */
  const dync_artifact_entry_origin* entry_origins;
} dync_artifact_descriptor;

typedef const dync_artifact_descriptor* (*dync_artifact_get_descriptor_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* DYNC_RUNTIME_ARTIFACT_DYNC_ARTIFACT_H */
