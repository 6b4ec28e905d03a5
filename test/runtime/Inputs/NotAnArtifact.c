/* A shared library that exports no dync descriptor. */
__attribute__((visibility("default"))) int not_a_dync_artifact(void) { return 42; }
