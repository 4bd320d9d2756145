//===- SharedObject.cc - Link emitted kernels into a shared object --------===//
//
// Runs ld.lld as a child process (posix_spawn, no shell) on files in a
// private mkdtemp directory that is removed afterwards, whatever happens.
//
//===----------------------------------------------------------------------===//
#include "codegen/SharedObject.h"

#include "kernels/Error.h"
#include "vm/NativeLibrary.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace rivet::codegen {

namespace fs = std::filesystem;

namespace {

bool isExecutable(const std::string &Path) {
  return !Path.empty() && ::access(Path.c_str(), X_OK) == 0 &&
         !fs::is_directory(Path);
}

/// A directory made by mkdtemp, removed with its contents on destruction.
class TempDir {
public:
  TempDir() {
    const char *Base = std::getenv("TMPDIR");
    std::string Templ =
        std::string(Base && *Base ? Base : "/tmp") + "/rivet-link-XXXXXX";
    if (!::mkdtemp(Templ.data()))
      fail("cannot create a temporary directory '{}' for linking: {}", Templ,
           std::strerror(errno));
    Path = Templ;
  }
  ~TempDir() {
    std::error_code EC;
    fs::remove_all(Path, EC);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  std::string Path;
};

void writeFile(const std::string &Path, const std::vector<uint8_t> &Bytes) {
  std::ofstream Out(Path, std::ios::binary);
  Out.write(reinterpret_cast<const char *>(Bytes.data()),
            (std::streamsize)Bytes.size());
  if (!Out.good())
    fail("cannot write '{}' for linking", Path);
}

std::vector<uint8_t> readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    fail("cannot read '{}'", Path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}

/// Runs Argv[0] with Argv, stdout and stderr into LogPath; the exit status
/// (or -1 when killed by a signal).
int runProcess(const std::vector<std::string> &Argv,
               const std::string &LogPath) {
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_addopen(&Actions, STDOUT_FILENO, LogPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&Actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char *> Args;
  for (const std::string &A : Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);
  pid_t Pid = 0;
  int Rc =
      ::posix_spawn(&Pid, Args[0], &Actions, nullptr, Args.data(), environ);
  posix_spawn_file_actions_destroy(&Actions);
  if (Rc != 0)
    fail("cannot run the linker '{}': {}", Argv[0], std::strerror(Rc));
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0)
    if (errno != EINTR)
      fail("waiting for the linker '{}': {}", Argv[0], std::strerror(errno));
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

/// The file of the C math library this process uses (so the shared object
/// records its soname), or "" when it cannot be found.
std::string hostMathLibrary() {
  Dl_info Info;
  float (*Expf)(float) = &::expf;
  if (::dladdr(reinterpret_cast<void *>(Expf), &Info) && Info.dli_fname &&
      *Info.dli_fname)
    return Info.dli_fname;
  return "";
}

} // namespace

std::string findLinker() {
  if (const char *Env = std::getenv("RIVET_LD_LLD"); Env && *Env) {
    if (!isExecutable(Env))
      fail("RIVET_LD_LLD names '{}', which is not an executable file", Env);
    return Env;
  }
  std::vector<std::string> Searched = {"/usr/lib/llvm-16/bin/ld.lld",
                                       "/usr/bin/ld.lld-16"};
  for (const std::string &P : Searched)
    if (isExecutable(P))
      return P;
  const char *Path = std::getenv("PATH");
  std::string Dirs = Path ? Path : "";
  for (size_t Begin = 0; Begin <= Dirs.size();) {
    size_t End = Dirs.find(':', Begin);
    if (End == std::string::npos)
      End = Dirs.size();
    std::string Dir = Dirs.substr(Begin, End - Begin);
    if (!Dir.empty() && isExecutable(Dir + "/ld.lld"))
      return Dir + "/ld.lld";
    Begin = End + 1;
  }
  fail("cannot link native kernels: no ld.lld found (searched $RIVET_LD_LLD, "
       "{}, {} and ld.lld on $PATH='{}'); install the 'lld' package",
       Searched[0], Searched[1], Dirs);
}

std::vector<uint8_t> linkSharedObject(const std::vector<uint8_t> &Object) {
  if (Object.size() < 20 || std::memcmp(Object.data(),
                                        "\x7f"
                                        "ELF",
                                        4) != 0)
    fail("cannot link native kernels: the object is not an ELF file");
  uint16_t Machine = (uint16_t)(Object[18] | (Object[19] << 8));
  std::string Linker = findLinker();
  TempDir Dir;
  std::string In = Dir.Path + "/kernels.o", Out = Dir.Path + "/kernels.so",
              Log = Dir.Path + "/ld.log";
  writeFile(In, Object);
  std::vector<std::string> Argv = {
      Linker, "-shared", "--hash-style=gnu", "-z", "noexecstack", "-z", "now",
      "-z",   "relro",   "--strip-all",      "-o", Out,           In};
  if (Machine == vm::NativeLibrary::hostElfMachine()) {
    std::string LibM = hostMathLibrary();
    if (!LibM.empty()) {
      Argv.push_back("--as-needed");
      Argv.push_back(LibM);
    }
  }
  int Rc = runProcess(Argv, Log);
  if (Rc != 0) {
    std::vector<uint8_t> Diag = readFile(Log);
    fail("linking native kernels with '{}' failed (exit status {}): {}", Linker,
         Rc, std::string(Diag.begin(), Diag.end()));
  }
  return readFile(Out);
}

} // namespace rivet::codegen
