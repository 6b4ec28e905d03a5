/*
 * FrameAccess.h - the few facts the frame hook needs from CPython 3.11's
 * internal frame struct.
 *
 * _PyInterpreterFrame is only defined by CPython's internal headers, which
 * need Py_BUILD_CORE and are C, not C++ (their inline functions convert
 * pointer types implicitly). FrameAccess.c is the one translation unit that
 * includes them; everything else sees this plain C view.
 */
#ifndef DYNC_RUNTIME_PYTHON_FRAMEACCESS_H
#define DYNC_RUNTIME_PYTHON_FRAMEACCESS_H

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

struct _PyInterpreterFrame;

typedef struct dync_frame_view {
  /* Borrowed from the frame. */
  PyCodeObject* code;
  PyObject* function; /* the PyFunctionObject being called; may be NULL */
  PyObject* globals;
  /* Arguments and locals in co_varnames order, then cells and free
   * variables: what an artifact's guard reads. */
  PyObject* const* localsplus;
  /* 1 when the frame is a plain function call that has not started yet:
   * owned by the thread (not a generator being resumed), no locals dict
   * (not a class body or exec), and no instruction run. Only such frames
   * may be replaced. */
  int fresh;
} dync_frame_view;

void dync_frame_view_of(struct _PyInterpreterFrame* frame, dync_frame_view* view);

#ifdef __cplusplus
}
#endif

#endif /* DYNC_RUNTIME_PYTHON_FRAMEACCESS_H */
