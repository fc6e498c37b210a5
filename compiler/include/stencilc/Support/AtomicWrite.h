//===- AtomicWrite.h - Write several files, all or none ---------*- C++ -*-===//
//
// stencilc and stencil-lift never leave a half-written output and never
// destroy what they read or what the user linked:
// - every output is compared, by file identity (device and inode; for a file
//   that does not exist yet, its resolved directory and name), with the
//   inputs and with the other outputs, and a clash is refused before anything
//   is written;
// - a regular file (or an absent one) goes to a temporary beside it first,
//   and all temporaries are renamed into place only when all were written;
//   a symbolic link is followed, so the link stays and its target is
//   replaced;
// - a device node, FIFO or socket (`/dev/stdout`, `/dev/null`, a pipe) has
//   no "beside it": it is written in place, after every temporary was
//   written and before any rename, so a failed write changes no file.
// Header-only on purpose: stencil-lift links the shared libLLVM through
// libclang-cpp, the stencilc libraries the static LLVMSupport, and one
// process must not hold both.
//
//===----------------------------------------------------------------------===//

#ifndef STENCILC_SUPPORT_ATOMICWRITE_H
#define STENCILC_SUPPORT_ATOMICWRITE_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace stencilc {

/// How an output path is written.
enum class OutputKind {
  Replace, ///< A regular file or none: temporary, then rename.
  InPlace, ///< A device node, FIFO or socket: opened and written as it is.
  Directory,
};

/// Whether `path` names a stream rather than a file that can be replaced:
/// `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and anything under /proc
/// (links whose target may be the very file a shell redirected to, which a
/// rename would replace behind the shell's back), or an existing device
/// node, FIFO or socket.
inline bool isStreamPath(llvm::StringRef path) {
  if (path == "-")
    return true;
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  llvm::StringRef a = abs;
  if (a == "/dev/stdout" || a == "/dev/stderr" || a.startswith("/dev/fd/") ||
      a.startswith("/proc/"))
    return true;
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st, /*Follow=*/true))
    return false;
  llvm::sys::fs::file_type t = st.type();
  return t != llvm::sys::fs::file_type::regular_file &&
         t != llvm::sys::fs::file_type::directory_file;
}

inline OutputKind outputKind(llvm::StringRef path) {
  if (isStreamPath(path))
    return OutputKind::InPlace;
  if (llvm::sys::fs::is_directory(path))
    return OutputKind::Directory;
  return OutputKind::Replace;
}

/// The file that `path` names once its symbolic links are followed, also
/// where the last link dangles (the name the write would create).
inline std::string resolveLinks(llvm::StringRef path) {
  std::string p = path.str();
  for (int depth = 0; depth < 16; ++depth) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(p, st, /*Follow=*/false) ||
        st.type() != llvm::sys::fs::file_type::symlink_file)
      return p;
    char buf[4096];
    ssize_t len = ::readlink(p.c_str(), buf, sizeof buf);
    if (len <= 0 || static_cast<size_t>(len) >= sizeof buf)
      return p;
    llvm::SmallString<256> target(llvm::StringRef(buf, len));
    if (llvm::sys::path::is_relative(target)) {
      llvm::SmallString<256> joined(llvm::sys::path::parent_path(p));
      llvm::sys::path::append(joined, target);
      target = joined;
    }
    p = std::string(target);
  }
  return p;
}

/// A key that two paths share exactly when they name the same file: the
/// device and inode of an existing file (links, hard links and `..` all
/// resolve), otherwise the real path of the directory plus the name. A
/// dangling symbolic link is followed to the name it would create.
inline std::string fileIdentity(llvm::StringRef linkPath) {
  llvm::sys::fs::UniqueID id;
  if (!llvm::sys::fs::getUniqueID(linkPath, id))
    return "id:" + std::to_string(id.getDevice()) + ":" +
           std::to_string(id.getFile());
  std::string path = resolveLinks(linkPath);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(path));
  if (dir.empty())
    dir = ".";
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(dir, real)) {
    real = dir;
    llvm::sys::fs::make_absolute(real);
    llvm::sys::path::remove_dots(real, /*remove_dot_dot=*/true);
  }
  llvm::sys::path::append(real, llvm::sys::path::filename(path));
  return "path:" + std::string(real);
}

/// Refuses an output that is one of `inputs` or another output, by file
/// identity; streams (`-`, `/dev/null`, a FIFO) are exempt. Calls `error`
/// and returns false on the first clash.
inline bool checkOutputsDistinct(
    const std::vector<std::string> &inputs,
    const std::vector<std::string> &outputs,
    const std::function<void(const llvm::Twine &)> &error) {
  std::vector<std::pair<std::string, std::string>> seen; // identity, path
  for (const std::string &in : inputs)
    if (!isStreamPath(in))
      seen.push_back({fileIdentity(in), ""});
  size_t numInputs = seen.size();
  for (const std::string &out : outputs) {
    if (isStreamPath(out))
      continue;
    std::string key = fileIdentity(out);
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i].first != key)
        continue;
      if (i < numInputs)
        error("the output '" + out +
              "' is the input file; refusing to overwrite it");
      else
        error("the outputs '" + seen[i].second + "' and '" + out +
              "' are the same file");
      return false;
    }
    seen.push_back({key, out});
  }
  return true;
}

/// Writes `text` to the stream or device at `path`, in place. It is opened
/// to append, never truncated: `/dev/stdout` may lead to the file that a
/// shell opened with `>>`, and for a device or FIFO appending is writing.
inline std::error_code writeInPlace(llvm::StringRef path,
                                    llvm::StringRef text) {
  if (path == "-" || path == "/dev/stdout") {
    llvm::outs() << text;
    llvm::outs().flush();
    return llvm::outs().has_error() ? llvm::outs().error()
                                    : std::error_code();
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Append);
  if (ec)
    return ec;
  os << text;
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
  }
  return ec;
}

/// Writes every (path, text) pair, or none of the files. On failure calls
/// `error` with "cannot write 'PATH': reason", removes the temporaries, and
/// returns false; no file has changed then (a stream may hold part of its
/// text).
inline bool writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files,
    const std::function<void(const llvm::Twine &)> &error) {
  // Each output is classified once. A target that is a directory would
  // fail only at its rename, after others were renamed into place: refuse
  // it before writing anything.
  std::vector<OutputKind> kinds;
  for (const auto &file : files) {
    kinds.push_back(outputKind(file.first));
    if (kinds.back() == OutputKind::Directory) {
      error("cannot write '" + file.first + "': Is a directory");
      return false;
    }
  }
  struct Pending {
    std::string temp, target;
  };
  std::vector<Pending> renames;
  auto fail = [&](const std::string &path, const std::string &why) {
    error("cannot write '" + path + "': " + why);
    for (const Pending &p : renames)
      llvm::sys::fs::remove(p.temp);
    return false;
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const auto &[path, text] = files[i];
    if (kinds[i] == OutputKind::InPlace)
      continue;
    // Through a symbolic link, the link stays and its target is replaced
    // (or created, where the link dangles).
    std::string target = resolveLinks(path);
    int fd;
    llvm::SmallString<256> temp;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueFile(target + "-%%%%%%.tmp", fd, temp))
      return fail(path, ec.message());
    renames.push_back({std::string(temp), target});
    // A replaced file keeps its permissions.
    llvm::sys::fs::file_status old;
    if (!llvm::sys::fs::status(target, old))
      llvm::sys::fs::setPermissions(fd, old.permissions());
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
    if (kinds[i] == OutputKind::InPlace)
      if (std::error_code ec = writeInPlace(files[i].first, files[i].second))
        return fail(files[i].first, ec.message());
  for (size_t i = 0; i < renames.size(); ++i)
    if (std::error_code ec =
            llvm::sys::fs::rename(renames[i].temp, renames[i].target))
      return fail(renames[i].target, ec.message());
  return true;
}

} // namespace stencilc

#endif // STENCILC_SUPPORT_ATOMICWRITE_H
