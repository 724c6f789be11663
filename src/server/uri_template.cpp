#include "server/uri_template.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_set>
#include <utility>

#include "util/json.hpp"
#include "util/percent.hpp"

namespace toolport {

namespace {

using Op = UriTemplate::Op;
using Part = UriTemplate::Part;
using VarSpec = UriTemplate::VarSpec;

// The characters an operator's text in a URI never holds (see the header); the matcher keeps
// one scanning cache per set.
enum class Stops { none, hash, query_hash, slash_query_hash, count };

bool stops_at(Stops stops, char c) {
    switch (stops) {
        case Stops::none: return false;
        case Stops::hash: return c == '#';
        case Stops::query_hash: return c == '?' || c == '#';
        case Stops::slash_query_hash: return c == '/' || c == '?' || c == '#';
        case Stops::count: break;
    }
    return false;
}

// How an operator expands (RFC 6570 section 3.2, appendix A).
struct Rules {
    char first;      // written before the expression's text when any variable is defined; 0: none
    char separator;  // between items
    bool named;      // name=value items
    bool reserved;   // reserved characters and %XX triplets pass through unencoded
    Stops stops;
};

Rules rules_of(Op op) {
    switch (op) {
        case Op::simple: return {0, ',', false, false, Stops::slash_query_hash};
        case Op::reserved: return {0, ',', false, true, Stops::none};
        case Op::fragment: return {'#', ',', false, true, Stops::none};
        case Op::label: return {'.', '.', false, false, Stops::slash_query_hash};
        case Op::segment: return {'/', '/', false, false, Stops::query_hash};
        case Op::parameter: return {';', ';', true, false, Stops::slash_query_hash};
        case Op::query: return {'?', '&', true, false, Stops::hash};
        case Op::continuation: return {'&', '&', true, false, Stops::hash};
        case Op::literal: break;
    }
    return {0, ',', false, false, Stops::none};
}

bool is_unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

bool is_reserved(unsigned char c) {
    static constexpr std::string_view kReserved = ":/?#[]@!$&'()*+,;=";
    return kReserved.find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_pct_triplet(std::string_view s, std::size_t i) {
    return i + 2 < s.size() && s[i] == '%' && util::hex_digit_value(s[i + 1]) >= 0 &&
           util::hex_digit_value(s[i + 2]) >= 0;
}

// Well-formed UTF-8 (RFC 3629): what nlohmann::json accepts when it serialises a string.
bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t more = 0;
        unsigned char lo = 0x80, hi = 0xBF;  // the range of the first continuation byte
        if (c < 0x80) {
            ++i;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0) lo = 0xA0;  // no overlong forms
            if (c == 0xED) hi = 0x9F;  // no surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
        } else {
            return false;
        }
        if (i + more >= s.size()) return false;
        for (std::size_t k = 1; k <= more; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
        }
        i += more + 1;
    }
    return true;
}

std::size_t code_points(std::string_view s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The first `max_length` code points of `s` (all of it for 0).
std::string prefix_of(const std::string& s, std::size_t max_length) {
    if (max_length == 0) return s;
    std::size_t seen = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == max_length) return s.substr(0, i);
    }
    return s;
}

// A value's text in the URI, percent-decoded. Simple, label, segment, parameter and query
// expansions encode every character but the unreserved ones, so decoding every %XX undoes
// them exactly. Reserved ({+var}) and fragment ({#var}) expansions write reserved characters
// as they are: "file:///{+path}" gives "a/b" for a path with a '/' between two names, and
// "a%2Fb" for one name holding a '/'. Decoding %2F would make them the same path, so there
// triplets of reserved characters (gen-delims and sub-delims) stay encoded, for the reader
// to tell apart; every other triplet (a space, '%', non-ASCII UTF-8, unreserved characters)
// is decoded, as expansion encodes those. (A value holding a literal triplet such as "%41" is
// passed through by reserved expansion and comes back decoded: RFC 6570 itself cannot tell.)
// A '%' that starts no triplet is kept. A JSON string must be UTF-8: when the decoded bytes
// are not, the value is its text as it is in the URI, and when that is not UTF-8 either (the
// matcher tried an end inside a character) there is no value: nullopt.
std::optional<std::string> decode_value(std::string_view text, bool reserved) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!is_pct_triplet(text, i)) {
            out += text[i];
            continue;
        }
        const auto byte = static_cast<unsigned char>(util::hex_digit_value(text[i + 1]) * 16 +
                                                     util::hex_digit_value(text[i + 2]));
        if (reserved && is_reserved(byte)) out.append(text.substr(i, 3));
        else out += static_cast<char>(byte);
        i += 2;
    }
    if (valid_utf8(out)) return out;
    if (valid_utf8(text)) return std::string(text);
    return std::nullopt;
}

// One varspec: name, then "*" or ":n" (n of 1 to 4 digits, RFC 6570 section 2.4.1). RFC 6570
// names are letters, digits, '_', '.' and %XX; templates in the wild also use '-', and non-ASCII
// letters do no harm, so both are accepted. Not URI punctuation: a name written into a query
// or path parameter ("{?a=b}", "{;x;y}") could never be read back.
std::optional<VarSpec> parse_varspec(std::string_view text) {
    VarSpec spec;
    if (!text.empty() && text.back() == '*') {
        spec.explode = true;
        text.remove_suffix(1);
    } else if (auto colon = text.find(':'); colon != std::string_view::npos) {
        const auto digits = text.substr(colon + 1);
        if (digits.empty() || digits.size() > 4 || digits[0] == '0') return std::nullopt;
        for (char d : digits) {
            if (d < '0' || d > '9') return std::nullopt;
            spec.max_length = spec.max_length * 10 + static_cast<std::size_t>(d - '0');
        }
        text = text.substr(0, colon);
    }
    if (text.empty() || !valid_utf8(text)) return std::nullopt;  // names are JSON object keys
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (!is_unreserved(c) && c != '%' && c < 0x80) return std::nullopt;
    }
    spec.name = std::string(text);
    return spec;
}

std::optional<Part> parse_expression(std::string_view body) {
    Part part;
    part.op = Op::simple;
    if (!body.empty()) {
        switch (body[0]) {
            case '+':
            case '#':
            case '.':
            case '/':
            case ';':
            case '?':
            case '&':
                part.op = static_cast<Op>(body[0]);
                body.remove_prefix(1);
                break;
            case '=':
            case ',':
            case '!':
            case '@':
            case '|': return std::nullopt;  // reserved for future extensions (RFC 6570 section 2.2)
            default: break;
        }
    }
    std::size_t start = 0;
    while (true) {
        const auto comma = body.find(',', start);
        auto spec = parse_varspec(
            body.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (!spec) return std::nullopt;
        part.vars.push_back(std::move(*spec));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return part;
}

// ---- matching --------------------------------------------------------------------------------

// Work allowed: a unit is about one byte looked at. Matching a template whose expressions are
// set apart by literals or by their operators' characters costs a few units per byte of the
// URI. Adjacent expressions that could each end anywhere ("{+a}{+b}") cost work quadratic in
// the URI's length when nothing matches: the fixed allowance (about a millisecond) searches
// URIs of a few hundred bytes in full even then, and a longer one is cut.
constexpr std::size_t kWorkPerUriByte = 8;
constexpr std::size_t kBaseWork = 1 << 16;
// Failed (part, position) states remembered, so that a part is not tried twice from the same
// place; beyond this the budget alone bounds the work.
constexpr std::size_t kMaxRemembered = 1 << 16;
// Bytes one character of a {var:n} value may take in the URI: four UTF-8 bytes, each %XX.
constexpr std::size_t kMaxBytesPerChar = 12;

class Matcher {
public:
    Matcher(const std::vector<Part>& parts, std::string_view uri)
        : parts_(parts),
          uri_(uri),
          bindings_(parts.size()),
          finds_(parts.size()),
          budget_(kWorkPerUriByte * uri.size() + kBaseWork) {}

    bool gave_up() const { return exhausted_; }

    std::optional<Json> run() {
        if (!match_from(0, 0)) return std::nullopt;
        std::map<std::string_view, std::vector<const Binding*>> by_name;
        for (const auto& bindings : bindings_) {
            for (const auto& b : bindings) by_name[b.spec->name].push_back(&b);
        }
        Json vars = Json::object();
        for (const auto& [name, bindings] : by_name) {
            const Json* value = agreed_value(bindings);
            if (!value) return std::nullopt;
            vars[std::string(name)] = *value;
        }
        return vars;
    }

private:
    // A value read for one variable of one expression.
    struct Binding {
        const VarSpec* spec;
        Json value;
    };

    // The value of a name read more than once ("{x,x}", "?q=1&q=1", RFC 6570's "{/var:1,var}"):
    // the longest, which every other reading must equal or, for a {var:n}, begin with.
    static const Json* agreed_value(const std::vector<const Binding*>& bindings) {
        const Binding* longest = bindings.front();
        for (const Binding* b : bindings) {
            if (b->value.is_string() && longest->value.is_string() &&
                code_points(b->value.get_ref<const std::string&>()) >
                    code_points(longest->value.get_ref<const std::string&>())) {
                longest = b;
            }
        }
        for (const Binding* b : bindings) {
            if (!b->value.is_string() || !longest->value.is_string()) {
                if (b->value != longest->value) return nullptr;
            } else if (b->value.get_ref<const std::string&>() !=
                       prefix_of(longest->value.get_ref<const std::string&>(), b->spec->max_length)) {
                return nullptr;
            }
        }
        return &longest->value;
    }

    bool spend(std::size_t work) {
        if (work > budget_) {
            budget_ = 0;
            exhausted_ = true;
            return false;
        }
        budget_ -= work;
        return true;
    }

    // Whether parts [index, end) match uri_[pos, end).
    bool match_from(std::size_t index, std::size_t pos) {
        if (exhausted_) return false;
        if (index == parts_.size()) return pos == uri_.size();
        const Part& part = parts_[index];
        if (part.op == Op::literal) {
            if (!spend(part.literal.size()) || uri_.compare(pos, part.literal.size(), part.literal) != 0) return false;
            return match_from(index + 1, pos + part.literal.size());
        }
        const std::uint64_t state = static_cast<std::uint64_t>(index) * (uri_.size() + 1) + pos;
        if (failed_.count(state)) return false;
        const bool matched = match_expression(index, pos);
        if (!matched && !exhausted_ && failed_.size() < kMaxRemembered) failed_.insert(state);
        return matched;
    }

    // Tries the expression's possible ends, shortest first; an end is kept when the rest of
    // the template matches after it and the text before it reads as the expression.
    bool match_expression(std::size_t index, std::size_t pos) {
        const Part& part = parts_[index];
        const Rules rules = rules_of(part.op);
        std::size_t shortest = pos, longest = pos;
        if (rules.first) {
            // Absent (empty), or the operator's character and text up to a stop character.
            if (pos < uri_.size() && uri_[pos] == rules.first) longest = next_stop(rules.stops, pos + 1);
        } else {
            shortest = pos + 1;  // simple and reserved expressions are never empty
            longest = next_stop(rules.stops, pos);
        }
        if (auto cap = length_cap(part, rules)) longest = std::min(longest, pos + *cap);
        if (exhausted_ || longest < shortest) return false;

        auto try_end = [&](std::size_t end) {
            return spend(1) && match_from(index + 1, end) && read_expression(index, pos, end);
        };
        if (index + 1 == parts_.size()) return longest == uri_.size() && try_end(longest);
        const Part& next = parts_[index + 1];
        if (next.op == Op::literal) {
            // Only where the next literal begins.
            std::size_t end = shortest;
            while (end <= longest && !exhausted_) {
                const auto found = find_literal(index + 1, end);
                if (found == std::string_view::npos || found > longest) return false;
                if (try_end(found)) return true;
                end = found + 1;
            }
            return false;
        }
        for (std::size_t end = shortest; end <= longest && !exhausted_; ++end) {
            if (try_end(end)) return true;
        }
        return false;
    }

    // The most bytes an expression whose values all have a {var:n} limit can take.
    static std::optional<std::size_t> length_cap(const Part& part, const Rules& rules) {
        if (rules.named && (part.op == Op::query || part.op == Op::continuation))
            return std::nullopt;  // may hold others
        std::size_t cap = rules.first ? 1 : 0;
        for (const auto& var : part.vars) {
            if (var.explode || var.max_length == 0) return std::nullopt;
            cap += var.max_length * kMaxBytesPerChar + 1 + (rules.named ? var.name.size() + 1 : 0);
        }
        return cap;
    }

    // The first position at or after `from` that holds one of `stops` (or the URI's end).
    // Remembers the last scan per set: any `from` inside it has the same answer.
    std::size_t next_stop(Stops stops, std::size_t from) {
        if (stops == Stops::none) return uri_.size();
        auto& scan = scans_[static_cast<int>(stops)];
        if (scan.valid && from >= scan.from && from <= scan.stop) return scan.stop;
        std::size_t at = from;
        while (at < uri_.size() && !stops_at(stops, uri_[at])) ++at;
        spend(at - from + 1);
        scan = {true, from, at};
        return at;
    }

    // Where literal part `index` next occurs at or after `from` (npos: nowhere). Remembers the
    // last search per literal: any `from` between its start and what it found has that answer.
    std::size_t find_literal(std::size_t index, std::size_t from) {
        auto& scan = finds_[index];
        if (scan.valid && from >= scan.from && from <= scan.stop) return scan.stop;
        const auto found = uri_.find(parts_[index].literal, from);
        spend((found == std::string_view::npos ? uri_.size() : found) - from + 1);
        scan = {true, from, found};
        return found;
    }

    // Reads uri_[pos, end) as part `index`'s expression into bindings_[index]; false when it
    // cannot be that expression's text.
    bool read_expression(std::size_t index, std::size_t pos, std::size_t end) {
        const Part& part = parts_[index];
        const Rules rules = rules_of(part.op);
        std::string_view text = uri_.substr(pos, end - pos);
        auto& values = bindings_[index];
        values.clear();
        if (!spend(text.size() + part.vars.size())) return false;
        if (rules.first) {
            if (text.empty()) return true;  // absent: every variable undefined
            if (text[0] != rules.first) return false;
            text.remove_prefix(1);
        } else if (text.empty()) {
            return false;
        }
        return rules.named ? read_named(part, rules, text, values) : read_positional(part, rules, text, values);
    }

    static bool fits(const VarSpec& var, const std::string& value) {
        return var.max_length == 0 || code_points(value) <= var.max_length;
    }

    // Items in order: one per variable; the first exploded variable takes what the others
    // leave. Without one, the last variable takes the rest with its separators, since a list
    // that is not exploded expands with commas and a label's value may hold dots; but in
    // path segments a value's '/' would have been encoded, so extra segments refuse.
    bool read_positional(const Part& part, const Rules& rules, std::string_view text, std::vector<Binding>& values) {
        std::vector<std::string_view> items;
        for (std::size_t start = 0;;) {
            const auto sep = text.find(rules.separator, start);
            items.push_back(text.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start));
            if (sep == std::string_view::npos) break;
            start = sep + 1;
        }
        const auto vars = part.vars.size();
        const auto exploded = std::find_if(part.vars.begin(), part.vars.end(),
                                           [](const VarSpec& v) { return v.explode; });
        const auto exploded_at = static_cast<std::size_t>(exploded - part.vars.begin());
        std::size_t item = 0;
        for (std::size_t v = 0; v < vars && item < items.size(); ++v) {
            const VarSpec& var = part.vars[v];
            const std::size_t left = items.size() - item;
            std::size_t take = 1;
            if (v == exploded_at) take = left > vars - v - 1 ? left - (vars - v - 1) : 1;
            else if (v + 1 == vars && exploded_at == vars) take = left;
            if (var.explode) {
                Json list = Json::array();
                for (std::size_t k = 0; k < take; ++k) {
                    auto value = decode_value(items[item + k], rules.reserved);
                    if (!value) return false;
                    list.push_back(std::move(*value));
                }
                values.push_back({&var, std::move(list)});
            } else {
                if (take > 1 && part.op == Op::segment) return false;
                const auto first = items[item].data() - text.data();
                const auto last = items[item + take - 1].data() + items[item + take - 1].size() - text.data();
                auto value = decode_value(text.substr(first, last - first), rules.reserved);
                if (!value || !fits(var, *value)) return false;
                values.push_back({&var, std::move(*value)});
            }
            item += take;
        }
        return item == items.size();
    }

    // name=value items (or a bare name: ";x" is x empty), matched to variables by name.
    bool read_named(const Part& part, const Rules& rules, std::string_view text, std::vector<Binding>& values) {
        for (std::size_t start = 0; start <= text.size();) {
            const auto sep = text.find(rules.separator, start);
            const auto item = text.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start);
            start = sep == std::string_view::npos ? text.size() + 1 : sep + 1;
            if (item.empty()) continue;
            if (!spend(part.vars.size())) return false;
            const auto eq = item.find('=');
            const auto name = item.substr(0, eq);
            const auto raw = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
            const auto var = std::find_if(part.vars.begin(), part.vars.end(),
                                          [&](const VarSpec& v) { return v.name == name; });
            if (var == part.vars.end()) {
                if (part.op == Op::parameter) return false;
                continue;  // a query parameter the template does not name
            }
            auto value = decode_value(raw, rules.reserved);
            if (!value) return false;
            if (var->explode) {
                // Its items, in order, wherever they are among the other parameters.
                auto list = std::find_if(values.begin(), values.end(),
                                         [&](const Binding& b) { return b.spec == &*var; });
                if (list == values.end()) list = values.insert(values.end(), Binding{&*var, Json::array()});
                list->value.push_back(std::move(*value));
            } else {
                if (!fits(*var, *value)) return false;
                values.push_back({&*var, std::move(*value)});
            }
        }
        return true;
    }

    struct Scan {
        bool valid = false;
        std::size_t from = 0, stop = 0;
    };

    const std::vector<Part>& parts_;
    std::string_view uri_;
    std::vector<std::vector<Binding>> bindings_;  // each expression's values, on the path being tried
    std::unordered_set<std::uint64_t> failed_;
    Scan scans_[static_cast<int>(Stops::count)];
    std::vector<Scan> finds_;  // per literal part; stop: where it was found, or npos
    std::size_t budget_;
    bool exhausted_ = false;
};

// ---- expansion -------------------------------------------------------------------------------

std::string encode(std::string_view value, bool reserved) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (is_unreserved(c) || (reserved && is_reserved(c))) {
            out += value[i];
        } else if (reserved && is_pct_triplet(value, i)) {
            out.append(value.substr(i, 3));
            i += 2;
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

std::string scalar_text(const Json& value) {
    if (value.is_string()) return value.get<std::string>();
    return value.dump();
}

// One variable's expansion (RFC 6570 appendix A); nullopt when it is undefined.
std::optional<std::string> expand_var(const VarSpec& var, const Json& value, const Rules& rules) {
    if (value.is_null() || (value.is_array() && value.empty()) || (value.is_object() && value.empty()))
        return std::nullopt;
    auto named = [&](const std::string& name, const std::string& text) {
        if (!rules.named) return text;
        if (text.empty()) return rules.separator == ';' ? name : name + '=';
        return name + '=' + text;
    };
    if (!value.is_array() && !value.is_object()) {
        return named(var.name, encode(prefix_of(scalar_text(value), var.max_length), rules.reserved));
    }
    std::string out;
    bool first = true;  // not out.empty(): an item may expand to nothing ({/list*} of ["", "a"] is "//a")
    auto add = [&](const std::string& piece, char separator) {
        if (!first) out += separator;
        out += piece;
        first = false;
    };
    if (value.is_array()) {
        for (const auto& item : value) {
            const auto text = encode(scalar_text(item), rules.reserved);
            if (var.explode) add(named(var.name, text), rules.separator);
            else add(text, ',');
        }
    } else {
        for (const auto& [key, item] : value.items()) {
            const auto k = encode(key, rules.reserved);
            const auto text = encode(scalar_text(item), rules.reserved);
            if (var.explode) add(rules.named && text.empty() ? named(k, text) : k + '=' + text, rules.separator);
            else add(k + ',' + text, ',');
        }
    }
    return var.explode ? out : named(var.name, out);
}

}  // namespace

UriTemplate::UriTemplate(std::string pattern) : pattern_(std::move(pattern)) {
    valid_ = parse();
    if (!valid_) parts_.clear();
}

bool UriTemplate::parse() {
    std::size_t expressions = 0;
    std::string literal;
    auto flush_literal = [&] {
        if (!literal.empty()) parts_.push_back(Part{Op::literal, std::exchange(literal, {}), {}});
    };
    for (std::size_t i = 0; i < pattern_.size();) {
        const char c = pattern_[i];
        if (c == '}') return false;
        if (c != '{') {
            literal += c;
            ++i;
            continue;
        }
        const auto close = pattern_.find_first_of("{}", i + 1);
        if (close == std::string::npos || pattern_[close] == '{') return false;
        if (++expressions > kMaxExpressions) return false;
        auto expression = parse_expression(std::string_view(pattern_).substr(i + 1, close - i - 1));
        if (!expression) return false;
        flush_literal();
        const bool continues_query = expression->op == Op::continuation && !parts_.empty() &&
                                     (parts_.back().op == Op::query || parts_.back().op == Op::continuation);
        if (continues_query) {
            auto& vars = parts_.back().vars;
            vars.insert(vars.end(), expression->vars.begin(), expression->vars.end());
        } else {
            parts_.push_back(std::move(*expression));
        }
        i = close + 1;
    }
    flush_literal();
    return true;
}

std::optional<Json> UriTemplate::match(std::string_view uri, bool* gave_up) const {
    if (gave_up) *gave_up = false;
    if (!valid_) return std::nullopt;
    Matcher matcher(parts_, uri);
    auto vars = matcher.run();
    if (gave_up) *gave_up = matcher.gave_up();
    return vars;
}

std::string UriTemplate::expand(const Json& variables) const {
    if (!valid_) return {};
    std::string out;
    for (const auto& part : parts_) {
        if (part.op == Op::literal) {
            out += part.literal;
            continue;
        }
        const Rules rules = rules_of(part.op);
        bool any = false;
        for (std::size_t v = 0; v < part.vars.size(); ++v) {
            const auto& var = part.vars[v];
            const auto it = variables.is_object() ? variables.find(var.name) : variables.end();
            if (it == variables.end()) continue;
            auto text = expand_var(var, *it, rules);
            if (!text) continue;
            // {?a}{&b} is one part: with a undefined it expands to "?b=..." here, not RFC 6570's
            // "&b=...", the form the matcher reads.
            if (!any && rules.first) out += rules.first;
            else if (any) out += rules.separator;
            out += *text;
            any = true;
        }
    }
    return out;
}

}  // namespace toolport
