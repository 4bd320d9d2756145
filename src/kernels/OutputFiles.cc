//===- OutputFiles.cc - Writing result files all or nothing ---------------===//
#include "kernels/OutputFiles.h"
#include "kernels/Error.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rivet {

void checkOutputTarget(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return; // absent: it will be created
  if (!S_ISREG(St.st_mode))
    fail("{}: exists and is not a regular file; refusing to replace it", Path);
}

bool sameFile(const std::string &A, const std::string &B) {
  struct stat SA, SB;
  return ::stat(A.c_str(), &SA) == 0 && ::stat(B.c_str(), &SB) == 0 &&
         SA.st_dev == SB.st_dev && SA.st_ino == SB.st_ino;
}

OutputFiles::~OutputFiles() {
  for (const Pending &P : Files)
    ::unlink(P.temp.c_str());
}

void OutputFiles::add(const std::string &Path, const void *Bytes, size_t Size) {
  checkOutputTarget(Path);
  // A name of our own beside the target, created with mode 0666 so that the
  // umask applies as to any new file (mkstemp's 0600 would need the umask,
  // which can only be read by changing it: not thread-safe).
  static std::atomic<uint64_t> Counter{0};
  std::string Temp;
  int Fd = -1;
  for (int Try = 0; Fd < 0 && Try < 100; ++Try) {
    Temp = Path + ".tmp." + std::to_string(::getpid()) + "." +
           std::to_string(Counter++);
    Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (Fd < 0 && errno != EEXIST)
      break;
  }
  if (Fd < 0)
    fail("{}: cannot write: {}", Path, std::strerror(errno));
  Files.push_back({Path, Temp});
  const char *P = static_cast<const char *>(Bytes);
  size_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::write(Fd, P + Done, Size - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      int Err = N < 0 ? errno : ENOSPC;
      ::close(Fd);
      fail("{}: cannot write: {}", Path, std::strerror(Err));
    }
    Done += (size_t)N;
  }
  if (::close(Fd) != 0)
    fail("{}: cannot write: {}", Path, std::strerror(errno));
}

void OutputFiles::commit() {
  for (const Pending &P : Files) {
    // Checked again: the target may have appeared since add().
    checkOutputTarget(P.target);
    if (std::rename(P.temp.c_str(), P.target.c_str()) != 0)
      fail("{}: cannot write: {}", P.target, std::strerror(errno));
  }
  Files.clear();
}

} // namespace rivet
