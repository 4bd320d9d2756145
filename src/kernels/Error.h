//===- Error.h - The one exception type Rivet throws ------------*- C++ -*-===//
//
// Every bad input (malformed text or model, type error, wrong input, corrupt
// file) surfaces as rivet::Error with a message that says what and where.
// Internal invariant violations use RIVET_CHECK, which also throws Error, so
// nothing aborts the process.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace rivet {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &Msg) : std::runtime_error(Msg) {}
};

/// Throws rivet::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> Fmt, Args &&...A) {
  throw Error(fmt::format(Fmt, std::forward<Args>(A)...));
}

} // namespace rivet

/// Checks an invariant; on failure throws rivet::Error naming the condition.
#define RIVET_CHECK(Cond, ...)                                                 \
  do {                                                                         \
    if (!(Cond))                                                               \
      ::rivet::fail("{}", ::fmt::format(__VA_ARGS__));                         \
  } while (false)
