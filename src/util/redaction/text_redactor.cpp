#include "util/redaction/text_redactor.hpp"

#include <algorithm>
#include <cmath>

#include "util/redaction/checks.hpp"
#include "util/redaction/lower_run.hpp"

namespace toolport::util::redaction {

namespace {

// Byte classes. A "word" is a run of word bytes: what tokens, emails and keys are made of.
enum : std::uint8_t {
    kLower = 1,
    kUpper = 2,
    kDigit = 4,
    kPunct = 8,  // _ - . + / inside a word
    kAt = 16,    // '@', inside a word too
    kWord = kLower | kUpper | kDigit | kPunct | kAt,
};

constexpr std::array<std::uint8_t, 256> make_classes() {
    std::array<std::uint8_t, 256> t{};
    for (int c = 'a'; c <= 'z'; ++c) t[c] = kLower;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = kUpper;
    for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
    for (char c : {'_', '-', '.', '+', '/'}) t[static_cast<unsigned char>(c)] = kPunct;
    t['@'] = kAt;
    return t;
}
constexpr std::array<std::uint8_t, 256> kClass = make_classes();

std::uint8_t cls(char c) { return kClass[static_cast<unsigned char>(c)]; }
bool is_digit(char c) { return cls(c) == kDigit; }
bool is_alnum(char c) { return (cls(c) & (kLower | kUpper | kDigit)) != 0; }
bool is_upper(char c) { return cls(c) == kUpper; }
bool is_alpha(char c) { return (cls(c) & (kLower | kUpper)) != 0; }
bool is_word(char c) { return cls(c) != 0; }

bool starts_with(std::string_view text, std::size_t at, std::string_view prefix) {
    return text.size() - at >= prefix.size() && text.compare(at, prefix.size(), prefix) == 0;
}

// Where the run of bytes accepted by `accept` that starts at `at` ends.
template <typename Accept>
std::size_t run_end(std::string_view text, std::size_t at, Accept accept) {
    while (at < text.size() && accept(text[at])) ++at;
    return at;
}

bool base64url(char c) { return is_alnum(c) || c == '_' || c == '-'; }
bool alnum_or_underscore(char c) { return is_alnum(c) || c == '_'; }
bool alnum_or_dash(char c) { return is_alnum(c) || c == '-'; }
bool upper_or_digit(char c) { return is_upper(c) || is_digit(c); }

// ---- vendor-shaped keys and tokens ----

struct KeyShape {
    std::string_view prefix;
    bool (*body)(char);
    std::size_t min_body;
    std::size_t exact_body;  // 0: any length from min_body on
};

constexpr bool alnum_body(char c) { return (kClass[static_cast<unsigned char>(c)] & (kLower | kUpper | kDigit)) != 0; }

const KeyShape kKeyShapes[] = {
    // AWS access key ids: a four-letter kind, 16 upper-case letters and digits.
    {"AKIA", upper_or_digit, 16, 16},
    {"ASIA", upper_or_digit, 16, 16},
    {"AGPA", upper_or_digit, 16, 16},
    {"AIDA", upper_or_digit, 16, 16},
    {"AROA", upper_or_digit, 16, 16},
    {"AIPA", upper_or_digit, 16, 16},
    {"ANPA", upper_or_digit, 16, 16},
    {"ANVA", upper_or_digit, 16, 16},
    // GitHub tokens (classic and fine-grained), GitLab, npm, Hugging Face.
    {"ghp_", alnum_body, 36, 0},
    {"gho_", alnum_body, 36, 0},
    {"ghu_", alnum_body, 36, 0},
    {"ghs_", alnum_body, 36, 0},
    {"ghr_", alnum_body, 36, 0},
    {"github_pat_", alnum_or_underscore, 22, 0},
    {"glpat-", base64url, 20, 0},
    {"npm_", alnum_body, 36, 0},
    {"hf_", alnum_body, 30, 0},
    // Slack.
    {"xoxb-", alnum_or_dash, 10, 0},
    {"xoxp-", alnum_or_dash, 10, 0},
    {"xoxa-", alnum_or_dash, 10, 0},
    {"xoxr-", alnum_or_dash, 10, 0},
    {"xoxs-", alnum_or_dash, 10, 0},
    {"xoxe-", alnum_or_dash, 10, 0},
    {"xapp-", alnum_or_dash, 10, 0},
    // Stripe secret and restricted keys, webhook secrets.
    {"sk_live_", alnum_body, 16, 0},
    {"sk_test_", alnum_body, 16, 0},
    {"rk_live_", alnum_body, 16, 0},
    {"rk_test_", alnum_body, 16, 0},
    {"whsec_", alnum_body, 16, 0},
    // Google API keys.
    {"AIza", base64url, 35, 35},
    // OpenAI and Anthropic style keys.
    {"sk-", base64url, 32, 0},
};

// A vendor-shaped key starting at `s`: its end, or 0.
std::size_t match_key(std::string_view text, std::size_t s) {
    for (const auto& shape : kKeyShapes) {
        if (!starts_with(text, s, shape.prefix)) continue;
        const std::size_t body = s + shape.prefix.size();
        std::size_t end = run_end(text, body, shape.body);
        const std::size_t length = end - body;
        if (length < shape.min_body) continue;
        if (shape.exact_body) {
            if (length != shape.exact_body) continue;
        }
        // A key runs to the end of its word: "ghp_…x.y" is not one.
        if (end < text.size() && is_alnum(text[end])) continue;
        return end;
    }
    return 0;
}

// A JWT starting at `s` ("eyJ" is the base64 of `{"`): header.payload.signature.
std::size_t match_jwt(std::string_view text, std::size_t s) {
    if (!starts_with(text, s, "eyJ")) return 0;
    const std::size_t header_end = run_end(text, s, base64url);
    if (header_end - s < 10 || header_end >= text.size() || text[header_end] != '.') return 0;
    const std::size_t payload = header_end + 1;
    const std::size_t payload_end = run_end(text, payload, base64url);
    if (payload_end - payload < 10 || payload_end >= text.size() || text[payload_end] != '.') return 0;
    const std::size_t signature = payload_end + 1;
    const std::size_t signature_end = run_end(text, signature, base64url);
    // An unsigned token (alg none) has an empty signature; its payload is still JSON.
    if (signature_end == signature && !starts_with(text, payload, "eyJ")) return 0;
    return signature_end;
}

// A PEM private key block starting at `s`: to its END line, or to the end of the text
// when the block is cut short (the key is secret either way).
std::size_t match_private_key(std::string_view text, std::size_t s) {
    static constexpr std::string_view kBegin = "-----BEGIN ";
    if (!starts_with(text, s, kBegin)) return 0;
    const std::size_t label = s + kBegin.size();
    const std::size_t label_end = text.find("-----", label);
    if (label_end == std::string_view::npos || label_end - label > 64) return 0;
    const std::string_view name = text.substr(label, label_end - label);
    if (name.size() < 11 || name.substr(name.size() - 11) != "PRIVATE KEY") return 0;
    const std::size_t end_line = text.find("-----END ", label_end + 5);
    if (end_line == std::string_view::npos) return text.size();
    const std::size_t close = text.find("-----", end_line + 9);
    return close == std::string_view::npos ? text.size() : close + 5;
}

// Whether the word at `s` follows "Bearer " (any case, one or more spaces or tabs).
bool after_bearer(std::string_view text, std::size_t s) {
    std::size_t p = s;
    while (p > 0 && (text[p - 1] == ' ' || text[p - 1] == '\t')) --p;
    if (p == s || p < 6) return false;
    for (std::size_t i = 0; i < 6; ++i) {
        if ((text[p - 6 + i] | 0x20) != "bearer"[i]) return false;
    }
    return p == 6 || !is_alnum(text[p - 7]);
}

// The token after "Bearer " starting at `s`: its end, or 0. Letters alone are words
// ("bearer of bad news", "Bearer authentication"), unless 20 or more with capitals.
std::size_t match_bearer_token(std::string_view text, std::size_t s) {
    bool marked = false, upper = false;
    const std::size_t end = run_end(text, s, [&](char c) {
        if (is_alpha(c)) {
            upper |= is_upper(c);
            return true;
        }
        const bool mark = is_digit(c) || c == '.' || c == '_' || c == '-' || c == '~' || c == '+' || c == '/' ||
                          c == '=';
        marked |= mark;
        return mark;
    });
    const std::size_t length = end - s;
    if (length < 8 || (!marked && (length < 20 || !upper))) return 0;
    return end;
}

// ---- emails ----

bool local_part_char(char c) { return is_alnum(c) || c == '.' || c == '_' || c == '+' || c == '-' || c == '%'; }
bool domain_char(char c) { return is_alnum(c) || c == '.' || c == '-'; }

// The email around the '@' at `at` within [word_begin, word_end): its span, or begin=end.
std::pair<std::size_t, std::size_t> match_email(std::string_view text, std::size_t word_begin, std::size_t at) {
    std::size_t local = at;
    while (local > word_begin && local_part_char(text[local - 1])) --local;
    while (local < at && text[local] == '.') ++local;
    if (local == at) return {0, 0};
    std::size_t end = run_end(text, at + 1, domain_char);
    while (end > at + 1 && (text[end - 1] == '.' || text[end - 1] == '-')) --end;
    const std::string_view domain = text.substr(at + 1, end - at - 1);
    const std::size_t last_dot = domain.rfind('.');
    if (last_dot == std::string_view::npos || last_dot == 0) return {0, 0};
    if (domain.find("..") != std::string_view::npos || domain.front() == '-') return {0, 0};
    const std::string_view tld = domain.substr(last_dot + 1);
    if (tld.size() < 2 || !std::all_of(tld.begin(), tld.end(), is_alpha)) return {0, 0};
    return {local, end};
}

// ---- IBANs ----

// An IBAN starting at `s` (two capitals and two digits there), written whole or in groups
// of four separated by single spaces: its end, or 0. The longest candidate that passes
// mod-97 wins (a word after it is not swallowed).
std::size_t match_iban(std::string_view text, std::size_t s) {
    char compact[34];
    std::size_t size = 0;
    std::size_t ends[34];  // text position after each character taken
    std::size_t p = s, group = 0;
    while (p < text.size() && size < 34) {
        const char c = text[p];
        if (upper_or_digit(c)) {
            compact[size] = c;
            ends[size++] = ++p;
            ++group;
        } else if (c == ' ' && group == 4 && p + 1 < text.size() && upper_or_digit(text[p + 1])) {
            group = 0;
            ++p;
        } else {
            break;
        }
    }
    for (std::size_t n = size; n >= 15; --n) {
        const std::size_t end = ends[n - 1];
        if (end < text.size() && is_alnum(text[end])) continue;
        if (iban_valid(std::string_view(compact, n))) return end;
    }
    return 0;
}

// ---- random-looking tokens ----

bool hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Whether the word [s, e) looks like a random token: long, letters and digits mixed
// throughout, with high entropy, and not a hex digest or UUID (commit ids, request ids).
bool random_token(std::string_view text, std::size_t s, std::size_t e) {
    const std::string_view word = text.substr(s, e - s);
    if (word.size() < 20 || word.size() > 512) return false;
    if (word.front() == '/' || word.find("//") != std::string_view::npos) return false;  // a path or URL
    int upper = 0, lower = 0, digits = 0, transitions = 0, prev = 0;
    bool all_hex = true;
    for (char c : word) {
        const std::uint8_t k = cls(c);
        if (k == kAt || (k == kPunct && c != '_' && c != '-' && c != '+' && c != '/')) return false;  // '.', '@'
        upper += k == kUpper;
        lower += k == kLower;
        digits += k == kDigit;
        all_hex &= hex_digit(c) || c == '-';
        const int kind = k == kDigit ? 1 : (k & (kLower | kUpper)) ? 2 : 0;
        if (kind && prev && kind != prev) ++transitions;
        prev = kind ? kind : prev;
    }
    if (all_hex || digits < 2 || transitions < 3) return false;
    if (!(upper && lower) && word.size() < 32) return false;
    const double wanted = std::min(4.0, 0.75 * std::log2(static_cast<double>(word.size())));
    return shannon_entropy(word) >= wanted;
}

// ---- numbers: cards, SSNs, phones ----

struct DigitGroup {
    std::size_t begin, end;
};

// A number written with separators starting at `s` (a digit, '+' or '('): a card, an SSN
// or a phone number, when one is on in `set`. Its end, or 0 (with `detector` set).
std::size_t match_number(std::string_view text, std::size_t s, DetectorSet set, Detector& detector) {
    std::size_t p = s;
    const bool plus = text[p] == '+';
    if (plus) ++p;
    DigitGroup groups[8];
    std::size_t count = 0, total = 0;
    char separator = 0;  // the one separator used between groups (' ', '-', '.'), 0: none yet
    bool mixed = false, parens = false;
    bool last_open = false;
    while (p < text.size() && count < 8) {
        // Only the first group may be in parentheses: an area code.
        const bool open = count == 0 && text[p] == '(';
        if (open) {
            parens = true;
            ++p;
        }
        const std::size_t begin = p;
        p = run_end(text, p, is_digit);
        if (p == begin) return 0;
        if (open && (p >= text.size() || text[p] != ')')) return 0;
        groups[count++] = {begin, p};
        last_open = open;
        total += p - begin;
        if (total > 19) return 0;
        std::size_t q = open ? p + 1 : p;
        char sep = 0;
        if (q < text.size() && (text[q] == ' ' || text[q] == '-' || text[q] == '.')) sep = text[q++];
        // Another group follows only right after one separator (or the area code's ')').
        if (q >= text.size() || !is_digit(text[q]) || (!sep && !open)) break;
        // "(415) 555-2671": the space after the area code's ')' is not one of the separators.
        if (sep && !open) {
            if (separator && sep != separator) mixed = true;
            separator = sep;
        }
        p = q;
    }
    if (count == 0) return 0;
    // The number ends with its last digit (or the ')' right after it).
    std::size_t end = groups[count - 1].end;
    if (last_open) ++end;  // "(555)" alone
    if (end < text.size() && (is_alnum(text[end]) || text[end] == '@')) return 0;
    if (end < text.size() && (text[end] == '-' || text[end] == '/') && end + 1 < text.size() && is_digit(text[end + 1]))
        return 0;  // part of a longer number ("1-2-3-4")
    char digits[19];
    std::size_t n = 0;
    for (std::size_t g = 0; g < count; ++g) {
        for (std::size_t i = groups[g].begin; i < groups[g].end; ++i) digits[n++] = text[i];
    }
    const std::string_view all(digits, n);
    auto size = [&](std::size_t g) { return groups[g].end - groups[g].begin; };

    if (!plus && !parens && !mixed) {
        if (has(set, Detector::ssn) && count == 3 && (separator == '-' || separator == ' ') && size(0) == 3 &&
            size(1) == 2 && size(2) == 4 && ssn_valid(all.substr(0, 3), all.substr(3, 2), all.substr(5, 4))) {
            detector = Detector::ssn;
            return end;
        }
        bool card_groups = count == 1 || separator == ' ' || separator == '-';
        for (std::size_t g = 0; g < count && card_groups; ++g) card_groups = size(g) >= 3;
        if (has(set, Detector::card) && card_groups && card_number_valid(all)) {
            detector = Detector::card;
            return end;
        }
    }
    if (has(set, Detector::phone)) {
        if (plus) {
            // E.164: up to 15 digits; with fewer than 8 it is a signed number, not a phone.
            if (n >= 8 && n <= 15) {
                detector = Detector::phone;
                return end;
            }
        } else if (count >= 3 && !mixed) {
            // North American numbers with separators: (NXX) NXX-XXXX, NXX-NXX-XXXX, 1-NXX-NXX-XXXX.
            const std::size_t first = count == 4 && size(0) == 1 && digits[0] == '1' ? 1 : 0;
            if (count - first == 3 && size(first) == 3 && size(first + 1) == 3 && size(first + 2) == 4) {
                const std::size_t area = groups[first].begin, exchange = groups[first + 1].begin;
                if (text[area] >= '2' && text[exchange] >= '2') {
                    detector = Detector::phone;
                    return end;
                }
            }
        }
    }
    return 0;
}

constexpr DetectorSet kNumberDetectors = bit(Detector::card) | bit(Detector::ssn) | bit(Detector::phone);

// The checks of one word [s, e), which may look past its end (a Bearer token, a PEM
// block, an IBAN in groups). Appends a finding and returns where scanning goes on, or
// returns `e` when the word holds nothing.
std::size_t check_word(std::string_view text, std::size_t s, std::size_t e, std::uint8_t classes, bool has_at,
                       DetectorSet set, std::vector<Finding>& out) {
    const std::size_t length = e - s;
    if (has_at) {
        if (!has(set, Detector::email)) return e;
        // Two emails run together ("a@b.cc@d.ee"): the second's local part starts after
        // the first.
        std::size_t floor = s;
        for (std::size_t at = s; at < e; ++at) {
            if (text[at] != '@') continue;
            auto [begin, end] = match_email(text, floor, at);
            if (begin == end) continue;
            out.push_back({begin, end, Detector::email});
            floor = end;
            at = end - 1;
        }
        return e;
    }
    // Words of letters alone shorter than any key body: prose, the common case.
    if (!(classes & (kDigit | kPunct)) && length < 20) return e;
    if (has(set, Detector::bearer) && length >= 8 && after_bearer(text, s)) {
        if (const std::size_t end = match_bearer_token(text, s)) {
            out.push_back({s, end, Detector::bearer});
            return end;
        }
    }
    if (has(set, Detector::private_key) && text[s] == '-' && length >= 10) {
        if (const std::size_t end = match_private_key(text, s)) {
            out.push_back({s, end, Detector::private_key});
            return end;
        }
    }
    if (has(set, Detector::api_key) && length >= 13) {
        if (const std::size_t end = match_key(text, s)) {
            out.push_back({s, end, Detector::api_key});
            return end;
        }
    }
    if (has(set, Detector::jwt) && length >= 23 && text[s] == 'e') {
        if (const std::size_t end = match_jwt(text, s)) {
            out.push_back({s, end, Detector::jwt});
            return end;
        }
    }
    if (has(set, Detector::iban) && (classes & kDigit) && length >= 4 && is_upper(text[s]) && is_upper(text[s + 1]) &&
        is_digit(text[s + 2]) && is_digit(text[s + 3])) {
        if (const std::size_t end = match_iban(text, s)) {
            out.push_back({s, end, Detector::iban});
            return end;
        }
    }
    if (has(set, Detector::token) && (classes & kDigit) && length >= 20) {
        // Punctuation around a token is not part of it ("key: abc…xyz.").
        std::size_t b = s, t = e;
        while (b < t && (text[b] == '-' || text[b] == '+' || text[b] == '.')) ++b;
        while (t > b && (text[t - 1] == '.' || text[t - 1] == '-' || text[t - 1] == '+')) --t;
        if (random_token(text, b, t)) {
            out.push_back({b, t, Detector::token});
            return e;
        }
    }
    return e;
}

}  // namespace

std::uint32_t RedactionCounts::total() const {
    std::uint32_t sum = 0;
    for (auto n : by_detector) sum += n;
    return sum;
}

RedactionCounts& RedactionCounts::operator+=(const RedactionCounts& other) {
    for (std::size_t i = 0; i < kDetectorCount; ++i) by_detector[i] += other.by_detector[i];
    return *this;
}

std::string replacement(Detector d) { return "[REDACTED:" + std::string(name(d)) + "]"; }

void find_sensitive(std::string_view text, DetectorSet set, std::vector<Finding>& out) {
    if (!set) return;
    const bool numbers = (set & kNumberDetectors) != 0;
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        // Runs of lower-case words and spaces, eight bytes at a time: a word of lower-case
        // letters alone is never a finding (every shape needs a digit, '@', punctuation or a
        // capital). The word the run stops in is then read from its start.
        if (const std::size_t skipped = prose_prefix(text.data() + i, n - i); skipped >= 8) {
            const std::size_t from = i;
            i += skipped;
            while (i > from && cls(text[i - 1]) == kLower) --i;
        }
        // Between words: spaces, quotes, brackets, other punctuation, UTF-8 sequences.
        while (i < n && !is_word(text[i])) {
            if (text[i] == '(' && numbers && has(set, Detector::phone) && i + 1 < n && is_digit(text[i + 1])) break;
            ++i;
        }
        if (i >= n) break;
        const std::size_t s = i;
        const char first = text[s];
        if (numbers && (is_digit(first) || first == '(' || (first == '+' && s + 1 < n && is_digit(text[s + 1])))) {
            Detector detector{};
            if (const std::size_t end = match_number(text, s, set, detector)) {
                out.push_back({s, end, detector});
                i = end;
                continue;
            }
            if (first == '(') {
                ++i;
                continue;
            }
        }
        // The word, and what kinds of bytes it holds.
        std::uint8_t classes = 0;
        std::size_t e = s;
        while (e < n) {
            const std::uint8_t k = cls(text[e]);
            if (!k) break;
            classes |= k;
            ++e;
        }
        const bool has_at = (classes & kAt) != 0;
        i = std::max(e, check_word(text, s, e, classes, has_at, set, out));
    }
}

std::size_t redact_text(std::string& text, DetectorSet set, RedactionCounts* counts) {
    if (!set || text.empty()) return 0;
    std::vector<Finding> findings;
    find_sensitive(text, set, findings);
    if (findings.empty()) return 0;
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (const auto& f : findings) {
        out.append(text, at, f.begin - at);
        out += "[REDACTED:";
        out += name(f.detector);
        out += ']';
        at = f.end;
        if (counts) ++counts->by_detector[static_cast<std::size_t>(f.detector)];
    }
    out.append(text, at, std::string::npos);
    text = std::move(out);
    return findings.size();
}

}  // namespace toolport::util::redaction
