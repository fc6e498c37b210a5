//===- Tune.cpp - The on-GPU tuning sweep of stencilc --tune --------------===//
//
// Each candidate goes through three children: stencilc --emit-main writes
// cand<i>.cu, nvcc builds it, and the program runs and prints its RESULT
// line. Each child has a timeout, because a candidate that hangs (a kernel
// that never ends, an nvcc that swaps) must cost one measurement, not the
// sweep. What a failing child wrote is kept in a log and boiled down to one
// line, so that progress and the final error say why without the logs,
// which are removed with the temporary directory.
//
//===----------------------------------------------------------------------===//

#include "Tune.h"
#include "stencilc/Support/GpuArch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <cmath>

using namespace stencilc;

namespace {

/// A private temporary directory, removed with everything in it when this
/// goes out of scope, whichever way tune() returns.
class TempDir {
public:
  std::error_code create() {
    return llvm::sys::fs::createUniqueDirectory("stencilc-tune", path);
  }
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
  }
  std::string file(const llvm::Twine &name) const {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  llvm::StringRef str() const { return path; }

private:
  llvm::SmallString<256> path;
};

std::string readFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true,
                                  /*RequiresNullTerminator=*/false);
  return buf ? (*buf)->getBuffer().str() : std::string();
}

/// The line of a child's output that best says why it failed: the first
/// that mentions an error (nvcc and stencilc warn before they fail), else
/// the first non-empty one. Paths into the temporary directory lose it:
/// the directory is gone by the time anyone reads the message.
std::string summarizeLog(llvm::StringRef text, llvm::StringRef tmpDir) {
  llvm::SmallVector<llvm::StringRef, 16> lines;
  text.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  llvm::StringRef pick;
  for (llvm::StringRef line : lines)
    if (line.contains_insensitive("error")) {
      pick = line;
      break;
    }
  if (pick.empty())
    for (llvm::StringRef line : lines)
      if (!line.trim().empty()) {
        pick = line;
        break;
      }
  std::string out = pick.trim().str();
  std::string prefix = tmpDir.str() + "/";
  for (size_t at; (at = out.find(prefix)) != std::string::npos;)
    out.erase(at, prefix.size());
  constexpr size_t kMaxChars = 300;
  if (out.size() > kMaxChars)
    out = out.substr(0, kMaxChars) + "...";
  return out;
}

/// Runs `args` (args[0] names the program) with stdout into `outPath` and
/// stderr into `errPath` (the same file when equal), killing it after
/// `timeout` seconds. Returns std::nullopt when it exited with status 0,
/// else why not, in one line.
std::optional<std::string> runChild(llvm::StringRef program,
                                    const std::vector<std::string> &args,
                                    llvm::StringRef outPath,
                                    llvm::StringRef errPath, unsigned timeout,
                                    llvm::StringRef tmpDir) {
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), outPath,
                                                 errPath};
  std::string errMsg;
  bool execFailed = false;
  int rc = llvm::sys::ExecuteAndWait(program, argRefs, llvm::None, redirects,
                                     timeout, /*MemoryLimit=*/0, &errMsg,
                                     &execFailed);
  if (rc == 0)
    return std::nullopt;
  if (execFailed || rc == -1)
    return "cannot run '" + program.str() + "': " + errMsg;
  // LLVM kills the child with SIGKILL and reports "Child timed out".
  if (rc == -2 && llvm::StringRef(errMsg).startswith("Child timed out"))
    return "timed out after " + std::to_string(timeout) + " s";
  std::string log = readFile(errPath);
  if (errPath != outPath)
    log += "\n" + readFile(outPath);
  std::string line = summarizeLog(log, tmpDir);
  if (rc == -2) // Killed by a signal; errMsg names it.
    return line.empty() ? "crashed: " + errMsg
                        : line + " (crashed: " + errMsg + ")";
  return line.empty() ? "exited with status " + std::to_string(rc) : line;
}

/// The gstencils value of the last RESULT line in `out`, with the line.
std::optional<std::pair<double, std::string>> parseResult(llvm::StringRef out) {
  llvm::SmallVector<llvm::StringRef, 16> lines;
  out.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    llvm::StringRef line = it->trim();
    if (!line.startswith("RESULT "))
      continue;
    llvm::SmallVector<llvm::StringRef, 12> fields;
    line.split(fields, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (llvm::StringRef field : fields) {
      auto [key, value] = field.split('=');
      double rate = 0;
      if (key == "gstencils" && !value.getAsDouble(rate) &&
          std::isfinite(rate) && rate > 0)
        return std::make_pair(rate, line.str());
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::string formatRate(double gstencils) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f", gstencils);
  return s;
}

/// An executable at `name` (with a '/') or on PATH.
std::optional<std::string> findExecutable(llvm::StringRef name) {
  if (name.contains('/')) {
    if (llvm::sys::fs::is_regular_file(name) &&
        llvm::sys::fs::can_execute(name))
      return name.str();
    return std::nullopt;
  }
  llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name);
  if (!path)
    return std::nullopt;
  return *path;
}

/// nvcc: --nvcc, else STENCILC_NVCC, else PATH.
std::optional<std::string> findNvcc(llvm::StringRef given,
                                    DiagnosticEngine &diags) {
  if (!given.empty()) {
    if (std::optional<std::string> path = findExecutable(given))
      return path;
    diags.error("--tune needs nvcc: --nvcc '" + given +
                "' is not an executable");
    return std::nullopt;
  }
  llvm::Optional<std::string> env = llvm::sys::Process::GetEnv("STENCILC_NVCC");
  if (env && !env->empty()) {
    if (std::optional<std::string> path = findExecutable(*env))
      return path;
    diags.error("--tune needs nvcc: STENCILC_NVCC='" + *env +
                "' is not an executable");
    return std::nullopt;
  }
  if (std::optional<std::string> path = findExecutable("nvcc"))
    return path;
  diags.error(
      "--tune needs nvcc: not found on PATH; set STENCILC_NVCC or --nvcc");
  return std::nullopt;
}

} // namespace

std::optional<TuneResult>
stencilc::tune(const std::vector<TuneCandidate> &candidates,
               const TuneOptions &options, DiagnosticEngine &diags) {
  if (candidates.empty()) {
    diags.error("--tune: no candidate configurations to try");
    return std::nullopt;
  }
  llvm::StringRef archNumber = options.arch;
  unsigned archValue = 0;
  if (!archNumber.consume_front("sm_") ||
      archNumber.getAsInteger(10, archValue)) {
    diags.error("--tune: unsupported arch '" + options.arch + "'; expected " +
                archNames());
    return std::nullopt;
  }
  if (options.reps < 1) {
    diags.error("--tune needs at least one timed repetition, not " +
                llvm::Twine(options.reps));
    return std::nullopt;
  }
  std::optional<std::string> nvcc = findNvcc(options.nvcc, diags);
  if (!nvcc)
    return std::nullopt;
  TempDir tmp;
  if (std::error_code ec = tmp.create()) {
    diags.error("--tune: cannot create a temporary directory: " + ec.message());
    return std::nullopt;
  }

  auto say = [&](const llvm::Twine &line) {
    if (!options.progress)
      return;
    *options.progress << line << "\n";
    options.progress->flush();
  };
  std::string gencode =
      "arch=compute_" + archNumber.str() + ",code=sm_" + archNumber.str();
  const size_t n = candidates.size();
  TuneResult result;
  std::optional<size_t> best;
  for (size_t i = 0; i < n; ++i) {
    const TuneCandidate &c = candidates[i];
    std::string prefix = "[" + std::to_string(i + 1) + "/" + std::to_string(n) +
                         "] " + c.label + ": ";
    std::string stem = "cand" + std::to_string(i + 1);
    std::string cu = tmp.file(stem + ".cu"), exe = tmp.file(stem);
    TuneMeasurement m;
    m.candidate = i;
    auto fail = [&](llvm::StringRef step, const std::string &why) {
      m.error = step.str() + ": " + why;
      say(prefix + "failed (" + m.error + ")");
    };

    say(prefix + "compiling...");
    std::vector<std::string> gen = {options.stencilc, options.input};
    gen.insert(gen.end(), options.commonFlags.begin(),
               options.commonFlags.end());
    gen.insert(gen.end(), c.flags.begin(), c.flags.end());
    gen.insert(gen.end(), {"--emit-main", "-o", cu});
    std::string genLog = tmp.file(stem + ".stencilc.log");
    std::string nvccLog = tmp.file(stem + ".nvcc.log");
    std::string runOut = tmp.file(stem + ".out");
    std::string runErr = tmp.file(stem + ".err");
    if (std::optional<std::string> why =
            runChild(options.stencilc, gen, genLog, genLog,
                     options.generateTimeout, tmp.str())) {
      fail("generate", *why);
    } else if (std::optional<std::string> why = runChild(
                   *nvcc,
                   {*nvcc, "-O3", "-std=c++17", "-gencode", gencode, cu, "-o",
                    exe},
                   nvccLog, nvccLog, options.compileTimeout, tmp.str())) {
      fail("compile", *why);
    } else {
      say(prefix + "running...");
      std::vector<std::string> run = {
          exe, "--reps=" + std::to_string(options.reps), "--min-time=0.05"};
      if (!options.size.empty())
        run.push_back("--size=" + options.size);
      if (std::optional<std::string> why = runChild(
              exe, run, runOut, runErr, options.runTimeout, tmp.str())) {
        fail("run", *why);
      } else if (auto rate = parseResult(readFile(runOut))) {
        m.ok = true;
        m.gstencils = rate->first;
        m.resultLine = rate->second;
        say(prefix + formatRate(m.gstencils) + " GStencils/s");
        if (!best || m.gstencils > result.measured[*best].gstencils)
          best = i;
      } else {
        fail("run", "printed no RESULT line with gstencils");
      }
    }
    result.measured.push_back(std::move(m));
  }

  if (!best) {
    const TuneMeasurement &first = result.measured.front();
    diags.error("--tune runs each candidate on a GPU; none ran: '" +
                candidates[first.candidate].label + "' failed (" + first.error +
                ")");
    return std::nullopt;
  }
  result.best = *best;
  size_t failed = llvm::count_if(
      result.measured, [](const TuneMeasurement &m) { return !m.ok; });
  say("tuning: best of " + llvm::Twine(n) + " is " + candidates[*best].label +
      " (" + formatRate(result.measured[*best].gstencils) + " GStencils/s)" +
      (failed ? "; " + std::to_string(failed) + " failed" : std::string()));
  return result;
}
