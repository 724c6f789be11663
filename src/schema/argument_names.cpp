#include "schema/argument_names.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "util/closest_name.hpp"
#include "util/json.hpp"

namespace toolport::schema {

namespace {

// Collects the property names of `schema` and of the branches that describe the same
// object; false when the names cannot be listed.
bool collect_names(const Json& schema, std::vector<std::string>& names, int depth) {
    if (!schema.is_object()) return true;  // true / false schemas name nothing
    if (depth > 8) return false;
    if (schema.contains("$ref") || schema.contains("$dynamicRef") || schema.contains("patternProperties")) return false;
    if (auto ap = schema.find("additionalProperties"); ap != schema.end() && ap->is_object()) return false;
    if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
        for (auto it = props->begin(); it != props->end(); ++it) {
            if (std::find(names.begin(), names.end(), it.key()) == names.end()) names.push_back(it.key());
        }
    }
    for (const char* key : {"allOf", "anyOf", "oneOf"}) {
        if (auto branches = schema.find(key); branches != schema.end() && branches->is_array()) {
            for (const auto& branch : *branches)
                if (!collect_names(branch, names, depth + 1)) return false;
        }
    }
    for (const char* key : {"if", "then", "else"}) {
        if (auto branch = schema.find(key); branch != schema.end())
            if (!collect_names(*branch, names, depth + 1)) return false;
    }
    return true;
}

// Words of a name: "awardDateStart", "award_date_start", "Award-Date start" → award date start.
std::vector<std::string> words_of(std::string_view name) {
    std::vector<std::string> words;
    std::string word;
    auto flush = [&] {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
    };
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (!std::isalnum(c)) {
            flush();
            continue;
        }
        const bool upper = std::isupper(c);
        const bool digit = std::isdigit(c);
        if (!word.empty()) {
            const auto prev = static_cast<unsigned char>(name[i - 1]);
            const bool boundary = (upper && std::islower(prev)) || (digit != static_cast<bool>(std::isdigit(prev))) ||
                                  // "HTTPServer": the last capital starts a word
                                  (upper && std::isupper(prev) && i + 1 < name.size() &&
                                   std::islower(static_cast<unsigned char>(name[i + 1])));
            if (boundary) flush();
        }
        word.push_back(static_cast<char>(std::tolower(c)));
    }
    flush();
    // Words that carry no meaning of their own ("order_by", "number_of_results").
    static const std::array<std::string_view, 9> kFiller = {"by", "of", "the", "a", "an", "for", "in", "on", "with"};
    std::vector<std::string> out;
    for (auto& w : words) {
        if (words.size() > 1 && std::find(kFiller.begin(), kFiller.end(), w) != kFiller.end()) continue;
        // Plurals folded: "dates" is "date", "categories" is "category".
        if (w.size() > 4 && w.ends_with("ies")) w = w.substr(0, w.size() - 3) + "y";
        else if (w.size() > 3 && w.ends_with('s') && !w.ends_with("ss")) w.pop_back();
        out.push_back(std::move(w));
    }
    return out;
}

// Words models use for one another in argument names.
int synonym_group(const std::string& word) {
    static const std::map<std::string, int> groups = [] {
        const std::vector<std::vector<std::string>> lists = {
            {"query", "q", "keyword", "search", "term", "text", "phrase", "prompt"},
            {"limit", "max", "size", "count", "top", "num", "k", "result"},
            {"start", "from", "begin", "since", "after", "earliest"},
            {"end", "to", "until", "before", "latest", "stop"},
            {"id", "identifier", "uid"},
            {"cursor", "page", "offset", "token", "next", "skip"},
            {"sort", "order", "ordering", "orderby"},
            {"vendor", "supplier", "contractor", "recipient", "company"},
            {"agency", "department", "dept", "office"},
            {"category", "type", "kind", "class"},
            {"path", "dir", "directory", "folder", "file"},
            {"project", "workspace", "repo", "repository"},
            {"description", "desc", "summary"},
            {"year", "fy"},
        };
        std::map<std::string, int> out;
        for (std::size_t g = 0; g < lists.size(); ++g)
            for (const auto& w : lists[g]) out.emplace(w, static_cast<int>(g));
        return out;
    }();
    auto it = groups.find(word);
    return it == groups.end() ? -1 : it->second;
}

// Optimal string alignment distance ("keywrod"), the one the configuration's "did you mean" uses.
using util::edit_distance;

double word_match(const std::string& a, const std::string& b) {
    if (a == b) return 1.0;
    const int ga = synonym_group(a);
    if (ga >= 0 && ga == synonym_group(b)) return 0.8;
    const auto& shorter = a.size() < b.size() ? a : b;
    const auto& longer = a.size() < b.size() ? b : a;
    if (shorter.size() >= 3 && longer.starts_with(shorter)) return 0.7;
    if (shorter.size() >= 4 && edit_distance(a, b) == 1) return 0.7;
    // An abbreviation: its letters in order in the longer word, from its first ("msg" of
    // "message", "qty" of "quantity", "cnt" of "count").
    if (shorter.size() >= 3 && shorter[0] == longer[0]) {
        std::size_t at = 0;
        for (char ch : longer)
            if (at < shorter.size() && ch == shorter[at]) ++at;
        if (at == shorter.size()) return 0.6;
    }
    return 0.0;
}

std::string squashed(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += w;
    return out;
}

}  // namespace

std::optional<std::vector<std::string>> accepted_argument_names(const nlohmann::json& input_schema) {
    std::vector<std::string> names;
    if (!collect_names(input_schema, names, 0)) return std::nullopt;
    return names;
}

double name_closeness(std::string_view given, std::string_view candidate) {
    const auto g = words_of(given);
    const auto c = words_of(candidate);
    if (g.empty() || c.empty()) return 0.0;
    const std::string gs = squashed(g), cs = squashed(c);
    if (gs == cs) return 1.0;  // the same words written another way (awardDateStart)

    // Each word of the given name matched to its best unused word of the candidate.
    std::vector<bool> used(c.size(), false);
    double matched = 0;
    for (const auto& word : g) {
        double best = 0;
        std::size_t best_at = c.size();
        for (std::size_t j = 0; j < c.size(); ++j) {
            if (used[j]) continue;
            const double m = word_match(word, c[j]);
            if (m > best) best = m, best_at = j;
        }
        if (best_at < c.size()) used[best_at] = true;
        matched += best;
    }
    // Mostly: how much of what the caller wrote is found; partly: how much of the
    // candidate that accounts for (so "date" is closer to "award_date" than to
    // "award_date_start").
    const double by_words = 0.7 * matched / static_cast<double>(g.size()) +
                            0.3 * matched / static_cast<double>(c.size());
    // A misspelt whole name ("limt", "vendorname").
    const double by_letters = 1.0 - static_cast<double>(edit_distance(gs, cs)) /
                                        static_cast<double>(std::max(gs.size(), cs.size()));
    return std::max(by_words, by_letters >= 0.75 ? by_letters : 0.0);
}

std::vector<std::string> closest_names(std::string_view given, const std::vector<std::string>& accepted) {
    constexpr double kWorthSuggesting = 0.5;
    double best = kWorthSuggesting;
    std::vector<std::string> out;
    for (const auto& name : accepted) {
        const double score = name_closeness(given, name);
        if (score > best + 1e-9) {
            best = score;
            out = {name};
        } else if (score >= best - 1e-9 && (score > kWorthSuggesting - 1e-9)) {
            out.push_back(name);
        }
    }
    if (out.size() > 3) out.clear();  // a tie among many says nothing
    return out;
}

}  // namespace toolport::schema
