//===- Json.cpp - A small JSON reader -------------------------------------===//

#include "runtime/Json.h"

#include <cstdio>
#include <cstdlib>

namespace seam::rt::json {

const Value *Value::get(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &[k, v] : object)
    if (k == key)
      return &v;
  return nullptr;
}

namespace {
class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  Expected<Value> parseDocument() {
    Value out;
    skipSpace();
    if (!parseValue(out, 0))
      return failure();
    skipSpace();
    if (pos != text.size()) {
      message = "trailing characters after the JSON value";
      return failure();
    }
    return out;
  }

private:
  std::string_view text;
  size_t pos = 0;
  std::string message;

  /// `message`, at the line and column of the current position.
  Expected<Value> failure() const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Expected<Value>::failure("JSON parse error at line " +
                                    std::to_string(line) + ", column " +
                                    std::to_string(col) + ": " + message);
  }

  bool err(const std::string &m) {
    message = m;
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }

  bool literal(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return err("invalid literal");
    pos += word.size();
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (depth > 200)
      return err("nesting too deep");
    if (pos >= text.size())
      return err("unexpected end of input");
    char c = text[pos];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      out.kind = Value::Kind::String;
      return parseString(out.string);
    }
    if (c == 't') {
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return literal("true");
    }
    if (c == 'f') {
      out.kind = Value::Kind::Bool;
      out.boolean = false;
      return literal("false");
    }
    if (c == 'n') {
      out.kind = Value::Kind::Null;
      return literal("null");
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    return err(std::string("unexpected character '") + c + "'");
  }

  bool parseNumber(Value &out) {
    size_t start = pos;
    if (text[pos] == '-')
      ++pos;
    auto digits = [&]() {
      size_t s = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos > s;
    };
    if (!digits())
      return err("malformed number");
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (!digits())
        return err("malformed number");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!digits())
        return err("malformed number");
    }
    std::string num(text.substr(start, pos - start));
    out.kind = Value::Kind::Number;
    out.number = std::strtod(num.c_str(), nullptr);
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // opening quote
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return err("control character in string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos >= text.size())
        return err("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        if (pos + 4 > text.size())
          return err("short \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text[pos++];
          code <<= 4;
          if (h >= '0' && h <= '9')
            code |= h - '0';
          else if (h >= 'a' && h <= 'f')
            code |= h - 'a' + 10;
          else if (h >= 'A' && h <= 'F')
            code |= h - 'A' + 10;
          else
            return err("bad hex digit in \\u escape");
        }
        if (code < 0x80) {
          out.push_back(static_cast<char>(code));
        } else if (code < 0x800) {
          out.push_back(static_cast<char>(0xc0 | (code >> 6)));
          out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
        } else {
          out.push_back(static_cast<char>(0xe0 | (code >> 12)));
          out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
          out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
        }
        break;
      }
      default:
        return err("unknown escape");
      }
    }
    return err("unterminated string");
  }

  bool parseArray(Value &out, int depth) {
    out.kind = Value::Kind::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      out.array.emplace_back();
      if (!parseValue(out.array.back(), depth + 1))
        return false;
      skipSpace();
      if (pos >= text.size())
        return err("unterminated array");
      if (text[pos] == ',') {
        ++pos;
        continue;
      }
      if (text[pos] == ']') {
        ++pos;
        return true;
      }
      return err("expected ',' or ']' in array");
    }
  }

  bool parseObject(Value &out, int depth) {
    out.kind = Value::Kind::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return err("expected a string key in object");
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return err("expected ':' after object key");
      ++pos;
      skipSpace();
      Value v;
      if (!parseValue(v, depth + 1))
        return false;
      out.object.emplace_back(std::move(key), std::move(v));
      skipSpace();
      if (pos >= text.size())
        return err("unterminated object");
      if (text[pos] == ',') {
        ++pos;
        continue;
      }
      if (text[pos] == '}') {
        ++pos;
        return true;
      }
      return err("expected ',' or '}' in object");
    }
  }
};
} // namespace

Expected<Value> parse(std::string_view text) {
  return Parser(text).parseDocument();
}

void appendQuoted(std::string &out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out.push_back(c);
      }
    }
  }
  out.push_back('"');
}

} // namespace seam::rt::json
