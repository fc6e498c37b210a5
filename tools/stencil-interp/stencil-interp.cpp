//===- stencil-interp.cpp - Run a stencil on the CPU reference ------------===//
//
// Runs every stencil of a .st file on the CPU reference interpreter, from the
// same random initial data the --emit-main driver draws, and prints each
// updated grid's checksum and first values. Tests use it to compare the
// interpreter with the reference printed into generated drivers.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Frontend/Compile.h"
#include "stencilc/IR/Interpreter.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"

using namespace stencilc;
namespace cl = llvm::cl;

static cl::OptionCategory cat("stencil-interp");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.st>"),
                                      cl::Required, cl::cat(cat));
static cl::opt<std::string> sizeOpt("size", cl::desc("N or N0xN1[xN2]"),
                                    cl::init("16"), cl::cat(cat));
static cl::opt<long long> stepsOpt("steps", cl::desc("time steps"),
                                   cl::init(3), cl::cat(cat));
static cl::opt<unsigned long long> seedOpt("seed", cl::init(42),
                                           cl::desc("random seed"),
                                           cl::cat(cat));
static cl::opt<bool> gridType("grid-type", cl::cat(cat),
                              cl::desc("compute in the grid's type instead "
                                       "of float64"));

/// splitmix64, as in runtime/include/stencilc/driver.cuh.
static uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "CPU reference run of a stencil\n");
  llvm::SourceMgr sm;
  DiagnosticEngine diags(sm);
  unsigned buf = loadSourceFile(inputFile, diags);
  if (!buf)
    return 1;
  std::optional<Module> module = compileBuffer(buf, diags);
  if (!module)
    return 1;
  for (const Stencil &s : module->stencils) {
    Sizes n{1, 1, 1};
    llvm::SmallVector<llvm::StringRef, 3> parts;
    llvm::StringRef(sizeOpt).split(parts, 'x');
    if (parts.size() != 1 && parts.size() != static_cast<size_t>(s.dims)) {
      llvm::errs() << "stencil-interp: error: --size needs 1 or " << s.dims
                   << " extents\n";
      return 1;
    }
    for (int a = 0; a < s.dims; ++a)
      if (parts[parts.size() == 1 ? 0 : a].getAsInteger(10, n[a]) || n[a] <= 0) {
        llvm::errs() << "stencil-interp: error: bad --size\n";
        return 1;
      }
    std::vector<double> params;
    for (const Param &p : s.params)
      params.push_back(p.defaultValue);
    Interpreter interp(s, n,  params,
                       gridType ? RefPrecision::GridType : RefPrecision::Float64);
    uint64_t seed = seedOpt;
    for (size_t g = 0; g < s.grids.size(); ++g) {
      std::vector<double> v(interp.numPoints());
      for (double &x : v)
        x = roundTo(s.grids[g].type,
                    static_cast<double>(nextRandom(seed) >> 11) * 0x1.0p-53);
      interp.setGrid(static_cast<int>(g), v);
    }
    interp.run(stepsOpt);
    // Updated grids in declaration order, as the --cpu-only driver prints
    // them.
    for (size_t g = 0; g < s.grids.size(); ++g) {
      if (!s.grids[g].updated)
        continue;
      const std::vector<double> &v = interp.getGrid(static_cast<int>(g));
      double sum = 0;
      for (double x : v)
        sum += x;
      llvm::outs() << s.name << "." << s.grids[g].name << " sum "
                   << llvm::format("%.17g", sum) << "\n";
    }
  }
  return 0;
}
