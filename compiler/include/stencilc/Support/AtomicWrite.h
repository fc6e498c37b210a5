//===- AtomicWrite.h - Write several files, all or none ---------*- C++ -*-===//
//
// stencilc and stencil-lift never leave a half-written output: every file
// goes to a temporary beside its target first, and all are renamed into
// place only when all were written. Header-only on purpose: stencil-lift
// links the shared libLLVM through libclang-cpp, the stencilc libraries the
// static LLVMSupport, and one process must not hold both.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_SUPPORT_ATOMICWRITE_H
#define STENCILC_SUPPORT_ATOMICWRITE_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace stencilc {

/// Writes every (path, text) pair, or none. On failure calls `error` with
/// "cannot write 'PATH': reason", removes the temporaries, and returns
/// false; no target has changed then.
inline bool writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files,
    const std::function<void(const llvm::Twine &)> &error) {
  // A target that is a directory would fail only at its rename, after
  // others were renamed into place: refuse it before writing anything.
  for (const auto &file : files)
    if (llvm::sys::fs::is_directory(file.first)) {
      error("cannot write '" + file.first + "': Is a directory");
      return false;
    }
  std::vector<std::string> temps;
  auto fail = [&](const std::string &path, const std::string &why) {
    error("cannot write '" + path + "': " + why);
    for (const std::string &t : temps)
      llvm::sys::fs::remove(t);
    return false;
  };
  for (const auto &[path, text] : files) {
    int fd;
    llvm::SmallString<256> temp;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(path + "-%%%%%%.tmp", fd, temp))
      return fail(path, ec.message());
    temps.push_back(std::string(temp));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      std::string why = os.error().message();
      os.clear_error();
      return fail(path, why);
    }
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (std::error_code ec = llvm::sys::fs::rename(temps[i], files[i].first))
      return fail(files[i].first, ec.message());
  return true;
}

} // namespace stencilc

#endif // STENCILC_SUPPORT_ATOMICWRITE_H
