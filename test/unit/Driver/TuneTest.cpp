//===- TuneTest.cpp - The --tune sweep, with a fake stencilc and nvcc -----===//
//
// tune() runs three children per candidate. Here they are shell scripts: the
// fake stencilc writes the candidate's --fuse and --fake mode into the .cu
// file, the fake nvcc reads it and writes a program that prints a RESULT
// line with 100 * fuse + 0.46 GStencils/s, or fails, or hangs, as the mode
// says. Every script appends its arguments to a file, so the tests also see
// the command lines.
//
//===----------------------------------------------------------------------===//

#include "Tune.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

using namespace stencilc;

namespace {

// @DIR@ is replaced by the test's directory.
const char *const kFakeStencilc = R"(#!/bin/sh
echo "$*" >> "@DIR@/stencilc.args"
out= fuse=1 mode=ok
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    --fuse=*) fuse="${1#--fuse=}" ;;
    --fake=*) mode="${1#--fake=}" ;;
  esac
  shift
done
case "$mode" in
  generate-error)
    echo "in.st:1:1: warning: harmless" >&2
    echo "in.st:1:1: error: fake generate error" >&2
    exit 1 ;;
  generate-hang) exec sleep 30 ;;
esac
printf 'FUSE=%s\nMODE=%s\n' "$fuse" "$mode" > "$out"
)";

const char *const kFakeNvcc = R"(#!/bin/sh
echo "$*" >> "@DIR@/nvcc.args"
out= cu=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    *.cu) cu="$1" ;;
  esac
  shift
done
. "$cu"
if [ "$MODE" = compile-error ]; then
  echo "nvcc warning : fake warning"
  echo "$cu(12): error: fake compile error"
  exit 2
fi
{
  echo '#!/bin/sh'
  echo 'echo "$*" >> "@DIR@/run.args"'
  case "$MODE" in
    run-error)
      echo "echo 'heat2d f32 size=64x64 steps=8 fuse=$FUSE'"
      echo "echo '$cu:360: CUDA error: no CUDA-capable device is detected (cudaErrorNoDevice)' >&2"
      echo 'exit 1' ;;
    run-hang) echo 'exec sleep 30' ;;
    no-result) echo "echo 'heat2d f32 size=64x64 steps=8 fuse=$FUSE'" ;;
    *)
      echo "echo 'heat2d f32 size=64x64 steps=8 fuse=$FUSE'"
      echo "echo 'RESULT stencil=heat2d type=f32 size=64x64 steps=8 fuse=$FUSE timed_steps=800 ms=1.000 gstencils=$((FUSE * 100)).46'" ;;
  esac
} > "$out"
chmod +x "$out"
)";

/// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::optional<std::string> &value)
      : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved)
      ::setenv(name, saved->c_str(), 1);
    else
      ::unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

class TuneTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tune-test", dir));
    writeScript("stencilc", kFakeStencilc);
    writeScript("nvcc", kFakeNvcc);
    options.stencilc = path("stencilc");
    options.nvcc = path("nvcc");
    options.input = "in.st";
    options.commonFlags = {"--type=f32", "--arch=sm_80"};
    options.arch = "sm_80";
    options.size = "64x64";
    options.progress = &progressStream;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void writeScript(llvm::StringRef name, llvm::StringRef text) {
    std::string body = text.str();
    for (size_t at; (at = body.find("@DIR@")) != std::string::npos;)
      body.replace(at, 5, dir.str().str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << body;
    os.close();
    ASSERT_FALSE(llvm::sys::fs::setPermissions(
        path(name), llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
                        llvm::sys::fs::owner_write));
  }
  /// What a fake wrote into the test directory; empty when nothing.
  std::string read(llvm::StringRef name) const {
    auto buf = llvm::MemoryBuffer::getFile(path(name));
    return buf ? (*buf)->getBuffer().str() : std::string();
  }
  /// The temporary directory of tune(): where the fake stencilc wrote.
  std::string tuneDir() const {
    const std::string text = read("stencilc.args");
    llvm::StringRef args = text;
    size_t at = args.find(" -o ");
    if (at == llvm::StringRef::npos)
      return "";
    llvm::StringRef out = args.substr(at + 4).split('\n').first;
    return llvm::sys::path::parent_path(out).str();
  }

  std::optional<TuneResult> run(const std::vector<TuneCandidate> &candidates) {
    std::optional<TuneResult> result = tune(candidates, options, diags);
    progressStream.flush();
    diagStream.flush();
    return result;
  }

  llvm::SmallString<128> dir;
  TuneOptions options;
  std::string progress, diagText;
  llvm::raw_string_ostream progressStream{progress}, diagStream{diagText};
  llvm::SourceMgr sourceMgr;
  DiagnosticEngine diags{sourceMgr, diagStream};
};

TEST_F(TuneTest, PicksTheFastest) {
  std::optional<TuneResult> r = run(
      {{"t=2", {"--fuse=2"}}, {"t=7", {"--fuse=7"}}, {"t=3", {"--fuse=3"}}});
  ASSERT_TRUE(r) << diagText;
  EXPECT_EQ(diagText, "");
  EXPECT_EQ(r->best, 1u);
  ASSERT_EQ(r->measured.size(), 3u);
  const double want[] = {200.46, 700.46, 300.46};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r->measured[i].candidate, i);
    EXPECT_TRUE(r->measured[i].ok) << r->measured[i].error;
    EXPECT_DOUBLE_EQ(r->measured[i].gstencils, want[i]);
  }
  EXPECT_EQ(r->measured[1].resultLine,
            "RESULT stencil=heat2d type=f32 size=64x64 steps=8 fuse=7 "
            "timed_steps=800 ms=1.000 gstencils=700.46");
  EXPECT_EQ(progress, "[1/3] t=2: compiling...\n"
                      "[1/3] t=2: running...\n"
                      "[1/3] t=2: 200.5 GStencils/s\n"
                      "[2/3] t=7: compiling...\n"
                      "[2/3] t=7: running...\n"
                      "[2/3] t=7: 700.5 GStencils/s\n"
                      "[3/3] t=3: compiling...\n"
                      "[3/3] t=3: running...\n"
                      "[3/3] t=3: 300.5 GStencils/s\n"
                      "tuning: best of 3 is t=7 (700.5 GStencils/s)\n");
}

TEST_F(TuneTest, CommandLines) {
  ASSERT_TRUE(run({{"a", {"--fuse=2"}}, {"b", {"--target=sptc", "--fuse=4"}}}))
      << diagText;
  std::string tmp = tuneDir();
  ASSERT_NE(tmp, "");
  EXPECT_EQ(read("stencilc.args"),
            "in.st --type=f32 --arch=sm_80 --fuse=2 --emit-main -o " + tmp +
                "/cand1.cu\n"
                "in.st --type=f32 --arch=sm_80 --target=sptc --fuse=4 "
                "--emit-main -o " +
                tmp + "/cand2.cu\n");
  EXPECT_EQ(read("nvcc.args"),
            "-O3 -std=c++17 -gencode arch=compute_80,code=sm_80 " + tmp +
                "/cand1.cu -o " + tmp + "/cand1\n" +
                "-O3 -std=c++17 -gencode arch=compute_80,code=sm_80 " + tmp +
                "/cand2.cu -o " + tmp + "/cand2\n");
  EXPECT_EQ(read("run.args"), "--reps=3 --min-time=0.05 --size=64x64\n"
                              "--reps=3 --min-time=0.05 --size=64x64\n");
}

TEST_F(TuneTest, NoSizeLeavesTheDefault) {
  options.size = "";
  options.reps = 7;
  options.arch = "sm_90";
  ASSERT_TRUE(run({{"a", {"--fuse=2"}}})) << diagText;
  EXPECT_EQ(read("run.args"), "--reps=7 --min-time=0.05\n");
  EXPECT_NE(read("nvcc.args").find(" arch=compute_90,code=sm_90 "),
            std::string::npos);
}

TEST_F(TuneTest, FailedCandidatesAreSkippedAndReported) {
  std::optional<TuneResult> r =
      run({{"gen", {"--fake=generate-error"}},
           {"nvcc", {"--fuse=9", "--fake=compile-error"}},
           {"fine", {"--fuse=4"}},
           {"gpu", {"--fuse=9", "--fake=run-error"}},
           {"mute", {"--fuse=9", "--fake=no-result"}}});
  ASSERT_TRUE(r) << diagText;
  EXPECT_EQ(diagText, "");
  EXPECT_EQ(r->best, 2u);
  ASSERT_EQ(r->measured.size(), 5u);
  for (size_t i : {0, 1, 3, 4})
    EXPECT_FALSE(r->measured[i].ok) << i;
  EXPECT_TRUE(r->measured[2].ok);
  // The line that says "error" wins over the warning before it, and the
  // temporary directory is cut from paths.
  EXPECT_EQ(r->measured[0].error,
            "generate: in.st:1:1: error: fake generate error");
  EXPECT_EQ(r->measured[1].error,
            "compile: cand2.cu(12): error: fake compile error");
  EXPECT_EQ(r->measured[3].error,
            "run: cand4.cu:360: CUDA error: no CUDA-capable device is "
            "detected (cudaErrorNoDevice)");
  EXPECT_EQ(r->measured[4].error, "run: printed no RESULT line with gstencils");
  EXPECT_EQ(progress,
            "[1/5] gen: compiling...\n"
            "[1/5] gen: failed (generate: in.st:1:1: error: fake generate "
            "error)\n"
            "[2/5] nvcc: compiling...\n"
            "[2/5] nvcc: failed (compile: cand2.cu(12): error: fake compile "
            "error)\n"
            "[3/5] fine: compiling...\n"
            "[3/5] fine: running...\n"
            "[3/5] fine: 400.5 GStencils/s\n"
            "[4/5] gpu: compiling...\n"
            "[4/5] gpu: running...\n"
            "[4/5] gpu: failed (run: cand4.cu:360: CUDA error: no "
            "CUDA-capable device is detected (cudaErrorNoDevice))\n"
            "[5/5] mute: compiling...\n"
            "[5/5] mute: running...\n"
            "[5/5] mute: failed (run: printed no RESULT line with "
            "gstencils)\n"
            "tuning: best of 5 is fine (400.5 GStencils/s); 4 failed\n");
}

TEST_F(TuneTest, AllFailingIsOneError) {
  std::optional<TuneResult> r =
      run({{"a", {"--fake=run-error"}}, {"b", {"--fake=compile-error"}}});
  EXPECT_FALSE(r);
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_EQ(diagText,
            "stencilc: error: --tune runs each candidate on a GPU; none "
            "ran: 'a' failed (run: cand1.cu:360: CUDA error: no CUDA-capable "
            "device is detected (cudaErrorNoDevice))\n");
  // The sweep went on after the first failure.
  EXPECT_NE(progress.find("[2/2] b: failed (compile: "), std::string::npos)
      << progress;
  EXPECT_EQ(progress.find("tuning: best"), std::string::npos) << progress;
}

TEST_F(TuneTest, TemporaryDirectoryIsRemovedAfterSuccess) {
  ASSERT_TRUE(run({{"a", {"--fuse=2"}}})) << diagText;
  std::string tmp = tuneDir();
  ASSERT_NE(tmp, "");
  EXPECT_NE(tmp, dir.str());
  EXPECT_FALSE(llvm::sys::fs::exists(tmp)) << tmp;
}

TEST_F(TuneTest, TemporaryDirectoryIsRemovedAfterFailure) {
  ASSERT_FALSE(run({{"a", {"--fake=run-error"}}}));
  std::string tmp = tuneDir();
  ASSERT_NE(tmp, "");
  EXPECT_FALSE(llvm::sys::fs::exists(tmp)) << tmp;
}

TEST_F(TuneTest, HangingCandidatesAreKilled) {
  options.generateTimeout = 1;
  options.runTimeout = 1;
  auto start = std::chrono::steady_clock::now();
  std::optional<TuneResult> r = run({{"gen", {"--fake=generate-hang"}},
                                     {"run", {"--fake=run-hang"}},
                                     {"ok", {"--fuse=2"}}});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(r) << diagText;
  EXPECT_EQ(r->best, 2u);
  EXPECT_EQ(r->measured[0].error, "generate: timed out after 1 s");
  EXPECT_EQ(r->measured[1].error, "run: timed out after 1 s");
  // The hanging children sleep 30 s each.
  EXPECT_LT(seconds, 20.0);
}

TEST_F(TuneTest, NvccNotFound) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("empty")));
  ScopedEnv env("STENCILC_NVCC", std::nullopt);
  ScopedEnv pathEnv("PATH", path("empty"));
  options.nvcc = "";
  EXPECT_FALSE(run({{"a", {"--fuse=2"}}}));
  EXPECT_EQ(diagText, "stencilc: error: --tune needs nvcc: not found on "
                      "PATH; set STENCILC_NVCC or --nvcc\n");
  EXPECT_EQ(read("stencilc.args"), "") << "no candidate should be generated";
}

TEST_F(TuneTest, NvccOnPath) {
  ScopedEnv env("STENCILC_NVCC", std::nullopt);
  ScopedEnv pathEnv("PATH", dir.str().str() + ":" + std::getenv("PATH"));
  options.nvcc = "";
  ASSERT_TRUE(run({{"a", {"--fuse=2"}}})) << diagText;
  EXPECT_NE(read("nvcc.args"), "");
}

TEST_F(TuneTest, NvccFromEnvironment) {
  ScopedEnv env("STENCILC_NVCC", path("nvcc"));
  options.nvcc = "";
  ASSERT_TRUE(run({{"a", {"--fuse=2"}}})) << diagText;
  EXPECT_NE(read("nvcc.args"), "");
}

TEST_F(TuneTest, BadNvccFromEnvironment) {
  ScopedEnv env("STENCILC_NVCC", path("no-such-nvcc"));
  options.nvcc = "";
  EXPECT_FALSE(run({{"a", {"--fuse=2"}}}));
  EXPECT_EQ(diagText, "stencilc: error: --tune needs nvcc: STENCILC_NVCC='" +
                          path("no-such-nvcc") + "' is not an executable\n");
}

TEST_F(TuneTest, NvccFlagWinsOverEnvironment) {
  ScopedEnv env("STENCILC_NVCC", path("no-such-nvcc"));
  ASSERT_TRUE(run({{"a", {"--fuse=2"}}})) << diagText;
  options.nvcc = path("stencilc.args"); // Not executable.
  EXPECT_FALSE(run({{"a", {"--fuse=2"}}}));
  EXPECT_EQ(diagText, "stencilc: error: --tune needs nvcc: --nvcc '" +
                          path("stencilc.args") + "' is not an executable\n");
}

TEST_F(TuneTest, BadOptions) {
  EXPECT_FALSE(run({}));
  options.reps = 0;
  EXPECT_FALSE(run({{"a", {"--fuse=2"}}}));
  options.reps = 3;
  options.arch = "compute_80";
  EXPECT_FALSE(run({{"a", {"--fuse=2"}}}));
  EXPECT_EQ(diagText,
            "stencilc: error: --tune: no candidate configurations to try\n"
            "stencilc: error: --tune needs at least one timed repetition, "
            "not 0\n"
            "stencilc: error: --tune: unsupported arch 'compute_80'; "
            "expected sm_80, sm_86, sm_89, sm_90, sm_100 or sm_120\n");
  EXPECT_EQ(read("stencilc.args"), "");
}

} // namespace
