//===- OptionsFuzzer.cpp - libFuzzer target for the driver's options ------===//
//
// Runs the stencilc driver in process (tools/stencilc/Driver.h) on a command
// line and a source taken from the input: the lines before the first empty
// line are the arguments, one per line, and the rest is the .st file. Any
// crash, sanitizer report or hang is a bug: every command line gets output
// or a diagnostic.
//
// The driver reads and writes files, so it runs inside a directory of its
// own that is emptied after each input, and only arguments that stay there
// are passed: options from a fixed list (not --help, --version or --tune,
// which exit or run nvcc), and values without '/', "..", '@' (a response
// file) or a lone '-' (standard input). The input file is always the last
// argument, after the hidden bounds on the cost model's layout search.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// The options a command line may carry (its names without dashes).
const llvm::StringRef kAllowed[] = {
    "o",         "emit",     "emit-main",  "MD",          "MF",
    "write-if-changed",      "arch",       "fuse",        "type",
    "target",    "tile",     "threads",    "layout",      "morph",
    "precision", "gpu",      "hw",         "explain",     "tune-size",
    "nvcc",      "passes",   "print-ir-after-all",        "time-passes",
    "distributed"};

/// Whether `arg` may be passed: a listed option, or a bare value, that
/// names nothing outside the working directory.
bool allowed(llvm::StringRef arg) {
  if (arg.empty() || arg == "-" || arg.contains('/') || arg.contains("..") ||
      arg.contains('@') || arg.contains('\0'))
    return false;
  if (!arg.startswith("-"))
    return true;
  llvm::StringRef name = arg.ltrim('-').split('=').first;
  return llvm::is_contained(kAllowed, name);
}

std::string workDir;

/// Removes everything a run left in the working directory.
void clean() {
  std::error_code ec;
  std::vector<std::string> names;
  for (llvm::sys::fs::directory_iterator it(workDir, ec), end;
       it != end && !ec; it.increment(ec))
    names.push_back(it->path());
  for (const std::string &name : names) {
    llvm::sys::fs::remove_directories(name, /*IgnoreErrors=*/true);
    llvm::sys::fs::remove(name);
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("stencilc-options-fuzz", dir)) {
    llvm::errs() << "options fuzzer: cannot create a working directory\n";
    std::abort();
  }
  workDir = std::string(dir);
  if (llvm::sys::fs::set_current_path(workDir)) {
    llvm::errs() << "options fuzzer: cannot enter " << workDir << "\n";
    std::abort();
  }
  std::atexit([] {
    clean();
    llvm::sys::fs::remove(workDir);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [options, source] = input.split("\n\n");
  std::vector<std::string> args{"stencilc"};
  llvm::SmallVector<llvm::StringRef, 16> lines;
  options.split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (allowed(line) && args.size() < 32)
      args.push_back(line.str());
  // A smaller layout search keeps an input at milliseconds, not seconds,
  // under the sanitizers (as in CompileFuzzer.cpp).
  args.push_back("--layout-search-max-steps=2");
  args.push_back("--layout-search-max-r=3");
  args.push_back("in.st");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os("in.st", ec);
    if (ec)
      std::abort();
    os << source;
  }
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::string messages;
  llvm::raw_string_ostream errs(messages);
  stencilc::runStencilc(static_cast<int>(argv.size()), argv.data(), &errs);
  llvm::outs().flush();
  clean();
  return 0;
}
