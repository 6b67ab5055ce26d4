// Writes the sample heap files of the importer tests into DIR/hprof and DIR/v8 as
// seed corpora for fuzz_hprof and fuzz_v8.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "heapgraph/sample_dumps.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_write_seeds DIR\n";
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  std::filesystem::create_directories(dir / "hprof");
  std::filesystem::create_directories(dir / "v8");
  std::ofstream(dir / "hprof" / "sample4.hprof", std::ios::binary) << gcvm::test::sample_hprof(4);
  std::ofstream(dir / "hprof" / "sample8.hprof", std::ios::binary) << gcvm::test::sample_hprof(8);
  std::ofstream(dir / "v8" / "sample.heapsnapshot", std::ios::binary) << gcvm::test::sample_v8();
  std::ofstream(dir / "v8" / "reordered.heapsnapshot", std::ios::binary) << gcvm::test::sample_v8("edges,nodes,snapshot");
  return 0;
}
