//===- Lexer.h - Tokens of the .rvir text format ----------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::ir {

enum class TokKind : uint8_t {
  Eof,
  Ident,      // foo, Cons, Tensor, let, _ (keywords are identifiers)
  LocalName,  // %x (text without the '%')
  GlobalName, // @f (text without the '@')
  Int,        // 3, -3, 3i32, 7u8 (text: digits with sign; suffix separate)
  Float,      // 1.5, -1e-3, 2f32, nan, -inf, inff16
  String,     // "..." (text: the unescaped contents)
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Semi,
  Colon,
  Equal,
  Dot,
  Question,
  Arrow,    // ->
  FatArrow, // =>
};

struct Token {
  TokKind kind = TokKind::Eof;
  std::string text;   // see TokKind; for punctuation the spelling
  std::string suffix; // numeric literal suffix ("i32", "f16"), may be empty
  int line = 1, col = 1;
};

/// Splits Text into tokens (ending with one Eof). Throws rivet::Error
/// "file:line:col: message" for a malformed token.
std::vector<Token> tokenize(std::string_view Text, std::string_view FileName);

/// How a token is named in an error message: "'%y'", "end of input".
std::string describeToken(const Token &T);

} // namespace rivet::ir
