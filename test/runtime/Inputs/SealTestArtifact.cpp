//===- SealTestArtifact.cpp - Seal a hand-built test artifact -------------===//
//
// The test artifacts are compiled by the C compiler, not linked by dync
// export; this appends the seal export appends (runtime/artifact/Seal.h),
// so that the loader accepts them. Usage: seal-test-artifact FILE.so
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/Seal.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: seal-test-artifact FILE.so\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::cerr << argv[1] << ": cannot read\n";
    return 1;
  }
  std::ofstream out(argv[1], std::ios::binary | std::ios::app);
  out << dync::runtime::artifactSeal(bytes);
  out.close();
  if (!out) {
    std::cerr << argv[1] << ": cannot write\n";
    return 1;
  }
  return 0;
}
