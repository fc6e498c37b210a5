//===- LexerParserEdgeTest.cpp - Odd inputs at the edges of the buffer ----===//
//
// Empty input, NUL and non-ASCII bytes, very long tokens and tokens that end
// the buffer. Buffers are placed so that their last byte is the last byte of
// a readable page, followed by an inaccessible page: a lexer or parser that
// reads one byte past the end crashes the test.
//
//===----------------------------------------------------------------------===//

#include "stencilc/Frontend/Compile.h"
#include "stencilc/Frontend/Lexer.h"
#include "stencilc/Frontend/Parser.h"

#include "gtest/gtest.h"

#include "llvm/Support/MemoryBuffer.h"

#include <random>
#include <sys/mman.h>
#include <unistd.h>

using namespace stencilc;

namespace {

/// `text` copied to the end of a readable region followed by a PROT_NONE
/// guard page.
class GuardedText {
public:
  explicit GuardedText(llvm::StringRef text) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t dataPages = (text.size() + page - 1) / page + 1;
    length = (dataPages + 1) * page;
    void *m = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(m, MAP_FAILED);
    base = static_cast<char *>(m);
    char *guard = base + dataPages * page;
    EXPECT_EQ(mprotect(guard, page, PROT_NONE), 0);
    start = guard - text.size();
    std::memcpy(start, text.data(), text.size());
    size = text.size();
  }
  ~GuardedText() { munmap(base, length); }
  GuardedText(const GuardedText &) = delete;
  GuardedText &operator=(const GuardedText &) = delete;

  llvm::StringRef ref() const { return {start, size}; }

private:
  char *base = nullptr;
  size_t length = 0;
  char *start = nullptr;
  size_t size = 0;
};

/// Lexes a guarded copy of `source` to Eof (bounded), recording tokens.
struct GuardedLex {
  GuardedText text;
  llvm::SourceMgr sm;
  std::string diagText;
  llvm::raw_string_ostream os{diagText};
  DiagnosticEngine diags{sm, os};
  std::vector<Token> tokens;

  explicit GuardedLex(llvm::StringRef source) : text(source) {
    sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(text.ref(), "t.st",
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    Lexer lexer(text.ref(), diags);
    for (size_t guard = 0; guard <= source.size() + 1; ++guard) {
      tokens.push_back(lexer.next());
      if (tokens.back().is(TokenKind::Eof))
        break;
    }
    os.flush();
    // Every token lies inside the buffer.
    for (const Token &t : tokens) {
      EXPECT_GE(t.text.begin(), text.ref().begin());
      EXPECT_LE(t.text.end(), text.ref().end());
    }
  }
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> k;
    for (const Token &t : tokens)
      k.push_back(t.kind);
    return k;
  }
};

/// Parses and lowers a guarded copy of `source`.
struct GuardedCompile {
  GuardedText text;
  llvm::SourceMgr sm;
  std::string diagText;
  llvm::raw_string_ostream os{diagText};
  DiagnosticEngine diags{sm, os};
  std::optional<Module> module;

  explicit GuardedCompile(llvm::StringRef source) : text(source) {
    unsigned id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(text.ref(), "t.st",
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    module = compileBuffer(id, diags);
    os.flush();
  }
};

using K = TokenKind;

TEST(LexerEdge, EmptyInputIsEofForever) {
  for (const char *src : {"", " ", "\n\n", "// only a comment", "/**/"}) {
    GuardedLex l(src);
    EXPECT_EQ(l.kinds(), std::vector<TokenKind>{K::Eof}) << src;
    EXPECT_TRUE(l.diagText.empty()) << src;
  }
  GuardedText t("");
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  Lexer lexer(t.ref(), diags);
  for (int i = 0; i < 5; ++i)
    EXPECT_TRUE(lexer.next().is(K::Eof));
  GuardedCompile c("");
  EXPECT_FALSE(c.module);
  EXPECT_EQ(c.diags.errorCount(), 1u); // "defines no stencil", once
}

TEST(LexerEdge, TokensThatEndTheBuffer) {
  struct Case {
    const char *src;
    std::vector<TokenKind> kinds;
  } cases[] = {
      {"grid", {K::KwGrid, K::Eof}},
      {"gridx", {K::Identifier, K::Eof}},
      {"u'", {K::Identifier, K::Prime, K::Eof}},
      {"12", {K::Integer, K::Eof}},
      {"1.", {K::Float, K::Eof}},
      {".5", {K::Float, K::Eof}},
      {"2e7", {K::Float, K::Eof}},
      {"1e", {K::Error, K::Eof}},
      {"1e+", {K::Error, K::Eof}},
      {"3x", {K::Error, K::Eof}},
      {".", {K::Error, K::Eof}},
      {"/", {K::Slash, K::Eof}},
      {"/*", {K::Eof}},
      {"/* *", {K::Eof}},
      {"//", {K::Eof}},
      {"}", {K::RBrace, K::Eof}},
      {"-", {K::Minus, K::Eof}},
      {"u[", {K::Identifier, K::LBracket, K::Eof}},
  };
  for (const Case &c : cases) {
    GuardedLex l(c.src);
    EXPECT_EQ(l.kinds(), c.kinds) << c.src;
    // The last real token ends exactly at the end of the buffer, or the
    // buffer ends in trivia.
    bool error = l.kinds()[0] == K::Error || l.kinds()[0] == K::Eof;
    EXPECT_EQ(!l.diagText.empty(),
              error && std::string(c.src) != "//") << c.src;
  }
  GuardedLex last("stencil s { grid u : f32[1]; u' = u; }");
  ASSERT_GE(last.tokens.size(), 2u);
  const Token &brace = last.tokens[last.tokens.size() - 2];
  EXPECT_TRUE(brace.is(K::RBrace));
  EXPECT_EQ(brace.text.end(), last.text.ref().end());
}

TEST(LexerEdge, NulAndNonAsciiBytesAreOneErrorTokenEach) {
  using namespace std::string_literals;
  GuardedLex nul("grid\0u"s);
  EXPECT_EQ(nul.kinds(),
            (std::vector<TokenKind>{K::KwGrid, K::Error, K::Identifier,
                                    K::Eof}));
  EXPECT_NE(nul.diagText.find("byte 0x0"), std::string::npos)
      << nul.diagText;
  // A two-byte UTF-8 sequence is one bad character, not two.
  GuardedLex u8("a \xC3\xBC b");
  EXPECT_EQ(u8.kinds(), (std::vector<TokenKind>{K::Identifier, K::Error,
                                                K::Identifier, K::Eof}));
  EXPECT_EQ(u8.tokens[1].text.size(), 2u);
  EXPECT_EQ(u8.diags.errorCount(), 1u);
  // A lead byte that the buffer cuts off, a lone continuation byte, 0xFF.
  for (const char *src : {"u \xE2", "u \xE2\x82", "\x80", "\xFF\xFE", "u\x7F"}) {
    GuardedLex l(src);
    EXPECT_TRUE(l.tokens.back().is(K::Eof)) << src;
    EXPECT_GE(l.diags.errorCount(), 1u) << src;
    for (const Token &t : l.tokens)
      if (t.is(K::Error))
        EXPECT_GE(t.text.size(), 1u);
  }
}

TEST(LexerEdge, VeryLongIdentifiersAndNumbers) {
  std::string id(1 << 20, 'a');
  id[0] = 'Z';
  id.back() = '9';
  GuardedLex l(id);
  ASSERT_EQ(l.kinds(), (std::vector<TokenKind>{K::Identifier, K::Eof}));
  EXPECT_EQ(l.tokens[0].text.size(), id.size());

  // A grid with a 100000-character name compiles and keeps its name.
  std::string name = "g" + std::string(100000, 'x');
  GuardedCompile c("stencil s { grid " + name + " : f32[1]; boundary " +
                   name + " : clamp; " + name + "' = " + name + "[1]; }");
  ASSERT_TRUE(c.module) << c.diagText.substr(0, 300);
  EXPECT_EQ(c.module->stencils[0].grids[0].name, name);

  // A 5000-digit number is one token; as a value it is out of range.
  std::string digits(5000, '7');
  GuardedLex n(digits);
  EXPECT_EQ(n.kinds(), (std::vector<TokenKind>{K::Integer, K::Eof}));
  GuardedCompile big("stencil s { grid u : f32[1]; u' = " + digits +
                     " * u; }");
  EXPECT_FALSE(big.module);
  // A long offset is reported, not wrapped into a small one.
  GuardedCompile off("stencil s { grid u : f32[1]; boundary u : clamp;"
                     " u' = u[" + digits + "]; }");
  EXPECT_FALSE(off.module);
  GuardedCompile off2("stencil s { grid u : f32[1]; boundary u : clamp;"
                      " u' = u[4294967297]; }");
  EXPECT_FALSE(off2.module);
}

/// Every prefix of valid programs (every possible cut point, so a token
/// meets the end of the buffer with no newline) parses and lowers without
/// reading past the end, and only the complete text succeeds.
TEST(ParserEdge, EveryPrefixTerminatesInsideTheBuffer) {
  const std::string programs[] = {
      "stencil heat { grid u, k : f32[2]; param a : f32 = 0.25;\n"
      "boundary u : dirichlet(-1.5e0), periodic; boundary k : clamp;\n"
      "hint fuse = 2; let l = u[-1,0] + u[1,0] - 2*u;\n"
      "u' = u + a * l * k + star(u, 1, [-4, 1]) / 8; }",
      "stencil b { grid u : f64[3]; boundary u : fixed;\n"
      "u' = max(-1, min(box(u, 1, 1/27), pow(u[0,0,1], -2))); }"};
  for (const std::string &p : programs) {
    for (size_t cut = 0; cut <= p.size(); ++cut) {
      GuardedCompile c(llvm::StringRef(p).take_front(cut));
      // A prefix compiles only if it is the program up to trailing trivia.
      bool complete = cut >= p.rfind('}') + 1;
      EXPECT_EQ(c.module.has_value(), complete) << cut << ": " << p.substr(0, cut);
    }
  }
}

/// Random byte mutations of a valid program: the parser terminates, never
/// reads past the buffer, and reports at least one error or succeeds.
TEST(ParserEdge, RandomMutationsTerminate) {
  const std::string base =
      "stencil s { grid u, v : f32[2]; param a : f32 = 0.5;\n"
      "boundary u, v : periodic, clamp; hint steps = 4;\n"
      "let l = star(u, 1, [-4, 1]); u' = u + a * l; v' = box(v, 1); }\n";
  const char alphabet[] = "{}()[];:,='+-*/.0123456789eE_ axu\n\0\x80\xC3\xFF";
  std::mt19937_64 rng(12345);
  auto uni = [&](size_t lo, size_t hi) {
    return std::uniform_int_distribution<size_t>(lo, hi)(rng);
  };
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = base;
    int edits = static_cast<int>(uni(1, 6));
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t at = uni(0, s.size() - 1);
      char ch = alphabet[uni(0, sizeof(alphabet) - 2)];
      switch (uni(0, 3)) {
      case 0:
        s[at] = ch;
        break;
      case 1:
        s.insert(s.begin() + at, ch);
        break;
      case 2:
        s.erase(at, uni(1, 8));
        break;
      default:
        s.resize(at); // truncate
        break;
      }
    }
    GuardedCompile c(s);
    if (c.module)
      ++ok;
    else
      EXPECT_GE(c.diags.errorCount(), 1u) << s;
  }
  // Some mutations keep the program valid, most do not.
  EXPECT_GT(ok, 0);
  EXPECT_LT(ok, 3000);
}

} // namespace
