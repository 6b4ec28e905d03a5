/*
 * FrameAccess.c - reads CPython 3.11's _PyInterpreterFrame for the frame
 * hook. See FrameAccess.h for why this is C and kept apart.
 */
#include "runtime/package/FrameAccess.h"

#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "the frame hook reads CPython 3.11's frame layout"
#endif

void dync_frame_view_of(struct _PyInterpreterFrame* frame, dync_frame_view* view) {
  PyCodeObject* code = frame->f_code;
  view->code = code;
  view->function = (PyObject*)frame->f_func;
  view->globals = frame->f_globals;
  view->localsplus = frame->localsplus;
  /* A new frame's prev_instr points one code unit before the first
   * instruction (_PyFrame_InitializeSpecials); any other value means the
   * frame is being resumed. */
  view->fresh = frame->owner == FRAME_OWNED_BY_THREAD && frame->f_locals == NULL &&
                frame->f_func != NULL && frame->prev_instr == _PyCode_CODE(code) - 1;
}
