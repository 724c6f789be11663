#include "providers/tango/validation.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "server/tool_error.hpp"
#include "util/base64.hpp"

namespace toolport::tango {

namespace {

std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

ToolError format_error(const std::string& name, const Json& provided, const std::string& what,
                       const std::string& expected, const Json& example) {
    return ToolError(ToolErrorCode::invalid_format, fmt::format("Invalid {} for {}", what, name))
        .parameter(name)
        .provided(provided)
        .expected(expected)
        .example(example);
}

}  // namespace

void truncate_utf8(std::string& s, std::size_t max) {
    std::size_t points = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
            if (points == max) {
                s.resize(i);
                return;
            }
            ++points;
        }
    }
}

std::optional<std::string> text_arg(const Json& args, const std::string& name, std::size_t max_length) {
    auto it = args.find(name);
    if (it == args.end() || it->is_null()) return std::nullopt;
    std::string value;
    if (it->is_string()) value = it->get<std::string>();
    else if (it->is_number()) value = it->dump();
    else throw ToolError(ToolErrorCode::invalid_argument, name + " must be a string").parameter(name).provided(*it);
    std::string clean;
    clean.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
        const auto u = static_cast<unsigned char>(value[i]);
        if (u < 0x20 || u == 0x7f) {  // C0 controls: tabs and line breaks become spaces
            if (u == '\t' || u == '\n' || u == '\r') clean += ' ';
            continue;
        }
        if (u == 0xC2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) <= 0x9F) {
            ++i;  // C1 controls (U+0080-U+009F)
            continue;
        }
        if (u == 0xE2 && i + 2 < value.size()) {
            const auto b1 = static_cast<unsigned char>(value[i + 1]);
            const auto b2 = static_cast<unsigned char>(value[i + 2]);
            // U+2028/U+2029 line and paragraph separators: spaces. Zero-width characters
            // (U+200B-U+200F) and bidirectional overrides (U+202A-U+202E, U+2066-U+2069),
            // which hide or reorder text in logs and queries: dropped.
            const bool separator = b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9);
            const bool invisible = (b1 == 0x80 && ((b2 >= 0x8B && b2 <= 0x8F) || (b2 >= 0xAA && b2 <= 0xAE))) ||
                                   (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);
            if (separator || invisible) {
                if (separator) clean += ' ';
                i += 2;
                continue;
            }
        }
        if (u == 0xEF && i + 2 < value.size() && static_cast<unsigned char>(value[i + 1]) == 0xBB &&
            static_cast<unsigned char>(value[i + 2]) == 0xBF) {
            i += 2;  // U+FEFF, a byte-order mark pasted along with the text
            continue;
        }
        clean += value[i];
    }
    auto first = clean.find_first_not_of(' ');
    if (first == std::string::npos) return std::nullopt;
    clean = clean.substr(first, clean.find_last_not_of(' ') - first + 1);
    truncate_utf8(clean, max_length);
    return clean;
}

bool is_calendar_date(std::string_view t) {
    if (t.size() != 10 || t[4] != '-' || t[7] != '-') return false;
    for (int i : {0, 1, 2, 3, 5, 6, 8, 9}) {
        if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    }
    const int y = std::stoi(std::string(t.substr(0, 4)));
    const int m = std::stoi(std::string(t.substr(5, 2)));
    const int d = std::stoi(std::string(t.substr(8, 2)));
    if (y < 1900 || m < 1 || m > 12 || d < 1) return false;
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

std::optional<std::string> date_arg(const Json& args, const std::string& name) {
    auto value = text_arg(args, name, 40);
    if (!value) return std::nullopt;
    if (!is_calendar_date(*value)) {
        throw format_error(name, *value, "date format", "YYYY-MM-DD (a real calendar date)", "2024-01-01")
            .suggest(fmt::format("Write {} as YYYY-MM-DD, e.g. 2024-01-01.", name));
    }
    return value;
}

void check_date_range(const std::optional<std::string>& start, const std::string& start_name,
                      const std::optional<std::string>& end, const std::string& end_name) {
    if (start && end && *start > *end) {
        throw ToolError(ToolErrorCode::invalid_argument,
                        fmt::format("{} ({}) is after {} ({})", start_name, *start, end_name, *end))
            .parameter(start_name)
            .provided(*start)
            .suggest(fmt::format("Swap the dates, or set {} on or before {}.", start_name, end_name));
    }
}

std::pair<std::optional<std::string>, std::optional<std::string>> date_range_arg(const Json& args,
                                                                                 const std::string& start_name,
                                                                                 const std::string& end_name) {
    auto start = date_arg(args, start_name);
    auto end = date_arg(args, end_name);
    check_date_range(start, start_name, end, end_name);
    return {std::move(start), std::move(end)};
}

std::optional<std::string> keyset_cursor_arg(const Json& args) {
    // Read one character past the longest cursor Tango hands out, so that a longer one is
    // refused instead of being cut into a different cursor.
    constexpr std::size_t kMaxCursor = 1000;
    auto cursor = text_arg(args, "cursor", kMaxCursor + 1);
    if (!cursor) return cursor;
    bool ok = cursor->size() <= kMaxCursor;
    if (ok) {
        // Either alphabet, padded or not.
        std::string text = *cursor;
        while (!text.empty() && text.back() == '=' && cursor->size() - text.size() < 2) text.pop_back();
        for (char& c : text) c = c == '+' ? '-' : c == '/' ? '_' : c;
        const auto decoded = util::base64url_decode(text);
        const Json keyset = decoded ? Json::parse(*decoded, nullptr, false) : Json();
        ok = keyset.is_array() || keyset.is_object();
    }
    if (!ok) {
        ToolError error(ToolErrorCode::invalid_format, "cursor is not one this tool handed out");
        error.parameter("cursor")
            .expected("pagination.next_cursor of a previous answer of this tool (base64 text)")
            .suggest(
                "Pass pagination.next_cursor from the previous answer unchanged, with the same filters, or leave "
                "cursor out to start from the first page.");
        if (cursor->size() <= 100) error.provided(*cursor);
        throw error;
    }
    return cursor;
}

int page_cursor_arg(const Json& args) {
    auto cursor = text_arg(args, "cursor", 20);
    if (!cursor) return 1;
    const bool ok = cursor->rfind("page:", 0) == 0 && cursor->size() > 5 && cursor->size() <= 11 &&
                    std::all_of(cursor->begin() + 5, cursor->end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                    std::stoi(cursor->substr(5)) >= 1;
    if (!ok) {
        throw ToolError(ToolErrorCode::invalid_format, "cursor is not one this tool handed out")
            .parameter("cursor")
            .provided(*cursor)
            .expected("page:<n>, as pagination.next_cursor gives it")
            .example("page:2")
            .suggest(
                "Pass pagination.next_cursor from the previous answer unchanged, or leave cursor out to start from "
                "the first page.");
    }
    return std::stoi(cursor->substr(5));
}

bool is_uei(std::string_view t) {
    if (t.size() != 12 || t[0] == '0') return false;
    return std::all_of(t.begin(), t.end(), [](char c) {
        return (std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c))) &&
               c != 'O' && c != 'I';
    });
}

bool is_cage(std::string_view t) {
    return t.size() == 5 && std::all_of(t.begin(), t.end(), [](char c) {
               return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
           });
}

std::optional<std::string> uei_arg(const Json& args, const std::string& name) {
    auto value = text_arg(args, name, 40);
    if (!value) return std::nullopt;
    std::string v = upper(*value);
    if (!is_uei(v)) {
        throw format_error(name, *value, "UEI", "12 letters and digits, no O or I, not starting with 0", "N553JH75Z8K1")
            .suggest(
                "Copy the vendor's UEI from a contract record (vendor.uei), or search contracts by vendor_name "
                "with search_tango_contracts to find it.");
    }
    return v;
}

std::optional<std::string> naics_arg(const Json& args, const std::string& name) {
    auto value = text_arg(args, name, 20);
    if (!value) return std::nullopt;
    const bool ok = value->size() >= 2 && value->size() <= 6 &&
                    std::all_of(value->begin(), value->end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!ok) {
        throw format_error(name, *value, "NAICS code", "2 to 6 digits", "541512")
            .suggest("Use a NAICS code such as 541512 (computer systems design) or a shorter prefix such as 5415.");
    }
    return value;
}

std::optional<std::string> psc_arg(const Json& args, const std::string& name) {
    auto value = text_arg(args, name, 20);
    if (!value) return std::nullopt;
    std::string v = upper(*value);
    const bool ok = v.size() == 4 && std::all_of(v.begin(), v.end(), [](char c) {
                        return std::isupper(static_cast<unsigned char>(c)) ||
                               std::isdigit(static_cast<unsigned char>(c));
                    });
    if (!ok) {
        throw format_error(name, *value, "PSC code", "4 letters or digits", "D302")
            .suggest("Product and Service Codes have 4 characters: D302 (IT systems development), R408, 7030.");
    }
    return v;
}

namespace {

struct SetAside {
    const char* code;
    const char* description;
};

// FPDS "Type of Set Aside" codes (FPDS help; the rest as SAM.gov uses them).
const std::vector<SetAside>& set_aside_table() {
    static const std::vector<SetAside> table = {
        {"NONE", "No set aside used"},
        {"SBA", "Small Business Set Aside - Total"},
        {"SBP", "Small Business Set Aside - Partial"},
        {"8A", "8(a) Competed"},
        {"8AN", "8(a) Sole Source"},
        {"HZC", "HUBZone Set-Aside"},
        {"HZS", "HUBZone Sole Source"},
        {"SDVOSBC", "Service-Disabled Veteran-Owned Small Business Set Aside"},
        {"SDVOSBS", "Service-Disabled Veteran-Owned Small Business Sole Source"},
        {"WOSB", "Women-Owned Small Business Program Set Aside"},
        {"WOSBSS", "Women-Owned Small Business Program Sole Source"},
        {"EDWOSB", "Economically Disadvantaged Women-Owned Small Business Program Set Aside"},
        {"EDWOSBSS", "Economically Disadvantaged Women-Owned Small Business Program Sole Source"},
        {"VSA", "Veteran-Owned Small Business Set-Aside (VA)"},
        {"VSS", "Veteran-Owned Small Business Sole Source (VA)"},
        {"HMT", "HBCU or MI Set-Aside - Total"},
        {"HMP", "HBCU or MI Set-Aside - Partial"},
        {"LAS", "Local Area Set-Aside"},
        {"IEE", "Indian Economic Enterprise"},
        {"ISBEE", "Indian Small Business Economic Enterprise"},
        {"BICIV", "Buy Indian Set-Aside"},
        {"RSB", "Reserved for Small Business"},
        {"VSB", "Very Small Business"},
        {"ESB", "Emerging Small Business"},
    };
    return table;
}

// Letters and digits only, upper-cased: "8(a)" → "8A", "Women-Owned" → "WOMENOWNED".
std::string squeeze(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
}

// The umbrella names people (and the seed) use, which are not FPDS codes.
const std::map<std::string, std::vector<std::string>>& umbrella_names() {
    static const std::map<std::string, std::vector<std::string>> names = {
        {"SMALLBUSINESS", {"SBA", "SBP"}},
        {"SB", {"SBA", "SBP"}},
        {"8AANY", {"8A", "8AN"}},
        {"HUBZONE", {"HZC", "HZS"}},
        {"SDVOSB", {"SDVOSBC", "SDVOSBS"}},
        {"SERVICEDISABLEDVETERAN", {"SDVOSBC", "SDVOSBS"}},
        {"VOSB", {"VSA", "VSS"}},
        {"VETERAN", {"VSA", "VSS", "SDVOSBC", "SDVOSBS"}},
        {"WOMENOWNED", {"WOSB", "WOSBSS", "EDWOSB", "EDWOSBSS"}},
        {"WOMANOWNED", {"WOSB", "WOSBSS", "EDWOSB", "EDWOSBSS"}},
        {"INDIAN", {"IEE", "ISBEE", "BICIV"}},
    };
    return names;
}

}  // namespace

std::vector<std::string> set_aside_codes(std::string_view name) {
    const std::string key = squeeze(name);
    for (const auto& s : set_aside_table()) {
        if (key == squeeze(s.code)) return {s.code};
    }
    if (auto it = umbrella_names().find(key); it != umbrella_names().end()) return it->second;
    return {};
}

std::string set_aside_description(std::string_view code) {
    const std::string key = squeeze(code);
    for (const auto& s : set_aside_table()) {
        if (key == squeeze(s.code)) return s.description;
    }
    return {};
}

std::optional<std::string> set_aside_arg(const Json& args, const std::string& name) {
    auto value = text_arg(args, name, 100);
    if (!value) return std::nullopt;
    std::vector<std::string> codes;
    std::string_view rest = *value;
    while (!rest.empty()) {
        auto sep = rest.find_first_of(",|");
        auto part = rest.substr(0, sep);
        if (squeeze(part).size() > 0) {
            auto found = set_aside_codes(part);
            if (found.empty()) {
                throw ToolError(ToolErrorCode::invalid_argument,
                                fmt::format("Unknown set-aside type \"{}\"", std::string(part)))
                    .parameter(name)
                    .provided(*value)
                    .expected("an FPDS set-aside code or a program name")
                    .example("SDVOSB")
                    .suggest(
                        "Use SBA (small business), 8A, 8AN, HUBZone (HZC, HZS), SDVOSB (SDVOSBC, SDVOSBS), WOSB, "
                        "EDWOSB, VOSB; several may be joined with commas.");
            }
            for (auto& c : found) {
                if (std::find(codes.begin(), codes.end(), c) == codes.end()) codes.push_back(c);
            }
        }
        if (sep == std::string_view::npos) break;
        rest = rest.substr(sep + 1);
    }
    if (codes.empty()) return std::nullopt;
    return fmt::format("{}", fmt::join(codes, "|"));
}

std::optional<int> optional_int_arg(const Json& args, const std::string& name, int min, int max,
                                    std::optional<int> example) {
    auto it = args.find(name);
    if (it == args.end() || it->is_null()) return std::nullopt;
    double v = 0;
    if (it->is_number()) v = it->get<double>();
    else if (it->is_string()) {
        try {
            std::size_t used = 0;
            v = std::stod(it->get<std::string>(), &used);
            if (used != it->get<std::string>().size()) throw std::invalid_argument("trailing");
        } catch (const std::logic_error&) {
            throw ToolError(ToolErrorCode::invalid_argument, name + " must be a whole number")
                .parameter(name)
                .provided(*it);
        }
    } else {
        throw ToolError(ToolErrorCode::invalid_argument, name + " must be a whole number").parameter(name).provided(*it);
    }
    // Range first: casting a double outside long long's range is undefined behaviour.
    if (!(v >= min && v <= max) || v != static_cast<double>(static_cast<long long>(v))) {
        throw ToolError(ToolErrorCode::invalid_argument,
                        fmt::format("{} must be a whole number from {} to {}", name, min, max))
            .parameter(name)
            .provided(*it)
            .example(std::min(max, std::max(min, example.value_or(10))))
            .suggest(fmt::format("Use a value from {} to {}.", min, max));
    }
    return static_cast<int>(v);
}

std::optional<int> fiscal_year_arg(const Json& args, const std::string& name) {
    return optional_int_arg(args, name, 1990, 2100, kExampleFiscalYear);
}

int int_arg(const Json& args, const std::string& name, int fallback, int min, int max) {
    return optional_int_arg(args, name, min, max).value_or(fallback);
}

std::optional<bool> bool_arg(const Json& args, const std::string& name) {
    auto it = args.find(name);
    if (it == args.end() || it->is_null()) return std::nullopt;
    if (it->is_boolean()) return it->get<bool>();
    if (it->is_string()) {
        auto v = it->get<std::string>();
        if (v == "true") return true;
        if (v == "false") return false;
    }
    throw ToolError(ToolErrorCode::invalid_argument, name + " must be true or false").parameter(name).provided(*it);
}

std::optional<double> number_arg(const Json& args, const std::string& name, double min) {
    auto it = args.find(name);
    if (it == args.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || it->get<double>() < min) {
        throw ToolError(ToolErrorCode::invalid_argument, fmt::format("{} must be a number of at least {}", name, min))
            .parameter(name)
            .provided(*it);
    }
    return it->get<double>();
}

std::optional<std::string> choice_arg(const Json& args, const std::string& name,
                                      const std::vector<std::string>& allowed, bool signed_order) {
    auto value = text_arg(args, name, 60);
    if (!value) return std::nullopt;
    std::string bare = *value;
    if (signed_order && !bare.empty() && bare[0] == '-') bare.erase(0, 1);
    if (std::find(allowed.begin(), allowed.end(), bare) == allowed.end()) {
        throw ToolError(ToolErrorCode::invalid_argument,
                        fmt::format("{} must be one of: {}{}", name, fmt::join(allowed, ", "),
                                    signed_order ? " (prefix with - for descending)" : ""))
            .parameter(name)
            .provided(*value)
            .example(signed_order ? "-" + allowed.front() : allowed.front());
    }
    return value;
}

}  // namespace toolport::tango
