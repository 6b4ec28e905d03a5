#include "frontend/python/PythonError.h"
char dync::python::PythonException::ID = 0;
