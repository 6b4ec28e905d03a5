//===- AtomicFile.cpp - Files that appear complete or not at all ----------===//
#include "codegen/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace dync;

llvm::Error codegen::writeAtomically(llvm::StringRef path,
                                     llvm::function_ref<llvm::Error(llvm::StringRef temp)> write) {
  llvm::SmallString<256> model(llvm::sys::path::parent_path(path));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(path) + ".tmp-%%%%%%%%");
  int fd;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return llvm::createStringError("cannot create a temporary file next to '" + path +
                                   "': " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover remover(temp);
  if (llvm::Error error = write(temp))
    return error;
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return llvm::createStringError("cannot write '" + path + "': " + ec.message());
  remover.releaseFile();
  return llvm::Error::success();
}

llvm::Error codegen::writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes) {
  return writeAtomically(path, [&](llvm::StringRef temp) -> llvm::Error {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError("cannot write '" + temp + "': " + ec.message());
    os << bytes;
    os.close();
    if (os.has_error())
      return llvm::createStringError("writing '" + temp + "' failed: " + os.error().message());
    return llvm::Error::success();
  });
}
