//===- SourceError.cpp - An error that points into the user's source ------===//
#include "frontend/embedding/SourceError.h"

#include "llvm/Support/raw_ostream.h"

namespace dync::python {

char SourceError::ID = 0;

void SourceError::log(llvm::raw_ostream& os) const {
  if (!location_.file.empty()) {
    os << location_.file;
    if (location_.line) {
      os << ':' << location_.line;
      if (location_.column)
        os << ':' << location_.column;
    }
    os << ": ";
  }
  os << message_;
}

} // namespace dync::python
