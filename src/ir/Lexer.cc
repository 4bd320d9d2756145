//===- Lexer.cc - Tokens of the .rvir text format -------------------------===//
#include "ir/Lexer.h"

#include "kernels/Error.h"

#include <fmt/format.h>

namespace rivet::ir {

namespace {

bool isIdentStart(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_';
}
bool isDigit(char C) { return C >= '0' && C <= '9'; }
bool isIdentChar(char C) { return isIdentStart(C) || isDigit(C); }

bool isValidSuffix(std::string_view S) {
  return S == "i8" || S == "i16" || S == "i32" || S == "i64" || S == "u8" ||
         S == "u16" || S == "u32" || S == "u64" || S == "f16" || S == "bf16" ||
         S == "f32" || S == "f64";
}

class Lexer {
public:
  Lexer(std::string_view Text, std::string_view FileName)
      : Text(Text), FileName(FileName) {}

  std::vector<Token> run() {
    std::vector<Token> Toks;
    while (true) {
      skipSpaceAndComments();
      Token T;
      T.line = Line;
      T.col = Col;
      if (Pos >= Text.size()) {
        T.kind = TokKind::Eof;
        Toks.push_back(std::move(T));
        return Toks;
      }
      bool AfterDot = !Toks.empty() && Toks.back().kind == TokKind::Dot;
      lexOne(T, AfterDot);
      Toks.push_back(std::move(T));
    }
  }

private:
  [[noreturn]] void error(int L, int C, const std::string &Msg) {
    fail("{}:{}:{}: {}", FileName, L, C, Msg);
  }

  char peek(size_t Ahead = 0) const {
    return Pos + Ahead < Text.size() ? Text[Pos + Ahead] : '\0';
  }
  void advance(size_t N = 1) {
    for (size_t I = 0; I < N && Pos < Text.size(); ++I) {
      if (Text[Pos] == '\n') {
        ++Line;
        Col = 1;
      } else {
        ++Col;
      }
      ++Pos;
    }
  }

  void skipSpaceAndComments() {
    while (Pos < Text.size()) {
      char C = peek();
      if (C == ' ' || C == '\t' || C == '\n' || C == '\r') {
        advance();
      } else if (C == '/' && peek(1) == '/') {
        while (Pos < Text.size() && peek() != '\n')
          advance();
      } else if (C == '/' && peek(1) == '*') {
        int L = Line, Cl = Col;
        advance(2);
        while (true) {
          if (Pos >= Text.size())
            error(L, Cl, "unterminated block comment");
          if (peek() == '*' && peek(1) == '/') {
            advance(2);
            break;
          }
          advance();
        }
      } else {
        return;
      }
    }
  }

  std::string lexName() {
    std::string S;
    while (Pos < Text.size() && isIdentChar(peek())) {
      S += peek();
      advance();
    }
    return S;
  }

  static std::string describeChar(char C) {
    if (C >= 0x21 && C <= 0x7e)
      return fmt::format("'{}'", C);
    return fmt::format("byte 0x{:02x}", (unsigned char)C);
  }

  // nan, inf, with an optional float suffix: "inff16", "nanbf16".
  static bool splitSpecialFloat(const std::string &S, std::string &Base,
                                std::string &Suffix) {
    for (const char *B : {"nan", "inf"}) {
      std::string_view BV(B);
      if (S.compare(0, BV.size(), BV) != 0)
        continue;
      std::string Rest = S.substr(BV.size());
      if (Rest.empty() || Rest == "f16" || Rest == "bf16" || Rest == "f32" ||
          Rest == "f64") {
        Base = std::string(BV);
        Suffix = Rest;
        return true;
      }
    }
    return false;
  }

  void lexNumber(Token &T, bool Negative, bool IntegerOnly) {
    std::string S = Negative ? "-" : "";
    bool IsFloat = false;
    while (isDigit(peek())) {
      S += peek();
      advance();
    }
    if (!IntegerOnly) {
      if (peek() == '.' && isDigit(peek(1))) {
        IsFloat = true;
        S += '.';
        advance();
        while (isDigit(peek())) {
          S += peek();
          advance();
        }
      }
      if ((peek() == 'e' || peek() == 'E') &&
          (isDigit(peek(1)) ||
           ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
        IsFloat = true;
        S += peek();
        advance();
        if (peek() == '+' || peek() == '-') {
          S += peek();
          advance();
        }
        while (isDigit(peek())) {
          S += peek();
          advance();
        }
      }
    }
    std::string Suffix;
    if (isIdentStart(peek())) {
      Suffix = lexName();
      if (!isValidSuffix(Suffix))
        error(T.line, T.col,
              fmt::format("invalid numeric suffix '{}'", Suffix));
      if (Suffix[0] == 'f' || Suffix == "bf16")
        IsFloat = true;
      else if (IsFloat)
        error(T.line, T.col,
              fmt::format("integer suffix '{}' on a floating-point literal",
                          Suffix));
    }
    T.kind = IsFloat ? TokKind::Float : TokKind::Int;
    T.text = std::move(S);
    T.suffix = std::move(Suffix);
  }

  void lexString(Token &T) {
    advance(); // opening quote
    std::string S;
    while (true) {
      if (Pos >= Text.size())
        error(T.line, T.col, "unterminated string literal");
      char C = peek();
      if (C == '"') {
        advance();
        break;
      }
      if (C == '\n')
        error(T.line, T.col, "unterminated string literal");
      if (C == '\\') {
        int L = Line, Cl = Col;
        advance();
        char E = peek();
        switch (E) {
        case '"':
          S += '"';
          advance();
          break;
        case '\\':
          S += '\\';
          advance();
          break;
        case 'n':
          S += '\n';
          advance();
          break;
        case 't':
          S += '\t';
          advance();
          break;
        case 'r':
          S += '\r';
          advance();
          break;
        case 'x': {
          auto Hex = [](char H) -> int {
            if (H >= '0' && H <= '9')
              return H - '0';
            if (H >= 'a' && H <= 'f')
              return H - 'a' + 10;
            if (H >= 'A' && H <= 'F')
              return H - 'A' + 10;
            return -1;
          };
          int H1 = Hex(peek(1)), H2 = Hex(peek(2));
          if (H1 < 0 || H2 < 0)
            error(L, Cl, "'\\x' must be followed by two hex digits");
          S += (char)(H1 * 16 + H2);
          advance(3);
          break;
        }
        default:
          error(L, Cl,
                fmt::format("unknown escape sequence '\\{}'",
                            E ? std::string(1, E) : std::string()));
        }
        continue;
      }
      S += C;
      advance();
    }
    T.kind = TokKind::String;
    T.text = std::move(S);
  }

  void punct(Token &T, TokKind K, size_t Len) {
    T.kind = K;
    T.text = std::string(Text.substr(Pos, Len));
    advance(Len);
  }

  void lexOne(Token &T, bool AfterDot) {
    char C = peek();
    if (isDigit(C))
      return lexNumber(T, false, AfterDot);
    if (isIdentStart(C)) {
      std::string S = lexName();
      std::string Base, Suffix;
      if (splitSpecialFloat(S, Base, Suffix)) {
        T.kind = TokKind::Float;
        T.text = Base;
        T.suffix = Suffix;
        return;
      }
      T.kind = TokKind::Ident;
      T.text = std::move(S);
      return;
    }
    switch (C) {
    case '%':
    case '@': {
      advance();
      std::string S = lexName();
      if (S.empty())
        error(T.line, T.col, fmt::format("expected a name after '{}'", C));
      T.kind = C == '%' ? TokKind::LocalName : TokKind::GlobalName;
      T.text = std::move(S);
      return;
    }
    case '-': {
      if (peek(1) == '>')
        return punct(T, TokKind::Arrow, 2);
      if (isDigit(peek(1))) {
        advance();
        return lexNumber(T, true, false);
      }
      if (isIdentStart(peek(1))) {
        size_t Save = Pos;
        int SL = Line, SC = Col;
        advance();
        std::string S = lexName();
        std::string Base, Suffix;
        if (splitSpecialFloat(S, Base, Suffix)) {
          T.kind = TokKind::Float;
          T.text = "-" + Base;
          T.suffix = Suffix;
          return;
        }
        Pos = Save;
        Line = SL;
        Col = SC;
      }
      error(T.line, T.col, "unexpected character '-'");
    }
    case '"': return lexString(T);
    case '(': return punct(T, TokKind::LParen, 1);
    case ')': return punct(T, TokKind::RParen, 1);
    case '[': return punct(T, TokKind::LBracket, 1);
    case ']': return punct(T, TokKind::RBracket, 1);
    case '{': return punct(T, TokKind::LBrace, 1);
    case '}': return punct(T, TokKind::RBrace, 1);
    case ',': return punct(T, TokKind::Comma, 1);
    case ';': return punct(T, TokKind::Semi, 1);
    case ':': return punct(T, TokKind::Colon, 1);
    case '.': return punct(T, TokKind::Dot, 1);
    case '?': return punct(T, TokKind::Question, 1);
    case '=':
      if (peek(1) == '>')
        return punct(T, TokKind::FatArrow, 2);
      return punct(T, TokKind::Equal, 1);
    default: break;
    }
    error(T.line, T.col,
          fmt::format("unexpected character {}", describeChar(C)));
  }

  std::string_view Text;
  std::string_view FileName;
  size_t Pos = 0;
  int Line = 1, Col = 1;
};

} // namespace

std::vector<Token> tokenize(std::string_view Text, std::string_view FileName) {
  return Lexer(Text, FileName).run();
}

std::string describeToken(const Token &T) {
  switch (T.kind) {
  case TokKind::Eof: return "end of input";
  case TokKind::LocalName: return fmt::format("'%{}'", T.text);
  case TokKind::GlobalName: return fmt::format("'@{}'", T.text);
  case TokKind::String: return "string literal";
  case TokKind::Int:
  case TokKind::Float: return fmt::format("'{}{}'", T.text, T.suffix);
  default: return fmt::format("'{}'", T.text);
  }
}

} // namespace rivet::ir
