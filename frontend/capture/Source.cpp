//===- Source.cpp - Where a captured value comes from in the frame --------===//
#include "frontend/capture/Source.h"

#include "llvm/ADT/StringExtras.h"

namespace dync::capture {

namespace {

/// Python's repr of a str for the plain names sources hold: single quotes,
/// with quotes and backslashes escaped.
void printQuoted(llvm::raw_ostream& os, llvm::StringRef text) {
  os << '\'';
  for (char c : text) {
    if (c == '\'' || c == '\\')
      os << '\\';
    os << c;
  }
  os << '\'';
}

} // namespace

SourcePtr Source::local(llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Local, nullptr, name.str(), 0, false));
}
SourcePtr Source::global(llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Global, nullptr, name.str(), 0, false));
}
SourcePtr Source::attr(SourcePtr base, llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Attr, std::move(base), name.str(), 0, false));
}
SourcePtr Source::index(SourcePtr base, int64_t index) {
  return SourcePtr(new Source(Kind::Item, std::move(base), "", index, true));
}
SourcePtr Source::key(SourcePtr base, llvm::StringRef key) {
  return SourcePtr(new Source(Kind::Item, std::move(base), key.str(), 0, false));
}

void Source::print(llvm::raw_ostream& os) const {
  switch (kind_) {
  case Kind::Local:
    os << "L[";
    printQuoted(os, name_);
    os << ']';
    return;
  case Kind::Global:
    os << "G[";
    printQuoted(os, name_);
    os << ']';
    return;
  case Kind::Attr:
    base_->print(os);
    os << '.' << name_;
    return;
  case Kind::Item:
    base_->print(os);
    os << '[';
    if (hasIndex_)
      os << index_;
    else
      printQuoted(os, name_);
    os << ']';
    return;
  }
}

std::string Source::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

std::string Source::valueName() const {
  std::string prefix = base_ ? base_->valueName() + "_" : "";
  std::string part = hasIndex_ ? std::to_string(index_) : name_;
  // Keys may hold characters that value names cannot; keep the name an
  // identifier so that the graph's text form reads back.
  for (char& c : part)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  if (kind_ == Kind::Global)
    prefix = "G_";
  return prefix + part;
}

} // namespace dync::capture
