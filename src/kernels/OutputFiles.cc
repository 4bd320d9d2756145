//===- OutputFiles.cc - Writing result files all or nothing ---------------===//
#include "kernels/OutputFiles.h"
#include "kernels/Error.h"

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
  std::string Temp = Path + ".tmp.XXXXXX";
  int Fd = ::mkstemp(Temp.data());
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
  // mkstemp makes the file 0600; give it what a new file would get.
  mode_t Mask = ::umask(0);
  ::umask(Mask);
  ::fchmod(Fd, 0666 & ~Mask);
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
