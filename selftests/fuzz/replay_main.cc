// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A main() for fuzz targets built without libFuzzer (gcc, or a plain
// build): run LLVMFuzzerTestOneInput once on every file named, or on every
// file in every directory named.  CTest uses it to replay the committed
// corpus, so the targets stay compiled and their invariants keep holding
// in every build.  Each input gets an exact-size heap copy, as libFuzzer
// gives, so sanitizers see reads past its end.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool run_file(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                          std::istreambuf_iterator<char>());
  std::unique_ptr<uint8_t[]> buf(new uint8_t[bytes.size() ? bytes.size() : 1]);
  std::copy(bytes.begin(), bytes.end(), buf.get());
  LLVMFuzzerTestOneInput(buf.get(), bytes.size());
  return true;
}

int main(int argc, char **argv) {
  size_t n = 0;
  bool ok = true;
  for (int i = 1; i < argc; i++) {
    fs::path arg(argv[i]);
    std::vector<fs::path> files;
    if (fs::is_directory(arg)) {
      for (const auto &e : fs::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const auto &f : files) {
      ok = run_file(f) && ok;
      n++;
    }
  }
  std::printf("replayed %zu inputs\n", n);
  return ok && n ? 0 : 1;
}
