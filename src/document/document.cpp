#include "document/document.hpp"
#include "util/ascii.hpp"
#include "util/json_pointer.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace toolport::document {

namespace {

// Aliases let a small YAML file expand into a huge (or, with an alias inside its own anchor,
// endless) tree; conversion stops past this many values.
constexpr std::size_t kMaxYamlValues = 100'000;

std::string strip_bom(const std::string& text) {
    if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) return text.substr(3);
    return text;
}

bool all_of(const std::string& s, std::size_t from, bool (*pred)(char)) {
    if (from >= s.size()) return false;
    for (std::size_t i = from; i < s.size(); ++i) {
        if (!pred(s[i])) return false;
    }
    return true;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_core_float(const std::string& s) {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t int_digits = 0, frac_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
        if (int_digits == 0 && frac_digits == 0) return false;
    } else if (int_digits == 0) {
        return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        return all_of(s, i, is_digit);
    }
    return i == s.size();
}

// JSON has no infinity: 1e999 is refused rather than turned into null.
double finite(double value, const std::string& text, int line) {
    if (!std::isfinite(value)) throw DocumentError(line, fmt::format("the number {} is too large for JSON", text));
    return value;
}

Json integer_value(const std::string& digits, int base, bool negative, const std::string& original, int line) {
    errno = 0;
    char* end = nullptr;
    unsigned long long magnitude = std::strtoull(digits.c_str(), &end, base);
    if (errno == 0 && *end == '\0') {
        if (!negative) {
            if (magnitude <= static_cast<unsigned long long>(INT64_MAX)) return static_cast<std::int64_t>(magnitude);
            return static_cast<std::uint64_t>(magnitude);
        }
        if (magnitude <= static_cast<unsigned long long>(INT64_MAX)) return -static_cast<std::int64_t>(magnitude);
        if (magnitude == static_cast<unsigned long long>(INT64_MAX) + 1) return INT64_MIN;
    }
    if (base != 10) throw DocumentError(line, fmt::format("the number {} does not fit in 64 bits", original));
    // Beyond 64 bits: a number all the same, as JavaScript would read it.
    return finite(std::strtod(original.c_str(), nullptr), original, line);
}

// The YAML 1.2 core schema's reading of a plain (unquoted) scalar.
Json plain_scalar(const std::string& s, int line) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    bool negative = !s.empty() && s[0] == '-';
    std::size_t sign = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (all_of(s, sign, is_digit)) return integer_value(s.substr(sign), 10, negative, s, line);
    if (s.size() > 2 && s[0] == '0' && s[1] == 'o' && all_of(s, 2, is_octal))
        return integer_value(s.substr(2), 8, false, s, line);
    if (s.size() > 2 && s[0] == '0' && s[1] == 'x' && all_of(s, 2, is_hex))
        return integer_value(s.substr(2), 16, false, s, line);
    if (is_core_float(s)) return finite(std::strtod(s.c_str(), nullptr), s, line);
    std::string bare = sign ? s.substr(1) : s;
    if (bare == ".inf" || bare == ".Inf" || bare == ".INF" || s == ".nan" || s == ".NaN" || s == ".NAN") {
        throw DocumentError(line, fmt::format("\"{}\" (infinity or NaN) cannot be represented in JSON", s));
    }
    return s;
}

class YamlConverter {
public:
    explicit YamlConverter(Document& doc) : doc_(doc) {}

    Json convert(const YAML::Node& node, const std::string& pointer, int depth, int fallback_line) {
        if (++values_ > kMaxYamlValues) {
            throw DocumentError(fallback_line,
                                fmt::format("the document holds (or expands through aliases to) more than {} values",
                                            kMaxYamlValues));
        }
        if (depth > kMaxDocumentDepth) {
            throw DocumentError(fallback_line, fmt::format("values nested more than {} deep", kMaxDocumentDepth));
        }
        int line = node.Mark().is_null() ? fallback_line : node.Mark().line + 1;
        doc_.lines.emplace(pointer, line);
        switch (node.Type()) {
            case YAML::NodeType::Undefined:
            case YAML::NodeType::Null: return nullptr;
            case YAML::NodeType::Scalar: {
                Json value = scalar(node, line);
                if (value.is_boolean() || value.is_number()) doc_.spellings.emplace(pointer, node.Scalar());
                return value;
            }
            case YAML::NodeType::Sequence: {
                Json out = Json::array();
                std::size_t index = 0;
                for (const auto& item : node) {
                    out.push_back(convert(item, pointer_append(pointer, index++), depth + 1, line));
                }
                return out;
            }
            case YAML::NodeType::Map: {
                Json out = Json::object();
                for (const auto& kv : node) {
                    int key_line = kv.first.Mark().is_null() ? line : kv.first.Mark().line + 1;
                    if (!kv.first.IsScalar()) throw DocumentError(key_line, "mapping keys must be plain strings");
                    std::string key = kv.first.Scalar();
                    if (out.contains(key)) throw DocumentError(key_line, fmt::format("duplicate key \"{}\"", key));
                    std::string member = pointer_append(pointer, key);
                    doc_.lines.emplace(member, key_line);
                    out[key] = convert(kv.second, member, depth + 1, key_line);
                }
                return out;
            }
        }
        return nullptr;
    }

private:
    static Json scalar(const YAML::Node& node, int line) {
        const std::string& tag = node.Tag();
        const std::string& text = node.Scalar();
        if (tag == "?") return plain_scalar(text, line);
        if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;  // quoted, block or !!str
        const std::string core = "tag:yaml.org,2002:";
        if (tag.rfind(core, 0) == 0) {
            std::string kind = tag.substr(core.size());
            Json value = plain_scalar(text, line);
            bool ok = (kind == "int" && value.is_number_integer()) || (kind == "float" && value.is_number()) ||
                      (kind == "bool" && value.is_boolean()) || (kind == "null" && value.is_null());
            if (ok) return kind == "float" ? Json(value.get<double>()) : value;
            throw DocumentError(line, fmt::format("\"{}\" is not a valid !!{}", text, kind));
        }
        throw DocumentError(line, fmt::format("unsupported YAML tag \"{}\"", tag));
    }

    Document& doc_;
    std::size_t values_ = 0;
};

// Records the line of every value of a JSON text that nlohmann already accepted, and refuses
// duplicate keys (which nlohmann silently collapses).
class JsonLineScanner {
public:
    JsonLineScanner(const std::string& text, Document& doc) : text_(text), doc_(doc) {}

    void run() { value(""); }

private:
    void skip_space() {
        while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\n' || text_[i_] == '\r')) {
            if (text_[i_] == '\n') ++line_;
            ++i_;
        }
    }
    std::string string_token() {
        std::size_t start = i_++;
        while (i_ < text_.size() && text_[i_] != '"') i_ += text_[i_] == '\\' ? 2 : 1;
        ++i_;
        return Json::parse(text_.substr(start, i_ - start)).get<std::string>();
    }
    void value(const std::string& pointer) {
        skip_space();
        doc_.lines.emplace(pointer, line_);
        if (i_ >= text_.size()) return;
        char c = text_[i_];
        if (c == '{') {
            ++i_;
            std::set<std::string> keys;
            for (;;) {
                skip_space();
                if (text_[i_] == '}') break;
                if (text_[i_] == ',') {
                    ++i_;
                    continue;
                }
                int key_line = line_;
                std::string key = string_token();
                if (!keys.insert(key).second) throw DocumentError(key_line, fmt::format("duplicate key \"{}\"", key));
                std::string member = pointer_append(pointer, key);
                doc_.lines.emplace(member, key_line);
                skip_space();
                ++i_;  // ':'
                value(member);
                skip_space();
            }
            ++i_;
        } else if (c == '[') {
            ++i_;
            std::size_t index = 0;
            for (;;) {
                skip_space();
                if (text_[i_] == ']') break;
                if (text_[i_] == ',') {
                    ++i_;
                    continue;
                }
                value(pointer_append(pointer, index++));
                skip_space();
            }
            ++i_;
        } else if (c == '"') {
            string_token();
        } else {
            while (i_ < text_.size() && std::string_view(",]} \t\r\n").find(text_[i_]) == std::string_view::npos) ++i_;
        }
    }

    const std::string& text_;
    Document& doc_;
    std::size_t i_ = 0;
    int line_ = 1;
};

}  // namespace

int Document::line_of(const std::string& pointer) const {
    std::string p = pointer;
    for (;;) {
        if (auto it = lines.find(p); it != lines.end()) return it->second;
        if (p.empty()) return 0;
        p.erase(p.rfind('/'));
    }
}

std::optional<std::string> Document::spelling(const std::string& pointer) const {
    if (auto it = spellings.find(pointer); it != spellings.end()) return it->second;
    return std::nullopt;
}

std::string pointer_append(const std::string& pointer, const std::string& key) {
    std::string out = pointer + "/";
    util::append_pointer_token(out, key);
    return out;
}

std::string pointer_append(const std::string& pointer, std::size_t index) {
    return pointer + "/" + std::to_string(index);
}

std::optional<YAML::Node> load_yaml(const std::string& raw) {
    std::string text = strip_bom(raw);
    std::vector<YAML::Node> documents;
    try {
        documents = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
        // yaml-cpp also refuses nesting deeper than it can parse safely (DeepRecursion).
        throw DocumentError(e.mark.is_null() ? 0 : e.mark.line + 1, "YAML syntax error: " + e.msg);
    }
    if (documents.size() > 1) {
        throw DocumentError(0, fmt::format("the file holds {} YAML documents (separated by ---); "
                                           "it must hold exactly one",
                                           documents.size()));
    }
    if (documents.empty()) return std::nullopt;
    return documents[0];
}

Document convert_yaml(const YAML::Node& root) {
    Document doc;
    YamlConverter converter(doc);
    try {
        doc.value = converter.convert(root, "", 0, 1);
    } catch (const YAML::Exception& e) {
        throw DocumentError(e.mark.is_null() ? 0 : e.mark.line + 1, e.msg);
    }
    return doc;
}

Document parse_yaml(const std::string& raw) {
    auto root = load_yaml(raw);
    return root ? convert_yaml(*root) : Document{};
}

Json parse_json_value(const std::string& raw) {
    std::string text = strip_bom(raw);
    // nlohmann parses iteratively; the depth cap keeps later recursive walks (comparison,
    // printing) within the stack.
    auto depth_guard = [](int depth, Json::parse_event_t, Json&) {
        if (depth > kMaxDocumentDepth) {
            throw DocumentError(0, fmt::format("values nested more than {} deep", kMaxDocumentDepth));
        }
        return true;
    };
    try {
        return Json::parse(text, depth_guard);
    } catch (const Json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 3, column 5: ..." -> the part after "] ".
        std::string message = e.what();
        if (auto close = message.find("] "); close != std::string::npos) message = message.substr(close + 2);
        int line = 1;
        for (std::size_t i = 0; i < e.byte && i < text.size(); ++i) line += text[i] == '\n';
        throw DocumentError(line, "JSON " + message);
    } catch (const Json::exception& e) {
        // Not a syntax error: a number out of range (1e999) and the like.
        std::string message = e.what();
        if (auto close = message.find("] "); close != std::string::npos) message = message.substr(close + 2);
        throw DocumentError(0, "JSON " + message);
    }
}

Document parse_json(const std::string& raw) {
    Document doc;
    doc.value = parse_json_value(raw);
    std::string text = strip_bom(raw);
    JsonLineScanner(text, doc).run();
    return doc;
}

Document parse_document(const std::string& text, const std::filesystem::path& file) {
    const std::string ext = util::to_lower_ascii(file.extension().string());
    if (ext == ".json") return parse_json(text);
    if (ext == ".yaml" || ext == ".yml") return parse_yaml(text);
    throw DocumentError(0, fmt::format("unsupported file type \"{}\" (use .yaml, .yml or .json)", ext));
}

std::string read_text_file(const std::filesystem::path& file) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw DocumentError(0, "is a directory, not a file");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw DocumentError(0, "cannot be read (missing or not permitted)");
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxDocumentBytes) {
            throw DocumentError(0, fmt::format("is larger than {} MiB", kMaxDocumentBytes / (1024 * 1024)));
        }
    }
    return text;
}

}  // namespace toolport::document
