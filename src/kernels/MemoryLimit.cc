//===- MemoryLimit.cc - How much memory this process may use --------------===//
#include "kernels/MemoryLimit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

namespace rivet {

uint64_t memoryLimitBytes() {
  static const uint64_t Limit = [] {
    uint64_t L = std::numeric_limits<uint64_t>::max();
    long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
    if (Pages > 0 && PageSize > 0)
      L = (uint64_t)Pages * (uint64_t)PageSize;
    for (int Resource : {RLIMIT_AS, RLIMIT_DATA}) {
      struct rlimit R;
      if (getrlimit(Resource, &R) == 0 && R.rlim_cur != RLIM_INFINITY)
        L = std::min<uint64_t>(L, R.rlim_cur);
    }
    return L;
  }();
  return Limit;
}

} // namespace rivet
