//===- RegularFile.cc - Opening input files that are files ----------------===//
#include "kernels/RegularFile.h"
#include "kernels/Error.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rivet {

namespace {
const char *fileKind(mode_t M) {
  if (S_ISDIR(M))
    return "a directory";
  if (S_ISFIFO(M))
    return "a FIFO";
  if (S_ISCHR(M))
    return "a character device";
  if (S_ISBLK(M))
    return "a block device";
  if (S_ISSOCK(M))
    return "a socket";
  return "not a file";
}
} // namespace

RegularFile::RegularFile(const std::string &P) : Path(P) {
  // O_NONBLOCK: opening a FIFO without a writer must not wait for one.
  Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (Fd < 0)
    fail("{}: cannot open: {}", Path, std::strerror(errno));
  struct stat St;
  if (::fstat(Fd, &St) != 0) {
    int Err = errno;
    ::close(Fd);
    fail("{}: cannot stat: {}", Path, std::strerror(Err));
  }
  if (!S_ISREG(St.st_mode)) {
    ::close(Fd);
    fail("{}: not a regular file ({})", Path, fileKind(St.st_mode));
  }
  ::fcntl(Fd, F_SETFL, ::fcntl(Fd, F_GETFL) & ~O_NONBLOCK);
  Size = (uint64_t)St.st_size;
}

RegularFile::~RegularFile() {
  if (Fd >= 0)
    ::close(Fd);
}

std::vector<uint8_t> RegularFile::read(uint64_t Offset, uint64_t Length) const {
  if (Offset > Size || Length > Size - Offset)
    fail("{}: bytes [{}, {}) lie outside the file ({} bytes)", Path, Offset,
         Offset + Length, Size);
  std::vector<uint8_t> Bytes;
  try {
    Bytes.resize(Length);
  } catch (const std::bad_alloc &) {
    fail("{}: out of memory reading {} bytes", Path, Length);
  }
  uint64_t Done = 0;
  while (Done < Length) {
    ssize_t N =
        ::pread(Fd, Bytes.data() + Done, Length - Done, (off_t)(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      fail("{}: read error: {}", Path, std::strerror(errno));
    if (N == 0)
      fail("{}: the file shrank while it was read", Path);
    Done += (uint64_t)N;
  }
  return Bytes;
}

std::vector<uint8_t> readRegularFile(const std::string &Path) {
  return RegularFile(Path).readAll();
}

} // namespace rivet
